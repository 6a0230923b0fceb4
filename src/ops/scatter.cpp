// Functional updates (x.at(...).add(v)), put_along_axis and
// scatter_add_along_axis. Each finds the flat positions of the selected
// elements by applying the same selection to arange(x.size()) reshaped like
// x, then runs one Scatter over the flattened array.
#include "nuvec/ops/ops.h"
#include "nuvec/primitives/indexing.h"
#include "ops/builder.h"

namespace nuvec {

namespace {

Array positions_of(const Array& x, const StreamOrDevice& s, Location loc) {
  DType d = x.size() > 2147483647 ? int64 : int32;
  return ops::reshape(ops::arange(0.0, double(x.size()), 1.0, d, s, loc), x.shape(), s, loc);
}

// A copy of x updated at `pos` (any shape) with v broadcast to it.
Array scatter(const Array& x, const Array& pos, const Operand& v, Scatter::Type type,
              const char* op, const StreamOrDevice& s, Location loc) {
  if (x.is_failed()) return x;
  if (pos.is_failed()) return pos;
  Array upd = v.is_scalar() ? ops::full(pos.shape(), ops::add(ops::zeros({}, x.dtype()), v, s, loc),
                                        x.dtype(), s, loc)
                            : ops::astype(v.array(), x.dtype(), s, loc);
  if (upd.is_failed()) return upd;
  Array b = ops::broadcast_to(upd, pos.shape(), s, loc);
  if (b.is_failed())
    return ops::detail::fail(ErrorKind::shape_mismatch,
                             "updates cannot broadcast to the selection's shape", op, loc);
  Array flat = ops::reshape(x, {-1}, s, loc);
  Array out = ops::detail::build1(ops::detail::make<Scatter>(type), {flat, pos, b}, s, op, loc);
  return ops::reshape(out, x.shape(), s, loc);
}

Array at_update(const Array& x, const std::vector<Index>& idx, const Operand& v,
                Scatter::Type type, const char* op) {
  Location loc = idx.empty() ? Location::none() : idx[0].loc();
  if (x.is_failed()) return x;
  Array pos = ops::index(positions_of(x, {}, loc), idx);
  return scatter(x, pos, v, type, op, {}, loc);
}

}  // namespace

Array At::set(const Operand& v) const { return at_update(x_, index_, v, Scatter::Type::set, "at.set"); }
Array At::add(const Operand& v) const { return at_update(x_, index_, v, Scatter::Type::add, "at.add"); }
Array At::subtract(const Operand& v) const {
  Array neg = v.is_scalar() ? ops::negative(ops::add(ops::zeros({}, x_.dtype()), v))
                            : ops::negative(ops::astype(v.array(), x_.dtype()));
  return at_update(x_, index_, neg, Scatter::Type::add, "at.subtract");
}
Array At::multiply(const Operand& v) const {
  return at_update(x_, index_, v, Scatter::Type::multiply, "at.multiply");
}
Array At::divide(const Operand& v) const {
  Array r = v.is_scalar() ? ops::reciprocal(ops::add(ops::zeros({}, x_.dtype()), v))
                          : ops::reciprocal(v.array());
  return at_update(x_, index_, ops::astype(r, x_.dtype()), Scatter::Type::multiply, "at.divide");
}
Array At::maximum(const Operand& v) const {
  return at_update(x_, index_, v, Scatter::Type::maximum, "at.maximum");
}
Array At::minimum(const Operand& v) const {
  return at_update(x_, index_, v, Scatter::Type::minimum, "at.minimum");
}

At Array::at(const Index& a) const { return At(*this, {a}); }
At Array::at(const Index& a, const Index& b) const { return At(*this, {a, b}); }
At Array::at(const Index& a, const Index& b, const Index& c) const { return At(*this, {a, b, c}); }
At Array::at(const Index& a, const Index& b, const Index& c, const Index& d) const {
  return At(*this, {a, b, c, d});
}

namespace ops {

Array put_along_axis(const Array& x, const Array& indices, const Operand& values, int axis,
                     StreamOrDevice s, Location loc) {
  Array pos = ops::take_along_axis(positions_of(x, s, loc), indices, axis, s, loc);
  return scatter(x, pos, values, Scatter::Type::set, "put_along_axis", s, loc);
}

Array scatter_add_along_axis(const Array& x, const Array& indices, const Operand& values,
                             int axis, StreamOrDevice s, Location loc) {
  Array pos = ops::take_along_axis(positions_of(x, s, loc), indices, axis, s, loc);
  return scatter(x, pos, values, Scatter::Type::add, "scatter_add_along_axis", s, loc);
}

Array slice_update(const Array& x, const Array& update, const Array& start,
                   const std::vector<int>& axes, StreamOrDevice s, Location loc) {
  if (update.is_failed()) return update;
  if (update.ndim() != x.ndim())
    return detail::fail(ErrorKind::shape_mismatch, "the update must have the array's rank",
                        "slice_update", loc);
  Array pos = ops::slice(positions_of(x, s, loc), start, axes, update.shape(), s, loc);
  return scatter(x, pos, update, Scatter::Type::set, "slice_update", s, loc);
}

}  // namespace ops
}  // namespace nuvec
