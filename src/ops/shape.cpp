#include "nuvec/ops/shape.h"

#include <algorithm>
#include <sstream>

#include "nuvec/primitives/shape_ops.h"
#include "ops/builder.h"
#include "ops/indexing_impl.h"

namespace nuvec::inline ops {

using impl::build1;
using impl::fail;
using impl::make;

namespace {
std::string str(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}
}  // namespace

Array reshape(const Array& x, Shape shape, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) return fail(ErrorKind::invalid_shape, "only one dimension can be -1", "reshape", loc);
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      return fail(ErrorKind::invalid_shape, "negative dimension in " + str(shape), "reshape", loc);
    }
  }
  // The product of the given dimensions in __int128 (saturated far past
  // int64), so a huge shape is compared, not wrapped.
  Shape known_dims = shape;
  if (infer >= 0) known_dims.erase(known_dims.begin() + infer);
  __int128 known = wide_size(known_dims);
  if (infer >= 0) {
    if (known == 0 || x.size() % known != 0)
      return fail(ErrorKind::invalid_shape,
                  "cannot reshape an array of size " + std::to_string(x.size()) + " into shape " +
                      str(shape),
                  "reshape", loc);
    auto d = checked_dim(x.size() / known, "the inferred dimension");
    if (!d) return fail(d.error().kind(), d.error().message() + " (size " +
                        std::to_string(x.size()) + " into shape " + str(shape) + ")",
                        "reshape", loc);
    shape[infer] = *d;
  } else if (known != x.size()) {
    return fail(ErrorKind::invalid_shape,
                "cannot reshape an array of size " + std::to_string(x.size()) + " into shape " +
                    str(shape),
                "reshape", loc);
  }
  if (shape == x.shape()) return x;
  return build1(make<Reshape>(shape), {x}, s, "reshape", loc);
}

Array flatten(const Array& x, int start_axis, int end_axis, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  int n = x.ndim();
  if (n == 0) return ops::reshape(x, {1}, s, loc);
  // MLX's rule: negative axes count from the end; the start is clamped
  // from below and the end from above, and what is left must be in order.
  int a0 = std::max(start_axis < 0 ? start_axis + n : start_axis, 0);
  int b0 = std::min(end_axis < 0 ? end_axis + n : end_axis, n - 1);
  if (b0 < a0)
    return fail(ErrorKind::invalid_argument,
                "start_axis " + std::to_string(start_axis) + " is after end_axis " +
                    std::to_string(end_axis) + " for an array with " + std::to_string(n) +
                    " dimensions",
                "flatten", loc);
  std::optional<int> a = a0, b = b0;
  Shape shape(x.shape().begin(), x.shape().begin() + *a);
  int64_t m = 1;  // within int64: the array's size is
  for (int i = *a; i <= *b; ++i) m *= x.shape()[i];
  auto len = checked_dim(m, "flattened length");
  if (!len) return fail(len.error().kind(), len.error().message(), "flatten", loc);
  shape.push_back(*len);
  shape.insert(shape.end(), x.shape().begin() + *b + 1, x.shape().end());
  return ops::reshape(x, shape, s, loc);
}

Array squeeze(const Array& x, StreamOrDevice s, Location loc) {
  Shape shape;
  for (int d : x.shape())
    if (d != 1) shape.push_back(d);
  return ops::reshape(x, shape, s, loc);
}

Array squeeze(const Array& x, const Axes& axes, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  auto ax = impl::normalize_axes(axes.list(), x.ndim());
  if (!ax) return fail(ax.error().kind(), ax.error().message(), "squeeze", loc);
  Shape shape;
  for (int i = 0; i < x.ndim(); ++i) {
    bool drop = std::find(ax->begin(), ax->end(), i) != ax->end();
    if (drop && x.shape()[i] != 1)
      return fail(ErrorKind::invalid_argument,
                  "cannot squeeze axis " + std::to_string(i) + " of size " +
                      std::to_string(x.shape()[i]),
                  "squeeze", loc);
    if (!drop) shape.push_back(x.shape()[i]);
  }
  return ops::reshape(x, shape, s, loc);
}

Array expand_dims(const Array& x, const Axes& axes, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  int out_nd = x.ndim() + static_cast<int>(axes.list().size());
  auto ax = impl::normalize_axes(axes.list(), out_nd);
  if (!ax) return fail(ax.error().kind(), ax.error().message(), "expand_dims", loc);
  Shape shape;
  size_t j = 0, k = 0;
  for (int i = 0; i < out_nd; ++i) {
    if (k < ax->size() && (*ax)[k] == i) {
      shape.push_back(1);
      ++k;
    } else {
      shape.push_back(x.shape()[j++]);
    }
  }
  return ops::reshape(x, shape, s, loc);
}

