// Counters of the evaluator, for tests and benchmarks.
#pragma once

#include <cstdint>

namespace nuvec::detail {

/// How many nodes have run in this process (each node runs at most once).
uint64_t executed_node_count();

}  // namespace nuvec::detail
