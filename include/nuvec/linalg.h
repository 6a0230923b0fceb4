// Linear algebra with MLX's names, overloads and semantics (mlx.core.linalg).
// The factorizations run on the CPU through LAPACK for float32 and float64
// (eig also complex64), batched over the leading axes; on a GPU stream they
// fail at evaluation, saying so. Invalid input gives a failed array; a
// singular matrix (inv, solve, tri_inv, solve_triangular) or one that is not
// positive definite (cholesky) fails at evaluation with a message naming
// the op.
#pragma once

#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nuvec/core/array.h"
#include "nuvec/core/device.h"
#include "nuvec/core/error.h"

namespace nuvec::linalg {

// norm: exactly MLX's overload set, so an MLX call means the same here:
// an int is an axis (`norm(x, 1)` is the 2-norm over axis 1), a floating
// number is an ord (`norm(x, 1.0)`), a string is a named ord. A brace list
// of two or more ints is axes in every position (`norm(x, {0, 1}, true)`,
// `norm(x, "fro", {0, 1})`); MLX's own C++ binds `norm(x, {0, 1})` to its
// string ord (a run-time "invalid ord" there, so no MLX program relies on
// it) and rejects such a list after an ord (docs/mlx-differences.md).

/// Vector or matrix norms, as MLX:
/// - no ord and no axis: the 2-norm of the flattened array;
/// - no ord with axes: the 2-norm (Frobenius for two axes) over 0, 1 or 2
///   axes (no axis at all: |x| element-wise);
/// - an ord without axes: x must be 1-D or 2-D;
/// - an ord with one axis: a vector norm (0, 1, 2, inf, -inf, any p); with
///   two axes (row, col): a matrix norm (1, -1, 2, -2, inf, -inf, "fro",
///   "f", "nuc").
/// Integer and bool inputs give float32, floating inputs keep their dtype,
/// complex inputs give float32 for the 2-norms.
Array norm(const Array& a, double ord,
           const std::optional<std::vector<int>>& axis = std::nullopt,
           bool keepdims = false, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// norm(a, ord, {axis}).
Array norm(const Array& a, double ord, int axis, bool keepdims = false,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// A matrix norm named "fro" (or "f") or "nuc" over two axes.
Array norm(const Array& a, const std::string& ord,
           const std::optional<std::vector<int>>& axis = std::nullopt,
           bool keepdims = false, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// norm(a, ord, {axis}): always an error (a named norm needs two axes).
Array norm(const Array& a, const std::string& ord, int axis,
           bool keepdims = false, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// The 2-norm (Frobenius over two axes) without an ord.
Array norm(const Array& a,
           const std::optional<std::vector<int>>& axis = std::nullopt,
           bool keepdims = false, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// The 2-norm over one axis: `norm(x, 1)` is over axis 1, as in MLX.
Array norm(const Array& a, int axis, bool keepdims = false,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC);

// Brace lists of two or more axes (`norm(x, {0, 1}, true)`, `norm(x, 2.0,
// {1, 0})`, `norm(x, "fro", {0, 1})`): the length is deduced, so `{}` and
// `{k}` still reach MLX's int overloads (axis 0 and axis k, as in MLX).
template <std::size_t N, std::enable_if_t<(N >= 2), int> = 0>
Array norm(const Array& a, double ord, const int (&axis)[N],
           bool keepdims = false, StreamOrDevice s = {},
           Location loc = NUVEC_LOC) {
  return norm(a, ord, std::vector<int>(axis, axis + N), keepdims, s, loc);
}
template <std::size_t N, std::enable_if_t<(N >= 2), int> = 0>
Array norm(const Array& a, const std::string& ord, const int (&axis)[N],
           bool keepdims = false, StreamOrDevice s = {},
           Location loc = NUVEC_LOC) {
  return norm(a, ord, std::vector<int>(axis, axis + N), keepdims, s, loc);
}
template <std::size_t N, std::enable_if_t<(N >= 2), int> = 0>
Array norm(const Array& a, const int (&axis)[N], bool keepdims = false,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC) {
  return norm(a, std::vector<int>(axis, axis + N), keepdims, s, loc);
}

// nuvec's Axes in the axis position (templates that only an Axes argument
// selects, so they never compete with MLX's overloads).
template <std::same_as<Axes> A>
Array norm(const Array& a, double ord, const A& axis, bool keepdims = false,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC) {
  return norm(a, ord, std::optional<std::vector<int>>(axis.list()), keepdims, s,
              loc);
}
template <std::same_as<Axes> A>
Array norm(const Array& a, const std::string& ord, const A& axis,
           bool keepdims = false, StreamOrDevice s = {},
           Location loc = NUVEC_LOC) {
  return norm(a, ord, std::optional<std::vector<int>>(axis.list()), keepdims, s,
              loc);
}
template <std::same_as<Axes> A>
Array norm(const Array& a, const A& axis, bool keepdims = false,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC) {
  return norm(a, std::optional<std::vector<int>>(axis.list()), keepdims, s,
              loc);
}
/// nuvec's earlier spelling `norm(x, std::nullopt, Axes{...})`: no ord.
template <std::same_as<Axes> A>
Array norm(const Array& a, std::nullopt_t, const A& axis, bool keepdims = false,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC) {
  return norm(a, std::optional<std::vector<int>>(axis.list()), keepdims, s,
              loc);
}

/// The inverse of each square matrix.
Array inv(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The Cholesky factor L (A = L L^T), or U = L^T (A = U^T U) when `upper`.
/// Reads the lower triangle of A.
Array cholesky(const Array& x, bool upper = false, StreamOrDevice s = {},
               Location loc = NUVEC_LOC);
/// The inverse of A from its Cholesky factor (lower, or upper when `upper`);
/// as MLX, only the factor's triangle is read (through tri_inv).
Array cholesky_inv(const Array& factor, bool upper = false, StreamOrDevice s = {},
                   Location loc = NUVEC_LOC);
/// The reduced QR factorization: Q [..., M, K] with orthonormal columns and
/// upper-triangular R [..., K, N], K = min(M, N).
std::pair<Array, Array> qr(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The full SVD {U [..., M, M], S [..., K] (descending), Vt [..., N, N]},
/// or {S} when !compute_uv.
std::vector<Array> svd(const Array& x, bool compute_uv = true, StreamOrDevice s = {},
                       Location loc = NUVEC_LOC);
/// Eigenvalues (ascending) and eigenvectors (columns) of symmetric
/// matrices, from the lower ("L") or upper ("U") triangle.
std::pair<Array, Array> eigh(const Array& x, const std::string& UPLO = "L",
                             StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array eigvalsh(const Array& x, const std::string& UPLO = "L", StreamOrDevice s = {},
               Location loc = NUVEC_LOC);
/// x with a @ x = b: b is [..., N] (a vector per matrix, when it has one
/// axis fewer than a or is 1-D) or [..., N, R]; batch axes broadcast.
Array solve(const Array& a, const Array& b, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The Moore-Penrose pseudo-inverse through the SVD (singular values below
/// 10 * max(M, N) * eps * max(S) are dropped).
Array pinv(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// The LU factorization with partial pivoting of [..., M, N] float32 or
/// float64 matrices (any M, N; K = min(M, N)): {P, L, U} with P the row
/// indices [..., M] (uint32, MLX's form: not a matrix) such that
/// A = L[P] @ U, i.e. A[i] = (L @ U)[P[i]]; L [..., M, K] unit lower
/// triangular, U [..., K, N] upper triangular. A singular matrix factors
/// (U has a zero on its diagonal).
std::vector<Array> lu(const Array& a, StreamOrDevice s = {},
                      Location loc = NUVEC_LOC);
/// The packed factorization {LU, pivots}: LU [..., M, N] holds L below the
/// diagonal (its unit diagonal implied) and U on and above; pivots
/// [..., K] (uint32, 0-based, LAPACK's getrf): row i was swapped with row
/// pivots[i], in order i = 0, 1, ...
std::pair<Array, Array> lu_factor(const Array& a, StreamOrDevice s = {},
                                  Location loc = NUVEC_LOC);
/// The inverse of the lower (upper when `upper`) triangle of each square
/// float32/float64 matrix; the other triangle of `a` is not read and is
/// zero in the result. A zero on the diagonal fails at evaluation.
Array tri_inv(const Array& a, bool upper = false, StreamOrDevice s = {},
              Location loc = NUVEC_LOC);
/// x with T x = b, T the lower (upper) triangle of a [..., N, N], as MLX:
/// tri_inv(a, upper) @ b. b is [..., N, R], or [N] (a vector, also with a
/// batched a); batch axes broadcast; a must be float32/float64 and the
/// result has the promoted dtype of a and b (float32 or float64).
Array solve_triangular(const Array& a, const Array& b, bool upper = false,
                       StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The determinant of each square matrix [..., N, N] (integer and bool
/// inputs as float32, floating ones keep their dtype, complex refused), as
/// MLX: the explicit formula for N <= 3 (float16/bfloat16 allowed there),
/// sign * exp(logabsdet) from lu_factor above (float32/float64 only). An
/// empty 0x0 matrix gives 1, a singular one 0.
Array det(const Array& a, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// {sign, log|det|} of each square matrix, as MLX: from the explicit
/// determinant for N <= 3, from lu_factor above (sign from the pivots'
/// parity and U's negative diagonal entries, log|det| the sum of log|U_ii|).
/// A singular matrix gives sign 0 and log|det| = -inf; 0x0 gives {1, 0}.
std::pair<Array, Array> slogdet(const Array& a, StreamOrDevice s = {},
                                Location loc = NUVEC_LOC);
/// The cross product along `axis`, where both a and b have size 3, or 2 (a
/// vector in the plane, its third component 0), as MLX: the other axes
/// broadcast (a positive axis is an axis of each input, a negative one
/// counts from the end), the dtype is the promoted one (integers stay
/// integers; bool only when both have size 3, as negative refuses bool),
/// and the result has size 3 along the axis.
Array cross(const Array& a, const Array& b, int axis = -1,
            StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Eigenvalues and right eigenvectors (columns, unit 2-norm, the largest
/// component real) of general square matrices (float32, float64 or
/// complex64), both complex64, through LAPACK's geev; eigenvalues in
/// LAPACK's (and MLX's) order, complex ones of a real matrix in conjugate
/// pairs. A non-finite input fails at evaluation.
std::pair<Array, Array> eig(const Array& a, StreamOrDevice s = {},
                            Location loc = NUVEC_LOC);
/// The eigenvalues of eig alone.
Array eigvals(const Array& a, StreamOrDevice s = {}, Location loc = NUVEC_LOC);

}  // namespace nuvec::linalg
