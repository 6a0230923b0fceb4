// Fusion into reductions: after the element-wise regions are made, steps
// that work on the rows of one shape S (element-wise steps at S, Reduce
// steps over S's trailing axes, element-wise steps at the reduced shape)
// become one FusedReduce step (docs/compile.md, "Fusion into reductions").
//
// Regions grow as in fuse.cpp: backwards from a last step, a producer
// joining when every use of its outputs is by a member, so nothing leaves
// a region but values used later or returned, and no cycle can form. Each
// row shape (S and the axis the reductions start at) is tried in turn; a
// region is kept when it holds a reduction and element-wise work.
#include <algorithm>
#include <map>
#include <utility>
#include <unordered_map>
#include <unordered_set>

#include "compile/simplify.h"
#include "nuvec/primitives/fused_reduce.h"

namespace nuvec::compiler {

namespace {

struct RowKey {
  Shape shape;
  int split;
  Device device;
  bool operator<(const RowKey& o) const {
    if (device != o.device)
      return std::make_pair(device.type, device.index) < std::make_pair(o.device.type, o.device.index);
    return split != o.split ? split < o.split : shape < o.shape;
  }
};

enum class Role { none, full, scalar, reduce };

// The row shape a Reduce step works on, when its axes are the trailing
// ones of its input and its rows hold more than one element.
std::optional<RowKey> key_of(const Step& s) {
  if (s.primitive->id() != PrimitiveId::Reduce || !s.output_alive[0]) return std::nullopt;
  const auto& axes = static_cast<const Reduce&>(*s.primitive).axes();
  const Shape& in = s.inputs[0].shape();
  const int n = static_cast<int>(in.size());
  if (axes.empty() || n == 0) return std::nullopt;
  int split = n - static_cast<int>(axes.size());
  for (size_t j = 0; j < axes.size(); ++j)
    if (axes[j] != split + static_cast<int>(j)) return std::nullopt;
  int64_t row = 1;
  for (int d = split; d < n; ++d) row *= in[d];
  if (row <= 1 || shape_size(in) == 0) return std::nullopt;
  return RowKey{in, split, s.stream.device};
}

Role role(const Step& s, const RowKey& key, const Shape& reduced) {
  if (s.stream.device != key.device) return Role::none;
  if (s.primitive->id() == PrimitiveId::Reduce) {
    auto k = key_of(s);
    return k && k->shape == key.shape && k->split == key.split ? Role::reduce : Role::none;
  }
  bool fused = s.primitive->id() == PrimitiveId::Fused;
  if (!fused && !elementwise(s)) return Role::none;
  for (bool alive : s.output_alive)
    if (!alive) return Role::none;
  const Shape& out = s.outputs[0].shape();
  if (out == key.shape) return Role::full;
  if (out == reduced) return Role::scalar;
  return Role::none;
}

// A lone element-wise step as a one-operation program.
std::shared_ptr<const Fused> as_program(const Step& s, const std::unordered_set<const void*>& produced,
                                        const std::unordered_set<const void*>& placeholder) {
  if (s.primitive->id() == PrimitiveId::Fused) return std::static_pointer_cast<const Fused>(s.primitive);
  const int n = static_cast<int>(s.inputs.size());
  FusedOp op{s.primitive, {}, s.outputs[0].dtype()};
  for (int i = 0; i < n; ++i) op.args.push_back(i);
  std::vector<FusedLiteral> literals;
  for (int i = 0; i < n; ++i) {
    const Array& in = s.inputs[i];
    if (produced.count(in.id()) || placeholder.count(in.id())) continue;
    if (auto bits = literal_bits(in)) literals.push_back({i, *bits});
  }
  return std::make_shared<const Fused>(n, std::vector<FusedOp>{std::move(op)}, std::vector<int>{n},
                                       std::move(literals));
}

}  // namespace

Graph fuse_rows(Graph g, SimplifyStats& stats, bool shapeless) {
  if (shapeless) return g;  // (the region's plan holds the traced shapes)
  const size_t n = g.steps.size();
  std::map<RowKey, int> keys;
  for (size_t i = n; i-- > 0;)
    if (auto k = key_of(g.steps[i])) keys.emplace(*k, 0);
  if (keys.empty() || keys.size() > 16) return g;

  std::unordered_map<const void*, std::pair<size_t, int>> producer;  // output -> (step, slot)
  std::unordered_set<const void*> produced, placeholder;
  for (const auto& p : g.placeholders) placeholder.insert(p.id());
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < g.steps[i].outputs.size(); ++j) {
      producer.emplace(g.steps[i].outputs[j].id(), std::make_pair(i, static_cast<int>(j)));
      produced.insert(g.steps[i].outputs[j].id());
    }
  std::vector<size_t> uses(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (const auto& in : g.steps[i].inputs)
      if (auto it = producer.find(in.id()); it != producer.end()) ++uses[it->second.first];
  std::unordered_set<const void*> returned;
  for (const auto& o : g.outputs) returned.insert(o.id());

  std::vector<int> region(n, -1), stamp(n, -1);
  std::vector<size_t> inside(n, 0);
  std::vector<std::vector<size_t>> regions;
  std::vector<RowKey> region_key;
  for (const auto& [key, unused] : keys) {
    Shape reduced = key.shape;
    for (size_t d = key.split; d < reduced.size(); ++d) reduced[d] = 1;
    for (size_t r = n; r-- > 0;) {
      if (region[r] != -1 || role(g.steps[r], key, reduced) == Role::none) continue;
      const int id = static_cast<int>(regions.size());
      std::vector<size_t> members, joining{r};
      region[r] = id;
      bool reduces = false, maps = false;
      while (!joining.empty()) {
        size_t m = joining.back();
        joining.pop_back();
        members.push_back(m);
        Role rm = role(g.steps[m], key, reduced);
        reduces = reduces || rm == Role::reduce;
        maps = maps || rm == Role::full || rm == Role::scalar;
        for (const auto& in : g.steps[m].inputs) {
          auto it = producer.find(in.id());
          if (it == producer.end()) continue;
          size_t p = it->second.first;
          if (stamp[p] != id) {
            stamp[p] = id;
            inside[p] = 0;
          }
          if (++inside[p] == uses[p] && region[p] == -1 && role(g.steps[p], key, reduced) != Role::none) {
            region[p] = id;
            joining.push_back(p);
          }
        }
      }
      if (!reduces || !maps || members.size() < 2) {  // nothing to gain: undo
        for (size_t m : members) region[m] = -2 - id;
        regions.emplace_back();
      } else {
        regions.push_back(std::move(members));
      }
      region_key.push_back(key);
    }
    for (auto& r : region)  // steps of undone regions may join another row shape's
      if (r < -1) r = -1;
  }

  std::vector<Step> out;
  for (size_t i = 0; i < n; ++i) {
    int id = region[i];
    if (id < 0) {
      out.push_back(std::move(g.steps[i]));
      continue;
    }
    std::vector<size_t>& members = regions[id];
    if (i != *std::max_element(members.begin(), members.end())) continue;  // emitted at the last
    std::sort(members.begin(), members.end());
    std::unordered_map<const void*, int> value;
    Arrays inputs;
    std::vector<Shape> shapes;
    std::vector<DType> dtypes;
    for (size_t m : members)
      for (const auto& in : g.steps[m].inputs) {
        auto pit = producer.find(in.id());
        bool internal = pit != producer.end() && region[pit->second.first] == id;
        if (!internal && !value.count(in.id())) {
          value.emplace(in.id(), static_cast<int>(inputs.size()));
          inputs.push_back(in);
          shapes.push_back(in.shape());
          dtypes.push_back(in.dtype());
        }
      }
    int next = static_cast<int>(inputs.size());
    std::vector<RowMember> rows;
    Arrays outputs;
    std::vector<int> output_values;
    std::vector<const char*> names;
    Location loc = g.steps[i].loc;
    bool located = false;
    for (size_t m : members) {
      Step& s = g.steps[m];
      RowMember mb;
      mb.primitive = s.primitive->id() == PrimitiveId::Reduce ? s.primitive : as_program(s, produced, placeholder);
      for (const auto& in : s.inputs) mb.args.push_back(value.at(in.id()));
      rows.push_back(std::move(mb));
      for (const auto& o : s.outputs) {
        value.emplace(o.id(), next);
        if (m == i || returned.count(o.id())) {  // (other members' values are used inside only)
          outputs.push_back(o);
          output_values.push_back(next);
        }
        ++next;
      }
      names.push_back(s.op_name);
      if (!located && s.loc.file && *s.loc.file) {
        loc = s.loc;
        located = true;
      }
    }
    const RowKey& key = region_key[id];
    auto prim = std::make_shared<const FusedReduce>(std::move(shapes), std::move(dtypes), key.shape,
                                                    key.split, std::move(rows), std::move(output_values));
    std::string name = "compiled rows:";
    for (size_t k = 0; k < names.size() && k < 6; ++k) name += (k ? ", " : " ") + std::string(names[k] ? names[k] : "?");
    if (names.size() > 6) name += ", ...";
    Step fused{prim, std::move(inputs), std::move(outputs), {}, intern_op_name(name), loc, g.steps[i].stream};
    fused.output_alive.assign(fused.outputs.size(), true);
    ++stats.fused_reductions;
    out.push_back(std::move(fused));
  }
  g.steps = std::move(out);
  return g;
}

}  // namespace nuvec::compiler
