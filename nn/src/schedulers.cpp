// Schedules and gradient clipping: MLX's formulas on the step array, with
// Python's floats as weak scalars and Python's integer arithmetic where MLX
// computes on plain numbers (pi / decay_steps, (end - init) / steps).
#include "nuvec/nn/schedulers.h"

#include <numbers>
#include <string>

namespace nuvec::optim {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) Error(ErrorKind::invalid_argument, message).raise();
}

}  // namespace

Schedule exponential_decay(double init, double decay_rate) {
  return [=](const Array& step) { return init * ops::power(decay_rate, step); };
}

Schedule step_decay(double init, double decay_rate, int64_t step_size) {
  require(step_size >= 1, "step_decay: step_size must be greater than 0, got " +
                              std::to_string(step_size));
  return [=](const Array& step) {
    return init * ops::power(decay_rate, ops::floor_divide(step, step_size));
  };
}

Schedule cosine_decay(double init, int64_t decay_steps, double end) {
  require(decay_steps >= 1,
          "cosine_decay: decay_steps must be greater than 0, got " +
              std::to_string(decay_steps));
  return [=](const Array& step) {
    Array s = ops::minimum(step, decay_steps);
    Array decay =
        0.5 *
        (1.0 +
         ops::cos((std::numbers::pi / static_cast<double>(decay_steps)) * s));
    return end + decay * (init - end);
  };
}

Schedule linear_schedule(double init, double end, int64_t steps) {
  require(steps >= 1, "linear_schedule: steps must be greater than 0, got " +
                          std::to_string(steps));
  return [=](const Array& step) {
    Array s = ops::minimum(step, steps);
    return s * ((end - init) / static_cast<double>(steps)) + init;
  };
}

Schedule join_schedules(const std::vector<Schedule>& schedules,
                        const std::vector<int64_t>& boundaries) {
  require(!schedules.empty(),
          "join_schedules: at least one schedule is needed");
  require(schedules.size() == boundaries.size() + 1,
          "join_schedules: received " + std::to_string(boundaries.size()) +
              " boundaries but expected " +
              std::to_string(schedules.size() - 1));
  for (auto& s : schedules)
    require(static_cast<bool>(s), "join_schedules: a schedule is empty");
  return [=](const Array& step) {
    Array out = schedules[0](step);
    for (size_t i = 0; i < boundaries.size(); ++i)
      out = ops::where(step < boundaries[i], out,
                       schedules[i + 1](step - boundaries[i]));
    return out;
  };
}

namespace detail {

void check_max_norm(double max_norm) {
  require(max_norm >= 0, "clip_grad_norm: max_norm should be >= 0, got " +
                             std::to_string(max_norm));
}

Array squared_norm(const Array& g) {
  Array x = g.dtype() == float16 ? g.astype(float32) : g;
  return x.square().sum();
}

Array scale_gradient(const Array& g, const Array& normalizer) {
  if (is_floating(g.dtype())) return (g * normalizer).astype(g.dtype());
  return g * normalizer;
}

Array clip_normalizer(double max_norm, const Array& total_norm) {
  return ops::minimum(max_norm / (total_norm + 1e-6), 1.0);
}

}  // namespace detail
}  // namespace nuvec::optim
