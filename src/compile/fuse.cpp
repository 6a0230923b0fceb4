// Fusion: connected element-wise steps of one shape become one Fused step;
// the broadcasts of their operands join too (read through strides).
//
// A region grows backwards from its last step (the root): a producer joins
// when it is element-wise, has the root's shape, and every step that uses
// its output is already in the region. So no value leaves the region
// except the root and values the traced function returns (extra outputs),
// and no cycle through an outside step can form.
#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "compile/simplify.h"
#include "nuvec/ops/ops.h"
#include "nuvec/primitives/fused.h"

namespace nuvec::compiler {

namespace {

bool elementwise(const Step& s) {
  PrimitiveId id = s.primitive->id();
  PrimitiveKind k = primitive_kind(id);
  bool e = k == PrimitiveKind::unary || k == PrimitiveKind::binary || id == PrimitiveId::Select ||
           id == PrimitiveId::AsType;
  return e && s.outputs.size() == 1 && s.output_alive[0];
}

// A relative broadcast of an element-wise operand: inside a region it is
// no operation (the fused kernel reads its input through broadcast strides),
// and its extra inputs only lend shapes.
bool operand_broadcast(const Step& s) {
  return s.primitive->id() == PrimitiveId::Broadcast && s.inputs.size() > 1 &&
         s.output_alive[0];
}

// The bits of a constant of the trace that holds one value (0-d, or a
// scalar read through zero strides): generated kernels take it as a literal.
std::optional<uint64_t> literal_bits(const Array& a) {
  if (a.is_failed() || a.size() == 0) return std::nullopt;
  for (auto st : a.strides())
    if (st != 0) return std::nullopt;
  Array one = a.ndim() == 0 ? a : ops::reshape(ops::slice(a, std::vector<int>(a.ndim(), 0),
                                                          std::vector<int>(a.ndim(), 1)), {});
  try {
    return dispatch_dtype(a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T v = one.item<T>();
      uint64_t bits = 0;
      std::memcpy(&bits, &v, sizeof(T));
      return bits;
    });
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

Graph fuse(Graph g, SimplifyStats& stats) {
  const size_t n = g.steps.size();
  std::unordered_map<const void*, size_t> producer;
  for (size_t i = 0; i < n; ++i) producer.emplace(g.steps[i].outputs[0].id(), i);
  std::unordered_map<const void*, std::vector<size_t>> users;
  for (size_t i = 0; i < n; ++i)
    for (const auto& in : g.steps[i].inputs) users[in.id()].push_back(i);
  std::unordered_map<const void*, bool> returned;
  for (const auto& o : g.outputs) returned[o.id()] = true;
  std::unordered_set<const void*> placeholder;
  for (const auto& p : g.placeholders) placeholder.insert(p.id());

  std::vector<int> region(n, -1);
  std::vector<std::vector<size_t>> regions;
  for (size_t r = n; r-- > 0;) {
    if (region[r] >= 0 || !elementwise(g.steps[r])) continue;
    int id = static_cast<int>(regions.size());
    std::vector<size_t> members{r};
    region[r] = id;
    const Shape& shape = g.steps[r].outputs[0].shape();
    // Grow until nothing more joins: a producer may qualify only once the
    // broadcasts that use it for their shape have joined.
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t k = 0; k < members.size(); ++k) {
        const Step& m = g.steps[members[k]];
        size_t limit = operand_broadcast(m) ? 1 : m.inputs.size();  // not the shape donors
        for (size_t a = 0; a < limit; ++a) {
          const Array& in = m.inputs[a];
          auto it = producer.find(in.id());
          if (it == producer.end()) continue;
          size_t p = it->second;
          const Step& ps = g.steps[p];
          if (region[p] >= 0 || ps.outputs[0].shape() != shape) continue;
          if (!elementwise(ps) && !operand_broadcast(ps)) continue;
          bool inside = true;
          for (size_t u : users[in.id()]) inside = inside && region[u] == id;
          if (!inside) continue;
          region[p] = id;
          members.push_back(p);
          changed = true;
        }
      }
    }
    regions.push_back(std::move(members));
  }

  std::vector<Step> out;
  for (size_t i = 0; i < n; ++i) {
    int id = region[i];
    if (id < 0 || regions[id].size() < 2) {
      out.push_back(std::move(g.steps[i]));
      continue;
    }
    std::vector<size_t> members = regions[id];
    if (i != *std::max_element(members.begin(), members.end())) continue;  // emitted at the root
    std::sort(members.begin(), members.end());
    std::unordered_map<const void*, int> value;  // traced array -> value index
    Arrays inputs;
    for (size_t m : members)
      for (size_t a = 0; a < g.steps[m].inputs.size(); ++a) {
        if (operand_broadcast(g.steps[m]) && a > 0) break;
        const Array& in = g.steps[m].inputs[a];
        auto pit = producer.find(in.id());
        bool internal = pit != producer.end() && region[pit->second] == id;
        if (!internal && !value.count(in.id())) {
          value.emplace(in.id(), static_cast<int>(inputs.size()));
          inputs.push_back(in);
        }
      }
    std::vector<FusedLiteral> literals;
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (producer.count(inputs[k].id()) || placeholder.count(inputs[k].id())) continue;
      if (auto bits = literal_bits(inputs[k]))
        literals.push_back({static_cast<int>(k), *bits});
    }
    std::vector<FusedOp> ops;
    Arrays outputs;
    std::vector<int> output_values;
    int next = static_cast<int>(inputs.size());
    for (size_t m : members) {
      const Step& s = g.steps[m];
      if (operand_broadcast(s)) {  // an alias of its operand, read broadcast
        value.emplace(s.outputs[0].id(), value.at(s.inputs[0].id()));
        if (returned.count(s.outputs[0].id())) {
          outputs.push_back(s.outputs[0]);
          output_values.push_back(value.at(s.inputs[0].id()));
        }
        continue;
      }
      FusedOp op{s.primitive, {}, s.outputs[0].dtype()};
      for (const auto& in : s.inputs) op.args.push_back(value.at(in.id()));
      ops.push_back(std::move(op));
      value.emplace(s.outputs[0].id(), next);
      if (m == i || returned.count(s.outputs[0].id())) {
        outputs.push_back(s.outputs[0]);
        output_values.push_back(next);
      }
      ++next;
    }
    const Step& root = g.steps[i];
    Step fused{std::make_shared<const Fused>(static_cast<int>(inputs.size()), std::move(ops),
                                             std::move(output_values), std::move(literals)),
               std::move(inputs), std::move(outputs), {}, "compiled", root.loc, root.stream};
    fused.output_alive.assign(fused.outputs.size(), true);
    ++stats.fused_kernels;
    stats.fused_ops += static_cast<int>(fused.primitive->id() == PrimitiveId::Fused
                                            ? static_cast<const Fused&>(*fused.primitive).ops().size()
                                            : 0);
    out.push_back(std::move(fused));
  }
  g.steps = std::move(out);
  return g;
}

}  // namespace nuvec::compiler
