#include "nuvec/ops/linalg.h"

#include <optional>
#include <sstream>

#include "nuvec/ops/elementwise.h"
#include "nuvec/ops/quantized.h"
#include "nuvec/ops/reduce.h"
#include "nuvec/ops/shape.h"
#include "nuvec/primitives/linalg.h"
#include "ops/builder.h"

namespace nuvec::inline ops {

using impl::build1;
using impl::fail;
using impl::make;

namespace {

// Two operands as Matmul and AddMM take them: in dtype `d`, a 1-D `a` made
// a row [1, K] and a 1-D `b` a column [K, 1], batch axes broadcast.
struct Product {
  Array x, y;
  bool row = false, col = false;
  Shape batch;
  // The batch of x joins its rows (see folded): x as [batch * M, K], y 2-D.
  bool fold = false;
  Array x_rows, y_matrix;
  Shape with(int m, int n) const {
    Shape s = batch;
    s.push_back(m);
    s.push_back(n);
    return s;
  }
  // The shape users see: the axes added for 1-D operands left out.
  Shape shown() const {
    Shape s = batch;
    if (!row) s.push_back(x.shape(-2));
    if (!col) s.push_back(y.shape(-1));
    return s;
  }
};

// Fills `p`, or returns the failed array of `op` (a failed input as is).
std::optional<Array> prepare(const Array& a, const Array& b, DType d, const char* op,
                             const StreamOrDevice& s, Location loc, Product& p) {
  if (a.is_failed()) return a;
  if (b.is_failed()) return b;
  if (a.ndim() == 0 || b.ndim() == 0)
    return fail(ErrorKind::invalid_shape,
                std::string("got a 0-d operand; ") + op + " needs at least 1-d arrays", op, loc);
  p.x = ops::astype(a, d, s, loc);
  p.y = ops::astype(b, d, s, loc);
  if (p.x.is_failed()) return p.x;  // a conversion past the size limits
  if (p.y.is_failed()) return p.y;
  p.row = p.x.ndim() == 1;
  p.col = p.y.ndim() == 1;
  if (p.row) p.x = ops::reshape(p.x, {1, p.x.shape(0)}, s, loc);
  if (p.col) p.y = ops::reshape(p.y, {p.y.shape(0), 1}, s, loc);
  int kx = p.x.shape(-1), ky = p.y.shape(-2);
  if (kx != ky) {
    std::ostringstream os;
    os << "last dimension of the first operand " << a.shape()
       << " must match the second-to-last of the second " << b.shape() << ", got " << kx
       << " and " << ky;
    return fail(ErrorKind::shape_mismatch, os.str(), op, loc);
  }
  Shape bx(p.x.shape().begin(), p.x.shape().end() - 2);
  Shape by(p.y.shape().begin(), p.y.shape().end() - 2);
  auto batch = try_broadcast_shapes(bx, by);
  if (!batch) return fail(batch.error().kind(), batch.error().message(), op, loc);
  p.batch = *batch;
  // A batch of x against one matrix y (a layer's weight) is one product
  // with the batch in the rows: one GEMM forward, and in the backward pass
  // one GEMM for y's gradient instead of a batch of them summed. Not for
  // few rows per item (ROW_INDEPENDENT_ROWS): those keep their own
  // few-row product, whose rows are independent of the batch.
  p.fold = by.empty() && !bx.empty() && p.x.shape(-2) > ROW_INDEPENDENT_ROWS;
  if (p.fold) {
    p.x_rows = ops::reshape(p.x, {-1, kx}, s, loc);
    p.y_matrix = p.y;
  }
  p.x = ops::broadcast_to(p.x, p.with(p.x.shape(-2), kx), s, loc);
  p.y = ops::broadcast_to(p.y, p.with(ky, p.y.shape(-1)), s, loc);
  return std::nullopt;
}

// A product's output with the axes added for 1-D operands removed.
Array without_added_axes(const Array& out, const Product& p, const StreamOrDevice& s,
                         Location loc) {
  if (out.is_failed()) return out;
  if (p.row && p.col) return ops::reshape(out, p.batch, s, loc);
  if (p.row) return ops::squeeze(out, Axes(out.ndim() - 2), s, loc);
  if (p.col) return ops::squeeze(out, Axes(out.ndim() - 1), s, loc);
  return out;
}

}  // namespace

Array matmul(const Array& a, const Array& b, StreamOrDevice s, Location loc) {
  Product p;
  DType d = promote_types(a.dtype(), b.dtype());
  if (auto failed = prepare(a, b, d, "matmul", s, loc, p)) return *failed;
  if (p.fold) {
    Array out = build1(make<Matmul>(), {p.x_rows, p.y_matrix}, s, "matmul", loc);
    return without_added_axes(ops::reshape(out, p.with(p.x.shape(-2), p.y.shape(-1)), s, loc), p, s, loc);
  }
  return without_added_axes(build1(make<Matmul>(), {p.x, p.y}, s, "matmul", loc), p, s, loc);
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

namespace {

// addmm as element-wise ops around a product: where c widens the product
// (a batched c next to 2-D operands, c [m, n] with b [k, 1]), where c's own
// dtype rounds c * beta to a dtype that then widens the result, and for
// beta == 0 (c is not read: its NaNs do not leak, as BLAS and MLX).
Array addmm_composite(const Array& c, const Array& a, const Array& b, float alpha,
                      float beta, DType d, const StreamOrDevice& s, Location loc) {
  Array p = ops::matmul(ops::astype(a, d, s, loc), ops::astype(b, d, s, loc), s, loc);
  if (alpha != 1.0f) p = ops::multiply(p, alpha, s, loc);
  if (beta == 0.0f) {
    auto shape = ops::try_broadcast_shapes(p.shape(), c.shape());
    if (!shape) return impl::fail(shape.error().kind(), shape.error().message(), "addmm", loc);
    return ops::astype(ops::broadcast_to(p, *shape, s, loc), promote_types(p.dtype(), c.dtype()),
                       s, loc);
  }
  Array cc = beta != 1.0f ? ops::multiply(c, beta, s, loc) : c;
  return ops::add(p, cc, s, loc);
}

// c laid out for the product of `p`: a size-1 axis where a 1-D operand
// added one to the output (a scalar c broadcasts as it is).
Shape c_shape(const Shape& c, const Product& p) {
  Shape out = c;
  if (out.empty()) return out;
  if (p.row && !p.col) out.insert(out.end() - 1, 1);
  if (p.col) out.push_back(1);
  if (p.row && p.col) out.push_back(1);
  return out;
}

}  // namespace

Array addmm(const Array& c, const Array& a, const Array& b, float alpha, float beta,
            StreamOrDevice s, Location loc) {
  // As MLX: all three operands in their common dtype first.
  DType d = promote_types(promote_types(a.dtype(), b.dtype()), c.dtype());
  Product p;
  if (auto failed = prepare(a, b, d, "addmm", s, loc, p)) return *failed;
  if (c.is_failed()) return c;
  auto shape = ops::try_broadcast_shapes(p.shown(), c.shape());
  if (!shape) return impl::fail(shape.error().kind(), shape.error().message(), "addmm", loc);
  if (beta == 0.0f || *shape != p.shown()) return addmm_composite(c, a, b, alpha, beta, d, s, loc);
  // The composite computes c * beta in c's own dtype; AddMM scales in d.
  // So a c of another dtype is scaled first, as the composite does, and
  // enters AddMM with beta 1.
  Array cc = c;
  float cb = beta;
  if (c.dtype() != d && beta != 1.0f) {
    cc = ops::multiply(c, beta, s, loc);
    cb = 1.0f;
  }
  if (promote_types(d, cc.dtype()) != d) return addmm_composite(c, a, b, alpha, beta, d, s, loc);
  cc = ops::astype(cc, d, s, loc);
  if (cc.shape() != c_shape(cc.shape(), p)) cc = ops::reshape(cc, c_shape(cc.shape(), p), s, loc);
  // Folded as matmul, when c is one row for every output row (a bias).
  if (p.fold && (cc.ndim() <= 1 || (cc.ndim() == 2 && cc.shape(0) == 1))) {
    Array out = build1(make<AddMM>(alpha, cb), {p.x_rows, p.y_matrix, cc}, s, "addmm", loc);
    return without_added_axes(ops::reshape(out, p.with(p.x.shape(-2), p.y.shape(-1)), s, loc), p, s, loc);
  }
  Array out = build1(make<AddMM>(alpha, cb), {p.x, p.y, cc}, s, "addmm", loc);
  return without_added_axes(out, p, s, loc);
}

}  // namespace nuvec::ops
