// Quantization (docs/quantization.md): MLX's formats, bit for bit, and the
// products a language model spends its decode steps in. Names, argument
// orders and defaults are MLX's C++ ones (mlx/ops.h), so MLX code ports.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nuvec/core/array.h"

namespace nuvec {

/// Products with at most this many rows per matrix give each row the bits
/// of the same row's one-row product (dense, quantized and gathered
/// products, CPU and GPU; the spec's "Determinism" section).
inline constexpr int ROW_INDEPENDENT_ROWS = 8;

}  // namespace nuvec

namespace nuvec::inline ops {

/// Quantizes w (float32, float16, bfloat16 or float64, at least 2-D) along
/// its last axis, which the group size must divide. mode "affine" (default
/// group 64, bits 4; groups 32, 64, 128; bits 1, 2, 3, 4, 5, 6, 8) gives
/// {w_q, scales, biases}; "mxfp4" (group 32, bits 4), "nvfp4" (16, 4) and
/// "mxfp8" (32, 8) give {w_q, scales} with uint8 scale codes. w_q is uint32
/// [..., K * bits / 32]. `global_scale` (MLX's two-level nvfp4 scaling) is
/// not supported yet: passing one gives failed arrays.
std::vector<Array> quantize(const Array& w, std::optional<int> group_size = std::nullopt,
                            std::optional<int> bits = std::nullopt,
                            const std::string& mode = "affine",
                            const std::optional<Array>& global_scale = std::nullopt,
                            StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// The values of a quantized matrix: w_q uint32 [..., W], scales [..., G]
/// (and biases, of the scales' shape and dtype, for affine), in `dtype`
/// (default: the scales' dtype; float32 for the floating modes, whose
/// scales are uint8 codes). Bit for bit MLX's.
Array dequantize(const Array& w, const Array& scales,
                 const std::optional<Array>& biases = std::nullopt,
                 std::optional<int> group_size = std::nullopt, std::optional<int> bits = std::nullopt,
                 const std::string& mode = "affine",
                 const std::optional<Array>& global_scale = std::nullopt,
                 std::optional<DType> dtype = std::nullopt, StreamOrDevice s = {},
                 Location loc = NUVEC_LOC);

/// x [..., K] times the quantized matrix W = dequantize(w, scales, biases):
/// x @ W^T with `transpose` (w [N, K * bits / 32], the layout of a linear
/// layer's weight), else x @ W (w [K, N * bits / 32]). A w with batch axes
/// broadcasts against x's [..., M, K]. x, scales and biases are promoted to
/// one floating dtype, the output's.
Array quantized_matmul(const Array& x, const Array& w, const Array& scales,
                       const std::optional<Array>& biases = std::nullopt, bool transpose = true,
                       std::optional<int> group_size = std::nullopt,
                       std::optional<int> bits = std::nullopt, const std::string& mode = "affine",
                       StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// Matrix products with a gather over the batch: a [..., M, K] and
/// b [..., K, N]; lhs_indices and rhs_indices (integers, broadcast
/// together; absent: every batch item in order) index the flattened batch
/// axes. out[i] = a[lhs[i]] @ b[rhs[i]], shape indices + [M, N], without
/// copying the gathered matrices. `sorted_indices` promises that equal
/// indices are adjacent (MLX's hint for mixture-of-experts layers). Without
/// indices this is matmul.
Array gather_mm(const Array& a, const Array& b, std::optional<Array> lhs_indices = std::nullopt,
                std::optional<Array> rhs_indices = std::nullopt, bool sorted_indices = false,
                StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// quantized_matmul with a gather over the batch, as gather_mm's: x
/// [..., M, K], w [E..., N, K * bits / 32] (with `transpose`), scales and
/// biases [E..., N, K / group]; out[i] = x[lhs[i]] @ W[rhs[i]]^T.
Array gather_qmm(const Array& x, const Array& w, const Array& scales,
                 const std::optional<Array>& biases = std::nullopt,
                 std::optional<Array> lhs_indices = std::nullopt,
                 std::optional<Array> rhs_indices = std::nullopt, bool transpose = true,
                 std::optional<int> group_size = std::nullopt, std::optional<int> bits = std::nullopt,
                 const std::string& mode = "affine",
                 const std::optional<Array>& global_scale = std::nullopt,
                 bool sorted_indices = false, StreamOrDevice s = {}, Location loc = NUVEC_LOC);

}  // namespace nuvec::ops
