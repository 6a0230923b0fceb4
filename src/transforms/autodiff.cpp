// Reverse and forward mode over the tape (docs/transforms.md).
#include <sstream>

#include "nuvec/ops/ops.h"
#include "nuvec/transforms/flat.h"
#include "transforms/tape.h"

namespace nuvec::detail {

namespace {

using transforms::IdSet;
using transforms::TapeEntry;

struct Traced {
  Arrays tracers;
  Arrays outputs;
  IdSet ids;
};

// Runs f on tracers of the primals listed in `argnums` (the others are
// passed as they are: constants of the trace).
Traced trace(const FlatFunction& f, const Arrays& primals, const std::vector<int>& argnums) {
  transforms::throw_if_failed(primals);
  TraceScope scope;
  Traced t;
  t.tracers = primals;
  for (int i : argnums) {
    if (i < 0 || i >= static_cast<int>(primals.size()))
      throw Error(ErrorKind::transform, "argnum " + std::to_string(i) + " is out of range for " +
                                            std::to_string(primals.size()) + " arguments");
    if (t.ids.count(t.tracers[i].id())) continue;  // a repeated argnum
    t.tracers[i] = transforms::make_tracer(primals[i]);
    t.ids.insert(t.tracers[i].id());
  }
  t.outputs = f(t.tracers);
  transforms::throw_if_failed(t.outputs);
  return t;
}

// The inputs of `e` that carry a derivative: tracers and outputs of earlier
// tape nodes, of an inexact dtype.
std::vector<int> active_inputs(const TapeEntry& e, const IdSet& active) {
  std::vector<int> out;
  for (size_t i = 0; i < e.inputs.size(); ++i)
    if (active.count(e.inputs[i].id()) && is_inexact(e.inputs[i].dtype()) &&
        e.primitive->differentiable_input(static_cast<int>(i)))
      out.push_back(static_cast<int>(i));
  return out;
}

// A rule's result for input `like`: its dtype, and its shape (a rule that
// gives another shape is a bug in the rule).
Array fit(const Array& g, const Array& like, const Primitive& p, const char* mode) {
  if (g.is_failed()) return g;
  if (g.shape() != like.shape()) {
    std::ostringstream os;
    os << mode << " of " << p.name() << " gave shape " << g.shape() << " for an input of shape "
       << like.shape();
    throw Error(ErrorKind::internal, os.str());
  }
  return g.dtype() == like.dtype() ? g : g.astype(like.dtype());
}

Array cast_to(const Array& a, DType d) { return a.dtype() == d ? a : a.astype(d); }

}  // namespace

void check_like(const char* what, const Arrays& expected, const Arrays& given,
                const std::vector<std::string>& names) {
  if (expected.size() != given.size())
    throw Error(ErrorKind::transform, std::string(what) + ": expected " + std::to_string(expected.size()) +
                                          " arrays, got " + std::to_string(given.size()));
  transforms::throw_if_failed(given);
  for (size_t i = 0; i < given.size(); ++i) {
    const std::string& name = i < names.size() ? names[i] : std::to_string(i);
    if (given[i].shape() != expected[i].shape() || !(given[i].dtype() == expected[i].dtype())) {
      std::ostringstream os;
      os << what << ": '" << name << "' has shape " << given[i].shape() << " and dtype "
         << given[i].dtype() << " but must match " << expected[i].shape() << " "
         << expected[i].dtype();
      throw Error(ErrorKind::transform, os.str());
    }
  }
}

VjpResult vjp(const FlatFunction& f, const Arrays& primals, const MakeSeeds& seeds,
              const std::vector<int>& argnums) {
  Traced t = trace(f, primals, argnums);
  Arrays seed = seeds(t.outputs);
  auto tape = transforms::build_tape(t.outputs, t.ids);
  IdSet active = t.ids;
  for (const auto& e : tape)
    for (const auto& o : e.outputs) active.insert(o.id());

  std::unordered_map<const void*, Array> cot;
  auto accumulate = [&](const Array& target, const Array& g) {
    auto [it, fresh] = cot.try_emplace(target.id(), g);
    if (!fresh) it->second = ops::add(it->second, g);
  };
  for (size_t i = 0; i < seed.size() && i < t.outputs.size(); ++i)
    if (active.count(t.outputs[i].id())) accumulate(t.outputs[i], seed[i]);

  for (auto e = tape.rbegin(); e != tape.rend(); ++e) {
    bool any = false;
    Arrays cots;
    for (size_t j = 0; j < e->outputs.size(); ++j) {
      auto it = e->output_alive[j] ? cot.find(e->outputs[j].id()) : cot.end();
      if (it != cot.end()) {
        any = true;
        cots.push_back(it->second);
      } else {
        const OutputSpec& s = e->node->specs[j];
        cots.push_back(transforms::zeros_like_cheap(s.shape, s.dtype));
      }
    }
    if (!any) continue;
    std::vector<int> args = active_inputs(*e, active);
    if (args.empty()) continue;
    Arrays grads = e->primitive->vjp(e->inputs, cots, args, e->outputs);
    for (size_t k = 0; k < args.size(); ++k) {
      const Array& in = e->inputs[args[k]];
      accumulate(in, fit(grads.at(k), in, *e->primitive, "vjp"));
    }
    for (const auto& o : e->outputs) cot.erase(o.id());  // free as we go
  }
  VjpResult r{t.outputs, {}};
  for (size_t i = 0; i < primals.size(); ++i) {
    auto it = t.ids.count(t.tracers[i].id()) ? cot.find(t.tracers[i].id()) : cot.end();
    r.grads.push_back(it == cot.end()
                          ? transforms::zeros_like_cheap(primals[i].shape(), primals[i].dtype())
                          : cast_to(it->second, primals[i].dtype()));
  }
  transforms::release_tape(tape);
  return r;
}

VjpResult jvp(const FlatFunction& f, const Arrays& primals, const Arrays& tangents,
              const std::vector<int>& argnums) {
  if (tangents.size() != argnums.size())
    throw Error(ErrorKind::transform, "jvp: " + std::to_string(argnums.size()) +
                                          " primals differentiated but " +
                                          std::to_string(tangents.size()) + " tangents given");
  Traced t = trace(f, primals, argnums);
  auto tape = transforms::build_tape(t.outputs, t.ids);
  std::unordered_map<const void*, Array> tan;
  for (size_t k = 0; k < argnums.size(); ++k)
    tan.emplace(t.tracers[argnums[k]].id(), cast_to(tangents[k], primals[argnums[k]].dtype()));
  for (const auto& e : tape) {
    std::vector<int> args;
    Arrays tans;
    for (size_t i = 0; i < e.inputs.size(); ++i) {
      auto it = tan.find(e.inputs[i].id());
      if (it != tan.end() && is_inexact(e.inputs[i].dtype()) &&
          e.primitive->differentiable_input(static_cast<int>(i))) {
        args.push_back(static_cast<int>(i));
        tans.push_back(it->second);
      }
    }
    if (args.empty()) continue;
    Arrays outs = e.primitive->jvp(e.inputs, tans, args);
    for (size_t j = 0; j < e.outputs.size(); ++j)
      if (e.output_alive[j]) tan.emplace(e.outputs[j].id(), fit(outs.at(j), e.outputs[j], *e.primitive, "jvp"));
  }
  VjpResult r{t.outputs, {}};
  for (const auto& o : t.outputs) {
    auto it = tan.find(o.id());
    r.grads.push_back(it == tan.end() ? transforms::zeros_like_cheap(o.shape(), o.dtype())
                                      : it->second);
  }
  transforms::release_tape(tape);
  return r;
}

}  // namespace nuvec::detail
