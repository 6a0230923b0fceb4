// The loss functions of mlx.nn.losses (docs/nn.md, "Losses"), in namespace
// nuvec::nn::losses, with MLX's arguments in MLX's positional order and its
// defaults (each loss keeps MLX's own default reduction). Each is MLX's
// formula with the core's ops in MLX's order, so on the CPU the values are
// MLX's. Reductions: "none" (the per-element loss), "mean" (the mean of all
// of it) or "sum". An unknown reduction, shapes that MLX rejects, or an
// invalid option give a failed array (op named after the loss, the
// caller's location) that throws nuvec::Error when read.
#pragma once

#include <optional>
#include <string>

#include "nuvec/nuvec.h"

namespace nuvec::nn::losses {

/// cross_entropy's keyword arguments, for designated initializers:
/// `cross_entropy(logits, targets, {.label_smoothing = 0.1, .reduction =
/// "mean"})`.
struct CrossEntropyOptions {
  /// Multiplies the loss; must have the loss's shape (the targets' shape
  /// without the class axis).
  std::optional<Array> weights = std::nullopt;
  /// The class axis.
  int axis = -1;
  /// In [0, 1): the target's logit is replaced by (1 - s) logit[t] + s
  /// mean(logits).
  double label_smoothing = 0.0;
  std::string reduction = "none";
};

/// logsumexp(logits) - logits[target] over `axis`. `targets` are class
/// indices (integers, logits' shape without `axis`) or probabilities
/// (logits' shape: the score is sum(logits * targets)). The logits are
/// shifted by their (gradient-free) max first, as MLX. On a GPU device,
/// integer targets over the last axis (16-bit or float32 logits) use
/// fast::cross_entropy (float32, then cast to the logits' dtype), as MLX
/// does there.
Array cross_entropy(const Array& logits, const Array& targets,
                    const std::optional<Array>& weights = std::nullopt,
                    int axis = -1, double label_smoothing = 0.0,
                    const std::string& reduction = "none",
                    Location loc = NUVEC_LOC);
/// The same with the keyword arguments in a struct (pass std::nullopt,
/// not {}, to the overload above for no weights: {} fits both).
Array cross_entropy(const Array& logits, const Array& targets,
                    const CrossEntropyOptions& options,
                    Location loc = NUVEC_LOC);

/// with_logits: logaddexp(0, inputs) - inputs * targets; else
/// -(targets log(inputs) + (1 - targets) log(1 - inputs)) with each log
/// clipped below at -100. inputs and targets of one shape; weights (of that
/// shape) multiply the loss.
Array binary_cross_entropy(const Array& inputs, const Array& targets,
                           const std::optional<Array>& weights = std::nullopt,
                           bool with_logits = true,
                           const std::string& reduction = "mean",
                           Location loc = NUVEC_LOC);

/// |predictions - targets|, of one shape.
Array l1_loss(const Array& predictions, const Array& targets,
              const std::string& reduction = "mean", Location loc = NUVEC_LOC);

/// (predictions - targets)^2, of one shape.
Array mse_loss(const Array& predictions, const Array& targets,
               const std::string& reduction = "mean", Location loc = NUVEC_LOC);

/// -inputs[target] over `axis`: inputs are log-probabilities, targets
/// integer indices (inputs' shape without `axis`, broadcasting as
/// take_along_axis).
Array nll_loss(const Array& inputs, const Array& targets, int axis = -1,
               const std::string& reduction = "none", Location loc = NUVEC_LOC);

/// 0.5 (log(v) + (targets - inputs)^2 / v) with v = max(vars, eps), plus
/// 0.5 log(2 pi) when `full`. inputs, targets and vars of one shape.
Array gaussian_nll_loss(const Array& inputs, const Array& targets,
                        const Array& vars, bool full = false, double eps = 1e-6,
                        const std::string& reduction = "mean",
                        Location loc = NUVEC_LOC);

/// sum(exp(targets) * (targets - inputs)) over `axis`; both are
/// log-probabilities (broadcasting).
Array kl_div_loss(const Array& inputs, const Array& targets, int axis = -1,
                  const std::string& reduction = "none",
                  Location loc = NUVEC_LOC);

/// With d = |predictions - targets|: 0.5 d^2 / beta where d < beta, else
/// d - 0.5 beta. Of one shape.
Array smooth_l1_loss(const Array& predictions, const Array& targets,
                     double beta = 1.0, const std::string& reduction = "mean",
                     Location loc = NUVEC_LOC);

/// max(|A - P|_p - |A - N|_p + margin, 0) over `axis`, each distance
/// (sum |.|^p + eps)^(1/p) (broadcasting).
Array triplet_loss(const Array& anchors, const Array& positives,
                   const Array& negatives, int axis = -1, int p = 2,
                   double margin = 1.0, double eps = 1e-6,
                   const std::string& reduction = "none",
                   Location loc = NUVEC_LOC);

/// max(1 - inputs * targets, 0), targets in {-1, 1} (broadcasting).
Array hinge_loss(const Array& inputs, const Array& targets,
                 const std::string& reduction = "none",
                 Location loc = NUVEC_LOC);

/// With a = |inputs - targets| and q = min(a, delta): 0.5 q^2 + delta (a - q)
/// (broadcasting).
Array huber_loss(const Array& inputs, const Array& targets, double delta = 1.0,
                 const std::string& reduction = "none",
                 Location loc = NUVEC_LOC);

/// log(cosh(inputs - targets)) as logaddexp(e, -e) - log(2) (broadcasting).
Array log_cosh_loss(const Array& inputs, const Array& targets,
                    const std::string& reduction = "none",
                    Location loc = NUVEC_LOC);

/// sum(x1 * x2) / max(|x1| |x2|, eps) over `axis` (2-norms; broadcasting).
/// MLX's default axis is 1.
Array cosine_similarity_loss(const Array& x1, const Array& x2, int axis = 1,
                             double eps = 1e-8,
                             const std::string& reduction = "none",
                             Location loc = NUVEC_LOC);

/// max(0, -targets * (inputs1 - inputs2) + margin), targets in {-1, 1};
/// all three of one shape.
Array margin_ranking_loss(const Array& inputs1, const Array& inputs2,
                          const Array& targets, double margin = 0.0,
                          const std::string& reduction = "none",
                          Location loc = NUVEC_LOC);

}  // namespace nuvec::nn::losses
