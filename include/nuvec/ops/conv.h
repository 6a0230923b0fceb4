// Convolutions in MLX's channels-last layout: input [N, spatial..., C_in],
// weight [C_out, kernel spatial..., C_in / groups], output
// [N, out spatial..., C_out]. Computed as im2col and one matrix product
// (float32/float64 through BLAS; 16-bit floats accumulate in float32).
// Floating dtypes only; input and weight promote to a common dtype.
#pragma once

#include <array>
#include <utility>
#include <vector>

#include "nuvec/core/array.h"

namespace nuvec::inline ops {

/// One int for every spatial axis, or one per axis (`{1, 2}` for conv2d).
template <int N>
struct PerAxis {
  std::array<int, N> v{};
  PerAxis(int x) { v.fill(x); }  // NOLINT: implicit by design
  template <class... I>
    requires(sizeof...(I) == N && N > 1)
  PerAxis(I... xs) : v{static_cast<int>(xs)...} {}  // NOLINT
  PerAxis(std::pair<int, int> p)  // NOLINT
    requires(N == 2)
      : v{p.first, p.second} {}
  std::vector<int> vec() const { return {v.begin(), v.end()}; }
};

Array conv1d(const Array& input, const Array& weight, int stride = 1, int padding = 0,
             int dilation = 1, int groups = 1, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
Array conv2d(const Array& input, const Array& weight, PerAxis<2> stride = 1,
             PerAxis<2> padding = 0, PerAxis<2> dilation = 1, int groups = 1,
             StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array conv3d(const Array& input, const Array& weight, PerAxis<3> stride = 1,
             PerAxis<3> padding = 0, PerAxis<3> dilation = 1, int groups = 1,
             StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The general form: per-axis lists (empty: the default; one value: every
/// axis), low and high padding (may be negative), kernel and input dilation,
/// and `flip` for a true convolution (the kernel reversed on spatial axes).
/// The first argument is taken by value and the second form's by reference,
/// as in MLX, so that a call naming every argument picks its form by the
/// seventh (a list: input_dilation of this form; an int: groups of the
/// other); shorter calls listing vectors only are ambiguous in both.
Array conv_general(Array input, const Array& weight, std::vector<int> stride = {},
                   std::vector<int> padding_lo = {}, std::vector<int> padding_hi = {},
                   std::vector<int> kernel_dilation = {},
                   std::vector<int> input_dilation = {}, int groups = 1, bool flip = false,
                   StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// MLX's form with one padding list for both sides.
Array conv_general(const Array& input, const Array& weight, std::vector<int> stride,
                   std::vector<int> padding, std::vector<int> kernel_dilation = {},
                   std::vector<int> input_dilation = {}, int groups = 1, bool flip = false,
                   StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Transposed convolutions (the gradient of conv with respect to its
/// input): conv_general with input dilation `stride`, padding
/// dilation * (k - 1) - padding (plus output_padding on the high side) and
/// the kernel flipped. Weight [C_out, kernel..., C_in / groups].
Array conv_transpose1d(const Array& input, const Array& weight, int stride = 1,
                       int padding = 0, int dilation = 1, int output_padding = 0,
                       int groups = 1, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
Array conv_transpose2d(const Array& input, const Array& weight, PerAxis<2> stride = 1,
                       PerAxis<2> padding = 0, PerAxis<2> dilation = 1,
                       PerAxis<2> output_padding = 0, int groups = 1, StreamOrDevice s = {},
                       Location loc = NUVEC_LOC);
Array conv_transpose3d(const Array& input, const Array& weight, PerAxis<3> stride = 1,
                       PerAxis<3> padding = 0, PerAxis<3> dilation = 1,
                       PerAxis<3> output_padding = 0, int groups = 1, StreamOrDevice s = {},
                       Location loc = NUVEC_LOC);

}  // namespace nuvec::ops
