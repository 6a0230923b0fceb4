#include "transforms/tape.h"

#include <algorithm>

#include "nuvec/ops/ops.h"
#include "nuvec/primitives/shape_ops.h"
#include "ops/builder.h"
#include "transforms/spare.h"

namespace nuvec::transforms {

namespace {

using NodePtr = std::shared_ptr<Node>;

// A node being walked. Its inputs are a snapshot taken under the node's lock
// (another thread may detach it), kept at [begin, end) of the walk's input
// stack: frames end in the reverse order they start, so each frame's inputs
// are on top when it ends.
struct Frame {
  NodePtr node;
  std::shared_ptr<const Primitive> prim;
  uint32_t begin, end, next;
};

// The walk's working storage, kept per thread so that repeated transforms
// reuse it (building the tape never re-enters itself: it runs no rules).
struct Scratch {
  PtrIndex visited;  // node -> its tape entry + 1 when it depends on a tracer, else 0
  std::vector<Frame> frames;
  Arrays inputs;
  std::vector<int32_t> sources;  // of the frame ending
  bool busy = false;
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// Where `a` comes from: kTracer, the index in tape.outputs of the output of
// a node already found to depend on a tracer, or kConstant.
constexpr int32_t kTracer = -2, kConstant = -1;
int32_t source(const Array& a, const IdSet& tracers, const PtrIndex& visited, const Tape& tape) {
  if (tracers.contains(a.id())) return kTracer;
  const Node* p = a.desc()->node.get();
  int entry = p ? visited.find(p) - 1 : -1;
  if (entry < 0) return kConstant;
  return static_cast<int32_t>(tape.entries[static_cast<size_t>(entry)].out_begin) +
         a.desc()->output_index;
}

void walk(const Arrays& outputs, const IdSet& tracers, Scratch& w, Tape& tape) {
  auto push = [&](const Array& a) {
    if (tracers.contains(a.id())) return;
    Node* n = a.desc()->node.get();
    // Nodes built outside every trace cannot depend on a tracer.
    if (!n || !n->keep_graph.load(std::memory_order_acquire)) return;
    if (!w.visited.insert(n, 0).second) return;
    // `a` may live in w.inputs, which the snapshot below can move.
    NodePtr held = a.desc()->node;
    auto begin = static_cast<uint32_t>(w.inputs.size());
    Frame f{std::move(held), nullptr, begin, begin, begin};
    {
      std::lock_guard<std::mutex> lock(n->mu);
      f.prim = n->primitive;
      w.inputs.insert(w.inputs.end(), n->inputs.begin(), n->inputs.end());
    }
    f.end = static_cast<uint32_t>(w.inputs.size());
    w.frames.push_back(std::move(f));
  };
  for (const auto& o : outputs) {
    push(o);
    while (!w.frames.empty()) {
      Frame& f = w.frames.back();
      if (f.next < f.end) {
        push(w.inputs[f.next++]);  // may grow both stacks: f is not used after it
        continue;
      }
      bool active = false;
      w.sources.clear();
      for (uint32_t i = f.begin; i < f.end; ++i) {
        w.sources.push_back(source(w.inputs[i], tracers, w.visited, tape));
        active = active || w.sources.back() != kConstant;
      }
      if (active && f.prim) {
        w.visited.set(f.node.get(), static_cast<int>(tape.entries.size()) + 1);
        Tape::Entry e{std::move(f.node), std::move(f.prim), 0, 0, 0, 0};
        e.in_begin = static_cast<uint32_t>(tape.inputs.size());
        for (uint32_t i = f.begin; i < f.end; ++i) tape.inputs.push_back(std::move(w.inputs[i]));
        for (int32_t src : w.sources) tape.sources.push_back(std::max(src, kConstant));
        e.in_end = static_cast<uint32_t>(tape.inputs.size());
        // A node's output list is fixed when it is built (weak references,
        // locked one by one), so it is read without the node's lock.
        e.out_begin = static_cast<uint32_t>(tape.outputs.size());
        const OutputRefs& refs = e.node->outputs;
        for (size_t j = 0; j < refs.size(); ++j) {
          auto d = refs[j].lock();
          tape.alive.push_back(d != nullptr);
          if (d) {
            tape.outputs.emplace_back(std::move(d));
          } else {
            tape.outputs.push_back(make_failed(
                Error(ErrorKind::internal, "an output of " + std::string(e.primitive->name()) +
                                               " that nothing kept")));
          }
        }
        e.out_end = static_cast<uint32_t>(tape.outputs.size());
        tape.entries.push_back(std::move(e));
      }
      w.inputs.erase(w.inputs.begin() + f.begin, w.inputs.end());
      w.frames.pop_back();
    }
  }
  for (const auto& o : outputs)
    tape.roots.push_back(std::max(source(o, tracers, w.visited, tape), kConstant));
}

}  // namespace

Tape walk_tape(const Arrays& outputs, const IdSet& tracers) {
  Tape tape = Spare<Tape>::take();
  Scratch& shared = scratch();
  // A second walk on this thread while one runs cannot happen today; if it
  // ever does, it gets its own storage instead of corrupting the first's.
  Scratch own;
  Scratch& w = shared.busy ? own : shared;
  w.busy = true;
  struct Done {
    Scratch& w;
    ~Done() {
      // Empty (the walk pops all it pushes) unless it threw; the storage
      // stays for the next walk unless a huge graph left it huge.
      w.frames.clear();
      w.inputs.clear();
      if (w.inputs.capacity() > (size_t{1} << 16)) w.inputs = Arrays();
      if (w.frames.capacity() > (size_t{1} << 16)) w.frames = std::vector<Frame>();
      w.visited.clear();
      w.busy = false;
    }
  } done{w};
  walk(outputs, tracers, w, tape);
  return tape;
}

std::vector<TapeEntry> build_tape(const Arrays& outputs, const IdSet& tracers) {
  Tape tape = walk_tape(outputs, tracers);
  std::vector<TapeEntry> out;
  out.reserve(tape.entries.size());
  for (auto& e : tape.entries) {
    TapeEntry& t = out.emplace_back();
    t.node = std::move(e.node);
    t.primitive = std::move(e.primitive);
    t.inputs.reserve(e.num_inputs());
    for (uint32_t i = e.in_begin; i < e.in_end; ++i) t.inputs.push_back(std::move(tape.inputs[i]));
    t.outputs.reserve(e.num_outputs());
    for (uint32_t j = e.out_begin; j < e.out_end; ++j) {
      t.outputs.push_back(std::move(tape.outputs[j]));
      t.output_alive.push_back(tape.alive[j] != 0);
    }
  }
  Spare<Tape>::give(tape);
  return out;
}

Array make_tracer(const Array& x) {
  return ops::impl::build1(ops::impl::make<Reshape>(x.shape()), {x}, {}, "tracer",
                             Location::none());
}

Array zeros_like_cheap(const Shape& shape, DType dtype) {
  return ops::broadcast_to(ops::zeros({}, dtype), shape);
}

void throw_if_failed(const Arrays& arrays) {
  for (const auto& a : arrays)
    if (const Error* e = a.error()) (e)->raise();
}

}  // namespace nuvec::transforms

namespace nuvec::transforms {

void release_tape(Tape& tape) {
  if (detail::trace_depth() > 0) {
    Spare<Tape>::give(tape);
    return;
  }
  for (const auto& e : tape.entries) {
    Node& n = *e.node;
    Arrays dropped;
    std::shared_ptr<const Primitive> prim;
    std::lock_guard<std::mutex> lock(n.mu);
    n.keep_graph.store(false, std::memory_order_release);
    if (n.state.load(std::memory_order_acquire) == Node::State::done) {
      dropped.swap(n.inputs);
      prim.swap(n.primitive);
    }
  }
  Spare<Tape>::give(tape);
}

}  // namespace nuvec::transforms
