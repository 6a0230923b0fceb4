// The graph: what an Array handle points to, and the nodes that produce
// pending arrays (DESIGN.md sections 3 and 10, "The node model").
#pragma once

#include <atomic>
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

/// A node's weak references to its outputs. Most nodes have one output,
/// kept inline (a vector here was one allocation more per node); further
/// outputs go to a vector.
class OutputRefs {
 public:
  size_t size() const { return size_; }
  std::weak_ptr<ArrayDesc>& operator[](size_t i) { return i == 0 ? first_ : rest_[i - 1]; }
  const std::weak_ptr<ArrayDesc>& operator[](size_t i) const {
    return i == 0 ? first_ : rest_[i - 1];
  }
  void push_back(std::weak_ptr<ArrayDesc> ref) {
    if (size_++ == 0) first_ = std::move(ref);
    else rest_.push_back(std::move(ref));
  }
  void reserve(size_t n) {
    if (n > 1) rest_.reserve(n - 1);
  }

 private:
  std::weak_ptr<ArrayDesc> first_;
  std::vector<std::weak_ptr<ArrayDesc>> rest_;
  size_t size_ = 0;
};

/// A pending (or finished) operation: its primitive, inputs and outputs.
/// After it runs, the primitive and inputs are dropped so that intermediates
/// are freed as soon as nothing needs them.
struct Node {
  enum class State : int { pending, running, done };

  std::shared_ptr<const Primitive> primitive;
  std::vector<Array> inputs;
  OutputRefs outputs;                             // weak: no cycles
  // One per output. The only output of a node, when not a view, keeps its
  // shape in its descriptor instead (moved there when built): read shapes
  // from the outputs; such a node whose output nobody holds has nothing to
  // compute.
  std::vector<OutputSpec> specs;
  Stream stream;
  const char* op_name;  // the public operation that built the node
  Location loc;
  // Threads that find the node running wait on `state` itself (C++20
  // atomic wait): a condition variable per node cost its construction and
  // destruction on every node, waited on or not.
  std::atomic<State> state{State::pending};
  std::mutex mu;
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

/// A new, empty descriptor. Nodes and descriptors come from per-thread free
/// lists (src/core/pool.h): graphs of small arrays make and drop thousands.
std::shared_ptr<ArrayDesc> new_desc();
/// A new node (see Node's constructor), from the same free lists.
std::shared_ptr<Node> new_node(std::shared_ptr<const Primitive> p, std::vector<Array> in,
                               Stream s, const char* op, Location l);

/// A constant array over `data` (already holding the values).
Array make_constant(std::shared_ptr<Data> data, Shape shape, DType dtype);
/// A constant of the given shape and dtype with uninitialised storage.
Array make_empty_constant(Shape shape, DType dtype);
/// A failed array carrying `error`.
Array make_failed(Error error);
/// Whether `strides` are the row-major strides of `shape` (ignoring size-1 dims).
bool is_row_contiguous(const Shape& shape, const Strides& strides);

}  // namespace nuvec
