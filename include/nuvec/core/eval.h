// Evaluation of arrays.
#pragma once

#include <vector>

#include "nuvec/core/array.h"

namespace nuvec {

/// Evaluates the arrays and everything they depend on, and waits for them.
/// Each node runs at most once, also when several threads evaluate graphs
/// that share nodes. Throws the first failure (graph or eval-time).
void eval(const std::vector<Array>& arrays);
/// Starts evaluating the arrays on a background worker and returns at once;
/// reading them later (or eval) waits for exactly the work they need.
void async_eval(const std::vector<Array>& arrays);

}  // namespace nuvec
