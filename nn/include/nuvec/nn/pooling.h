// The pooling layers of mlx.nn (MaxPool1d/2d/3d, AvgPool1d/2d/3d) and
// Upsample (docs/nn.md). Inputs are channels last with a batch axis:
// [N, spatial..., C]. Pooling pads (with -inf for max, 0 for average),
// takes the sliding windows as MLX does (a reshape when the windows tile
// the input, a strided gather otherwise) and reduces them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nuvec/nn/module.h"

namespace nuvec::nn {

namespace detail {
/// Pads, windows and reduces x as MLX's _Pool (max when `is_max`, else mean).
Array pool(const ModuleBase& m, const Array& x,
           const std::vector<int>& kernel_size, const std::vector<int>& stride,
           const std::vector<int>& padding, bool is_max);
/// The constructor checks of a pooling layer (throws nuvec::Error).
void check_pool(const std::string& layer, const std::vector<int>& kernel_size,
                const std::vector<int>& stride,
                const std::vector<int>& padding);
}  // namespace detail

/// What the six pooling layers share: kernel_size, stride (kernel_size when
/// left out, as MLX's stride=None) and padding, one int or one per axis.
template <class D, int N, bool IsMax>
struct Pool : Module<D> {
  std::vector<int> kernel_size, stride, padding;
  /// Stride given; sizes must be positive and padding non-negative
  /// (nuvec::Error otherwise).
  Pool(PerAxis<N> kernel_size_, PerAxis<N> stride_, PerAxis<N> padding_ = 0)
      : kernel_size(kernel_size_.vec()),
        stride(stride_.vec()),
        padding(padding_.vec()) {
    detail::check_pool(this->name(), kernel_size, stride, padding);
  }
  /// Stride equal to kernel_size (`MaxPool2d(3, std::nullopt, 1)` pads
  /// without giving a stride).
  explicit Pool(PerAxis<N> kernel_size_, std::nullopt_t = std::nullopt,
                PerAxis<N> padding_ = 0)
      : Pool(kernel_size_, kernel_size_, padding_) {}
  /// [N, spatial..., C] to [N, pooled spatial..., C]; another rank gives a
  /// failed array naming the layer.
  Array operator()(const Array& x) const {
    return detail::pool(*this, x, kernel_size, stride, padding, IsMax);
  }
};

/// The maximum over windows of [N, L, C] (padding with -inf).
struct MaxPool1d : Pool<MaxPool1d, 1, true> {
  using Pool::Pool;
};
/// The mean over windows of [N, L, C] (padding with zeros, which count).
struct AvgPool1d : Pool<AvgPool1d, 1, false> {
  using Pool::Pool;
};
/// The maximum over windows of [N, H, W, C].
struct MaxPool2d : Pool<MaxPool2d, 2, true> {
  using Pool::Pool;
};
/// The mean over windows of [N, H, W, C].
struct AvgPool2d : Pool<AvgPool2d, 2, false> {
  using Pool::Pool;
};
/// The maximum over windows of [N, D, H, W, C].
struct MaxPool3d : Pool<MaxPool3d, 3, true> {
  using Pool::Pool;
};
/// The mean over windows of [N, D, H, W, C].
struct AvgPool3d : Pool<AvgPool3d, 3, false> {
  using Pool::Pool;
};
#define NUVEC_NN_POOL_TREE(T)                                    \
  NUVEC_TREE(T, NUVEC_STATIC(kernel_size), NUVEC_STATIC(stride), \
             NUVEC_STATIC(padding))
NUVEC_NN_POOL_TREE(MaxPool1d)
NUVEC_NN_POOL_TREE(AvgPool1d)
NUVEC_NN_POOL_TREE(MaxPool2d)
NUVEC_NN_POOL_TREE(AvgPool2d)
NUVEC_NN_POOL_TREE(MaxPool3d)
NUVEC_NN_POOL_TREE(AvgPool3d)
#undef NUVEC_NN_POOL_TREE

/// Spatial upsampling of [N, spatial..., C] as MLX's Upsample: mode
/// "nearest" (a broadcast for integer scales, index rounding otherwise),
/// "linear" (bilinear, trilinear...) or "cubic" (Keys a = -0.75; with
/// antialias, a = -0.5 and a kernel widened by 1/scale when downscaling).
/// The output size on each axis is int(scale * size).
struct Upsample : Module<Upsample> {
  std::vector<double> scale_factor;  // one per axis, or one for all
  bool one_for_all;
  std::string mode;
  bool align_corners, antialias;
  /// One scale for every spatial axis. Throws nuvec::Error for an unknown
  /// mode, antialias with "nearest" or with align_corners, or a scale that
  /// is not positive.
  explicit Upsample(double scale_factor, std::string mode = "nearest",
                    bool align_corners = false, bool antialias = false);
  /// One scale per spatial axis (the input must have that many).
  explicit Upsample(std::vector<double> scale_factor,
                    std::string mode = "nearest", bool align_corners = false,
                    bool antialias = false);
  /// Inputs with fewer than 3 dimensions, or a scale list of another
  /// length than the spatial axes, give a failed array naming the layer.
  Array operator()(const Array& x) const;
};
NUVEC_TREE(Upsample, NUVEC_STATIC(scale_factor), NUVEC_STATIC(one_for_all),
           NUVEC_STATIC(mode), NUVEC_STATIC(align_corners),
           NUVEC_STATIC(antialias))

/// MLX's upsample_nearest(x, scale_factor): one scale per spatial axis.
Array upsample_nearest(const Array& x, const std::vector<double>& scale_factor);
/// MLX's upsample_linear.
Array upsample_linear(const Array& x, const std::vector<double>& scale_factor,
                      bool align_corners = false, bool antialias = false);
/// MLX's upsample_cubic.
Array upsample_cubic(const Array& x, const std::vector<double>& scale_factor,
                     bool align_corners = false, bool antialias = false);

}  // namespace nuvec::nn
