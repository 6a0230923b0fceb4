// Linear algebra with MLX's names and semantics (mlx.core.linalg). The
// factorizations run on the CPU through LAPACK for float32 and float64,
// batched over the leading axes. Invalid input gives a failed array; a
// singular matrix (inv, solve) or one that is not positive definite
// (cholesky) fails at evaluation with a message naming the op.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "nuvec/core/array.h"
#include "nuvec/core/device.h"
#include "nuvec/core/error.h"

namespace nuvec::linalg {

/// A norm order: a number (2, 1, inf, -inf, 0, any p; matrices: 1, -1, 2,
/// -2, inf, -inf) or a name ("fro", "f", "nuc").
using NormOrd = std::variant<double, std::string>;

/// Vector or matrix norms, as MLX:
/// - no ord and no axes: the 2-norm of the flattened array;
/// - no ord with axes: the 2-norm (Frobenius for two axes) over 1 or 2 axes;
/// - ord without axes: x must be 1-D or 2-D;
/// - ord with one axis: a vector norm; with two axes (row, col): a matrix
///   norm. Integer inputs give float32, floating inputs keep their dtype.
Array norm(const Array& x, const std::optional<NormOrd>& ord = std::nullopt,
           const std::optional<Axes>& axes = std::nullopt, bool keepdims = false,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// The inverse of each square matrix.
Array inv(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The Cholesky factor L (A = L L^T), or U = L^T (A = U^T U) when `upper`.
/// Reads the lower triangle of A.
Array cholesky(const Array& x, bool upper = false, StreamOrDevice s = {},
               Location loc = NUVEC_LOC);
/// The inverse of A from its Cholesky factor (lower, or upper when `upper`).
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

}  // namespace nuvec::linalg
