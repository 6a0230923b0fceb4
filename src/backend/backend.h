// What the evaluator asks of a backend. Nothing outside src/backend includes
// this header's implementations' headers.
#pragma once

#include <vector>

#include "nuvec/core/graph.h"

namespace nuvec::backend {

/// Runs `p` on the CPU: `outputs` have their buffers (donated or fresh) and
/// must be filled; inputs are available.
void eval_cpu(const Primitive& p, const std::vector<Array>& inputs,
              std::vector<Array>& outputs);

/// A host pointer to element `offset` of an available array.
const void* host_pointer(const Array& a);

}  // namespace nuvec::backend
