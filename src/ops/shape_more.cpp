// MLX's further shape operations: flip, unflatten, unstack, atleast_*,
// contiguous, as_strided, matrix_transpose.
#include <algorithm>
#include <sstream>

#include "nuvec/ops/creation.h"
#include "nuvec/ops/elementwise.h"
#include "nuvec/ops/indexing.h"
#include "nuvec/ops/join.h"
#include "nuvec/ops/shape.h"
#include "ops/axis_slice.h"
#include "ops/builder.h"

namespace nuvec::inline ops {

using impl::fail;

namespace {

std::string str(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

Array bad_axis(int axis, int ndim, const char* op, Location loc) {
  return fail(ErrorKind::invalid_axis,
              "axis " + std::to_string(axis) + " is out of range for an array with " +
                  std::to_string(ndim) + " dimensions",
              op, loc);
}

}  // namespace

Array flip(const Array& x, const std::vector<int>& axes, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  int n = x.ndim();
  std::vector<int> start(n, 0), stop(x.shape().begin(), x.shape().end()), step(n, 1);
  for (int a : axes) {
    auto ax = impl::normalize_axis(a, n);
    if (!ax) return bad_axis(a, n, "flip", loc);
    start[*ax] = x.shape(*ax) - 1;
    stop[*ax] = -x.shape(*ax) - 1;  // before the first element
    step[*ax] = -1;
  }
  return ops::slice(x, start, stop, step, s, loc);
}
Array flip(const Array& x, int axis, StreamOrDevice s, Location loc) {
  return ops::flip(x, std::vector<int>{axis}, s, loc);
}
Array flip(const Array& x, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  std::vector<int> all(x.ndim());
  for (int i = 0; i < x.ndim(); ++i) all[i] = i;
  return ops::flip(x, all, s, loc);
}

Array unflatten(const Array& x, int axis, Shape shape, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  if (shape.empty())
    return fail(ErrorKind::invalid_argument, "the shape to unflatten to cannot be empty",
                "unflatten", loc);
  auto ax = impl::normalize_axis(axis, x.ndim());
  if (!ax) return bad_axis(axis, x.ndim(), "unflatten", loc);
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0)
        return fail(ErrorKind::invalid_argument, "only one dimension can be -1", "unflatten",
                    loc);
      infer = static_cast<int>(i);
    } else if (shape[i] < 0 || __builtin_mul_overflow(known, int64_t(shape[i]), &known)) {
      return fail(ErrorKind::invalid_argument, "invalid shape " + str(shape), "unflatten", loc);
    }
  }
  int64_t size = x.shape(*ax);
  if (infer >= 0 && known != 0) shape[infer] = static_cast<int>(size / known), known *= shape[infer];
  if (known != size)
    return fail(ErrorKind::invalid_argument,
                "cannot unflatten axis " + std::to_string(axis) + " of size " +
                    std::to_string(size) + " into shape " + str(shape),
                "unflatten", loc);
  if (shape.size() == 1) return x;
  Shape out(x.shape().begin(), x.shape().begin() + *ax);
  out.insert(out.end(), shape.begin(), shape.end());
  out.insert(out.end(), x.shape().begin() + *ax + 1, x.shape().end());
  return ops::reshape(x, out, s, loc);
}

std::vector<Array> unstack(const Array& x, int axis, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return {x};
  if (x.ndim() == 0)
    return {fail(ErrorKind::invalid_argument, "a 0-d array has no axis to unstack", "unstack",
                 loc)};
  auto ax = impl::normalize_axis(axis, x.ndim());
  if (!ax) return {bad_axis(axis, x.ndim(), "unstack", loc)};
  std::vector<Array> out;
  int n = x.shape(*ax);
  for (int i = 0; i < n; ++i)
    out.push_back(ops::squeeze(impl::slice_axis(x, *ax, i, i + 1, s, loc), *ax, s, loc));
  return out;
}
std::vector<Array> unstack(const Array& x, StreamOrDevice s, Location loc) {
  return ops::unstack(x, 0, s, loc);
}

