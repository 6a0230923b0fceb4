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
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "compile/simplify.h"
#include "nuvec/ops/ops.h"
#include "nuvec/primitives/fused.h"

namespace nuvec::compiler {

namespace {

// A relative broadcast of an element-wise operand: inside a region it is
// no operation (the fused kernel reads its input through broadcast strides),
// and its extra inputs only lend shapes.
bool operand_broadcast(const Step& s) {
  return s.primitive->id() == PrimitiveId::Broadcast && s.inputs.size() > 1 &&
         s.output_alive[0];
}

}  // namespace

bool elementwise(const Step& s) {
  PrimitiveId id = s.primitive->id();
  PrimitiveKind k = primitive_kind(id);
  bool e = k == PrimitiveKind::unary || k == PrimitiveKind::binary || id == PrimitiveId::Select ||
           id == PrimitiveId::AsType;
  return e && s.outputs.size() == 1 && s.output_alive[0];
}

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

const char* intern_op_name(const std::string& name) {
  static std::mutex mu;
  static std::unordered_set<std::string> names;  // nodes never move
  std::lock_guard<std::mutex> lock(mu);
  return names.insert(name).first->c_str();
}

// "compiled exp, multiply, add": the region's operations in order, each
// once, so that an error of the step (out of memory) says what it computes.
static const char* fused_step_name(const std::vector<const char*>& members) {
  std::string name = "compiled";
  std::vector<std::string_view> seen;
  for (const char* m : members) {
    std::string_view v(m ? m : "?");
    if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
    if (seen.size() == 6) {
      name += ", ...";
      break;
    }
    name += seen.empty() ? " " : ", ";
    name += v;
    seen.push_back(v);
  }
  return intern_op_name(name);
}

Graph fuse(Graph g, SimplifyStats& stats) {
  const size_t n = g.steps.size();
  std::unordered_map<const void*, size_t> producer;
  producer.reserve(n);
  for (size_t i = 0; i < n; ++i) producer.emplace(g.steps[i].outputs[0].id(), i);
  // Per step: how many inputs of steps read its (first) output.
  std::vector<size_t> uses(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (const auto& in : g.steps[i].inputs)
      if (auto it = producer.find(in.id()); it != producer.end()) ++uses[it->second];
  std::unordered_map<const void*, bool> returned;
  for (const auto& o : g.outputs) returned[o.id()] = true;
  std::unordered_set<const void*> placeholder;
  for (const auto& p : g.placeholders) placeholder.insert(p.id());

  // Growing region `id`: a producer p may join once every use of its output
  // is by a member (inside[p] counts them, for the region stamp[p] names),
  // so each step is looked at a bounded number of times per use: linear in
  // the graph (repeated passes over the members, and a scan of each value's
  // users, had made long chains quadratic). The region is the same closure
  // the rule defines whatever the order in which members join.
  std::vector<int> region(n, -1), stamp(n, -1);
  std::vector<size_t> inside(n, 0);
  std::vector<char> wanted(n, 0);  // a member reads it where it may join
  std::vector<std::vector<size_t>> regions;
  std::vector<size_t> root_of;  // each region's last step
  for (size_t r = n; r-- > 0;) {
    if (region[r] >= 0 || !elementwise(g.steps[r])) continue;
    const int id = static_cast<int>(regions.size());
    const Shape& shape = g.steps[r].outputs[0].shape();
    std::vector<size_t> members, joining{r};
    region[r] = id;
    auto qualifies = [&](size_t p) {
      const Step& ps = g.steps[p];
      return region[p] < 0 && ps.outputs[0].shape() == shape &&
             (elementwise(ps) || operand_broadcast(ps));
    };
    while (!joining.empty()) {
      size_t m = joining.back();
      joining.pop_back();
      members.push_back(m);
      const Step& ms = g.steps[m];
      // A broadcast's later inputs only lend their shapes: they count as
      // uses, but their producers do not join through them.
      size_t limit = operand_broadcast(ms) ? 1 : ms.inputs.size();
      for (size_t a = 0; a < ms.inputs.size(); ++a) {
        auto it = producer.find(ms.inputs[a].id());
        if (it == producer.end()) continue;
        size_t p = it->second;
        if (stamp[p] != id) {
          stamp[p] = id;
          inside[p] = 0;
          wanted[p] = 0;
        }
        ++inside[p];
        if (a < limit) wanted[p] = 1;
        if (wanted[p] && inside[p] == uses[p] && qualifies(p)) {
          region[p] = id;
          joining.push_back(p);
        }
      }
    }
    regions.push_back(std::move(members));
    root_of.push_back(r);
  }

  std::vector<Step> out;
  for (size_t i = 0; i < n; ++i) {
    int id = region[i];
    if (id < 0 || regions[id].size() < 2) {
      out.push_back(std::move(g.steps[i]));
      continue;
    }
    if (i != root_of[id]) continue;  // emitted at the root
    std::vector<size_t> members = std::move(regions[id]);
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
    std::vector<const char*> names;
    // The step's line: its first operation's that has one (operators such
    // as `x + 1.0f` cannot take a location).
    Location loc = root.loc;
    bool located = false;
    for (size_t m : members) {
      names.push_back(g.steps[m].op_name);
      if (!located && g.steps[m].loc.file && *g.steps[m].loc.file) {
        loc = g.steps[m].loc;
        located = true;
      }
    }
    Step fused{std::make_shared<const Fused>(static_cast<int>(inputs.size()), std::move(ops),
                                             std::move(output_values), std::move(literals)),
               std::move(inputs), std::move(outputs), {}, fused_step_name(names), loc, root.stream};
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
