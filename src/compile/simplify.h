// A traced graph and its simplification: identity views and same-type
// conversions removed, equal scalar constants merged, common
// subexpressions computed once, dead nodes dropped (docs/compile.md).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nuvec/compile.h"
#include "nuvec/core/graph.h"

namespace nuvec::compiler {

/// One operation of a traced graph. Inputs refer to earlier steps' outputs
/// or placeholders by identity; other inputs are constants of the trace.
struct Step {
  std::shared_ptr<const Primitive> primitive;
  Arrays inputs;
  Arrays outputs;  // the traced outputs (identities); a dead output is failed
  std::vector<bool> output_alive;
  const char* op_name;
  Location loc;
  Stream stream;
};

struct Graph {
  Arrays placeholders;
  std::vector<Step> steps;
  Arrays outputs;
  // Where replay finds each value, set by trace: slots 0..P-1 are the
  // inputs, then each step's live outputs in order. Per step, its inputs'
  // slots (-1: a constant of the trace, used as it is) and its outputs'
  // (-1: dead); then the graph's outputs'.
  std::vector<std::vector<int>> input_slots, output_slots;
  std::vector<int> result_slots;
  int slots = 0;
};

/// Runs `f` on placeholders shaped like `inputs` and returns the
/// simplified graph from them to f's outputs. With `shapeless`, a primitive
/// whose parameters hold a traced size fails the trace, naming its op.
Graph trace(const Arrays& inputs, bool shapeless,
            const std::function<Arrays(const Arrays& placeholders)>& f);

/// The graph applied to `inputs`: each step's primitive built again on the
/// new arrays (shapes inferred again). Throws the first failed output.
Arrays replay(const Graph& g, const Arrays& inputs);

/// How many steps the last simplification removed, by reason (for tests).
struct SimplifyStats {
  int identities = 0;
  int constants_merged = 0;
  int common_subexpressions = 0;
  int dead = 0;
  int fused_kernels = 0;  // Fused steps made
  int fused_ops = 0;      // element-wise steps they replaced
  int fused_reductions = 0;  // FusedReduce steps made
};

/// The graph as text and Graphviz DOT (Compiled::graph).
GraphReport describe(const Graph& g);

/// Replaces connected element-wise steps of one shape by Fused steps.
Graph fuse(Graph g, SimplifyStats& stats);

/// Whether a step is one element-wise operation (unary, binary, select, a
/// cast) with its one output used: what fusion joins.
bool elementwise(const Step& s);

/// The bits of a constant of the trace that holds one value (0-d, or a
/// scalar read through zero strides): generated kernels take it as a literal.
std::optional<uint64_t> literal_bits(const Array& a);

/// Replaces regions of element-wise steps, reductions over the trailing
/// axes of one shape and element-wise work after them along the same rows
/// by FusedReduce steps (CPU steps of shaped traces).
Graph fuse_rows(Graph g, SimplifyStats& stats, bool shapeless);

/// `name` with static storage duration (one copy per distinct name): the
/// op names of steps made while compiling.
const char* intern_op_name(const std::string& name);
SimplifyStats last_simplify_stats();

}  // namespace nuvec::compiler
