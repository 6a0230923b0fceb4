// The convolution layers of mlx.nn: Conv1d/2d/3d and ConvTranspose1d/2d/3d
// (docs/nn.md). Channels last, as MLX: inputs [N, spatial..., C_in] (the
// batch axis is required), weights [C_out, kernel..., C_in / groups].
// Weights are drawn from U(-k, k), k = 1/sqrt(C_in / groups * prod(kernel)),
// in MLX's order; biases start at zero (no draw).
#pragma once

#include <optional>
#include <vector>

#include "nuvec/nn/module.h"

namespace nuvec::nn {

/// 1-d convolution over [N, L, C_in] with mx.conv1d.
struct Conv1d : Module<Conv1d> {
  Param weight;
  std::optional<Param> bias;
  int stride, padding, dilation, groups;
  /// Throws nuvec::Error when a size is not positive, padding is negative,
  /// or in_channels or out_channels is not a multiple of groups.
  Conv1d(int in_channels, int out_channels, int kernel_size, int stride = 1,
         int padding = 0, int dilation = 1, int groups = 1, bool bias = true);
  /// [N, L, in_channels] to [N, L_out, out_channels]; a wrong rank, channel
  /// count or dtype gives a failed array naming the layer.
  Array operator()(const Array& x) const;
};
NUVEC_TREE(Conv1d, weight, bias, NUVEC_STATIC(stride), NUVEC_STATIC(padding),
           NUVEC_STATIC(dilation), NUVEC_STATIC(groups))

/// 2-d convolution over [N, H, W, C_in] with mx.conv2d; kernel_size, stride,
/// padding and dilation are one int or one per axis ({3, 5}).
struct Conv2d : Module<Conv2d> {
  Param weight;
  std::optional<Param> bias;
  std::vector<int> stride, padding, dilation;
  int groups;
  Conv2d(int in_channels, int out_channels, PerAxis<2> kernel_size,
         PerAxis<2> stride = 1, PerAxis<2> padding = 0, PerAxis<2> dilation = 1,
         int groups = 1, bool bias = true);
  /// [N, H, W, in_channels] to [N, H_out, W_out, out_channels].
  Array operator()(const Array& x) const;
};
NUVEC_TREE(Conv2d, weight, bias, NUVEC_STATIC(stride), NUVEC_STATIC(padding),
           NUVEC_STATIC(dilation), NUVEC_STATIC(groups))

/// 3-d convolution over [N, D, H, W, C_in] with mx.conv3d. MLX 0.32's
/// Conv3d has no groups argument, so neither has this one.
struct Conv3d : Module<Conv3d> {
  Param weight;
  std::optional<Param> bias;
  std::vector<int> stride, padding, dilation;
  Conv3d(int in_channels, int out_channels, PerAxis<3> kernel_size,
         PerAxis<3> stride = 1, PerAxis<3> padding = 0, PerAxis<3> dilation = 1,
         bool bias = true);
  /// [N, D, H, W, in_channels] to [N, D_out, H_out, W_out, out_channels].
  Array operator()(const Array& x) const;
};
NUVEC_TREE(Conv3d, weight, bias, NUVEC_STATIC(stride), NUVEC_STATIC(padding),
           NUVEC_STATIC(dilation))

/// 1-d transposed convolution (mx.conv_transpose1d), weight [C_out, k,
/// C_in], k = 1/sqrt(C_in * kernel); output_padding adds to the high side
/// of the output (it must be smaller than stride or dilation, as MLX's op).
struct ConvTranspose1d : Module<ConvTranspose1d> {
  Param weight;
  std::optional<Param> bias;
  int stride, padding, dilation, output_padding;
  ConvTranspose1d(int in_channels, int out_channels, int kernel_size,
                  int stride = 1, int padding = 0, int dilation = 1,
                  int output_padding = 0, bool bias = true);
  /// [N, L, in_channels] to [N, L_out, out_channels].
  Array operator()(const Array& x) const;
};
NUVEC_TREE(ConvTranspose1d, weight, bias, NUVEC_STATIC(stride),
           NUVEC_STATIC(padding), NUVEC_STATIC(dilation),
           NUVEC_STATIC(output_padding))

/// 2-d transposed convolution (mx.conv_transpose2d).
struct ConvTranspose2d : Module<ConvTranspose2d> {
  Param weight;
  std::optional<Param> bias;
  std::vector<int> stride, padding, dilation, output_padding;
  ConvTranspose2d(int in_channels, int out_channels, PerAxis<2> kernel_size,
                  PerAxis<2> stride = 1, PerAxis<2> padding = 0,
                  PerAxis<2> dilation = 1, PerAxis<2> output_padding = 0,
                  bool bias = true);
  /// [N, H, W, in_channels] to [N, H_out, W_out, out_channels].
  Array operator()(const Array& x) const;
};
NUVEC_TREE(ConvTranspose2d, weight, bias, NUVEC_STATIC(stride),
           NUVEC_STATIC(padding), NUVEC_STATIC(dilation),
           NUVEC_STATIC(output_padding))

/// 3-d transposed convolution (mx.conv_transpose3d).
struct ConvTranspose3d : Module<ConvTranspose3d> {
  Param weight;
  std::optional<Param> bias;
  std::vector<int> stride, padding, dilation, output_padding;
  ConvTranspose3d(int in_channels, int out_channels, PerAxis<3> kernel_size,
                  PerAxis<3> stride = 1, PerAxis<3> padding = 0,
                  PerAxis<3> dilation = 1, PerAxis<3> output_padding = 0,
                  bool bias = true);
  /// [N, D, H, W, in_channels] to [N, D_out, H_out, W_out, out_channels].
  Array operator()(const Array& x) const;
};
NUVEC_TREE(ConvTranspose3d, weight, bias, NUVEC_STATIC(stride),
           NUVEC_STATIC(padding), NUVEC_STATIC(dilation),
           NUVEC_STATIC(output_padding))

}  // namespace nuvec::nn
