// Tracing a compiled function and replaying its graph.
#include <unordered_map>

#include "compile/simplify.h"
#include "nuvec/primitives/custom.h"
#include "ops/builder.h"
#include "transforms/tape.h"

namespace nuvec::compiler {

Graph simplify(Graph g, bool shapeless);
Graph plan_replay(Graph g);

Graph trace(const Arrays& inputs, bool shapeless, const std::function<Arrays(const Arrays&)>& f) {
  Graph g;
  transforms::IdSet ids;
  Arrays outs;
  {
    detail::TraceScope scope;
    for (const auto& in : inputs) {
      g.placeholders.push_back(ops::impl::build1(
          ops::impl::make<Placeholder>(in.shape(), in.dtype()), {}, {}, "compile", Location::none()));
      ids.insert(g.placeholders.back().id());
    }
    bool& flag = ops::impl::shapeless_tracing();
    bool saved = flag;
    flag = shapeless;
    struct Restore {
      bool& flag;
      bool saved;
      ~Restore() { flag = saved; }
    } restore{flag, saved};
    outs = f(g.placeholders);
  }
  transforms::throw_if_failed(outs);
  auto tape = transforms::build_tape(outs, ids);
  for (auto& e : tape) {
    if (shapeless && !e.primitive->shape_polymorphic())
      (Error(ErrorKind::transform,
                  std::string("compile(shapeless): ") + e.node->op_name + " (" + e.primitive->name() +
                      ") holds a size of the traced shapes; compile this function without shapeless",
                  std::string(e.node->op_name), e.node->loc)).raise();
    g.steps.push_back({e.primitive, std::move(e.inputs), std::move(e.outputs), std::move(e.output_alive),
                       e.node->op_name, e.node->loc, e.node->stream});
  }
  g.outputs = std::move(outs);
  return plan_replay(simplify(std::move(g), shapeless));
}

// Numbers the values replay computes (Graph::input_slots), so that a replay
// finds them by index, not by identity.
Graph plan_replay(Graph g) {
  std::unordered_map<const void*, int> slot;
  for (const auto& p : g.placeholders) slot.emplace(p.id(), static_cast<int>(slot.size()));
  auto find = [&](const Array& a) {
    auto it = slot.find(a.id());
    return it == slot.end() ? -1 : it->second;
  };
  for (const auto& s : g.steps) {
    std::vector<int> in, out;
    for (const auto& a : s.inputs) in.push_back(find(a));
    for (size_t j = 0; j < s.outputs.size(); ++j) {
      int k = -1;
      if (s.output_alive[j]) k = slot.emplace(s.outputs[j].id(), static_cast<int>(slot.size())).first->second;
      out.push_back(k);
    }
    g.input_slots.push_back(std::move(in));
    g.output_slots.push_back(std::move(out));
  }
  for (const auto& o : g.outputs) g.result_slots.push_back(find(o));
  g.slots = static_cast<int>(slot.size());
  return g;
}

Arrays replay(const Graph& g, const Arrays& inputs) {
  std::vector<Array> env;
  env.reserve(g.slots);
  env.insert(env.end(), inputs.begin(), inputs.end());
  env.resize(g.slots, Array(std::shared_ptr<ArrayDesc>()));
  auto get = [&](int k, const Array& traced) -> const Array& { return k < 0 ? traced : env[k]; };
  for (size_t i = 0; i < g.steps.size(); ++i) {
    const Step& s = g.steps[i];
    Arrays ins;
    ins.reserve(s.inputs.size());
    for (size_t a = 0; a < s.inputs.size(); ++a) ins.push_back(get(g.input_slots[i][a], s.inputs[a]));
    Arrays outs = ops::impl::build(s.primitive, std::move(ins), s.stream, s.op_name, s.loc);
    for (size_t j = 0; j < s.outputs.size(); ++j)
      if (int k = g.output_slots[i][j]; k >= 0) env[k] = outs.size() > j ? outs[j] : outs[0];
  }
  Arrays result;
  result.reserve(g.outputs.size());
  for (size_t o = 0; o < g.outputs.size(); ++o) result.push_back(get(g.result_slots[o], g.outputs[o]));
  transforms::throw_if_failed(result);
  return result;
}

}  // namespace nuvec::compiler
