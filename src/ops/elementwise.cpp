// Element-wise ops: promotion, weak scalars and broadcasting, then one
// primitive from the registry.
#include "nuvec/ops/elementwise.h"

#include "nuvec/kernels/cast.h"
#include "nuvec/ops/creation.h"
#include "nuvec/ops/reduce.h"
#include "nuvec/ops/shape.h"
#include "nuvec/primitives/elementwise.h"
#include "nuvec/primitives/shape_ops.h"
#include "ops/builder.h"

namespace nuvec::inline ops {

using impl::build1;
using impl::make;

namespace {

// The dtype a weak scalar takes next to an array of dtype `d`.
DType weak_dtype(DType d, const Scalar& s) {
  switch (s.kind) {
    case Scalar::Kind::boolean: return d;
    case Scalar::Kind::integer: return d == bool_ ? int32 : d;
    default: return is_inexact(d) ? d : float32;
  }
}

// `v` converted to `dtype` as the AsType kernel converts it (kernels::Cast),
// as a constant: no cast node per weak scalar (`1 - x` on floats).
template <class From>
Array cast_constant(From v, DType dtype) {
  return dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T t = kernels::Cast<T>{}(v);
    return nuvec::detail::array_from_bytes(&t, {}, dtype);
  });
}

Array scalar_array(const Scalar& s, DType dtype) {
  // The scalar first takes the dtype array() gives it (float32, int32 or
  // int64, bool), then `dtype`.
  switch (s.kind) {
    case Scalar::Kind::floating:
      if (dtype == float64) return cast_constant(s.f, float64);
      return cast_constant(static_cast<float>(s.f), dtype);
    case Scalar::Kind::integer:
      if (s.i == static_cast<int32_t>(s.i)) return cast_constant(static_cast<int32_t>(s.i), dtype);
      return cast_constant(static_cast<int64_t>(s.i), dtype);
    default:
      return cast_constant(s.i != 0, dtype);
  }
}

// Whether the integer `v` is representable in the integer dtype `d`.
bool int_fits(int64_t v, DType d) {
  switch (d.val) {
    case DType::Val::uint8: return v >= 0 && v <= 0xff;
    case DType::Val::uint16: return v >= 0 && v <= 0xffff;
    case DType::Val::uint32: return v >= 0 && v <= 0xffffffffll;
    case DType::Val::uint64: return true;  // MLX wraps negatives here
    case DType::Val::int8: return v >= -128 && v <= 127;
    case DType::Val::int16: return v >= -32768 && v <= 32767;
    case DType::Val::int32: return v == static_cast<int32_t>(v);
    default: return true;
  }
}

// Promotes operands (weak scalars take the arrays' dtype). A weak integer
// that the arrays' integer dtype cannot hold fails, as in MLX
// (uint8 + -3).
std::vector<Array> promote(const std::vector<const Operand*>& ops, const char* op,
                           Location loc, bool check_weak = true) {
  std::optional<DType> d;
  for (auto* o : ops)
    if (!o->is_scalar()) d = d ? promote_types(*d, o->array().dtype()) : o->array().dtype();
  for (auto* o : ops) {  // scalars next to arrays
    if (!o->is_scalar()) continue;
    if (!d) {
      d = scalar_array(o->scalar(), o->scalar().kind == Scalar::Kind::floating ? float32
                                    : o->scalar().kind == Scalar::Kind::integer ? int32
                                                                                 : bool_)
              .dtype();
      continue;
    }
    d = weak_dtype(*d, o->scalar());
  }
  std::vector<Array> out;
  for (auto* o : ops) {
    if (check_weak && o->is_scalar() && o->scalar().kind == Scalar::Kind::integer &&
        is_integer(*d) && !int_fits(o->scalar().i, *d)) {
      out.push_back(impl::fail(
          ErrorKind::invalid_argument,
          "converting " + std::to_string(o->scalar().i) + " to " +
              std::string(dtype_name(*d)) + " would overflow",
          op, loc));
      continue;
    }
    out.push_back(o->is_scalar() ? scalar_array(o->scalar(), *d)
                                 : ops::astype(o->array(), *d, {}, loc));
  }
  return out;
}

template <class P>
Array unary(const Array& x, const StreamOrDevice& s, const char* op, Location loc,
            bool to_float = false) {
  Array in = to_float ? ops::astype(x, at_least_float(x.dtype()), s, loc) : x;
  return build1(make<P>(), {in}, s, op, loc);
}

// How a binary op widens its promoted operands: division and the float
// functions compute in at least float32; shifts take bools as uint8; logical
// ops take any weak integer (MLX checks that a weak integer fits the
// array's dtype for all other ops).
enum class Widen { none, to_float, bool_to_uint8, logical };

