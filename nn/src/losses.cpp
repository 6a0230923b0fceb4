// mlx.nn.losses with the core's ops, MLX's formulas in MLX's order (Python
// float constants are doubles here: weak scalars, as in MLX).
#include "nuvec/nn/losses.h"

#include <cmath>
#include <initializer_list>
#include <numbers>

#include "nuvec/core/graph.h"

namespace nuvec::nn::losses {
namespace {

/// A shape as Python prints a tuple: "(2, 3)", "(4,)", "()".
std::string shape_text(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

Array fail(ErrorKind kind, const std::string& message, const char* op,
           Location loc) {
  return make_failed(Error(kind, message, op, loc));
}

/// The first failed array among the inputs, to pass on unchanged.
std::optional<Array> first_failed(std::initializer_list<const Array*> xs) {
  for (const Array* x : xs)
    if (x->is_failed()) return *x;
  return std::nullopt;
}

/// A failed array unless a and b have one shape ("<what_a> shape ... does
/// not match <what_b> shape ...", MLX's message).
std::optional<Array> same_shape(const Array& a, const Array& b,
                                const char* what_a, const char* what_b,
                                const char* op, Location loc) {
  if (a.shape() == b.shape()) return std::nullopt;
  return fail(ErrorKind::shape_mismatch,
              std::string(what_a) + " shape " + shape_text(a.shape()) +
                  " does not match " + what_b + " shape " +
                  shape_text(b.shape()),
              op, loc);
}

std::optional<Array> check_weights(const Array& loss,
                                   const std::optional<Array>& weights,
                                   const char* op, Location loc) {
  if (!weights) return std::nullopt;
  if (weights->is_failed()) return *weights;
  if (weights->shape() == loss.shape()) return std::nullopt;
  return fail(ErrorKind::shape_mismatch,
              "weights with shape " + shape_text(weights->shape()) +
                  " is not the same as the output loss with shape " +
                  shape_text(loss.shape()),
              op, loc);
}

/// MLX's _reduce: "none", "mean" (over every element) or "sum".
Array reduce(const Array& loss, const std::string& reduction, const char* op,
             Location loc) {
  if (reduction == "mean") return ops::mean(loss);
  if (reduction == "sum") return ops::sum(loss);
  if (reduction == "none") return loss;
  return fail(ErrorKind::invalid_argument,
              "invalid reduction '" + reduction +
                  "': must be one of 'none', 'mean', 'sum'",
              op, loc);
}

/// Whether `axis` names an axis of an array of `ndim` dimensions.
bool axis_ok(int axis, int ndim) { return axis >= -ndim && axis < ndim; }

}  // namespace

Array cross_entropy(const Array& logits_in, const Array& targets,
                    const std::optional<Array>& weights, int axis,
                    double label_smoothing, const std::string& reduction,
                    Location loc) {
  const char* op = "cross_entropy";
  if (auto bad = first_failed({&logits_in, &targets})) return *bad;
  if (label_smoothing < 0 || label_smoothing >= 1)
    return fail(ErrorKind::invalid_argument,
                "label smoothing must be in [0, 1), got " +
                    std::to_string(label_smoothing),
                op, loc);
  int nd = logits_in.ndim();
  if (!axis_ok(axis, nd))
    return fail(ErrorKind::invalid_axis,
                "axis " + std::to_string(axis) +
                    " is out of range for logits of shape " +
                    shape_text(logits_in.shape()),
                op, loc);
  bool as_probs = targets.ndim() == nd;
  Shape want = logits_in.shape();
  if (!as_probs) want.erase(want.begin() + (axis < 0 ? axis + nd : axis));
  if (targets.shape() != want)
    return fail(ErrorKind::shape_mismatch,
                "targets shape " + shape_text(targets.shape()) +
                    " does not match logits shape " +
                    shape_text(logits_in.shape()),
                op, loc);

  Array loss;
  bool use_fast = default_device().type == Device::DeviceType::gpu &&
                  !as_probs && (axis == -1 || axis == nd - 1) &&
                  is_floating(logits_in.dtype()) &&
                  logits_in.dtype() != float64 && is_integer(targets.dtype());
  if (use_fast) {
    // The fused kernel computes MLX's smoothed formula too; its float32
    // result would round float64 logits' losses, hence float64 stays out.
    loss = fast::cross_entropy(
               logits_in, targets,
               {.label_smoothing = static_cast<float>(label_smoothing)})
               .astype(logits_in.dtype());
  } else {
    Array logits =
        logits_in - ops::stop_gradient(ops::max(logits_in, axis, true));
    Array score =
        as_probs
            ? ops::sum(logits * targets, axis)
            : ops::squeeze(ops::take_along_axis(
                               logits, ops::expand_dims(targets, axis), axis),
                           axis);
    Array lse = ops::logsumexp(logits, axis);
    if (label_smoothing > 0) {
      Array adjusted = (1 - label_smoothing) * score;
      Array smoothed = -ops::mean(logits, axis) * label_smoothing;
      loss = lse - adjusted + smoothed;
    } else {
      loss = lse - score;
    }
  }
  if (auto bad = check_weights(loss, weights, op, loc)) return *bad;
  if (weights) loss = loss * *weights;
  return reduce(loss, reduction, op, loc);
}

Array cross_entropy(const Array& logits, const Array& targets,
                    const CrossEntropyOptions& o, Location loc) {
  return cross_entropy(logits, targets, o.weights, o.axis, o.label_smoothing,
                       o.reduction, loc);
}

Array binary_cross_entropy(const Array& inputs, const Array& targets,
                           const std::optional<Array>& weights,
                           bool with_logits, const std::string& reduction,
                           Location loc) {
  const char* op = "binary_cross_entropy";
  if (auto bad = first_failed({&inputs, &targets})) return *bad;
  if (auto bad = same_shape(inputs, targets, "inputs", "targets", op, loc))
    return *bad;
  Array loss;
  if (with_logits) {
    loss = ops::logaddexp(0.0, inputs) - inputs * targets;
  } else {
    Array log_p = ops::clip(ops::log(inputs), -100, std::nullopt);
    Array log_q = ops::clip(ops::log(1 - inputs), -100, std::nullopt);
    loss = -(targets * log_p + (1 - targets) * log_q);
  }
  if (auto bad = check_weights(loss, weights, op, loc)) return *bad;
  if (weights) loss = loss * *weights;
  return reduce(loss, reduction, op, loc);
}

Array l1_loss(const Array& predictions, const Array& targets,
              const std::string& reduction, Location loc) {
  const char* op = "l1_loss";
  if (auto bad = first_failed({&predictions, &targets})) return *bad;
  if (auto bad =
          same_shape(predictions, targets, "predictions", "targets", op, loc))
    return *bad;
  return reduce(ops::abs(predictions - targets), reduction, op, loc);
}

Array mse_loss(const Array& predictions, const Array& targets,
               const std::string& reduction, Location loc) {
  const char* op = "mse_loss";
  if (auto bad = first_failed({&predictions, &targets})) return *bad;
  if (auto bad =
          same_shape(predictions, targets, "predictions", "targets", op, loc))
    return *bad;
  return reduce(ops::square(predictions - targets), reduction, op, loc);
}

Array nll_loss(const Array& inputs, const Array& targets, int axis,
               const std::string& reduction, Location loc) {
  const char* op = "nll_loss";
  if (auto bad = first_failed({&inputs, &targets})) return *bad;
  Array picked =
      ops::take_along_axis(inputs, ops::expand_dims(targets, axis), axis);
  return reduce(-ops::squeeze(picked, axis), reduction, op, loc);
}

Array gaussian_nll_loss(const Array& inputs, const Array& targets,
                        const Array& vars, bool full, double eps,
                        const std::string& reduction, Location loc) {
  const char* op = "gaussian_nll_loss";
  if (auto bad = first_failed({&inputs, &targets, &vars})) return *bad;
  if (auto bad = same_shape(inputs, targets, "inputs", "targets", op, loc))
    return *bad;
  if (auto bad = same_shape(inputs, vars, "inputs", "vars", op, loc))
    return *bad;
  Array v = ops::maximum(vars, eps);
  Array loss = 0.5 * (ops::log(v) + ops::square(targets - inputs) / v);
  if (full) loss = loss + 0.5 * std::log(2 * std::numbers::pi);
  return reduce(loss, reduction, op, loc);
}

Array kl_div_loss(const Array& inputs, const Array& targets, int axis,
                  const std::string& reduction, Location loc) {
  const char* op = "kl_div_loss";
  if (auto bad = first_failed({&inputs, &targets})) return *bad;
  return reduce(ops::sum(ops::exp(targets) * (targets - inputs), axis),
                reduction, op, loc);
}

Array smooth_l1_loss(const Array& predictions, const Array& targets,
                     double beta, const std::string& reduction, Location loc) {
  const char* op = "smooth_l1_loss";
  if (auto bad = first_failed({&predictions, &targets})) return *bad;
  if (auto bad =
          same_shape(predictions, targets, "predictions", "targets", op, loc))
    return *bad;
  Array diff = ops::abs(predictions - targets);
  Array loss = ops::where(diff < beta, 0.5 * ops::square(diff) / beta,
                          ops::abs(diff) - 0.5 * beta);
  return reduce(loss, reduction, op, loc);
}

Array triplet_loss(const Array& anchors, const Array& positives,
                   const Array& negatives, int axis, int p, double margin,
                   double eps, const std::string& reduction, Location loc) {
  const char* op = "triplet_loss";
  if (auto bad = first_failed({&anchors, &positives, &negatives})) return *bad;
  auto distance = [&](const Array& other) {
    return ops::power(
        ops::sum(ops::power(ops::abs(anchors - other), p), axis) + eps,
        1.0 / p);
  };
  Array loss =
      ops::maximum(distance(positives) - distance(negatives) + margin, 0);
  return reduce(loss, reduction, op, loc);
}

Array hinge_loss(const Array& inputs, const Array& targets,
                 const std::string& reduction, Location loc) {
  const char* op = "hinge_loss";
  if (auto bad = first_failed({&inputs, &targets})) return *bad;
  return reduce(ops::maximum(1 - inputs * targets, 0), reduction, op, loc);
}

Array huber_loss(const Array& inputs, const Array& targets, double delta,
                 const std::string& reduction, Location loc) {
  const char* op = "huber_loss";
  if (auto bad = first_failed({&inputs, &targets})) return *bad;
  Array abs_errors = ops::abs(inputs - targets);
  Array quadratic = ops::minimum(abs_errors, delta);
  Array linear = abs_errors - quadratic;
  Array loss = 0.5 * ops::power(quadratic, 2) + delta * linear;
  return reduce(loss, reduction, op, loc);
}

Array log_cosh_loss(const Array& inputs, const Array& targets,
                    const std::string& reduction, Location loc) {
  const char* op = "log_cosh_loss";
  if (auto bad = first_failed({&inputs, &targets})) return *bad;
  Array errors = inputs - targets;
  return reduce(ops::logaddexp(errors, -errors) - std::log(2.0), reduction, op,
                loc);
}

Array cosine_similarity_loss(const Array& x1, const Array& x2, int axis,
                             double eps, const std::string& reduction,
                             Location loc) {
  const char* op = "cosine_similarity_loss";
  if (auto bad = first_failed({&x1, &x2})) return *bad;
  Array n1 = linalg::norm(x1, axis);
  Array n2 = linalg::norm(x2, axis);
  Array loss = ops::sum(x1 * x2, axis) / ops::maximum(n1 * n2, eps);
  return reduce(loss, reduction, op, loc);
}

Array margin_ranking_loss(const Array& inputs1, const Array& inputs2,
                          const Array& targets, double margin,
                          const std::string& reduction, Location loc) {
  const char* op = "margin_ranking_loss";
  if (auto bad = first_failed({&inputs1, &inputs2, &targets})) return *bad;
  if (inputs1.shape() != inputs2.shape() || inputs1.shape() != targets.shape())
    return fail(ErrorKind::shape_mismatch,
                "the shapes of the arguments do not match: inputs1 " +
                    shape_text(inputs1.shape()) + ", inputs2 " +
                    shape_text(inputs2.shape()) + ", targets " +
                    shape_text(targets.shape()),
                op, loc);
  Array differences = inputs1 - inputs2;
  return reduce(ops::maximum(0, -targets * differences + margin), reduction, op,
                loc);
}

}  // namespace nuvec::nn::losses
