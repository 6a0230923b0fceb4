// linalg::inv, cholesky, qr, svd, eigh, eig, solve, pinv, cholesky_inv:
// argument normalisation around the Linalg primitive (which validates).
#include <algorithm>
#include <limits>

#include "linalg/run.h"
#include "nuvec/linalg.h"
#include "nuvec/ops/ops.h"
#include "nuvec/primitives/linalg.h"
#include "ops/builder.h"

namespace nuvec::linalg {

using ops::impl::build;
using ops::impl::fail;
using ops::impl::make;
using Op = Linalg::Op;

using detail::run;

Array detail::renamed(const Array& x, const char* name, Location loc) {
  const Error* e = x.error();
  if (!e || e->op_name().value_or("") == name) return x;
  return fail(e->kind(), e->message(), name, loc);
}

Array inv(const Array& x, StreamOrDevice s, Location loc) {
  return run(Op::inv, false, {x}, 1, s, "inv", loc)[0];
}

Array cholesky(const Array& x, bool upper, StreamOrDevice s, Location loc) {
  return run(Op::cholesky, upper, {x}, 1, s, "cholesky", loc)[0];
}

Array cholesky_inv(const Array& factor, bool upper, StreamOrDevice s, Location loc) {
  // A = L L^T (or U^T U): A^-1 = L^-T L^-1 (or U^-1 U^-T); as MLX, only the
  // factor's triangle is read.
  Array finv = run(Op::tri_inv, upper, {factor}, 1, s, "cholesky_inv", loc)[0];
  if (finv.is_failed()) return finv;
  Array t = ops::swapaxes(finv, -1, -2, s, loc);
  return upper ? ops::matmul(finv, t, s, loc) : ops::matmul(t, finv, s, loc);
}

std::pair<Array, Array> qr(const Array& x, StreamOrDevice s, Location loc) {
  auto out = run(Op::qr, false, {x}, 2, s, "qr", loc);
  return {out[0], out[1]};
}

std::vector<Array> svd(const Array& x, bool compute_uv, StreamOrDevice s, Location loc) {
  if (!compute_uv) return run(Op::svdvals, false, {x}, 1, s, "svd", loc);
  return run(Op::svd, false, {x}, 3, s, "svd", loc);
}

namespace {

std::optional<bool> upper_of(const std::string& uplo) {
  if (uplo == "L") return false;
  if (uplo == "U") return true;
  return std::nullopt;
}

}  // namespace

std::pair<Array, Array> eigh(const Array& x, const std::string& UPLO, StreamOrDevice s,
                             Location loc) {
  auto up = upper_of(UPLO);
  if (!up) {
    Array f = x.is_failed() ? x
                            : fail(ErrorKind::invalid_argument,
                                   "UPLO must be 'L' or 'U', got '" + UPLO + "'", "eigh", loc);
    return {f, f};
  }
  auto out = run(Op::eigh, *up, {x}, 2, s, "eigh", loc);
  return {out[0], out[1]};
}

Array eigvalsh(const Array& x, const std::string& UPLO, StreamOrDevice s, Location loc) {
  auto up = upper_of(UPLO);
  if (!up)
    return x.is_failed() ? x
                         : fail(ErrorKind::invalid_argument,
                                "UPLO must be 'L' or 'U', got '" + UPLO + "'", "eigvalsh", loc);
  return run(Op::eigvalsh, *up, {x}, 1, s, "eigvalsh", loc)[0];
}

std::pair<Array, Array> eig(const Array& a, StreamOrDevice s, Location loc) {
  auto out = run(Op::eig, false, {a}, 2, s, "eig", loc);
  return {out[0], out[1]};
}

Array eigvals(const Array& a, StreamOrDevice s, Location loc) {
  return run(Op::eigvals, false, {a}, 1, s, "eigvals", loc)[0];
}

Array solve(const Array& a, const Array& b, StreamOrDevice s, Location loc) {
  if (a.is_failed()) return a;
  if (b.is_failed()) return b;
  DType d = promote_types(a.dtype(), b.dtype());
  Array x = ops::astype(a, d, s, loc), y = ops::astype(b, d, s, loc);
  bool vec = a.ndim() >= 2 && b.ndim() >= 1 && (b.ndim() == 1 || b.ndim() == a.ndim() - 1);
  if (vec) y = ops::expand_dims(y, -1, s, loc);
  if (x.ndim() >= 2 && y.ndim() >= 2) {
    Shape bx(x.shape().begin(), x.shape().end() - 2), by(y.shape().begin(), y.shape().end() - 2);
    auto batch = ops::try_broadcast_shapes(bx, by);
    if (!batch)
      return fail(ErrorKind::shape_mismatch,
                  "the batch shapes of a and b do not broadcast: " + batch.error().message(),
                  "solve", loc);
    Shape sx = *batch, sy = *batch;
    sx.insert(sx.end(), x.shape().end() - 2, x.shape().end());
    sy.insert(sy.end(), y.shape().end() - 2, y.shape().end());
    x = ops::broadcast_to(x, sx, s, loc);
    y = ops::broadcast_to(y, sy, s, loc);
  }
  Array out = run(Op::solve, false, {x, y}, 1, s, "solve", loc)[0];
  if (vec && !out.is_failed()) out = ops::squeeze(out, Axes(-1), s, loc);
  return out;
}

Array pinv(const Array& x, StreamOrDevice s, Location loc) {
  auto usv = run(Op::svd, false, {x}, 3, s, "pinv", loc);
  if (usv[0].is_failed()) return usv[0];
  int m = x.shape(-2), n = x.shape(-1), k = std::min(m, n);
  // Reduced factors: the first k columns of U and rows of Vt.
  Array u = ops::slice(usv[0], std::vector<int>(x.ndim(), 0),
                       [&] { Shape e = usv[0].shape(); e.back() = k; return e; }(), {}, s, loc);
  Array vt = ops::slice(usv[2], std::vector<int>(x.ndim(), 0),
                        [&] { Shape e = usv[2].shape(); e[e.size() - 2] = k; return e; }(), {}, s,
                        loc);
  Array sv = usv[1];
  double eps = x.dtype() == float64 ? std::numeric_limits<double>::epsilon()
                                    : double(std::numeric_limits<float>::epsilon());
  double rcond = 10.0 * std::max(m, n) * eps;
  if (k == 0) return ops::zeros({}, x.dtype(), s, loc) * ops::swapaxes(x, -1, -2, s, loc);
  Array cut = ops::multiply(ops::max(sv, Axes(-1), true, s, loc), rcond, s, loc);
  Array sinv = ops::where(ops::greater(sv, cut, s, loc), ops::reciprocal(sv, s, loc), 0.0, s, loc);
  Array v = ops::swapaxes(vt, -1, -2, s, loc);
  Array vs = ops::multiply(v, ops::expand_dims(sinv, -2, s, loc), s, loc);
  return ops::matmul(vs, ops::swapaxes(u, -1, -2, s, loc), s, loc);
}

}  // namespace nuvec::linalg