template <class P>
Array binary(const Operand& a, const Operand& b, const StreamOrDevice& s,
             const char* op, Location loc, Widen widen = Widen::none) {
  // Two arrays of one dtype and shape (most ops in vjp rules): nothing to
  // promote, widen or broadcast, so skip building those lists.
  if (!a.is_scalar() && !b.is_scalar() && !impl::shapeless_tracing()) {
    const Array& x = a.array();
    const Array& y = b.array();
    DType d = x.dtype();
    bool same_dtype = y.dtype() == d && (widen != Widen::to_float || d == at_least_float(d)) &&
                      (widen != Widen::bool_to_uint8 || d != bool_);
    if (same_dtype && x.shape() == y.shape()) return build1(make<P>(), {x, y}, s, op, loc);
  }
  auto p = promote({&a, &b}, op, loc, widen != Widen::logical);
  DType d = p[0].dtype();
  if (widen == Widen::to_float) d = at_least_float(d);
  if (widen == Widen::bool_to_uint8 && d == bool_) d = uint8;
  if (d != p[0].dtype()) {
    p = {ops::astype(p[0], d, s, loc), ops::astype(p[1], d, s, loc)};
  }
  if (const Array* f = impl::first_failed(p)) return *f;
  auto bc = ops::broadcast_arrays(p, s, loc);
  if (const Array* f = impl::first_failed(bc)) {
    return impl::fail(f->error()->kind(), f->error()->message(), op, loc);
  }
  return build1(make<P>(), bc, s, op, loc);
}

// x * factor in at least float32 (degrees, radians).
Array scaled(const Array& x, double factor, const StreamOrDevice& s, Location loc) {
  Array f = ops::astype(x, at_least_float(x.dtype()), s, loc);
  return ops::multiply(f, factor, s, loc);
}

}  // namespace

