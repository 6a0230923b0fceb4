// Array methods and operators: thin mirrors of the ops:: functions.
#include "nuvec/ops/ops.h"

namespace nuvec {

#define NUVEC_DEFINE_UNARY_METHOD(name) \
  Array Array::name(Location loc) const { return ops::name(*this, {}, loc); }
NUVEC_UNARY_OPS(NUVEC_DEFINE_UNARY_METHOD)
#undef NUVEC_DEFINE_UNARY_METHOD
Array Array::round(int decimals, Location loc) const {
  return ops::round(*this, decimals, {}, loc);
}

#define NUVEC_DEFINE_BINARY_METHOD(name)                           \
  Array Array::name(const Operand& other, Location loc) const {    \
    return ops::name(*this, other, {}, loc);                       \
  }
NUVEC_BINARY_OPS(NUVEC_DEFINE_BINARY_METHOD)
#undef NUVEC_DEFINE_BINARY_METHOD
Array Array::matmul(const Array& other, Location loc) const {
  return ops::matmul(*this, other, {}, loc);
}

#define NUVEC_DEFINE_REDUCTION_METHOD(name)                                   \
  Array Array::name(Location loc) const { return ops::name(*this, false, {}, loc); } \
  Array Array::name(const Axes& axes, bool keepdims, Location loc) const {    \
    return ops::name(*this, axes, keepdims, {}, loc);                         \
  }
NUVEC_REDUCTION_OPS(NUVEC_DEFINE_REDUCTION_METHOD)
#undef NUVEC_DEFINE_REDUCTION_METHOD

Array Array::var(Location loc) const { return ops::var(*this, false, 0, {}, loc); }
Array Array::var(const Axes& axes, bool keepdims, int ddof, Location loc) const {
  return ops::var(*this, axes, keepdims, ddof, {}, loc);
}
Array Array::std(Location loc) const { return ops::std(*this, false, 0, {}, loc); }
Array Array::std(const Axes& axes, bool keepdims, int ddof, Location loc) const {
  return ops::std(*this, axes, keepdims, ddof, {}, loc);
}
Array Array::argmax(Location loc) const { return ops::argmax(*this, false, {}, loc); }
Array Array::argmax(int axis, bool keepdims, Location loc) const {
  return ops::argmax(*this, axis, keepdims, {}, loc);
}
Array Array::argmin(Location loc) const { return ops::argmin(*this, false, {}, loc); }
Array Array::argmin(int axis, bool keepdims, Location loc) const {
  return ops::argmin(*this, axis, keepdims, {}, loc);
}
Array Array::softmax(Location loc) const { return ops::softmax(*this, false, {}, loc); }
Array Array::softmax(const Axes& axes, Location loc) const {
  return ops::softmax(*this, axes, false, {}, loc);
}
Array Array::astype(DType dtype, Location loc) const { return ops::astype(*this, dtype, {}, loc); }
Array Array::view(DType dtype, Location loc) const { return ops::view(*this, dtype, {}, loc); }
Array Array::copy(Location loc) const { return ops::copy(*this, {}, loc); }
Array Array::reshape(Shape shape, Location loc) const {
  return ops::reshape(*this, std::move(shape), {}, loc);
}
Array Array::flatten(int start_axis, int end_axis, Location loc) const {
  return ops::flatten(*this, start_axis, end_axis, {}, loc);
}
Array Array::squeeze(Location loc) const { return ops::squeeze(*this, {}, loc); }
Array Array::squeeze(const Axes& axes, Location loc) const {
  return ops::squeeze(*this, axes, {}, loc);
}
Array Array::expand_dims(const Axes& axes, Location loc) const {
  return ops::expand_dims(*this, axes, {}, loc);
}
Array Array::transpose(Location loc) const { return ops::transpose(*this, {}, loc); }
Array Array::transpose(std::vector<int> axes, Location loc) const {
  return ops::transpose(*this, std::move(axes), {}, loc);
}
Array Array::t(Location loc) const { return ops::transpose(*this, {}, loc); }
Array Array::swapaxes(int a, int b, Location loc) const { return ops::swapaxes(*this, a, b, {}, loc); }
Array Array::moveaxis(int a, int b, Location loc) const { return ops::moveaxis(*this, a, b, {}, loc); }
Array Array::broadcast_to(Shape shape, Location loc) const {
  return ops::broadcast_to(*this, shape, {}, loc);
}
Array Array::clip(std::optional<Operand> a_min, std::optional<Operand> a_max, Location loc) const {
  return ops::clip(*this, a_min, a_max, {}, loc);
}

// Operators record the op name only (no source location).
#define NUVEC_DEFINE_OPERATOR(op, fn)                            \
  Array operator op(const Operand& a, const Operand& b) {        \
    return ops::fn(a, b, {}, Location::none());                  \
  }
NUVEC_DEFINE_OPERATOR(+, add)
NUVEC_DEFINE_OPERATOR(-, subtract)
NUVEC_DEFINE_OPERATOR(*, multiply)
NUVEC_DEFINE_OPERATOR(/, divide)
NUVEC_DEFINE_OPERATOR(%, remainder)
NUVEC_DEFINE_OPERATOR(==, equal)
NUVEC_DEFINE_OPERATOR(!=, not_equal)
NUVEC_DEFINE_OPERATOR(<, less)
NUVEC_DEFINE_OPERATOR(<=, less_equal)
NUVEC_DEFINE_OPERATOR(>, greater)
NUVEC_DEFINE_OPERATOR(>=, greater_equal)
NUVEC_DEFINE_OPERATOR(&, bitwise_and)
NUVEC_DEFINE_OPERATOR(|, bitwise_or)
NUVEC_DEFINE_OPERATOR(^, bitwise_xor)
NUVEC_DEFINE_OPERATOR(<<, left_shift)
NUVEC_DEFINE_OPERATOR(>>, right_shift)
NUVEC_DEFINE_OPERATOR(&&, logical_and)
NUVEC_DEFINE_OPERATOR(||, logical_or)
#undef NUVEC_DEFINE_OPERATOR

Array operator-(const Array& a) { return ops::negative(a, {}, Location::none()); }
Array operator~(const Array& a) { return ops::bitwise_invert(a, {}, Location::none()); }
Array operator!(const Array& a) { return ops::logical_not(a, {}, Location::none()); }

}  // namespace nuvec
