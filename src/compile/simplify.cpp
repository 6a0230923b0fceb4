// Graph simplification for compile.
#include <bit>
#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "compile/simplify.h"
#include "nuvec/ops/ops.h"
#include "nuvec/primitives/params.h"
#include "nuvec/primitives/reduce.h"
#include "ops/builder.h"

namespace nuvec::compiler {

namespace {

thread_local SimplifyStats stats;

// A primitive whose single output equals its input: a same-type
// conversion, or a view with the input's shape, strides and offset. Explicit
// copies and dependencies are never identities.
bool is_identity(const Step& s, const Arrays& ins) {
  PrimitiveId id = s.primitive->id();
  // (A relative broadcast has several inputs: an identity at these shapes
  // is not one at the shapes a shapeless replay sees.)
  if (ins.size() != 1 || s.outputs.size() != 1 || !s.output_alive[0]) return false;
  const Array& in = ins[0];
  const Array& out = s.outputs[0];
  if (!(in.dtype() == out.dtype()) || in.shape() != out.shape()) return false;
  if (id == PrimitiveId::AsType) return true;
  return is_view(id) && in.strides() == out.strides() && in.desc()->offset == out.desc()->offset;
}

bool never_merged(PrimitiveId id) {
  return id == PrimitiveId::Copy || id == PrimitiveId::Depends || id == PrimitiveId::Placeholder;
}

// The value key of a constant that holds one value (a 0-d array, or a
// scalar broadcast to a shape: all strides 0, known without evaluating):
// dtype, shape and bits; nothing for other constants. Constants do not
// depend on the placeholders, so they can be evaluated while tracing (a
// replay would compute them anyway).
struct ScalarKey {
  int dtype;
  Shape shape;
  uint64_t bits;
  bool operator<(const ScalarKey& o) const {
    return std::tie(dtype, shape, bits) < std::tie(o.dtype, o.shape, o.bits);
  }
};

std::optional<ScalarKey> scalar_key(const Array& a) {
  if (a.is_failed() || is_complex(a.dtype()) || a.size() == 0) return std::nullopt;
  for (auto st : a.strides())
    if (st != 0) return std::nullopt;
  Array one = a.ndim() == 0 ? a : ops::reshape(ops::slice(a, std::vector<int>(a.ndim(), 0),
                                                          std::vector<int>(a.ndim(), 1)), {});
  uint64_t bits;
  try {
    if (is_floating(a.dtype())) {
      bits = std::bit_cast<uint64_t>(one.item<double>());  // exact for every float dtype
    } else if (a.dtype() == uint64) {
      bits = one.item<uint64_t>();
    } else {
      bits = static_cast<uint64_t>(one.item<int64_t>());
    }
  } catch (const Error&) {
    return std::nullopt;
  }
  return ScalarKey{static_cast<int>(a.dtype().index()), a.shape(), bits};
}

size_t cse_hash(const Step& s, const Arrays& ins) {
  size_t h = params::combine(static_cast<size_t>(s.primitive->id()), s.primitive->params_hash());
  for (const auto& in : ins) h = params::combine(h, std::hash<const void*>{}(in.id()));
  return h;
}

}  // namespace

SimplifyStats last_simplify_stats() { return stats; }

// NumberOf at the trace's shapes (a shaped trace): the count as a
// constant, computed as the eager kernel does (in double, then cast), so
// that reading a shape no longer counts as a use of the value (which would
// keep `square(x)` in `mean(square(x))` out of the reduction's region).
static Array count_constant(const NumberOf& p, const Array& in) {
  double n = 1;
  for (int a : p.axes()) n *= in.shape()[a];
  Array c = ops::astype(nuvec::array(n, float64), p.dtype());
  c.eval();
  return c;
}

// An element-wise CPU step of one value whose inputs are all constants
// (such as 1 / n in a mean): its value, computed now by the same kernel a
// replay would run, so that fused kernels take it as a literal.
static std::optional<Array> fold_scalar(const Step& s, const Arrays& ins,
                                        const std::unordered_set<const void*>& produced) {
  PrimitiveKind k = primitive_kind(s.primitive->id());
  bool elementwise = k == PrimitiveKind::unary || k == PrimitiveKind::binary ||
                     s.primitive->id() == PrimitiveId::AsType;
  if (!elementwise || s.outputs.size() != 1 || !s.output_alive[0] || s.outputs[0].size() != 1 ||
      s.stream.device != Device::cpu || ins.empty())
    return std::nullopt;
  for (const auto& in : ins)
    if (produced.count(in.id()) || in.is_failed()) return std::nullopt;
  Arrays r = ops::impl::build(s.primitive, ins, s.stream, s.op_name, s.loc);
  if (r.size() != 1 || r[0].is_failed()) return std::nullopt;
  try {
    r[0].eval();
  } catch (const Error&) {
    return std::nullopt;
  }
  return r[0];
}

Graph simplify(Graph g, bool shapeless) {
  stats = {};
  std::unordered_set<const void*> produced;
  for (const auto& p : g.placeholders) produced.insert(p.id());
  for (const auto& s : g.steps)
    for (const auto& o : s.outputs) produced.insert(o.id());

  std::unordered_map<const void*, Array> canon;
  std::map<ScalarKey, Array> scalars;
  auto resolve = [&](const Array& a) -> Array {
    auto it = canon.find(a.id());
    if (it != canon.end()) return it->second;
    if (produced.count(a.id())) return a;
    // A constant is keyed once (a constant shared by many steps would
    // otherwise read its value at every use).
    auto key = scalar_key(a);
    if (!key) {
      canon.emplace(a.id(), a);
      return a;
    }
    auto [sit, fresh] = scalars.emplace(*key, a);
    if (!fresh && sit->second.id() != a.id()) ++stats.constants_merged;
    canon.emplace(a.id(), sit->second);
    return sit->second;
  };

  // Constants made here live as long as the graph may refer to them (ids
  // are addresses: a freed one could be reused by a later array).
  std::vector<Array> made;
  std::unordered_multimap<size_t, size_t> seen;  // cse hash -> index in kept
  std::vector<Step> kept;
  for (auto& s : g.steps) {
    Arrays ins;
    for (const auto& in : s.inputs) ins.push_back(resolve(in));
    if (!shapeless && s.primitive->id() == PrimitiveId::NumberOf && s.output_alive[0]) {
      made.push_back(count_constant(static_cast<const NumberOf&>(*s.primitive), ins[0]));
      canon.emplace(s.outputs[0].id(), resolve(made.back()));
      continue;
    }
    if (auto c = fold_scalar(s, ins, produced)) {
      made.push_back(*c);
      canon.emplace(s.outputs[0].id(), resolve(made.back()));
      continue;
    }
    if (is_identity(s, ins)) {
      ++stats.identities;
      canon.emplace(s.outputs[0].id(), ins[0]);
      continue;
    }
    bool merged = false;
    if (!never_merged(s.primitive->id())) {
      size_t h = cse_hash(s, ins);
      auto range = seen.equal_range(h);
      for (auto it = range.first; it != range.second && !merged; ++it) {
        const Step& k = kept[it->second];
        if (!k.primitive->is_equivalent(*s.primitive) || k.inputs.size() != ins.size() ||
            k.outputs.size() != s.outputs.size())
          continue;
        bool same = true;
        for (size_t i = 0; i < ins.size() && same; ++i) same = k.inputs[i].id() == ins[i].id();
        if (!same) continue;
        for (size_t j = 0; j < s.outputs.size(); ++j)
          if (s.output_alive[j]) canon.emplace(s.outputs[j].id(), k.outputs[j]);
        merged = true;
      }
      if (merged) {
        ++stats.common_subexpressions;
        continue;
      }
      seen.emplace(h, kept.size());
    }
    s.inputs = std::move(ins);
    kept.push_back(std::move(s));
  }
  for (auto& o : g.outputs) o = resolve(o);

  // Drop steps whose outputs nothing uses.
  std::unordered_set<const void*> live;
  for (const auto& o : g.outputs) live.insert(o.id());
  std::vector<bool> keep(kept.size(), false);
  for (size_t i = kept.size(); i-- > 0;) {
    for (const auto& o : kept[i].outputs) keep[i] = keep[i] || live.count(o.id());
    if (!keep[i]) {
      ++stats.dead;
      continue;
    }
    for (const auto& in : kept[i].inputs) live.insert(in.id());
  }
  g.steps.clear();
  for (size_t i = 0; i < kept.size(); ++i)
    if (keep[i]) g.steps.push_back(std::move(kept[i]));
  return fuse_rows(fuse(std::move(g), stats), stats, shapeless);
}

}  // namespace nuvec::compiler
