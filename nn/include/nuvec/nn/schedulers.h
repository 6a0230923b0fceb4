// Learning-rate schedules and gradient clipping in the manner of
// mlx.optimizers (docs/nn.md, "Optimizers and schedules"). A schedule is
// computed with array operations on the step array, so it runs inside a
// compiled training step without retracing as the step advances.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "nuvec/nn/optimizer.h"

namespace nuvec::optim {

/// init * decay_rate^step (MLX's exponential_decay): float32 for an integer
/// step.
Schedule exponential_decay(double init, double decay_rate);

/// init * decay_rate^(step // step_size) (MLX's step_decay); step_size < 1
/// throws nuvec::Error.
Schedule step_decay(double init, double decay_rate, int64_t step_size);

/// end + (init - end) (1 + cos(pi min(step, decay_steps) / decay_steps)) / 2
/// (MLX's cosine_decay: constant past decay_steps); decay_steps < 1 throws.
Schedule cosine_decay(double init, int64_t decay_steps, double end = 0.0);

/// min(step, steps) (end - init) / steps + init (MLX's linear_schedule:
/// `end` past `steps`); steps < 1 throws nuvec::Error.
Schedule linear_schedule(double init, double end, int64_t steps);

/// Joins schedules at the boundaries: schedule i + 1 sees the steps since
/// boundary i (MLX's join_schedules). Needs at least one schedule and one
/// boundary fewer than schedules, else nuvec::Error.
Schedule join_schedules(const std::vector<Schedule>& schedules,
                        const std::vector<int64_t>& boundaries);

namespace detail {
void check_max_norm(double max_norm);
/// A leaf's squared 2-norm, float16 summed in float32 (as MLX).
Array squared_norm(const Array& g);
/// g * normalizer, cast back to g's dtype when floating (as MLX).
Array scale_gradient(const Array& g, const Array& normalizer);
/// min(max_norm / (total + 1e-6), 1).
Array clip_normalizer(double max_norm, const Array& total_norm);
}  // namespace detail

/// Scales every gradient leaf of `grads` (any tree; a module's gradients
/// from nn::value_and_grad included, buffers passed through unchanged) by
/// min(max_norm / (norm + 1e-6), 1), where norm is the 2-norm of all the
/// leaves together, summed in tree order (MLX's clip_grad_norm). Returns
/// {the clipped tree, the norm before clipping} (a float32 scalar for
/// float32 leaves). max_norm < 0 throws nuvec::Error.
template <Tree T>
std::pair<T, Array> clip_grad_norm(const T& grads, double max_norm) {
  detail::check_max_norm(max_norm);
  // MLX's tree_reduce starts from the Python float 0.0, a weak scalar.
  std::optional<Array> sum;
  tree_visit(grads, [&](std::string_view, const Array& g, LeafKind kind, bool) {
    if (kind == LeafKind::buffer) return;
    sum = sum ? *sum + detail::squared_norm(g) : 0.0 + detail::squared_norm(g);
  });
  Array total = ops::sqrt(sum ? *sum : array(0.0f));
  Array normalizer = detail::clip_normalizer(max_norm, total);
  T clipped = grads;
  tree_visit_mut(clipped, [&](std::string_view, Array& g, LeafKind kind, bool) {
    if (kind != LeafKind::buffer) g = detail::scale_gradient(g, normalizer);
  });
  return {std::move(clipped), total};
}

}  // namespace nuvec::optim
