#include "nuvec/ops/sort.h"

#include "nuvec/ops/elementwise.h"
#include "nuvec/ops/shape.h"
#include "nuvec/primitives/sort.h"
#include "ops/axis_slice.h"
#include "ops/builder.h"

namespace nuvec::inline ops {

using impl::build1;
using impl::fail;
using impl::make;

namespace {

// A normalised axis, or the given one when out of range (the primitive's
// rule then rejects it with the caller's value).
int norm_axis(int axis, int ndim) {
  auto a = impl::normalize_axis(axis, ndim);
  return a ? *a : axis;
}

Array flat(const Array& x, const StreamOrDevice& s, Location loc) {
  return ops::reshape(x, {-1}, s, loc);
}

template <class P>
Array sort_like(const Array& x, int axis, int kth, const StreamOrDevice& s, const char* op,
                Location loc) {
  if (x.is_failed()) return x;
  int a = norm_axis(axis, x.ndim());
  if constexpr (P::is_partition) {
    if (a >= 0 && a < x.ndim()) {
      int n = x.shape()[a];
      if (kth < 0 && kth + n >= 0) kth += n;
    }
  }
  return build1(make<P>(a, kth), {x}, s, op, loc);
}

}  // namespace

Array sort(const Array& x, int axis, StreamOrDevice s, Location loc) {
  return sort_like<Sort>(x, axis, 0, s, "sort", loc);
}
Array sort(const Array& x, StreamOrDevice s, Location loc) {
  return sort_like<Sort>(flat(x, s, loc), 0, 0, s, "sort", loc);
}
Array argsort(const Array& x, int axis, StreamOrDevice s, Location loc) {
  return sort_like<ArgSort>(x, axis, 0, s, "argsort", loc);
}
Array argsort(const Array& x, StreamOrDevice s, Location loc) {
  return sort_like<ArgSort>(flat(x, s, loc), 0, 0, s, "argsort", loc);
}
Array partition(const Array& x, int kth, int axis, StreamOrDevice s, Location loc) {
  return sort_like<Partition>(x, axis, kth, s, "partition", loc);
}
Array partition(const Array& x, int kth, StreamOrDevice s, Location loc) {
  return sort_like<Partition>(flat(x, s, loc), 0, kth, s, "partition", loc);
}
Array argpartition(const Array& x, int kth, int axis, StreamOrDevice s, Location loc) {
  return sort_like<ArgPartition>(x, axis, kth, s, "argpartition", loc);
}
Array argpartition(const Array& x, int kth, StreamOrDevice s, Location loc) {
  return sort_like<ArgPartition>(flat(x, s, loc), 0, kth, s, "argpartition", loc);
}

Array topk(const Array& x, int k, int axis, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  auto a = impl::normalize_axis(axis, x.ndim());
  if (!a)
    return fail(ErrorKind::invalid_axis,
                "axis " + std::to_string(axis) + " is out of bounds for an array with " +
                    std::to_string(x.ndim()) + " dimensions",
                "topk", loc);
  int n = x.shape()[*a];
  if (k < 0 || k > n)
    return fail(ErrorKind::out_of_range,
                "k " + std::to_string(k) + " is out of range for axis " + std::to_string(axis) +
                    " of size " + std::to_string(n),
                "topk", loc);
  // As MLX: the input itself for k = n, else the last k of partition at
  // n - k (an empty slice for k = 0).
  if (k == n) return x;
  Array p = k == 0 ? x : sort_like<Partition>(x, *a, n - k, s, "topk", loc);
  return impl::slice_axis(p, *a, n - k, n, s, loc);
}
Array topk(const Array& x, int k, StreamOrDevice s, Location loc) {
  return ops::topk(flat(x, s, loc), k, 0, s, loc);
}

namespace {

Array scan(const Array& x, std::optional<int> axis, bool reverse, bool inclusive,
           std::optional<DType> dtype, Scan::Type type, const StreamOrDevice& s,
           const char* op, Location loc) {
  if (x.is_failed()) return x;
  if (dtype && *dtype != x.dtype())
    return scan(ops::astype(x, *dtype, s, loc), axis, reverse, inclusive, std::nullopt, type,
                s, op, loc);
  if (!axis) return scan(flat(x, s, loc), 0, reverse, inclusive, std::nullopt, type, s, op, loc);
  return build1(make<Scan>(type, norm_axis(*axis, x.ndim()), reverse, inclusive), {x}, s, op,
                loc);
}

}  // namespace

#define NUVEC_SCAN_OP(name, type)                                                       \
  Array name(const Array& x, bool reverse, bool inclusive, StreamOrDevice s,             \
             Location loc) {                                                            \
    return scan(x, std::nullopt, reverse, inclusive, std::nullopt, Scan::Type::type, s, \
                #name, loc);                                                            \
  }                                                                                     \
  Array name(const Array& x, int axis, bool reverse, bool inclusive, StreamOrDevice s,  \
             Location loc) {                                                            \
    return scan(x, axis, reverse, inclusive, std::nullopt, Scan::Type::type, s, #name,  \
                loc);                                                                   \
  }
#define NUVEC_TYPED_SCAN_OP(name, type)                                                 \
  NUVEC_SCAN_OP(name, type)                                                             \
  Array name(const Array& x, bool reverse, bool inclusive, std::optional<DType> dtype,  \
             StreamOrDevice s, Location loc) {                                          \
    return scan(x, std::nullopt, reverse, inclusive, dtype, Scan::Type::type, s, #name, \
                loc);                                                                   \
  }                                                                                     \
  Array name(const Array& x, int axis, bool reverse, bool inclusive,                    \
             std::optional<DType> dtype, StreamOrDevice s, Location loc) {              \
    return scan(x, axis, reverse, inclusive, dtype, Scan::Type::type, s, #name, loc);   \
  }
NUVEC_TYPED_SCAN_OP(cumsum, sum)
NUVEC_TYPED_SCAN_OP(cumprod, prod)
NUVEC_SCAN_OP(cummax, max)
NUVEC_SCAN_OP(cummin, min)
NUVEC_SCAN_OP(logcumsumexp, logaddexp)
#undef NUVEC_SCAN_OP
#undef NUVEC_TYPED_SCAN_OP

}  // namespace nuvec::ops
