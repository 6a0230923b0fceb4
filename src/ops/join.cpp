#include "nuvec/ops/join.h"
#include <algorithm>

#include "nuvec/ops/creation.h"
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

std::string axis_message(int axis, int ndim) {
  return "axis " + std::to_string(axis) + " is out of bounds for an array with " +
         std::to_string(ndim) + " dimensions";
}

Array flat(const Array& x, const StreamOrDevice& s, Location loc) {
  return ops::reshape(x, {-1}, s, loc);
}

}  // namespace

Array concatenate(const std::vector<Array>& arrays, int axis, StreamOrDevice s, Location loc) {
  if (arrays.empty()) return fail(ErrorKind::invalid_argument, "no arrays to concatenate", "concatenate", loc);
  if (const Array* f = impl::first_failed(arrays)) return *f;
  if (arrays.size() == 1) return arrays[0];  // as MLX, whatever the axis
  DType dt = arrays[0].dtype();
  for (const Array& a : arrays) dt = promote_types(dt, a.dtype());
  std::vector<Array> in;
  for (const Array& a : arrays) in.push_back(ops::astype(a, dt, s, loc));
  int nd = arrays[0].ndim();
  auto a = impl::normalize_axis(axis, nd);
  return build1(make<Concatenate>(a ? *a : axis), std::move(in), s, "concatenate", loc);
}
Array concatenate(const std::vector<Array>& arrays, StreamOrDevice s, Location loc) {
  std::vector<Array> flats;
  for (const Array& a : arrays) flats.push_back(flat(a, s, loc));
  return ops::concatenate(flats, 0, s, loc);
}

Array stack(const std::vector<Array>& arrays, int axis, StreamOrDevice s, Location loc) {
  if (arrays.empty()) return fail(ErrorKind::invalid_argument, "no arrays to stack", "stack", loc);
  if (const Array* f = impl::first_failed(arrays)) return *f;
  const Shape& shape = arrays[0].shape();
  for (const Array& a : arrays)
    if (a.shape() != shape)
      return fail(ErrorKind::shape_mismatch, "all arrays must have the same shape to stack", "stack", loc);
  auto ax = impl::normalize_axis(axis, arrays[0].ndim() + 1);
  if (!ax) return fail(ErrorKind::invalid_axis, axis_message(axis, arrays[0].ndim() + 1), "stack", loc);
  std::vector<Array> in;
  for (const Array& a : arrays) in.push_back(ops::expand_dims(a, Axes(*ax), s, loc));
  if (in.size() == 1) return in[0];
  return ops::concatenate(in, *ax, s, loc);
}

std::vector<Array> split(const Array& x, int sections, int axis, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return {x};
  auto a = impl::normalize_axis(axis, x.ndim());
  if (!a) return {fail(ErrorKind::invalid_axis, axis_message(axis, x.ndim()), "split", loc)};
  if (sections <= 0)
    return {fail(ErrorKind::invalid_argument,
                 "the number of sections must be positive, got " + std::to_string(sections), "split",
                 loc)};
  int n = x.shape()[*a];
  if (n % sections != 0)
    return {fail(ErrorKind::invalid_argument,
                 "an axis of size " + std::to_string(n) + " does not split into " +
                     std::to_string(sections) + " equal sections",
                 "split", loc)};
  std::vector<Array> out;
  int w = n / sections;
  for (int i = 0; i < sections; ++i) out.push_back(impl::slice_axis(x, *a, i * w, (i + 1) * w, s, loc));
  return out;
}

std::vector<Array> split(const Array& x, const std::vector<int>& indices, int axis, StreamOrDevice s,
                         Location loc) {
  if (x.is_failed()) return {x};
  auto a = impl::normalize_axis(axis, x.ndim());
  if (!a) return {fail(ErrorKind::invalid_axis, axis_message(axis, x.ndim()), "split", loc)};
  std::vector<Array> out;
  int start = 0;
  for (int idx : indices) {
    out.push_back(impl::slice_axis(x, *a, start, idx, s, loc));
    start = idx;
  }
  out.push_back(impl::slice_axis(x, *a, start, x.shape()[*a], s, loc));
  return out;
}

Array repeat(const Array& x, int repeats, int axis, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  auto a = impl::normalize_axis(axis, x.ndim());
  if (!a) return fail(ErrorKind::invalid_axis, axis_message(axis, x.ndim()), "repeat", loc);
  if (repeats < 0)
    return fail(ErrorKind::invalid_argument,
                "the number of repeats cannot be negative, got " + std::to_string(repeats), "repeat", loc);
  // [.., n, ..] -> [.., n, repeats, ..] (a broadcast view) -> [.., n * repeats, ..]
  Array e = ops::expand_dims(x, Axes(*a + 1), s, loc);
  Shape b = e.shape();
  b[*a + 1] = repeats;
  Shape out = x.shape();
  auto len = checked_dim(__int128(out[*a]) * repeats, "output length");
  if (!len) return fail(len.error().kind(), len.error().message(), "repeat", loc);
  out[*a] = *len;
  return ops::reshape(ops::broadcast_to(e, b, s, loc), out, s, loc);
}
Array repeat(const Array& x, int repeats, StreamOrDevice s, Location loc) {
  return ops::repeat(flat(x, s, loc), repeats, 0, s, loc);
}

