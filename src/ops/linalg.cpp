#include "nuvec/ops/linalg.h"

#include <sstream>

#include "nuvec/ops/elementwise.h"
#include "nuvec/ops/reduce.h"
#include "nuvec/ops/shape.h"
#include "nuvec/primitives/linalg.h"
#include "ops/builder.h"

namespace nuvec::ops {

using detail::build1;
using detail::fail;
using detail::make;

Array matmul(const Array& a, const Array& b, StreamOrDevice s, Location loc) {
  if (a.is_failed()) return a;
  if (b.is_failed()) return b;
  if (a.ndim() == 0 || b.ndim() == 0)
    return fail(ErrorKind::invalid_shape, "got a 0-d operand; matmul needs at least 1-d arrays",
                "matmul", loc);
  DType d = promote_types(a.dtype(), b.dtype());
  Array x = ops::astype(a, d, s, loc), y = ops::astype(b, d, s, loc);
  bool row = x.ndim() == 1, col = y.ndim() == 1;
  if (row) x = ops::reshape(x, {1, x.shape(0)}, s, loc);
  if (col) y = ops::reshape(y, {y.shape(0), 1}, s, loc);
  int kx = x.shape(-1), ky = y.shape(-2);
  if (kx != ky) {
    std::ostringstream os;
    os << "last dimension of the first operand " << a.shape()
       << " must match the second-to-last of the second " << b.shape() << ", got " << kx
       << " and " << ky;
    return fail(ErrorKind::shape_mismatch, os.str(),
                "matmul", loc);
  }
  Shape bx(x.shape().begin(), x.shape().end() - 2), by(y.shape().begin(), y.shape().end() - 2);
  auto batch = broadcast_shapes(bx, by);
  if (!batch) return fail(batch.error().kind(), batch.error().message(), "matmul", loc);
  Shape sx = *batch, sy = *batch;
  sx.push_back(x.shape(-2));
  sx.push_back(kx);
  sy.push_back(ky);
  sy.push_back(y.shape(-1));
  Array out = build1(make<Matmul>(), {ops::broadcast_to(x, sx, s, loc), ops::broadcast_to(y, sy, s, loc)}, s,
                     "matmul", loc);
  if (out.is_failed()) return out;
  if (row && col) return ops::reshape(out, Shape(batch->begin(), batch->end()), s, loc);
  if (row) return ops::squeeze(out, Axes(out.ndim() - 2), s, loc);
  if (col) return ops::squeeze(out, Axes(out.ndim() - 1), s, loc);
  return out;
}

Array inner(const Array& a, const Array& b, StreamOrDevice s, Location loc) {
  if (a.is_failed()) return a;
  if (b.is_failed()) return b;
  if (a.ndim() == 0 || b.ndim() == 0) return ops::multiply(a, b, s, loc);
  if (a.shape(-1) != b.shape(-1))
    return fail(ErrorKind::shape_mismatch, "last dimensions differ: " + std::to_string(a.shape(-1)) +
                                               " and " + std::to_string(b.shape(-1)),
                "inner", loc);
  // a[..., k] . b[..., k]: flatten the leading axes of each side.
  Shape out(a.shape().begin(), a.shape().end() - 1);
  out.insert(out.end(), b.shape().begin(), b.shape().end() - 1);
  Array x = ops::reshape(a, {-1, a.shape(-1)}, s, loc);
  Array y = ops::reshape(b, {-1, b.shape(-1)}, s, loc);
  return ops::reshape(ops::matmul(x, ops::transpose(y, s, loc), s, loc), out, s, loc);
}

Array outer(const Array& a, const Array& b, StreamOrDevice s, Location loc) {
  return ops::multiply(ops::reshape(a, {-1, 1}, s, loc), ops::reshape(b, {-1}, s, loc), s, loc);
}

Array addmm(const Array& c, const Array& a, const Array& b, float alpha, float beta,
            StreamOrDevice s, Location loc) {
  // As MLX: all three operands in their common dtype first.
  DType d = promote_types(promote_types(a.dtype(), b.dtype()), c.dtype());
  Array p = ops::matmul(ops::astype(a, d, s, loc), ops::astype(b, d, s, loc), s, loc);
  if (alpha != 1.0f) p = ops::multiply(p, alpha, s, loc);
  if (beta == 0.0f) {  // as BLAS and MLX: c is not read (its NaNs do not leak)
    auto shape = ops::broadcast_shapes(p.shape(), c.shape());
    if (!shape) return detail::fail(shape.error().kind(), shape.error().message(), "addmm", loc);
    return ops::astype(ops::broadcast_to(p, *shape, s, loc), promote_types(p.dtype(), c.dtype()),
                       s, loc);
  }
  Array cc = beta != 1.0f ? ops::multiply(c, beta, s, loc) : c;
  return ops::add(p, cc, s, loc);
}

}  // namespace nuvec::ops
