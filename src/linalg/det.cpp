// linalg::det and slogdet, composed as MLX composes them: the explicit
// formula for matrices up to 3x3, lu_factor's U diagonal and pivots beyond.
#include <limits>
#include <optional>
#include <sstream>

#include "linalg/run.h"
#include "nuvec/linalg.h"
#include "nuvec/ops/ops.h"

namespace nuvec::linalg {

using detail::run;
using ops::impl::fail;
using Op = Linalg::Op;

namespace {

// MLX's checks: the failed array, or nothing.
std::optional<Array> check(const Array& a, const char* name, Location loc) {
  if (a.is_failed()) return a;
  if (is_complex(a.dtype()))
    return fail(ErrorKind::unsupported_dtype,
                "complex inputs are not supported", name, loc);
  std::ostringstream shape;
  shape << a.shape();
  if (a.ndim() < 2)
    return fail(
        ErrorKind::invalid_shape,
        "arrays must have at least 2 dimensions, got an array of shape " +
            shape.str(),
        name, loc);
  if (a.shape(-1) != a.shape(-2))
    return fail(ErrorKind::invalid_shape,
                std::string(name) +
                    " is only defined for square matrices, got shape " +
                    shape.str(),
                name, loc);
  return std::nullopt;
}

// a[..., i, j] for every matrix of the batch.
Array elem(const Array& a, int i, int j, StreamOrDevice s, Location loc) {
  int r = a.ndim();
  std::vector<int> start(r, 0), stop(a.shape().begin(), a.shape().end());
  start[r - 2] = i, stop[r - 2] = i + 1;
  start[r - 1] = j, stop[r - 1] = j + 1;
  return ops::squeeze(ops::slice(a, start, stop, {}, s, loc), Axes({-2, -1}), s,
                      loc);
}

// The determinant of matrices up to 3x3 by cofactors, MLX's operations in
// MLX's order (0x0: the empty product, 1).
Array small_det(const Array& a, StreamOrDevice s, Location loc) {
  int n = a.shape(-1);
  if (n == 0)
    return ops::broadcast_to(ops::full({}, 1.0, a.dtype(), s, loc),
                             Shape(a.shape().begin(), a.shape().end() - 2), s,
                             loc);
  auto e = [&](int i, int j) { return elem(a, i, j, s, loc); };
  auto mul = [&](const Array& x, const Array& y) {
    return ops::multiply(x, y, s, loc);
  };
  auto sub = [&](const Array& x, const Array& y) {
    return ops::subtract(x, y, s, loc);
  };
  if (n == 1) return e(0, 0);
  if (n == 2) return sub(mul(e(0, 0), e(1, 1)), mul(e(0, 1), e(1, 0)));
  Array m0 = sub(mul(e(1, 1), e(2, 2)), mul(e(1, 2), e(2, 1)));
  Array m1 = sub(mul(e(1, 0), e(2, 2)), mul(e(1, 2), e(2, 0)));
  Array m2 = sub(mul(e(1, 0), e(2, 1)), mul(e(1, 1), e(2, 0)));
  return ops::add(sub(mul(e(0, 0), m0), mul(e(0, 1), m1)), mul(e(0, 2), m2), s,
                  loc);
}

// {sign, log|det|} of x (already at least float).
std::pair<Array, Array> slogdet_of(const Array& x, const char* name,
                                   StreamOrDevice s, Location loc) {
  DType d = x.dtype();
  int n = x.shape(-1);
  if (n <= 3) {
    Array raw = small_det(x, s, loc);
    return {ops::sign(raw, s, loc), ops::log(ops::abs(raw, s, loc), s, loc)};
  }
  auto out = run(Op::lu_factor, false, {x}, 3, s, name, loc);
  if (out[0].is_failed()) return {out[0], out[0]};
  Array diag = ops::diagonal(out[0], 0, -2, -1, s, loc);
  // The sign: (-1)^(row swaps + negative entries of U's diagonal).
  Array iota = ops::arange(0, n, 1, uint32, s, loc);
  Array swaps = ops::astype(
      ops::sum(ops::not_equal(out[1], iota, s, loc), Axes(-1), false, s, loc),
      int32, s, loc);
  Array negs = ops::astype(
      ops::sum(ops::less(diag, ops::full({}, 0.0, d, s, loc), s, loc), Axes(-1),
               false, s, loc),
      int32, s, loc);
  Array odd = ops::remainder(ops::add(swaps, negs, s, loc), 2, s, loc);
  Array sign = ops::astype(
      ops::subtract(1, ops::multiply(2, odd, s, loc), s, loc), d, s, loc);
  Array logabs = ops::sum(ops::log(ops::abs(diag, s, loc), s, loc), Axes(-1),
                          false, s, loc);
  // A zero pivot: sign 0, log|det| = -inf.
  Array zero = ops::any(ops::equal(diag, ops::full({}, 0.0, d, s, loc), s, loc),
                        Axes(-1), false, s, loc);
  sign = ops::where(zero, ops::full({}, 0.0, d, s, loc), sign, s, loc);
  logabs = ops::where(
      zero, ops::full({}, -std::numeric_limits<double>::infinity(), d, s, loc),
      logabs, s, loc);
  // A NaN in the matrix: NaN for both (LAPACK's pivoting through a NaN may
  // leave a zero on U's diagonal, which would read as singular).
  Array nan_in = ops::any(ops::isnan(x, s, loc), Axes({-2, -1}), false, s, loc);
  Array nan =
      ops::full({}, std::numeric_limits<double>::quiet_NaN(), d, s, loc);
  return {ops::where(nan_in, nan, sign, s, loc),
          ops::where(nan_in, nan, logabs, s, loc)};
}

}  // namespace

std::pair<Array, Array> slogdet(const Array& a, StreamOrDevice s,
                                Location loc) {
  if (auto bad = check(a, "slogdet", loc)) return {*bad, *bad};
  Array x = ops::astype(a, at_least_float(a.dtype()), s, loc);
  return slogdet_of(x, "slogdet", s, loc);
}

Array det(const Array& a, StreamOrDevice s, Location loc) {
  if (auto bad = check(a, "det", loc)) return *bad;
  Array x = ops::astype(a, at_least_float(a.dtype()), s, loc);
  if (x.shape(-1) <= 3) return small_det(x, s, loc);
  auto [sign, logabs] = slogdet_of(x, "det", s, loc);
  return ops::multiply(sign, ops::exp(logabs, s, loc), s, loc);
}

}  // namespace nuvec::linalg
