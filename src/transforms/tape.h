// The tape: the nodes between a transform's tracers and the function's
// outputs, in evaluation order (DESIGN.md section 3; MLX's graph walk in
// notes/mlx-architecture.md).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nuvec/core/graph.h"
#include "transforms/ptr_index.h"

namespace nuvec::transforms {

/// Array ids (a flat table: no allocation per entry).
using IdSet = PtrSet;

/// The nodes below some outputs that depend on a tracer, inputs before
/// users, in flat storage: the entries' inputs and outputs live in two
/// arrays for the whole tape, so walking a graph allocates a few times per
/// tape instead of several times per node (docs/performance.md).
struct Tape {
  struct Entry {
    std::shared_ptr<Node> node;
    std::shared_ptr<const Primitive> primitive;
    uint32_t in_begin, in_end;    // into inputs
    uint32_t out_begin, out_end;  // into outputs and alive
    size_t num_inputs() const { return in_end - in_begin; }
    size_t num_outputs() const { return out_end - out_begin; }
  };
  std::vector<Entry> entries;
  /// A snapshot of each entry's inputs, taken under the node's lock. The
  /// engines may move them out as they walk (each entry is visited once).
  Arrays inputs;
  /// Each entry's outputs; an output nobody kept is a failed placeholder.
  Arrays outputs;
  std::vector<char> alive;  // per output: whether anything kept it
  /// Per input, and per array walk_tape() started from (`roots`): the index
  /// in `outputs` of the tape output it is, or -1 (a tracer or a constant),
  /// so the engines find an input's producer without a table lookup.
  std::vector<int32_t> sources;
  std::vector<int32_t> roots;

  /// Empties the tape, keeping its storage (see release_tape).
  void clear() {
    entries.clear();
    inputs.clear();
    outputs.clear();
    alive.clear();
    sources.clear();
    roots.clear();
  }
  /// Whether its storage is small enough to keep for the next walk.
  bool worth_keeping() const { return inputs.capacity() <= (size_t{1} << 16); }
};

/// The nodes below `outputs` that depend on an array in `tracers` (by id),
/// inputs before users. Nodes built outside any trace are constants.
Tape walk_tape(const Arrays& outputs, const IdSet& tracers);

/// One node of a tape, with its own vectors (for compile, which keeps the
/// steps of its trace).
struct TapeEntry {
  std::shared_ptr<Node> node;
  std::shared_ptr<const Primitive> primitive;
  Arrays inputs;
  Arrays outputs;
  std::vector<bool> output_alive;
};

/// walk_tape() as one TapeEntry per node.
std::vector<TapeEntry> build_tape(const Arrays& outputs, const IdSet& tracers);

/// A new array with `x`'s values and its own identity, through which the
/// transform differentiates or batches (a view; no copy).
Array make_tracer(const Array& x);

/// Zeros of `like`'s shape and dtype without a buffer of that size.
Array zeros_like_cheap(const Shape& shape, DType dtype);

/// Throws the error of the first failed array as it is (the original op
/// name and the caller's location).
void throw_if_failed(const Arrays& arrays);

/// Ends the tape's hold on the graph once no transform traces on this
/// thread: finished nodes drop their inputs (so a kept output no longer pins
/// every intermediate), pending ones will when they run. The tape is empty
/// afterwards; its storage serves the thread's next walk (spare.h).
void release_tape(Tape& tape);

}  // namespace nuvec::transforms
