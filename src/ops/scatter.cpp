// Functional updates (x.at(...).add(v)), put_along_axis and
// scatter_add_axis. Each finds the flat positions of the selected elements
// by applying the same selection to arange(x.size()) reshaped like x, then
// runs one Scatter over the flattened array.
#include <numeric>

#include "nuvec/ops/ops.h"
#include "nuvec/primitives/indexing.h"
#include "ops/builder.h"
#include "ops/indexing_impl.h"

namespace nuvec {

namespace {

// v (an array or a weak scalar) converted to x's dtype.
Array in_dtype_of(const Array& x, const Operand& v, const StreamOrDevice& s,
                  Location loc) {
  return v.is_scalar() ? ops::add(ops::zeros({}, x.dtype(), s, loc), v, s, loc)
                       : ops::astype(v.array(), x.dtype(), s, loc);
}

// A copy of x updated at `pos` (any shape) with v broadcast to it.
Array update_at(const Array& x, const Array& pos, const Operand& v,
                Scatter::Type type, const char* op, const StreamOrDevice& s,
                Location loc) {
  if (x.is_failed()) return x;
  if (pos.is_failed()) return pos;
  Array upd = in_dtype_of(x, v, s, loc);
  if (upd.is_failed()) return upd;
  Array b = ops::broadcast_to(upd, pos.shape(), s, loc);
  if (b.is_failed())
    return ops::impl::fail(ErrorKind::shape_mismatch,
                           "updates of shape " +
                               ops::impl::shape_text(upd.shape()) +
                               " cannot broadcast to the selection's shape " +
                               ops::impl::shape_text(pos.shape()),
                           op, loc);
  return ops::impl::scatter_flat(x, pos, b, type, op, s, loc);
}

Array at_update(const Array& x, const std::vector<Index>& idx, const Operand& v,
                Scatter::Type type, const char* op) {
  Location loc = idx.empty() ? Location::none() : idx[0].loc();
  if (x.is_failed()) return x;
  Array pos = ops::index(ops::impl::positions_of(x.shape(), {}, loc), idx);
  return update_at(x, pos, v, type, op, {}, loc);
}

}  // namespace

Array At::set(const Operand& v) const {
  return at_update(x_, index_, v, Scatter::Type::set, "at.set");
}
Array At::add(const Operand& v) const {
  return at_update(x_, index_, v, Scatter::Type::add, "at.add");
}
Array At::subtract(const Operand& v) const {
  Array neg = v.is_scalar()
                  ? ops::negative(ops::add(ops::zeros({}, x_.dtype()), v))
                  : ops::negative(ops::astype(v.array(), x_.dtype()));
  return at_update(x_, index_, neg, Scatter::Type::add, "at.subtract");
}
Array At::multiply(const Operand& v) const {
  return at_update(x_, index_, v, Scatter::Type::multiply, "at.multiply");
}
Array At::divide(const Operand& v) const {
  Array r = v.is_scalar()
                ? ops::reciprocal(ops::add(ops::zeros({}, x_.dtype()), v))
                : ops::reciprocal(v.array());
  return at_update(x_, index_, ops::astype(r, x_.dtype()),
                   Scatter::Type::multiply, "at.divide");
}
Array At::maximum(const Operand& v) const {
  return at_update(x_, index_, v, Scatter::Type::maximum, "at.maximum");
}
Array At::minimum(const Operand& v) const {
  return at_update(x_, index_, v, Scatter::Type::minimum, "at.minimum");
}

At Array::at(const Index& a) const { return At(*this, {a}); }
At Array::at(const Index& a, const Index& b) const { return At(*this, {a, b}); }
At Array::at(const Index& a, const Index& b, const Index& c) const {
  return At(*this, {a, b, c});
}
At Array::at(const Index& a, const Index& b, const Index& c,
             const Index& d) const {
  return At(*this, {a, b, c, d});
}

inline namespace ops {

namespace {

// MLX's scatter_axis: checks, values squeezed and broadcast with the
// indices, then x, indices and values broadcast on the other axes.
Array scatter_axis(const Array& x, const Array& indices, const Operand& values,
                   int axis, Scatter::Type type, const char* op,
                   const StreamOrDevice& s, Location loc) {
  if (x.is_failed()) return x;
  if (indices.is_failed()) return indices;
  if (!values.is_scalar() && values.array().is_failed()) return values.array();
  auto a = impl::normalize_axis(axis, x.ndim());
  if (!a)
    return impl::fail(ErrorKind::invalid_axis,
                      "axis " + std::to_string(axis) +
                          " is out of range for an array with " +
                          std::to_string(x.ndim()) + " dimensions",
                      op, loc);
  if (indices.ndim() != x.ndim())
    return impl::fail(ErrorKind::shape_mismatch,
                      "indices of dimension " + std::to_string(indices.ndim()) +
                          " do not match an array of dimension " +
                          std::to_string(x.ndim()),
                      op, loc);
  if (!is_integer(indices.dtype()))
    return impl::fail(ErrorKind::unsupported_dtype,
                      "indices must be integers, got " +
                          std::string(dtype_name(indices.dtype())),
                      op, loc);
  if (x.size() == 0) return x;
  Array upd = in_dtype_of(x, values, s, loc);
  if (upd.ndim() > indices.ndim()) {
    std::vector<int> lead(upd.ndim() - indices.ndim());
    std::iota(lead.begin(), lead.end(), 0);
    for (int d : lead)
      if (upd.shape(d) != 1)
        return impl::fail(ErrorKind::shape_mismatch,
                          "values of shape " + impl::shape_text(upd.shape()) +
                              " have more dimensions than the indices",
                          op, loc);
    upd = ops::squeeze(upd, Axes(lead), s, loc);
  }
  auto iv = try_broadcast_shapes(indices.shape(), upd.shape());
  if (!iv)
    return impl::fail(ErrorKind::shape_mismatch, iv.error().message(), op, loc);
  // The other axes of x, the indices and the values broadcast together.
  Shape xo = x.shape(), io = *iv;
  xo[*a] = io[*a] = 1;
  auto other = try_broadcast_shapes(xo, io);
  if (!other)
    return impl::fail(ErrorKind::shape_mismatch, other.error().message(), op,
                      loc);
  Shape xs = *other, is = *other;
  xs[*a] = x.shape(*a);
  is[*a] = (*iv)[*a];
  Array xb = ops::broadcast_to(x, xs, s, loc);
  Array pos =
      ops::take_along_axis(impl::positions_of(xs, s, loc),
                           ops::broadcast_to(indices, is, s, loc), *a, s, loc);
  if (pos.is_failed()) return impl::refail(pos, op, loc);
  return impl::scatter_flat(xb, pos, ops::broadcast_to(upd, is, s, loc), type,
                            op, s, loc);
}

}  // namespace

Array put_along_axis(const Array& x, const Array& indices,
                     const Operand& values, int axis, StreamOrDevice s,
                     Location loc) {
  return scatter_axis(x, indices, values, axis, Scatter::Type::set,
                      "put_along_axis", s, loc);
}

Array scatter_add_axis(const Array& x, const Array& indices,
                       const Operand& values, int axis, StreamOrDevice s,
                       Location loc) {
  return scatter_axis(x, indices, values, axis, Scatter::Type::add,
                      "scatter_add_axis", s, loc);
}

Array scatter_add_along_axis(const Array& x, const Array& indices,
                             const Operand& values, int axis, StreamOrDevice s,
                             Location loc) {
  return scatter_axis(x, indices, values, axis, Scatter::Type::add,
                      "scatter_add_axis", s, loc);
}

}  // namespace ops
}  // namespace nuvec
