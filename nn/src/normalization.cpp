// InstanceNorm, GroupNorm and BatchNorm in MLX's order of operations.
#include "nuvec/nn/normalization.h"

#include <numeric>
#include <string>

#include "checks.h"

namespace nuvec::nn {
namespace {

Array affine_or(const std::optional<Param>& w, const std::optional<Param>& b,
                const Array& x) {
  if (w) return w->value * x + b->value;
  return x;
}

std::optional<Array> check_input(const ModuleBase& m, const Array& x, int lo,
                                 int hi, int features) {
  if (auto bad = checks::floating(m, x)) return bad;
  if (auto bad = checks::ndim_in(m, x, lo, hi)) return bad;
  return checks::last_axis(m, x, features, "last dimension");
}

}  // namespace

InstanceNorm::InstanceNorm(int dims_, float eps_, bool affine)
    : dims(dims_), eps(eps_) {
  checks::positive(dims, "dims", "InstanceNorm");
  checks::eps_positive(eps, "InstanceNorm");
  if (affine) {
    weight = Param(ops::ones({dims}));
    bias = Param(ops::zeros({dims}));
  }
}

Array InstanceNorm::operator()(const Array& x) const {
  if (auto bad = check_input(*this, x, 3, 1 << 20, dims)) return *bad;
  int nd = x.ndim();
  int batch = x.shape(0), features = x.shape(-1);
  Shape spatial(x.shape().begin() + 1, x.shape().end() - 1);
  std::vector<int> to_first{0, nd - 1};
  for (int a = 1; a < nd - 1; ++a) to_first.push_back(a);
  Array y = ops::transpose(x, to_first).reshape({batch, features, -1});
  y = fast::layer_norm(y, std::nullopt, std::nullopt, eps);
  Shape back{batch, features};
  back.insert(back.end(), spatial.begin(), spatial.end());
  std::vector<int> to_last{0};
  for (int a = 2; a < nd; ++a) to_last.push_back(a);
  to_last.push_back(1);
  y = ops::transpose(y.reshape(back), to_last);
  return affine_or(weight, bias, y);
}

GroupNorm::GroupNorm(int num_groups_, int dims_, float eps_, bool affine,
                     bool pytorch_compatible_)
    : num_groups(num_groups_),
      dims(dims_),
      eps(eps_),
      pytorch_compatible(pytorch_compatible_) {
  checks::eps_positive(eps, "GroupNorm");
  checks::positive(num_groups, "num_groups", "GroupNorm");
  checks::positive(dims, "dims", "GroupNorm");
  if (dims % num_groups != 0)
    checks::fail("GroupNorm",
                 "the number of features (" + std::to_string(dims) +
                     ") must be divisible by the number of groups (" +
                     std::to_string(num_groups) + ")");
  if (affine) {
    bias = Param(ops::zeros({dims}));
    weight = Param(ops::ones({dims}));
  }
}

Array GroupNorm::operator()(const Array& x) const {
  if (auto bad = check_input(*this, x, 2, 1 << 20, dims)) return *bad;
  int batch = x.shape(0);
  Array y;
  if (pytorch_compatible) {
    int group_size = dims / num_groups;
    y = x.reshape({batch, -1, num_groups, group_size});
    y = ops::transpose(y, {0, 2, 1, 3}).reshape({batch, num_groups, -1});
    y = fast::layer_norm(y, std::nullopt, std::nullopt, eps);
    y = y.reshape({batch, num_groups, -1, group_size});
    y = ops::transpose(y, {0, 2, 1, 3}).reshape(x.shape());
  } else {
    y = x.reshape({batch, -1, num_groups});
    Array means = ops::mean(y, 1, true);
    Array var = ops::var(y, 1, true);
    y = ((y - means) * ops::rsqrt(var + eps)).reshape(x.shape());
  }
  return affine_or(weight, bias, y);
}

BatchNorm::BatchNorm(int num_features_, float eps_, double momentum_,
                     bool affine, bool track)
    : num_features(num_features_),
      eps(eps_),
      momentum(momentum_),
      track_running_stats(track) {
  checks::positive(num_features, "num_features", "BatchNorm");
  checks::eps_positive(eps, "BatchNorm");
  if (affine) {
    weight = Param(ops::ones({num_features}));
    bias = Param(ops::zeros({num_features}));
  }
  if (track_running_stats) {
    running_mean = Buffer(ops::zeros({num_features}));
    running_var = Buffer(ops::ones({num_features}));
  }
}

Array BatchNorm::operator()(const Array& x) {
  if (auto bad = check_input(*this, x, 2, 4, num_features)) return *bad;
  if (training() && x.size() / num_features == 1)
    return detail::layer_error(
        *this, ErrorKind::invalid_shape,
        "training requires more than one value per channel, got shape " +
            checks::shape_text(x.shape()));
  std::vector<int> axes(x.ndim() - 1);
  std::iota(axes.begin(), axes.end(), 0);
  Array mean = ops::mean(x, Axes(axes));
  Array var = ops::var(x, Axes(axes));
  if (training() && track_running_stats) {
    double mu = momentum;
    Array unbiased = ops::var(x, Axes(axes), false, 1);
    running_mean->value = (1 - mu) * running_mean->value + mu * mean;
    running_var->value = (1 - mu) * running_var->value + mu * unbiased;
  } else if (track_running_stats) {
    mean = running_mean->value;
    var = running_var->value;
  }
  Array y = (x - mean) * ops::rsqrt(var + eps);
  return affine_or(weight, bias, y);
}

}  // namespace nuvec::nn
