// take, take_along_axis and x.i(...): basic indexing through views, advanced
// (index-array) indexing through one Take on the linearised indexed axes.
#include "nuvec/ops/indexing.h"

#include <algorithm>

#include "nuvec/ops/ops.h"
#include "nuvec/primitives/indexing.h"
#include "ops/builder.h"

namespace nuvec::ops {

using detail::build1;
using detail::fail;
using detail::make;

Array take(const Array& x, const Array& indices, int axis, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  auto a = detail::normalize_axis(axis, x.ndim());
  if (!a)
    return fail(ErrorKind::invalid_axis, "axis " + std::to_string(axis) +
                                             " is out of range for an array with " +
                                             std::to_string(x.ndim()) + " dimensions",
                "take", loc);
  return build1(make<Take>(*a), {x, indices}, s, "take", loc);
}

Array take(const Array& x, const Array& indices, StreamOrDevice s, Location loc) {
  return ops::take(ops::reshape(x, {-1}, s, loc), indices, 0, s, loc);
}

namespace {

// idx wrapped once when negative and clamped into [0, n), as Take does.
Array normalized(const Array& idx, int n, const StreamOrDevice& s, Location loc) {
  Array i = ops::astype(idx, int64, s, loc);
  Array wrapped = ops::where(ops::less(i, 0, s, loc), ops::add(i, n, s, loc), i, s, loc);
  return ops::clip(wrapped, Operand(0), Operand(std::max(n - 1, 0)), s, loc);
}

// sum_k idx_k * stride_k over axes whose sizes are `dims` (row-major).
Array linear_index(const std::vector<Array>& idx, const std::vector<int>& dims,
                   const StreamOrDevice& s, Location loc) {
  Array lin;
  int64_t stride = 1;
  for (size_t k = idx.size(); k-- > 0;) {
    Array term = ops::multiply(normalized(idx[k], dims[k], s, loc), stride, s, loc);
    lin = k + 1 == idx.size() ? term : ops::add(lin, term, s, loc);
    stride *= dims[k];
  }
  return lin;
}

}  // namespace

Array take_along_axis(const Array& x, const Array& indices, int axis, StreamOrDevice s,
                      Location loc) {
  if (x.is_failed()) return x;
  if (indices.is_failed()) return indices;
  auto a = detail::normalize_axis(axis, x.ndim());
  if (!a || indices.ndim() != x.ndim())
    return fail(a ? ErrorKind::shape_mismatch : ErrorKind::invalid_axis,
                a ? "indices must have the array's rank" : "axis out of range",
                "take_along_axis", loc);
  if (!is_integer(indices.dtype()))
    return fail(ErrorKind::unsupported_dtype, "indices must be integers", "take_along_axis", loc);
  // Broadcast the other axes, then gather from the flattened array at
  // sum_d grid_d * stride_d + idx * stride_axis.
  Shape xs = x.shape(), is = indices.shape();
  xs[*a] = 1;
  is[*a] = 1;
  auto b = broadcast_shapes(xs, is);
  if (!b) return fail(b.error().kind(), b.error().message(), "take_along_axis", loc);
  Shape xshape = *b, ishape = *b;
  xshape[*a] = x.shape(*a);
  ishape[*a] = indices.shape(*a);
  Array xb = ops::broadcast_to(x, xshape, s, loc);
  std::vector<Array> parts;
  std::vector<int> dims;
  for (int d = 0; d < x.ndim(); ++d) {
    if (d == *a) {
      parts.push_back(ops::broadcast_to(indices, ishape, s, loc));
    } else {
      Shape g(static_cast<size_t>(x.ndim()), 1);
      g[d] = ishape[d];
      parts.push_back(ops::broadcast_to(ops::reshape(ops::arange(ishape[d], s, loc), g, s, loc),
                                        ishape, s, loc));
    }
    dims.push_back(xshape[d]);
  }
  return ops::take(ops::reshape(xb, {-1}, s, loc), linear_index(parts, dims, s, loc), 0, s, loc);
}

namespace {

// Python's slice.indices() for one axis, as (start, stop, step) for ops::slice.
void slice_bounds(const IndexSlice& sl, int dim, int& start, int& stop) {
  if (sl.step > 0) {
    start = sl.start.value_or(0);
    stop = sl.stop.value_or(dim);
  } else {
    start = sl.start.value_or(dim - 1);
    stop = sl.stop ? *sl.stop : -dim - 1;
  }
}

}  // namespace

Array index(const Array& x, const std::vector<Index>& idx, StreamOrDevice s) {
  Location loc = idx.empty() ? Location::none() : idx[0].loc();
  if (x.is_failed()) return x;
  int consumed = 0, ellipses = 0;
  bool advanced = false;
  for (const auto& e : idx) {
    consumed += e.kind() == Index::Kind::integer || e.kind() == Index::Kind::slice ||
                e.kind() == Index::Kind::array;
    ellipses += e.kind() == Index::Kind::ellipsis;
    advanced |= e.kind() == Index::Kind::array;
    if (e.kind() == Index::Kind::array && e.array().is_failed()) return e.array();
    if (e.kind() == Index::Kind::slice && e.slice().step == 0)
      return fail(ErrorKind::invalid_argument, "slice step cannot be 0", "index", loc);
  }
  if (ellipses > 1) return fail(ErrorKind::invalid_argument, "an index can only have one ellipsis", "index", loc);
  if (consumed > x.ndim())
    return fail(ErrorKind::invalid_argument,
                "too many indices (" + std::to_string(consumed) + ") for an array with " +
                    std::to_string(x.ndim()) + " dimensions",
                "index", loc);
  // Expand the ellipsis (or pad at the end) into full slices.
  std::vector<Index> e;
  for (const auto& v : idx) {
    if (v.kind() != Index::Kind::ellipsis) {
      e.push_back(v);
      continue;
    }
    for (int k = consumed; k < x.ndim(); ++k) e.emplace_back(nuvec::slice(), loc);
  }
  if (!ellipses)
    for (int k = consumed; k < x.ndim(); ++k) e.emplace_back(nuvec::slice(), loc);
  // Basic part: slice every axis (integers take one element) and insert the
  // new axes; each entry becomes one axis of y.
  std::vector<int> start, stop, step;
  int ax = 0;
  for (const auto& v : e) {
    if (v.kind() == Index::Kind::newaxis) continue;
    int dim = x.shape(ax++);
    int b = 0, en = dim, st = 1;
    if (v.kind() == Index::Kind::integer) {
      int i = v.integer() < 0 ? v.integer() + dim : v.integer();
      if (i < 0 || i >= dim)
        return fail(ErrorKind::out_of_range,
                    "index " + std::to_string(v.integer()) + " is out of bounds for axis " +
                        std::to_string(ax - 1) + " with size " + std::to_string(dim),
                    "index", loc);
      b = i, en = i + 1;
    } else if (v.kind() == Index::Kind::slice) {
      slice_bounds(v.slice(), dim, b, en);
      st = v.slice().step;
    }
    start.push_back(b), stop.push_back(en), step.push_back(st);
  }
  Array y = ops::slice(x, start, stop, step, s, loc);
  Shape with_new;
  ax = 0;
  for (const auto& v : e) with_new.push_back(v.kind() == Index::Kind::newaxis ? 1 : y.shape(ax++));
  y = ops::reshape(y, with_new, s, loc);
  if (!advanced) {  // drop the integer-indexed axes
    Shape out;
    for (size_t k = 0; k < e.size(); ++k)
      if (e[k].kind() != Index::Kind::integer) out.push_back(y.shape(static_cast<int>(k)));
    return ops::reshape(y, out, s, loc);
  }
  // Advanced: integers are 0-d index arrays (already one element wide).
  std::vector<int> adv, rest;
  std::vector<Array> arrays;
  for (size_t k = 0; k < e.size(); ++k) {
    auto kind = e[k].kind();
    if (kind == Index::Kind::array || kind == Index::Kind::integer) {
      adv.push_back(static_cast<int>(k));
      if (kind == Index::Kind::array && !is_integer(e[k].array().dtype()))
        return fail(ErrorKind::unsupported_dtype,
                    "index arrays must be integers, got " +
                        std::string(dtype_name(e[k].array().dtype())),
                    "index", loc);
      arrays.push_back(kind == Index::Kind::array ? e[k].array() : array(0));
    } else {
      rest.push_back(static_cast<int>(k));
    }
  }
  auto bc = ops::broadcast_arrays(arrays, s, loc);
  if (const Array* f = detail::first_failed(bc))
    return fail(f->error()->kind(), f->error()->message(), "index", loc);
  std::vector<int> perm(adv), dims;
  perm.insert(perm.end(), rest.begin(), rest.end());
  Shape flat{-1};
  for (int k : adv) dims.push_back(y.shape(k));
  for (int k : rest) flat.push_back(y.shape(k));
  Array yt = ops::reshape(ops::transpose(y, perm, s, loc), flat, s, loc);
  Array out = ops::take(yt, linear_index(bc, dims, s, loc), 0, s, loc);
  // Adjacent advanced entries keep their place (NumPy's rule).
  bool adjacent = adv.back() - adv.front() + 1 == static_cast<int>(adv.size());
  if (!adjacent || adv.front() == 0 || out.is_failed()) return out;
  int nb = bc[0].ndim();
  std::vector<int> order;
  for (int k = 0; k < adv.front(); ++k) order.push_back(nb + k);
  for (int k = 0; k < nb; ++k) order.push_back(k);
  for (int k = nb + adv.front(); k < out.ndim(); ++k) order.push_back(k);
  return ops::transpose(out, order, s, loc);
}

}  // namespace nuvec::ops

namespace nuvec {

Array Array::i(const Index& a) const { return ops::index(*this, {a}); }
Array Array::i(const Index& a, const Index& b) const { return ops::index(*this, {a, b}); }
Array Array::i(const Index& a, const Index& b, const Index& c) const {
  return ops::index(*this, {a, b, c});
}
Array Array::i(const Index& a, const Index& b, const Index& c, const Index& d) const {
  return ops::index(*this, {a, b, c, d});
}
Array Array::i(const Index& a, const Index& b, const Index& c, const Index& d,
               const Index& e) const {
  return ops::index(*this, {a, b, c, d, e});
}
Array Array::i(const Index& a, const Index& b, const Index& c, const Index& d,
               const Index& e, const Index& f) const {
  return ops::index(*this, {a, b, c, d, e, f});
}

}  // namespace nuvec
