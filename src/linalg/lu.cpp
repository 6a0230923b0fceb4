// linalg::lu_factor, lu, tri_inv and solve_triangular: the LU and
// triangular-inverse operations of the Linalg primitive, and MLX's
// composites on them.
#include <algorithm>
#include <sstream>

#include "linalg/run.h"
#include "nuvec/linalg.h"
#include "nuvec/ops/ops.h"

namespace nuvec::linalg {

using detail::run;
using ops::impl::fail;
using Op = Linalg::Op;

namespace {

std::string shape_text(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

// The first `size` entries of axis `axis` of x (a view).
Array head(const Array& x, int axis, int size, StreamOrDevice s, Location loc) {
  std::vector<int> stop(x.shape().begin(), x.shape().end());
  stop[axis < 0 ? axis + x.ndim() : axis] = size;
  return ops::slice(x, std::vector<int>(x.ndim(), 0), stop, {}, s, loc);
}

}  // namespace

std::pair<Array, Array> lu_factor(const Array& a, StreamOrDevice s,
                                  Location loc) {
  auto out = run(Op::lu_factor, false, {a}, 3, s, "lu_factor", loc);
  return {out[0], out[1]};
}

std::vector<Array> lu(const Array& a, StreamOrDevice s, Location loc) {
  auto out = run(Op::lu_factor, false, {a}, 3, s, "lu", loc);
  if (out[0].is_failed()) return {out[0], out[0], out[0]};
  int m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  // L: the strict lower part of the first K columns plus the unit diagonal;
  // U: the upper part of the first K rows.
  Array l = ops::tril(out[0], -1, s, loc);
  Array u = ops::triu(out[0], 0, s, loc);
  if (n > k) l = head(l, -1, k, s, loc);
  if (m > k) u = head(u, -2, k, s, loc);
  l = ops::add(l, ops::eye(m, k, 0, a.dtype(), s, loc), s, loc);
  return {out[2], l, u};
}

Array tri_inv(const Array& a, bool upper, StreamOrDevice s, Location loc) {
  return run(Op::tri_inv, upper, {a}, 1, s, "tri_inv", loc)[0];
}

Array solve_triangular(const Array& a, const Array& b, bool upper,
                       StreamOrDevice s, Location loc) {
  const char* name = "solve_triangular";
  if (a.is_failed()) return a;
  if (b.is_failed()) return b;
  // MLX's checks, in its order; the dtype of a itself is tri_inv's.
  if (a.ndim() < 2)
    return fail(ErrorKind::invalid_shape,
                "the first input must have at least 2 dimensions, got shape " +
                    shape_text(a.shape()),
                name, loc);
  if (b.ndim() < 1)
    return fail(ErrorKind::invalid_shape,
                "the second input must have at least 1 dimension, got a 0-d "
                "array",
                name, loc);
  if (a.shape(-1) != a.shape(-2))
    return fail(ErrorKind::invalid_shape,
                "the first input must be a square matrix, got shape " +
                    shape_text(a.shape()),
                name, loc);
  int bdim = b.ndim() > 1 ? b.shape(-2) : b.shape(-1);
  if (a.shape(-1) != bdim)
    return fail(ErrorKind::shape_mismatch,
                "a of shape " + shape_text(a.shape()) +
                    " cannot solve right-hand sides of shape " +
                    shape_text(b.shape()),
                name, loc);
  DType d = promote_types(a.dtype(), b.dtype());
  if (d != float32 && d != float64)
    return fail(ErrorKind::unsupported_dtype,
                "the inputs must promote to float32 or float64, got " +
                    std::string(dtype_name(a.dtype())) + " and " +
                    std::string(dtype_name(b.dtype())),
                name, loc);
  if (b.ndim() > 1) {
    Shape ba(a.shape().begin(), a.shape().end() - 2);
    Shape bb(b.shape().begin(), b.shape().end() - 2);
    auto batch = ops::try_broadcast_shapes(ba, bb);
    if (!batch)
      return fail(ErrorKind::shape_mismatch,
                  "the batch shapes of a and b do not broadcast: " +
                      batch.error().message(),
                  name, loc);
  }
  Array inv = run(Op::tri_inv, upper, {a}, 1, s, name, loc)[0];
  if (inv.is_failed()) return inv;
  return ops::matmul(inv, b, s, loc);
}

}  // namespace nuvec::linalg
