// Evaluation of arrays.
#pragma once

#include <memory>
#include <vector>

#include "nuvec/core/array.h"

namespace nuvec {

struct Node;

/// Evaluates the arrays and everything they depend on, and waits for them.
/// Each node runs at most once, also when several threads evaluate graphs
/// that share nodes. Throws the first failure (graph or eval-time).
void eval(const std::vector<Array>& arrays);
/// Starts evaluating the arrays on a background worker and returns at once;
/// reading them later (or eval) waits for exactly the work they need.
void async_eval(const std::vector<Array>& arrays);

/// Waits until all work submitted so far (async_eval on any thread, GPU
/// kernels on every stream) has finished, as MLX's synchronize(); throws a
/// failure the GPU reported. The stream form waits for at least that
/// stream's work.
void synchronize();
void synchronize(Stream s);

/// Arrays whose evaluation is put in order but not started (schedule).
class Scheduled {
 public:
  /// Starts the work on the background worker and returns at once (as
  /// nuvec::async_eval, without ordering the graph again).
  void async_eval() const;
  /// Runs the work and waits for it (as nuvec::eval); throws the first
  /// failure. Work already done (by an earlier eval of shared nodes, or of
  /// this schedule) is not run again.
  void eval() const;
  const std::vector<Array>& arrays() const { return arrays_; }

 private:
  friend Scheduled schedule(const std::vector<Array>& arrays);
  std::vector<Array> arrays_;
  std::shared_ptr<const std::vector<std::shared_ptr<Node>>> order_;  // each node after its inputs
};

/// The arrays with the work they need put in order, to be started later by
/// Scheduled::async_eval or Scheduled::eval with less delay: ordering a
/// large graph takes a while, which can then overlap other work (the GPU
/// running the previous step while the next one waits for its result).
/// Nothing runs until then.
Scheduled schedule(const std::vector<Array>& arrays);

}  // namespace nuvec
