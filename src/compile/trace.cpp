// Tracing a compiled function and replaying its graph.
#include <unordered_map>

#include "compile/simplify.h"
#include "nuvec/primitives/custom.h"
#include "ops/builder.h"
#include "transforms/tape.h"

namespace nuvec::compiler {

Graph simplify(Graph g);

Graph trace(const Arrays& inputs, bool shapeless, const std::function<Arrays(const Arrays&)>& f) {
  Graph g;
  transforms::IdSet ids;
  Arrays outs;
  {
    detail::TraceScope scope;
    for (const auto& in : inputs) {
      g.placeholders.push_back(ops::detail::build1(
          ops::detail::make<Placeholder>(in.shape(), in.dtype()), {}, {}, "compile", Location::none()));
      ids.insert(g.placeholders.back().id());
    }
    bool& flag = ops::detail::shapeless_tracing();
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
      throw Error(ErrorKind::transform,
                  std::string("compile(shapeless): ") + e.node->op_name + " (" + e.primitive->name() +
                      ") holds a size of the traced shapes; compile this function without shapeless",
                  std::string(e.node->op_name), e.node->loc);
    g.steps.push_back({e.primitive, std::move(e.inputs), std::move(e.outputs), std::move(e.output_alive),
                       e.node->op_name, e.node->loc, e.node->stream});
  }
  g.outputs = std::move(outs);
  return simplify(std::move(g));
}

Arrays replay(const Graph& g, const Arrays& inputs) {
  std::unordered_map<const void*, Array> env;
  env.reserve(g.steps.size() * 2 + inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) env.emplace(g.placeholders[i].id(), inputs[i]);
  auto get = [&](const Array& a) -> const Array& {
    auto it = env.find(a.id());
    return it == env.end() ? a : it->second;  // not in env: a constant of the trace
  };
  for (const auto& s : g.steps) {
    Arrays ins;
    ins.reserve(s.inputs.size());
    for (const auto& in : s.inputs) ins.push_back(get(in));
    Arrays outs = ops::detail::build(s.primitive, std::move(ins), s.stream, s.op_name, s.loc);
    for (size_t j = 0; j < s.outputs.size(); ++j)
      if (s.output_alive[j]) env.emplace(s.outputs[j].id(), outs.size() > j ? outs[j] : outs[0]);
  }
  Arrays result;
  for (const auto& o : g.outputs) result.push_back(get(o));
  transforms::throw_if_failed(result);
  return result;
}

}  // namespace nuvec::compiler