Array transpose(const Array& x, std::vector<int> axes, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  for (int& a : axes) {
    auto n = impl::normalize_axis(a, x.ndim());
    if (!n)
      return fail(ErrorKind::invalid_axis, "axis " + std::to_string(a) + " is out of range for an array with " +
                                               std::to_string(x.ndim()) + " dimensions",
                  "transpose", loc);
    a = *n;
  }
  return build1(make<Transpose>(axes), {x}, s, "transpose", loc);
}

Array transpose(const Array& x, StreamOrDevice s, Location loc) {
  std::vector<int> axes(static_cast<size_t>(std::max(x.ndim(), 0)));
  for (int i = 0; i < x.ndim(); ++i) axes[i] = x.ndim() - 1 - i;
  return ops::transpose(x, axes, s, loc);
}

Array swapaxes(const Array& x, int axis1, int axis2, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  auto a = impl::normalize_axis(axis1, x.ndim()), b = impl::normalize_axis(axis2, x.ndim());
  if (!a || !b) return fail(ErrorKind::invalid_axis, "axis out of range", "swapaxes", loc);
  std::vector<int> axes(static_cast<size_t>(x.ndim()));
  for (int i = 0; i < x.ndim(); ++i) axes[i] = i;
  std::swap(axes[*a], axes[*b]);
  return ops::transpose(x, axes, s, loc);
}

Array moveaxis(const Array& x, int source, int destination, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  auto a = impl::normalize_axis(source, x.ndim()), b = impl::normalize_axis(destination, x.ndim());
  if (!a || !b) return fail(ErrorKind::invalid_axis, "axis out of range", "moveaxis", loc);
  std::vector<int> axes;
  for (int i = 0; i < x.ndim(); ++i)
    if (i != *a) axes.push_back(i);
  axes.insert(axes.begin() + *b, *a);
  return ops::transpose(x, axes, s, loc);
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  auto r = try_broadcast_shapes(a, b);
  if (!r) Error(r.error().kind(), r.error().message(), std::string("broadcast_shapes")).raise();
  return *r;
}

Expected<Shape> try_broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else
      return op_error(ErrorKind::shape_mismatch,
                      "shapes " + str(a) + " and " + str(b) + " cannot be broadcast");
  }
  return out;
}

Array broadcast_to(const Array& x, const Shape& shape, StreamOrDevice s, Location loc) {
  if (x.shape() == shape && !x.is_failed()) return x;
  return build1(make<Broadcast>(shape), {x}, s, "broadcast_to", loc);
}

std::vector<Array> broadcast_arrays(const std::vector<Array>& inputs, StreamOrDevice s,
                                    Location loc) {
  if (const Array* f = impl::first_failed(inputs)) return {*f};
  Shape shape;
  for (const auto& in : inputs) {
    auto b = try_broadcast_shapes(shape, in.shape());
    if (!b) return {fail(b.error().kind(), b.error().message(), "broadcast_arrays", loc)};
    shape = *b;
  }
  // Relative broadcasts (against the other operands, not to a literal
  // shape), so shapeless compile can replay element-wise ops at any shape.
  // While shapeless compile traces, every operand is wrapped (even equal
  // shapes), so a replay at shapes that broadcast differently still works.
  bool all_equal = true;
  for (const auto& in : inputs) all_equal = all_equal && in.shape() == shape;
  if (all_equal && !impl::shapeless_tracing()) return inputs;
  std::vector<Array> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].shape() == shape && !impl::shapeless_tracing()) {
      out.push_back(inputs[i]);
      continue;
    }
    std::vector<Array> ins{inputs[i]};
    for (size_t j = 0; j < inputs.size(); ++j)
      if (j != i) ins.push_back(inputs[j]);
    out.push_back(build1(make<Broadcast>(shape, true), std::move(ins), s, "broadcast_arrays", loc));
  }
  return out;
}

Array slice(const Array& x, std::vector<int> start, std::vector<int> stop,
            std::vector<int> strides, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  int n = x.ndim();
  if (static_cast<int>(start.size()) > n || stop.size() != start.size() ||
      (!strides.empty() && strides.size() != start.size()))
    return fail(ErrorKind::invalid_argument, "start, stop and strides must have one entry per sliced axis",
                "slice", loc);
  std::vector<int> st(n, 0), size(n), step(n, 1);
  for (int i = 0; i < n; ++i) {
    int dim = x.shape()[i];
    if (i >= static_cast<int>(start.size())) {
      size[i] = dim;
      continue;
    }
    int64_t k = strides.empty() ? 1 : strides[i];
    if (k == 0) return fail(ErrorKind::invalid_argument, "slice step cannot be 0", "slice", loc);
    impl::slice_axis(dim, start[i], stop[i], k, st[i], size[i]);
    step[i] = static_cast<int>(k);
  }
  return build1(make<Slice>(st, size, step), {x}, s, "slice", loc);
}

}  // namespace nuvec::ops
