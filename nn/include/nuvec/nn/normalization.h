// The normalization layers of mlx.nn beyond LayerNorm and RMSNorm
// (layers.h): InstanceNorm, GroupNorm and BatchNorm (docs/nn.md). Features
// are the last axis, as MLX.
#pragma once

#include <optional>

#include "nuvec/nn/module.h"

namespace nuvec::nn {

/// Normalizes every channel of every sample over the spatial axes of
/// [N, ..., C] (fast::layer_norm of the channels-first view); weight ones
/// and bias zeros when affine (off by default, as MLX).
struct InstanceNorm : Module<InstanceNorm> {
  std::optional<Param> weight, bias;
  int dims;
  float eps;
  /// Throws nuvec::Error when dims or eps is not positive.
  InstanceNorm(int dims, float eps = 1e-5f, bool affine = false);
  /// x [N, ..., dims] with at least 3 dimensions; otherwise a failed array
  /// naming the layer.
  Array operator()(const Array& x) const;
};
NUVEC_TREE(InstanceNorm, weight, bias, NUVEC_STATIC(dims), NUVEC_STATIC(eps))

/// Group normalization over [N, ..., dims]: mean and variance per sample
/// and group, over the group's channels and every position. MLX's default
/// groups channel c with the others of c % num_groups (interleaved);
/// pytorch_compatible groups consecutive channels as PyTorch does. weight
/// ones and bias zeros when affine (listed bias first, as MLX).
struct GroupNorm : Module<GroupNorm> {
  std::optional<Param> bias, weight;
  int num_groups, dims;
  float eps;
  bool pytorch_compatible;
  /// Throws nuvec::Error when a size or eps is not positive or dims is not
  /// a multiple of num_groups.
  GroupNorm(int num_groups, int dims, float eps = 1e-5f, bool affine = true,
            bool pytorch_compatible = false);
  /// x [N, ..., dims] (at least 2 dimensions).
  Array operator()(const Array& x) const;
};
NUVEC_TREE(GroupNorm, bias, weight, NUVEC_STATIC(num_groups),
           NUVEC_STATIC(dims), NUVEC_STATIC(eps),
           NUVEC_STATIC(pytorch_compatible))

/// Batch normalization over every axis but the last of [N, C], [N, L, C]
/// or [N, H, W, C]. In training mode it normalizes with the batch's mean
/// and (biased) variance and, with track_running_stats, updates the
/// buffers running_mean and running_var as MLX: r = (1 - momentum) r +
/// momentum s, with the unbiased variance (ddof 1) for running_var. In
/// evaluation mode it uses the running statistics (the batch's when they
/// are not tracked). The mode is part of the tree's structure.
struct BatchNorm : Module<BatchNorm> {
  std::optional<Param> weight, bias;
  std::optional<Buffer> running_mean, running_var;
  int num_features;
  float eps;
  double momentum;
  bool track_running_stats;
  /// Throws nuvec::Error when num_features or eps is not positive.
  BatchNorm(int num_features, float eps = 1e-5f, double momentum = 0.1,
            bool affine = true, bool track_running_stats = true);
  /// Not const: in training mode it replaces the running statistics (lazy
  /// arrays; evaluate them with the step's outputs). A wrong rank, last
  /// axis or dtype, or one value per channel in training, gives a failed
  /// array naming the layer and leaves the statistics unchanged.
  Array operator()(const Array& x);
};
NUVEC_TREE(BatchNorm, weight, bias, running_mean, running_var,
           NUVEC_STATIC(num_features), NUVEC_STATIC(eps),
           NUVEC_STATIC(momentum), NUVEC_STATIC(track_running_stats),
           NUVEC_MODE(training_))

}  // namespace nuvec::nn