#define NUVEC_PLAIN_UNARY(name, P, to_float)                          \
  Array name(const Array& x, StreamOrDevice s, Location loc) {        \
    return unary<P>(x, s, #name, loc, to_float);                      \
  }
NUVEC_PLAIN_UNARY(abs, Abs, false)
NUVEC_PLAIN_UNARY(negative, Negative, false)
NUVEC_PLAIN_UNARY(sign, Sign, false)
NUVEC_PLAIN_UNARY(exp, Exp, true)
NUVEC_PLAIN_UNARY(expm1, Expm1, true)
NUVEC_PLAIN_UNARY(log, Log, true)
NUVEC_PLAIN_UNARY(log1p, Log1p, true)
NUVEC_PLAIN_UNARY(log2, Log2, true)
NUVEC_PLAIN_UNARY(log10, Log10, true)
NUVEC_PLAIN_UNARY(sqrt, Sqrt, true)
NUVEC_PLAIN_UNARY(rsqrt, Rsqrt, true)
NUVEC_PLAIN_UNARY(square, Square, false)
NUVEC_PLAIN_UNARY(reciprocal, Reciprocal, true)
NUVEC_PLAIN_UNARY(sin, Sin, true)
NUVEC_PLAIN_UNARY(cos, Cos, true)
NUVEC_PLAIN_UNARY(tan, Tan, true)
NUVEC_PLAIN_UNARY(arcsin, ArcSin, true)
NUVEC_PLAIN_UNARY(arccos, ArcCos, true)
NUVEC_PLAIN_UNARY(arctan, ArcTan, true)
NUVEC_PLAIN_UNARY(sinh, Sinh, true)
NUVEC_PLAIN_UNARY(cosh, Cosh, true)
NUVEC_PLAIN_UNARY(tanh, Tanh, true)
NUVEC_PLAIN_UNARY(arcsinh, ArcSinh, true)
NUVEC_PLAIN_UNARY(arccosh, ArcCosh, true)
NUVEC_PLAIN_UNARY(arctanh, ArcTanh, true)
NUVEC_PLAIN_UNARY(sigmoid, Sigmoid, true)
NUVEC_PLAIN_UNARY(erf, Erf, true)
NUVEC_PLAIN_UNARY(erfinv, ErfInv, true)
NUVEC_PLAIN_UNARY(floor, Floor, false)
NUVEC_PLAIN_UNARY(ceil, Ceil, false)
NUVEC_PLAIN_UNARY(logical_not, LogicalNot, false)
NUVEC_PLAIN_UNARY(bitwise_invert, BitwiseInvert, false)
NUVEC_PLAIN_UNARY(isnan, IsNan, false)
NUVEC_PLAIN_UNARY(isinf, IsInf, false)
NUVEC_PLAIN_UNARY(isposinf, IsPosInf, false)
NUVEC_PLAIN_UNARY(isneginf, IsNegInf, false)
NUVEC_PLAIN_UNARY(isfinite, IsFinite, false)
NUVEC_PLAIN_UNARY(conjugate, Conjugate, false)
NUVEC_PLAIN_UNARY(stop_gradient, StopGradient, false)
#undef NUVEC_PLAIN_UNARY

Array real(const Array& x, StreamOrDevice s, Location loc) {
  if (!is_complex(x.dtype()) && !x.is_failed()) return x;
  return unary<Real>(x, s, "real", loc);
}

Array imag(const Array& x, StreamOrDevice s, Location loc) {
  if (!is_complex(x.dtype()) && !x.is_failed()) return ops::zeros_like(x, s, loc);
  return unary<Imag>(x, s, "imag", loc);
}

Array degrees(const Array& x, StreamOrDevice s, Location loc) {
  return scaled(x, 57.29577951308232, s, loc);
}

Array radians(const Array& x, StreamOrDevice s, Location loc) {
  return scaled(x, 0.017453292519943295, s, loc);
}

Array round(const Array& x, int decimals, StreamOrDevice s, Location loc) {
  if (decimals == 0 || x.is_failed()) return unary<Round>(x, s, "round", loc);
  // MLX's formula: scale by a float32 power of ten in at_least_float(x),
  // round, multiply by the float32 reciprocal, convert back to x's dtype.
  Array f = ops::astype(x, at_least_float(x.dtype()), s, loc);
  float scale = 1;
  for (int i = 0; i < (decimals < 0 ? -decimals : decimals); ++i) scale *= 10;
  if (decimals < 0) scale = 1 / scale;
  float inverse = 1 / scale;
  Array r = unary<Round>(ops::multiply(f, double(scale), s, loc), s, "round", loc);
  return ops::astype(ops::multiply(r, double(inverse), s, loc), x.dtype(), s, loc);
}

#define NUVEC_PLAIN_BINARY(name, P, widen)                                        \
  Array name(const Operand& a, const Operand& b, StreamOrDevice s, Location loc) { \
    return binary<P>(a, b, s, #name, loc, Widen::widen);                          \
  }
NUVEC_PLAIN_BINARY(add, Add, none)
NUVEC_PLAIN_BINARY(subtract, Subtract, none)
NUVEC_PLAIN_BINARY(multiply, Multiply, none)
NUVEC_PLAIN_BINARY(divide, Divide, to_float)
NUVEC_PLAIN_BINARY(remainder, Remainder, none)
NUVEC_PLAIN_BINARY(power, Power, none)
NUVEC_PLAIN_BINARY(maximum, Maximum, none)
NUVEC_PLAIN_BINARY(minimum, Minimum, none)
NUVEC_PLAIN_BINARY(equal, Equal, none)
NUVEC_PLAIN_BINARY(not_equal, NotEqual, none)
NUVEC_PLAIN_BINARY(less, Less, none)
NUVEC_PLAIN_BINARY(less_equal, LessEqual, none)
NUVEC_PLAIN_BINARY(greater, Greater, none)
NUVEC_PLAIN_BINARY(greater_equal, GreaterEqual, none)
NUVEC_PLAIN_BINARY(logical_and, LogicalAnd, logical)
NUVEC_PLAIN_BINARY(logical_or, LogicalOr, logical)
NUVEC_PLAIN_BINARY(bitwise_and, BitwiseAnd, none)
NUVEC_PLAIN_BINARY(bitwise_or, BitwiseOr, none)
NUVEC_PLAIN_BINARY(bitwise_xor, BitwiseXor, none)
NUVEC_PLAIN_BINARY(left_shift, LeftShift, bool_to_uint8)
NUVEC_PLAIN_BINARY(right_shift, RightShift, bool_to_uint8)
NUVEC_PLAIN_BINARY(arctan2, ArcTan2, to_float)
NUVEC_PLAIN_BINARY(logaddexp, LogAddExp, to_float)
#undef NUVEC_PLAIN_BINARY

// MLX divides complex operands without flooring (floor rejects complex).
Array floor_divide(const Operand& a, const Operand& b, StreamOrDevice s, Location loc) {
  bool cplx = (!a.is_scalar() && is_complex(a.array().dtype())) ||
              (!b.is_scalar() && is_complex(b.array().dtype()));
  if (cplx) return binary<Divide>(a, b, s, "floor_divide", loc, Widen::to_float);
  return binary<FloorDivide>(a, b, s, "floor_divide", loc);
}

std::vector<Array> divmod(const Operand& a, const Operand& b, StreamOrDevice s,
                          Location loc) {
  auto p = promote({&a, &b}, "divmod", loc);
  auto bc = ops::broadcast_arrays(p, s, loc);
  if (const Array* f = impl::first_failed(bc)) return {*f, *f};
  auto outs = impl::build(make<DivMod>(), bc, s, "divmod", loc);
  if (outs.size() == 1) return {outs[0], outs[0]};
  return {outs[0], outs[1]};
}

Array where(const Operand& condition, const Operand& x, const Operand& y,
            StreamOrDevice s, Location loc) {
  Array c = condition.is_scalar() ? array(condition.scalar().i != 0 || condition.scalar().f != 0)
                                  : ops::astype(condition.array(), bool_, s, loc);
  auto p = promote({&x, &y}, "where", loc);
  auto bc = ops::broadcast_arrays({c, p[0], p[1]}, s, loc);
  if (const Array* f = impl::first_failed(bc))
    return f->error()->op_name() == std::string("broadcast_arrays")
               ? impl::fail(f->error()->kind(), f->error()->message(), "where", loc)
               : *f;
  return build1(make<Select>(), bc, s, "where", loc);
}

Array clip(const Array& x, const std::optional<Operand>& a_min,
           const std::optional<Operand>& a_max, StreamOrDevice s, Location loc) {
  if (!a_min && !a_max)
    return impl::fail(ErrorKind::invalid_argument, "at least one of a_min and a_max is needed",
                        "clip", loc);
  Array out = x;
  if (a_min) out = ops::maximum(out, *a_min, s, loc);
  if (a_max) out = ops::minimum(out, *a_max, s, loc);
  return out;
}

Array astype(const Array& x, DType dtype, StreamOrDevice s, Location loc) {
  if (x.dtype() == dtype && !x.is_failed()) return x;
  return build1(make<AsType>(dtype), {x}, s, "astype", loc);
}

Array view(const Array& x, DType dtype, StreamOrDevice s, Location loc) {
  if (x.dtype() == dtype && !x.is_failed()) return x;
  // Bool bytes other than 0 and 1 would reach kernels that assume them: the
  // bytes are normalised (nonzero is true), as the loaders do.
  if (dtype == bool_ && !x.is_failed())
    return ops::not_equal(build1(make<BitCast>(uint8), {x}, s, "view", loc),
                          array(0, uint8), s, loc);
  return build1(make<BitCast>(dtype), {x}, s, "view", loc);
}

Array copy(const Array& x, StreamOrDevice s, Location loc) {
  return build1(make<Copy>(), {x}, s, "copy", loc);
}

std::vector<Array> depends(const std::vector<Array>& inputs,
                           const std::vector<Array>& dependencies) {
  std::vector<Array> out;
  for (const auto& in : inputs) {
    std::vector<Array> all{in};
    all.insert(all.end(), dependencies.begin(), dependencies.end());
    out.push_back(build1(make<Depends>(), all, {}, "depends", NUVEC_LOC));
  }
  return out;
}

Array isclose(const Operand& a, const Operand& b, double rtol, double atol, bool equal_nan,
              StreamOrDevice s, Location loc) {
  auto p = promote({&a, &b}, "isclose", loc);
  const Array &x = p[0], &y = p[1];
  Array close = ops::less_equal(ops::abs(ops::subtract(x, y, s, loc), s, loc),
                           ops::add(ops::multiply(ops::abs(y, s, loc), rtol, s, loc), atol, s, loc), s, loc);
  Array any_inf = ops::logical_or(ops::isinf(x, s, loc), ops::isinf(y, s, loc), s, loc);
  Array both_inf = ops::logical_and(ops::isinf(x, s, loc), ops::isinf(y, s, loc), s, loc);
  close = ops::logical_and(close, ops::logical_not(any_inf, s, loc), s, loc);
  close = ops::logical_or(close, ops::logical_and(both_inf, ops::equal(x, y, s, loc), s, loc), s, loc);
  if (equal_nan)
    close = ops::logical_or(close, ops::logical_and(ops::isnan(x, s, loc), ops::isnan(y, s, loc), s, loc), s, loc);
  return close;
}

Array allclose(const Operand& a, const Operand& b, double rtol, double atol, bool equal_nan,
               StreamOrDevice s, Location loc) {
  return ops::all(ops::isclose(a, b, rtol, atol, equal_nan, s, loc), false, s, loc);
}

Array array_equal(const Operand& a, const Operand& b, bool equal_nan, StreamOrDevice s,
                  Location loc) {
  auto p = promote({&a, &b}, "array_equal", loc);
  if (const Array* f = impl::first_failed(p)) return *f;
  if (p[0].shape() != p[1].shape()) return nuvec::array(false);
  Array eq = ops::equal(p[0], p[1], s, loc);
  if (equal_nan)
    eq = ops::logical_or(eq, ops::logical_and(ops::isnan(p[0], s, loc), ops::isnan(p[1], s, loc), s, loc), s, loc);
  return ops::all(eq, false, s, loc);
}

}  // namespace nuvec::ops
