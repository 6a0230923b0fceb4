#include "ops/indexing_impl.h"

#include <algorithm>

#include "nuvec/ops/ops.h"
#include "ops/builder.h"

namespace nuvec::inline ops::impl {

Array positions_of(const Shape& shape, const StreamOrDevice& s, Location loc) {
  double n = 1;
  for (int d : shape) n *= d;
  DType dt = n > 2147483647.0 ? int64 : int32;
  return ops::reshape(ops::arange(0.0, n, 1.0, dt, s, loc), shape, s, loc);
}

void slice_axis(int dim, int64_t b, int64_t e, int64_t k, int& first, int& count) {
  auto clampi = [](int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); };
  if (b < 0) b += dim;
  if (e < 0) e += dim;
  int64_t cnt;
  if (k > 0) {
    b = clampi(b, 0, dim);
    e = clampi(e, 0, dim);
    cnt = e > b ? (e - b + k - 1) / k : 0;
  } else {
    b = clampi(b, -1, dim - 1);
    e = clampi(e, -1, dim - 1);
    cnt = b > e ? (b - e + (-k) - 1) / (-k) : 0;
  }
  first = cnt > 0 ? static_cast<int>(b) : 0;
  count = static_cast<int>(cnt);
}

Shape flat_shape(const Array& x) {
  // -1 cannot be inferred for an empty array.
  return x.size() == 0 ? Shape{0} : Shape{-1};
}

Array wrap_clamp(const Array& idx, int n, int hi, const StreamOrDevice& s,
                 Location loc) {
  Array i = ops::astype(idx, int64, s, loc);
  Array wrapped =
      ops::where(ops::less(i, 0, s, loc), ops::add(i, n, s, loc), i, s, loc);
  return ops::clip(wrapped, Operand(0), Operand(std::max(hi, 0)), s, loc);
}

Array block_offsets(const Shape& shape, const Shape& block,
                    const StreamOrDevice& s, Location loc) {
  Array pos = ops::astype(positions_of(shape, s, loc), int64, s, loc);
  return ops::slice(pos, std::vector<int>(shape.size(), 0), block, {}, s, loc);
}

Array take_flat(const Array& x, const Array& pos, const char* op,
                const StreamOrDevice& s, Location loc) {
  if (x.is_failed()) return x;
  Array flat = ops::reshape(x, flat_shape(x), s, loc);
  return build1(make<Take>(0), {flat, pos}, s, op, loc);
}

Array scatter_flat(const Array& x, const Array& pos, const Array& upd,
                   Scatter::Type type, const char* op, const StreamOrDevice& s,
                   Location loc) {
  if (x.is_failed()) return x;
  Array flat = ops::reshape(x, flat_shape(x), s, loc);
  Array out = build1(make<Scatter>(type), {flat, pos, upd}, s, op, loc);
  return ops::reshape(out, x.shape(), s, loc);
}

std::optional<Array> check_dynamic_start(const Array& x, const Array& start,
                                         std::vector<int>& axes, const char* op,
                                         Location loc) {
  auto bad = [&](ErrorKind k, const std::string& m) {
    return std::optional<Array>(fail(k, m, op, loc));
  };
  int nd = x.ndim();
  if (start.size() > nd)
    return bad(ErrorKind::invalid_argument,
               std::to_string(start.size()) +
                   " starting positions for an array with " +
                   std::to_string(nd) + " dimensions");
  if (start.ndim() > 1)
    return bad(ErrorKind::invalid_argument,
               "the start indices must be 0-d or 1-d, got " +
                   std::to_string(start.ndim()) + " dimensions");
  if (start.size() != static_cast<int64_t>(axes.size()))
    return bad(ErrorKind::invalid_argument,
               std::to_string(start.size()) + " start indices for " +
                   std::to_string(axes.size()) + " axes");
  if (!is_integer(start.dtype()))
    return bad(ErrorKind::unsupported_dtype,
               "start indices must be integers, got " +
                   std::string(dtype_name(start.dtype())));
  for (int& a : axes) {
    auto n = normalize_axis(a, nd);
    if (!n)
      return bad(ErrorKind::invalid_axis,
                 "axis " + std::to_string(a) +
                     " is out of range for an array with " +
                     std::to_string(nd) + " dimensions");
    a = *n;
  }
  std::vector<int> sorted(axes);
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return bad(ErrorKind::invalid_argument, "repeated axes are not allowed");
  return std::nullopt;
}

Array dynamic_positions(const Shape& shape, const Array& start,
                        const std::vector<int>& axes, const Shape& block,
                        const StreamOrDevice& s, Location loc) {
  auto strides = nuvec::row_major_strides(shape);
  Array starts =
      ops::astype(ops::reshape(start, {static_cast<int>(axes.size())}, s, loc),
                  int64, s, loc);
  Array corner = ops::zeros({}, int64, s, loc);
  for (size_t k = 0; k < axes.size(); ++k) {
    int d = axes[k];
    Array at =
        ops::clip(ops::take(starts, static_cast<int>(k), s, loc), Operand(0),
                  Operand(std::max(shape[d] - block[d], 0)), s, loc);
    corner = ops::add(corner, ops::multiply(at, strides[d], s, loc), s, loc);
  }
  return ops::add(block_offsets(shape, block, s, loc), corner, s, loc);
}

Array refail(const Array& a, const char* op, Location loc) {
  return fail(a.error()->kind(), a.error()->message(), op, loc);
}

std::string shape_text(const Shape& shape) {
  std::string t = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    t += (i ? ", " : "") + std::to_string(shape[i]);
  return t + ")";
}

}  // namespace nuvec::inline ops::impl
