// linalg::cross, composed from ops with MLX's rules and operations: each
// input has size 2 or 3 along the axis (2: the third component is 0), the
// other axes broadcast, the result has size 3 there.
#include <sstream>

#include "linalg/run.h"
#include "nuvec/linalg.h"
#include "nuvec/ops/ops.h"

namespace nuvec::linalg {

using ops::impl::fail;

Array cross(const Array& a, const Array& b, int axis, StreamOrDevice s,
            Location loc) {
  const char* name = "cross";
  if (a.is_failed()) return a;
  if (b.is_failed()) return b;
  for (const Array* x : {&a, &b}) {
    if (axis >= x->ndim() || axis < -x->ndim()) {
      std::ostringstream os;
      os << "axis " << axis << " is out of bounds for an array with "
         << x->ndim() << " dimensions";
      return fail(ErrorKind::invalid_axis, os.str(), name, loc);
    }
    int size = x->shape(axis);
    if (size != 2 && size != 3)
      return fail(ErrorKind::invalid_shape,
                  "the axis must have size 2 or 3, got " + std::to_string(size),
                  name, loc);
  }
  bool a2 = a.shape(axis) == 2, b2 = b.shape(axis) == 2;
  // As MLX: the shapes with size 3 on the axis broadcast; a positive axis
  // names an axis of each input, then of the result.
  Shape as = a.shape(), bs = b.shape();
  as[axis < 0 ? axis + a.ndim() : axis] = 3;
  bs[axis < 0 ? axis + b.ndim() : axis] = 3;
  auto out = ops::try_broadcast_shapes(as, bs);
  if (!out)
    return fail(ErrorKind::shape_mismatch, out.error().message(), name, loc);
  Shape shape = *out;
  int ax = axis < 0 ? axis + int(shape.size()) : axis;
  DType d = promote_types(a.dtype(), b.dtype());
  shape[ax] = a2 ? 2 : 3;
  Array x = ops::broadcast_to(ops::astype(a, d, s, loc), shape, s, loc);
  shape[ax] = b2 ? 2 : 3;
  Array y = ops::broadcast_to(ops::astype(b, d, s, loc), shape, s, loc);
  auto xs = ops::split(x, a2 ? 2 : 3, ax, s, loc);
  auto ys = ops::split(y, b2 ? 2 : 3, ax, s, loc);
  if (xs[0].is_failed()) return detail::renamed(xs[0], name, loc);
  if (ys[0].is_failed()) return detail::renamed(ys[0], name, loc);
  auto mul = [&](const Array& p, const Array& q) {
    return ops::multiply(p, q, s, loc);
  };
  auto sub = [&](const Array& p, const Array& q) {
    return ops::subtract(p, q, s, loc);
  };
  std::vector<Array> parts;
  if (a2 && b2) {
    Array z = ops::zeros_like(xs[0], s, loc);
    parts = {z, z};
  } else if (b2) {
    parts = {ops::negative(mul(xs[2], ys[1]), s, loc), mul(xs[2], ys[0])};
  } else if (a2) {
    parts = {mul(xs[1], ys[2]), ops::negative(mul(xs[0], ys[2]), s, loc)};
  } else {
    parts = {sub(mul(xs[1], ys[2]), mul(xs[2], ys[1])),
             sub(mul(xs[2], ys[0]), mul(xs[0], ys[2]))};
  }
  parts.push_back(sub(mul(xs[0], ys[1]), mul(xs[1], ys[0])));
  for (const Array& p : parts)
    if (p.is_failed()) return detail::renamed(p, name, loc);
  return ops::concatenate(parts, ax, s, loc);
}

}  // namespace nuvec::linalg