Array atleast_1d(const Array& x, StreamOrDevice s, Location loc) {
  if (x.is_failed() || x.ndim() >= 1) return x;
  return ops::reshape(x, {1}, s, loc);
}
Array atleast_2d(const Array& x, StreamOrDevice s, Location loc) {
  if (x.is_failed() || x.ndim() >= 2) return x;
  if (x.ndim() == 0) return ops::reshape(x, {1, 1}, s, loc);
  return ops::expand_dims(x, 0, s, loc);
}
Array atleast_3d(const Array& x, StreamOrDevice s, Location loc) {
  if (x.is_failed() || x.ndim() >= 3) return x;
  if (x.ndim() == 0) return ops::reshape(x, {1, 1, 1}, s, loc);
  if (x.ndim() == 1) return ops::reshape(x, {1, x.shape(0), 1}, s, loc);
  return ops::expand_dims(x, 2, s, loc);
}
#define NUVEC_ATLEAST_VECTOR(name)                                                   \
  std::vector<Array> name(const std::vector<Array>& xs, StreamOrDevice s, Location loc) { \
    std::vector<Array> out;                                                          \
    out.reserve(xs.size());                                                          \
    for (const Array& x : xs) out.push_back(ops::name(x, s, loc));                   \
    return out;                                                                      \
  }
NUVEC_ATLEAST_VECTOR(atleast_1d)
NUVEC_ATLEAST_VECTOR(atleast_2d)
NUVEC_ATLEAST_VECTOR(atleast_3d)
#undef NUVEC_ATLEAST_VECTOR

Array contiguous(const Array& x, bool allow_col_major, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  auto is_dense = [&](bool reverse) {
    int64_t expected = 1;
    for (int i = 0; i < x.ndim(); ++i) {
      int d = reverse ? i : x.ndim() - 1 - i;
      if (x.shape(d) == 1) continue;
      if (x.strides()[d] != expected) return false;
      expected *= x.shape(d);
    }
    return true;
  };
  if (is_dense(false) || (allow_col_major && is_dense(true))) return x;
  return ops::copy(x, s, loc);
}

Array as_strided(const Array& x, Shape shape, Strides strides, size_t offset, StreamOrDevice s,
                 Location loc) {
  if (x.is_failed()) return x;
  if (shape.size() != strides.size())
    return fail(ErrorKind::invalid_argument,
                "the shape has " + std::to_string(shape.size()) + " dimensions and the strides " +
                    std::to_string(strides.size()),
                "as_strided", loc);
  // The lowest and highest positions read, in __int128 so nothing wraps.
  __int128 lo = static_cast<__int128>(offset), hi = lo;
  bool empty = false;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] < 0)
      return fail(ErrorKind::invalid_shape, "negative dimension in " + str(shape), "as_strided",
                  loc);
    empty |= shape[k] == 0;
    __int128 span = static_cast<__int128>(shape[k] == 0 ? 0 : shape[k] - 1) * strides[k];
    (span < 0 ? lo : hi) += span;
  }
  if (!empty && (lo < 0 || hi >= static_cast<__int128>(x.size())))
    return fail(ErrorKind::out_of_range,
                "the strides and offset reach outside the array's " + std::to_string(x.size()) +
                    " elements",
                "as_strided", loc);
  Array flat = ops::reshape(x, {-1}, s, loc);
  if (empty) return ops::reshape(ops::take(flat, ops::zeros({0}, int64, s, loc), s, loc), shape, s, loc);
  Array idx = ops::full({}, array(static_cast<int64_t>(offset)), s, loc);
  for (size_t k = 0; k < shape.size(); ++k) {
    Shape along(shape.size(), 1);
    along[k] = shape[k];
    Array step = ops::multiply(ops::arange(0.0, double(shape[k]), 1.0, int64, s, loc),
                               array(static_cast<int64_t>(strides[k])), s, loc);
    idx = ops::add(idx, ops::reshape(step, along, s, loc), s, loc);
  }
  return ops::take(flat, ops::broadcast_to(idx, shape, s, loc), s, loc);
}

Array matrix_transpose(const Array& x, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  if (x.ndim() < 2)
    return fail(ErrorKind::invalid_argument,
                "needs at least 2 dimensions, got " + std::to_string(x.ndim()),
                "matrix_transpose", loc);
  return ops::swapaxes(x, -1, -2, s, loc);
}

}  // namespace nuvec::ops
