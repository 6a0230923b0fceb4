#include "transforms/tape.h"

#include "nuvec/ops/ops.h"
#include "nuvec/primitives/shape_ops.h"
#include "ops/builder.h"

namespace nuvec::transforms {

namespace {

using NodePtr = std::shared_ptr<Node>;

// A node's primitive and inputs, read under its lock.
std::pair<std::shared_ptr<const Primitive>, Arrays> snapshot(Node& n) {
  std::lock_guard<std::mutex> lock(n.mu);
  return {n.primitive, n.inputs};
}

}  // namespace

std::vector<TapeEntry> build_tape(const Arrays& outputs, const IdSet& tracers) {
  std::vector<TapeEntry> tape;
  std::unordered_map<Node*, bool> active;  // visited nodes: depends on a tracer?
  struct Frame {
    NodePtr node;
    std::shared_ptr<const Primitive> prim;
    Arrays inputs;
    size_t next = 0;
  };
  std::vector<Frame> stack;
  auto push = [&](const Array& a) {
    if (tracers.count(a.id())) return;
    const NodePtr& n = a.desc()->node;
    // Nodes built outside every trace cannot depend on a tracer.
    if (!n || !n->keep_graph || active.count(n.get())) return;
    active[n.get()] = false;
    auto [prim, ins] = snapshot(*n);
    stack.push_back({n, std::move(prim), std::move(ins)});
  };
  for (const auto& o : outputs) {
    push(o);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.inputs.size()) {
        Array in = f.inputs[f.next++];
        push(in);
        continue;
      }
      bool is_active = false;
      for (const auto& in : f.inputs) {
        if (tracers.count(in.id())) is_active = true;
        const NodePtr& p = in.desc()->node;
        if (p) {
          auto it = active.find(p.get());
          if (it != active.end() && it->second) is_active = true;
        }
      }
      if (is_active && f.prim) {
        active[f.node.get()] = true;
        TapeEntry e{f.node, f.prim, std::move(f.inputs), {}, {}};
        std::lock_guard<std::mutex> lock(f.node->mu);
        for (size_t i = 0; i < f.node->outputs.size(); ++i) {
          auto d = f.node->outputs[i].lock();
          e.output_alive.push_back(d != nullptr);
          if (d) {
            e.outputs.emplace_back(std::move(d));
          } else {
            e.outputs.push_back(make_failed(
                Error(ErrorKind::internal, "an output of " + std::string(f.prim->name()) +
                                               " that nothing kept")));
          }
        }
        tape.push_back(std::move(e));
      }
      stack.pop_back();
    }
  }
  return tape;
}

Array make_tracer(const Array& x) {
  return ops::detail::build1(ops::detail::make<Reshape>(x.shape()), {x}, {}, "tracer",
                             Location::none());
}

Array zeros_like_cheap(const Shape& shape, DType dtype) {
  return ops::broadcast_to(ops::zeros({}, dtype), shape);
}

void throw_if_failed(const Arrays& arrays) {
  for (const auto& a : arrays)
    if (const Error* e = a.error()) throw *e;
}

}  // namespace nuvec::transforms

namespace nuvec::transforms {

void release_tape(const std::vector<TapeEntry>& tape) {
  if (detail::trace_depth() > 0) return;
  for (const auto& e : tape) {
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
}

}  // namespace nuvec::transforms
