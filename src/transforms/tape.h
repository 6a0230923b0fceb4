// The tape: the nodes between a transform's tracers and the function's
// outputs, in evaluation order (DESIGN.md section 3; MLX's graph walk in
// notes/mlx-architecture.md).
#pragma once

#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "nuvec/core/graph.h"

namespace nuvec::transforms {

/// One node that depends on a tracer: its primitive, inputs and outputs (an
/// output nobody kept is a failed placeholder).
struct TapeEntry {
  std::shared_ptr<Node> node;
  std::shared_ptr<const Primitive> primitive;
  Arrays inputs;
  Arrays outputs;
  std::vector<bool> output_alive;
};

using IdSet = std::unordered_set<const void*>;

/// The nodes below `outputs` that depend on an array in `tracers` (by id),
/// inputs before users. Nodes built outside any trace are constants.
std::vector<TapeEntry> build_tape(const Arrays& outputs, const IdSet& tracers);

/// A new array with `x`'s values and its own identity, through which the
/// transform differentiates or batches (a view; no copy).
Array make_tracer(const Array& x);

/// Zeros of `like`'s shape and dtype without a buffer of that size.
Array zeros_like_cheap(const Shape& shape, DType dtype);

/// Throws the error of the first failed array as it is (the original op
/// name and the caller's location).
void throw_if_failed(const Arrays& arrays);

}  // namespace nuvec::transforms

namespace nuvec::transforms {
/// Ends the tape's hold on the graph once no transform traces on this
/// thread: finished nodes drop their inputs (so a kept output no longer pins
/// every intermediate), pending ones will when they run.
void release_tape(const std::vector<TapeEntry>& tape);
}  // namespace nuvec::transforms
