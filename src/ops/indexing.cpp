// take, take_along_axis and x.i(...): basic indexing through views, advanced
// (index-array) indexing through one Take on the linearised indexed axes.
#include "nuvec/ops/indexing.h"

#include <algorithm>

#include "nuvec/ops/ops.h"
#include "nuvec/primitives/indexing.h"
#include "ops/builder.h"
#include "ops/indexing_impl.h"

namespace nuvec::inline ops {

using impl::build1;
using impl::fail;
using impl::make;

namespace {

std::string axis_message(int axis, int ndim) {
  return "axis " + std::to_string(axis) +
         " is out of range for an array with " + std::to_string(ndim) +
         " dimensions";
}

// MLX's checks of an index array: integers only (bool and floating fail).
std::optional<Array> check_indices(const Array& idx, const char* op,
                                   Location loc) {
  if (idx.dtype() == bool_)
    return fail(ErrorKind::invalid_argument,
                "boolean indices are not supported", op, loc);
  if (!is_integer(idx.dtype()))
    return fail(
        ErrorKind::unsupported_dtype,
        "indices must be integers, got " + std::string(dtype_name(idx.dtype())),
        op, loc);
  return std::nullopt;
}

}  // namespace

Array take(const Array& x, const Array& indices, int axis, StreamOrDevice s,
           Location loc) {
  if (x.is_failed()) return x;
  if (indices.is_failed()) return indices;
  auto a = impl::normalize_axis(axis, x.ndim());
  if (!a)
    return fail(ErrorKind::invalid_axis, axis_message(axis, x.ndim()), "take",
                loc);
  if (auto bad = check_indices(indices, "take", loc)) return *bad;
  if (x.shape(*a) == 0 && indices.size() > 0)
    return fail(ErrorKind::invalid_argument,
                "cannot take a non-empty selection from an axis of size 0",
                "take", loc);
  return build1(make<Take>(*a), {x, indices}, s, "take", loc);
}

Array take(const Array& x, const Array& indices, StreamOrDevice s,
           Location loc) {
  if (x.is_failed()) return x;
  return ops::take(ops::reshape(x, impl::flat_shape(x), s, loc), indices, 0, s,
                   loc);
}

Array take(const Array& x, int index, int axis, StreamOrDevice s,
           Location loc) {
  if (x.is_failed()) return x;
  auto a = impl::normalize_axis(axis, x.ndim());
  if (!a)
    return fail(ErrorKind::invalid_axis, axis_message(axis, x.ndim()), "take",
                loc);
  int dim = x.shape(*a);
  int i = index < 0 ? index + dim : index;
  if (i < 0 || i >= dim)
    return fail(ErrorKind::invalid_argument,
                "index " + std::to_string(index) +
                    " is out of bounds for axis " + std::to_string(*a) +
                    " with size " + std::to_string(dim),
                "take", loc);
  std::vector<int> start(x.ndim(), 0), stop(x.shape().begin(), x.shape().end());
  start[*a] = i;
  stop[*a] = i + 1;
  Shape out = x.shape();
  out.erase(out.begin() + *a);
  return ops::reshape(ops::slice(x, start, stop, {}, s, loc), out, s, loc);
}

Array take(const Array& x, int index, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  return ops::take(ops::reshape(x, impl::flat_shape(x), s, loc), index, 0, s,
                   loc);
}

namespace {

// sum_k idx_k * stride_k over axes whose sizes are `dims` (row-major), each
// index wrapped once and clamped into its axis as Take does.
Array linear_index(const std::vector<Array>& idx, const std::vector<int>& dims,
                   const StreamOrDevice& s, Location loc) {
  Array lin;
  int64_t stride = 1;
  for (size_t k = idx.size(); k-- > 0;) {
    Array term = ops::multiply(
        impl::wrap_clamp(idx[k], dims[k], dims[k] - 1, s, loc), stride, s, loc);
    lin = k + 1 == idx.size() ? term : ops::add(lin, term, s, loc);
    stride *= dims[k];
  }
  return lin;
}

}  // namespace

Array take_along_axis(const Array& x, const Array& indices, int axis,
                      StreamOrDevice s, Location loc) {
  const char* op = "take_along_axis";
  if (x.is_failed()) return x;
  if (indices.is_failed()) return indices;
  auto a = impl::normalize_axis(axis, x.ndim());
  if (!a)
    return fail(ErrorKind::invalid_axis, axis_message(axis, x.ndim()), op, loc);
  if (indices.ndim() != x.ndim())
    return fail(ErrorKind::shape_mismatch,
                "indices of dimension " + std::to_string(indices.ndim()) +
                    " do not match an array of dimension " +
                    std::to_string(x.ndim()),
                op, loc);
  if (auto bad = check_indices(indices, op, loc)) return *bad;
  // Broadcast the other axes, then gather from the flattened array at
  // sum_d grid_d * stride_d + idx * stride_axis.
  Shape xs = x.shape(), is = indices.shape();
  xs[*a] = 1;
  is[*a] = 1;
  auto b = try_broadcast_shapes(xs, is);
  if (!b) return fail(b.error().kind(), b.error().message(), op, loc);
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
      parts.push_back(ops::broadcast_to(
          ops::reshape(ops::arange(ishape[d], s, loc), g, s, loc), ishape, s,
          loc));
    }
    dims.push_back(xshape[d]);
  }
  return impl::take_flat(xb, linear_index(parts, dims, s, loc), op, s, loc);
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
    consumed += e.kind() == Index::Kind::integer ||
                e.kind() == Index::Kind::slice ||
                e.kind() == Index::Kind::array;
    ellipses += e.kind() == Index::Kind::ellipsis;
    advanced |= e.kind() == Index::Kind::array;
    if (e.kind() == Index::Kind::array && e.array().is_failed())
      return e.array();
    if (e.kind() == Index::Kind::slice && e.slice().step == 0)
      return fail(ErrorKind::invalid_argument, "slice step cannot be 0",
                  "index", loc);
  }
  if (ellipses > 1)
    return fail(ErrorKind::invalid_argument,
                "an index can only have one ellipsis", "index", loc);
  if (consumed > x.ndim())
    return fail(ErrorKind::invalid_argument,
                "too many indices (" + std::to_string(consumed) +
                    ") for an array with " + std::to_string(x.ndim()) +
                    " dimensions",
                "index", loc);
  // Expand the ellipsis (or pad at the end) into full slices.
  std::vector<Index> e;
  for (const auto& v : idx) {
    if (v.kind() != Index::Kind::ellipsis) {
      e.push_back(v);
      continue;
    }
    for (int k = consumed; k < x.ndim(); ++k)
      e.emplace_back(nuvec::slice(), loc);
  }
  if (!ellipses)
    for (int k = consumed; k < x.ndim(); ++k)
      e.emplace_back(nuvec::slice(), loc);
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
                    "index " + std::to_string(v.integer()) +
                        " is out of bounds for axis " + std::to_string(ax - 1) +
                        " with size " + std::to_string(dim),
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
  for (const auto& v : e)
    with_new.push_back(v.kind() == Index::Kind::newaxis ? 1 : y.shape(ax++));
  y = ops::reshape(y, with_new, s, loc);
  if (!advanced) {  // drop the integer-indexed axes
    Shape out;
    for (size_t k = 0; k < e.size(); ++k)
      if (e[k].kind() != Index::Kind::integer)
        out.push_back(y.shape(static_cast<int>(k)));
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
  if (const Array* f = impl::first_failed(bc))
    return fail(f->error()->kind(), f->error()->message(), "index", loc);
  std::vector<int> perm(adv), dims;
  perm.insert(perm.end(), rest.begin(), rest.end());
  // The indexed axes merge into the first (sized explicitly: -1 cannot be
  // inferred when another axis is empty).
  int64_t merged = 1;
  for (int k : adv) dims.push_back(y.shape(k)), merged *= y.shape(k);
  if (merged > 2147483647)
    return fail(ErrorKind::overflow,
                "the indexed axes have more than 2^31 - 1 elements", "index",
                loc);
  Shape flat{static_cast<int>(merged)};
  for (int k : rest) flat.push_back(y.shape(k));
  Array yt = ops::reshape(ops::transpose(y, perm, s, loc), flat, s, loc);
  Array out = build1(make<Take>(0), {yt, linear_index(bc, dims, s, loc)}, s,
                     "index", loc);
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

}  // namespace nuvec::inline ops

namespace nuvec {

Array Array::i(const Index& a) const { return ops::index(*this, {a}); }
Array Array::i(const Index& a, const Index& b) const {
  return ops::index(*this, {a, b});
}
Array Array::i(const Index& a, const Index& b, const Index& c) const {
  return ops::index(*this, {a, b, c});
}
Array Array::i(const Index& a, const Index& b, const Index& c,
               const Index& d) const {
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