Array tile(const Array& x, std::vector<int> reps, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  for (int r : reps)
    if (r < 0) return fail(ErrorKind::invalid_argument, "negative repetition " + std::to_string(r), "tile", loc);
  size_t nd = std::max(reps.size(), static_cast<size_t>(x.ndim()));
  Shape shape = x.shape();
  shape.insert(shape.begin(), nd - shape.size(), 1);
  reps.insert(reps.begin(), nd - reps.size(), 1);
  // [s0, s1, ..] -> [1, s0, 1, s1, ..] -> broadcast [r0, s0, ..] -> [r0 * s0, ..]
  Shape inter, bcast, out;
  for (size_t d = 0; d < nd; ++d) {
    inter.insert(inter.end(), {1, shape[d]});
    bcast.insert(bcast.end(), {reps[d], shape[d]});
    auto len = checked_dim(__int128(reps[d]) * shape[d], "output length");
    if (!len) return fail(len.error().kind(), len.error().message(), "tile", loc);
    out.push_back(*len);
  }
  Array r = ops::reshape(x, inter, s, loc);
  return ops::reshape(ops::broadcast_to(r, bcast, s, loc), out, s, loc);
}

Array roll(const Array& x, int shift, int axis, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  auto a = impl::normalize_axis(axis, x.ndim());
  if (!a) return fail(ErrorKind::invalid_axis, axis_message(axis, x.ndim()), "roll", loc);
  int n = x.shape()[*a];
  if (n == 0) return x;
  int k = static_cast<int>(((int64_t(shift) % n) + n) % n);
  if (k == 0) return x;
  return ops::concatenate({impl::slice_axis(x, *a, n - k, n, s, loc),
                           impl::slice_axis(x, *a, 0, n - k, s, loc)},
                          *a, s, loc);
}
Array roll(const Array& x, int shift, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  return ops::reshape(ops::roll(flat(x, s, loc), shift, 0, s, loc), x.shape(), s, loc);
}
Array roll(const Array& x, const Shape& shifts, const std::vector<int>& axes,
           StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  if (shifts.size() != axes.size())
    return fail(ErrorKind::invalid_argument,
                std::to_string(shifts.size()) + " shifts given for " + std::to_string(axes.size()) +
                    " axes",
                "roll", loc);
  Array r = x;
  for (size_t i = 0; i < axes.size(); ++i) r = ops::roll(r, shifts[i], axes[i], s, loc);
  return r;
}
// MLX's other forms: one shift for several axes; several shifts summed
// along one axis or the flattened array.
Array roll(const Array& x, int shift, const std::vector<int>& axes, StreamOrDevice s,
           Location loc) {
  return ops::roll(x, Shape(axes.size(), shift), axes, s, loc);
}
Array roll(const Array& x, const Shape& shifts, int axis, StreamOrDevice s,
           Location loc) {
  int64_t total = 0;
  for (int v : shifts) total += v;
  int64_t n = x.ndim() > 0 && impl::normalize_axis(axis, x.ndim()) ? x.shape(axis) : 1;
  return ops::roll(x, static_cast<int>(n > 0 ? total % n : 0), axis, s, loc);
}
Array roll(const Array& x, const Shape& shifts, StreamOrDevice s, Location loc) {
  int64_t total = 0;
  for (int v : shifts) total += v;
  int64_t n = std::max<int64_t>(x.size(), 1);
  return ops::roll(x, static_cast<int>(total % n), s, loc);
}

Array tri(int n, int m, int k, DType dtype, StreamOrDevice s, Location loc) {
  // Column j is compared with row i as j - k <= i; j - k is computed in
  // int64 when it leaves the int range (k = INT_MIN, m - k past INT_MAX).
  int64_t first = -int64_t(k), last = int64_t(m) - k;
  bool wide = first < INT32_MIN || last > INT32_MAX;
  Array rows = ops::expand_dims(ops::arange(n, s, loc), 1, s, loc);
  Array cols = ops::expand_dims(
      ops::arange(double(first), double(last), 1.0, wide ? int64 : int32, s, loc), 0, s, loc);
  return ops::astype(ops::greater_equal(rows, cols, s, loc), dtype, s, loc);
}
Array tri(int n, DType dtype, StreamOrDevice s, Location loc) {
  return ops::tri(n, n, 0, dtype, s, loc);
}

namespace {
Array triangle(const Array& x, int k, bool lower, const char* op, const StreamOrDevice& s,
               Location loc) {
  if (x.is_failed()) return x;
  if (x.ndim() < 2)
    return fail(ErrorKind::invalid_shape,
                "the array must be at least 2-D, got " + std::to_string(x.ndim()) + " dimensions", op, loc);
  int r = x.shape()[x.ndim() - 2], c = x.shape()[x.ndim() - 1];
  Array mask = lower ? ops::tri(r, c, k, bool_, s, loc)
                     : ops::logical_not(ops::tri(r, c, k - 1, bool_, s, loc), s, loc);
  return ops::where(mask, x, ops::zeros_like(x, s, loc), s, loc);
}
}  // namespace

Array tril(const Array& x, int k, StreamOrDevice s, Location loc) {
  return triangle(x, k, true, "tril", s, loc);
}
Array triu(const Array& x, int k, StreamOrDevice s, Location loc) {
  return triangle(x, k, false, "triu", s, loc);
}

}  // namespace nuvec::ops
