// The graph: what an Array handle points to, and the nodes that produce
// pending arrays (DESIGN.md sections 3 and 10, "The node model").
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "nuvec/core/array.h"
#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// A buffer on a device. Only buffers from the allocator may be donated to
/// an operation's output (never a memory-mapped file or external memory).
struct Data {
  void* ptr = nullptr;
  size_t nbytes = 0;
  size_t capacity = 0;
  Device device = Device::cpu;
  bool from_allocator = false;
  void (*release)(Data&) = nullptr;  // frees ptr; null for borrowed memory
  void* context = nullptr;           // for release
  Data() = default;
  Data(const Data&) = delete;
  Data& operator=(const Data&) = delete;
  ~Data() {
    if (release) release(*this);
  }
};

/// A new CPU buffer of `nbytes` from the caching allocator. Throws
/// nuvec::Error (out_of_memory) when the memory limit or the system refuses.
std::shared_ptr<Data> allocate_data(size_t nbytes);

/// What an Array handle refers to. Shape, strides, offset and dtype are fixed
/// when the array is created; `data` is set once, when its producer has run.
struct ArrayDesc {
  Shape shape;
  Strides strides;      // in elements
  int64_t offset = 0;   // in elements, into data
  int64_t size = 0;
  DType dtype;
  bool row_contiguous = true;   // dense C order over [offset, offset + size)
  std::shared_ptr<Data> data;   // valid once available
  std::shared_ptr<struct Node> node;  // producer; null for constants and failures
  int output_index = 0;
  std::shared_ptr<const Error> error;  // set on failed arrays only
};

namespace detail {
/// How many transforms are tracing on this thread (nodes built meanwhile
/// keep their graph after evaluation).
int& trace_depth();
/// Marks the calling thread as tracing for its lifetime (nests).
class TraceScope {
 public:
  TraceScope() { ++trace_depth(); }
  ~TraceScope() { --trace_depth(); }
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;
};
/// Suspends tracing on this thread for its lifetime: nodes built meanwhile
/// are ordinary (custom functions compute their outputs this way, so the
/// backward pass recomputes instead of keeping their intermediates).
class TracePause {
 public:
  TracePause() : saved_(trace_depth()) { trace_depth() = 0; }
  ~TracePause() { trace_depth() = saved_; }
  TracePause(const TracePause&) = delete;
  TracePause& operator=(const TracePause&) = delete;

 private:
  int saved_;
};
}  // namespace detail

/// A pending (or finished) operation: its primitive, inputs and outputs.
/// After it runs, the primitive and inputs are dropped so that intermediates
/// are freed as soon as nothing needs them.
struct Node {
  enum class State : int { pending, running, done };

  std::shared_ptr<const Primitive> primitive;
  std::vector<Array> inputs;
  std::vector<std::weak_ptr<ArrayDesc>> outputs;  // weak: no cycles
  std::vector<OutputSpec> specs;                  // one per output
  Stream stream;
  const char* op_name;  // the public operation that built the node
  Location loc;
  std::atomic<State> state{State::pending};
  std::mutex mu;
  std::condition_variable cv;
  std::shared_ptr<const Error> error;  // an eval-time failure
  // Built while a transform traces on this thread: evaluation keeps the
  // primitive and inputs (the transform walks them afterwards) and never
  // donates an input's buffer (the backward pass reads it).
  // Cleared when the outermost transform is done with the node.
  std::atomic<bool> keep_graph;

  Node(std::shared_ptr<const Primitive> p, std::vector<Array> in, Stream s,
       const char* op, Location l)
      : primitive(std::move(p)), inputs(std::move(in)), stream(s), op_name(op),
        loc(l), keep_graph(detail::trace_depth() > 0) {}
  /// Frees the input chain iteratively (a 10^6-op chain must not overflow the
  /// stack).
  ~Node();
};

/// A constant array over `data` (already holding the values).
Array make_constant(std::shared_ptr<Data> data, Shape shape, DType dtype);
/// A constant of the given shape and dtype with uninitialised storage.
Array make_empty_constant(Shape shape, DType dtype);
/// A failed array carrying `error`.
Array make_failed(Error error);
/// Whether `strides` are the row-major strides of `shape` (ignoring size-1 dims).
bool is_row_contiguous(const Shape& shape, const Strides& strides);

}  // namespace nuvec
