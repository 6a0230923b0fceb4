// Reverse and forward mode over the tape (docs/transforms.md).
#include <algorithm>
#include <optional>
#include <sstream>

#include "nuvec/ops/ops.h"
#include "nuvec/transforms/flat.h"
#include "transforms/spare.h"
#include "transforms/tape.h"

namespace nuvec::detail {

namespace {

using transforms::IdSet;
using transforms::PtrIndex;
using transforms::Spare;
using transforms::Tape;

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
      (Error(ErrorKind::transform, "argnum " + std::to_string(i) + " is out of range for " +
                                            std::to_string(primals.size()) + " arguments")).raise();
    if (t.ids.count(t.tracers[i].id())) continue;  // a repeated argnum
    t.tracers[i] = transforms::make_tracer(primals[i]);
    t.ids.insert(t.tracers[i].id());
  }
  t.outputs = f(t.tracers);
  transforms::throw_if_failed(t.outputs);
  return t;
}

// A rule's result for input `like`: its dtype, and its shape (a rule that
// gives another shape is a bug in the rule).
Array fit(const Array& g, const Array& like, const Primitive& p, const char* mode) {
  if (g.is_failed()) return g;
  if (g.shape() != like.shape()) {
    std::ostringstream os;
    os << mode << " of " << p.name() << " gave shape " << g.shape() << " for an input of shape "
       << like.shape();
    (Error(ErrorKind::internal, os.str())).raise();
  }
  return g.dtype() == like.dtype() ? g : g.astype(like.dtype());
}

Array cast_to(const Array& a, DType d) { return a.dtype() == d ? a : a.astype(d); }

// Dense storage for the values the engines attach to arrays (cotangents,
// tangents): one slot per tracer and per output of the tape. The tape says
// which output each input is (Tape::sources); only tracers are found by id.
// Slots are reset instead of erased, and the storage is the thread's spare
// (spare.h), so a walk allocates nothing large.
class Slots {
 public:
  Slots(const Traced& t, const Tape& tape) : tape_(tape), s_(Spare<Storage>::take()) {
    for (const auto& a : t.tracers) {
      if (!t.ids.contains(a.id())) continue;
      if (s_.index.insert(a.id(), static_cast<int>(s_.values.size())).second)
        s_.values.emplace_back();
    }
    base_ = static_cast<int>(s_.values.size());
    s_.values.resize(s_.values.size() + tape.outputs.size());
  }
  ~Slots() { Spare<Storage>::give(s_); }
  Slots(const Slots&) = delete;
  Slots& operator=(const Slots&) = delete;

  /// The slot of a tracer, or -1 for other arrays.
  int tracer(const Array& a) const { return s_.index.find(a.id()); }
  /// The slot of the tape's input `i` (an index into Tape::inputs, read
  /// before the engine moves it out), or -1 for constants.
  int input(uint32_t i) const {
    int32_t src = tape_.sources[i];
    return src >= 0 ? output(static_cast<uint32_t>(src)) : tracer(tape_.inputs[i]);
  }
  /// The slot of the function's output `k`, `a`.
  int root(size_t k, const Array& a) const {
    int32_t src = tape_.roots[k];
    return src >= 0 ? output(static_cast<uint32_t>(src)) : tracer(a);
  }
  /// The slot of the tape's output `j` (an index into Tape::outputs).
  int output(uint32_t j) const { return base_ + static_cast<int>(j); }
  std::optional<Array>& operator[](int slot) { return s_.values[static_cast<size_t>(slot)]; }
  size_t size() const { return s_.values.size(); }
  /// Slots [0, tracers()) are the tracers'.
  int tracers() const { return base_; }
  /// Per-engine lists kept with the slots' storage (vjp: the slot each tape
  /// input sends its cotangent to, and which slots lead to a tracer).
  std::vector<int>& input_slots() { return s_.input_slots; }
  std::vector<char>& flags() { return s_.flags; }

 private:
  struct Storage {
    PtrIndex index;
    std::vector<std::optional<Array>> values;
    std::vector<int> input_slots;
    std::vector<char> flags;
    void clear() {
      index.clear();
      values.clear();
      input_slots.clear();
      flags.clear();
    }
    bool worth_keeping() const { return values.capacity() <= (size_t{1} << 16); }
  };
  const Tape& tape_;
  Storage s_;
  int base_ = 0;
};

// Whether derivatives flow into input `i` (an index into Tape::inputs) of
// `e`: an inexact input the primitive differentiates.
bool differentiable(const Tape& tape, const Tape::Entry& e, uint32_t i) {
  return is_inexact(tape.inputs[i].dtype()) &&
         e.primitive->differentiable_input(static_cast<int>(i - e.in_begin));
}

// Moves the tape's arrays [begin, end) into `out` (reused across entries:
// the rules take their arguments as vectors). Each entry is walked once.
void take(Arrays& from, uint32_t begin, uint32_t end, Arrays& out) {
  out.clear();
  for (uint32_t i = begin; i < end; ++i) out.push_back(std::move(from[i]));
}

}  // namespace

void check_like(const char* what, const Arrays& expected, const Arrays& given,
                const std::vector<std::string>& names) {
  if (expected.size() != given.size())
    (Error(ErrorKind::transform, std::string(what) + ": expected " + std::to_string(expected.size()) +
                                          " arrays, got " + std::to_string(given.size()))).raise();
  transforms::throw_if_failed(given);
  for (size_t i = 0; i < given.size(); ++i) {
    const std::string& name = i < names.size() ? names[i] : std::to_string(i);
    // Only shapes: a cotangent or tangent of another dtype is cast (MLX).
    if (given[i].shape() != expected[i].shape()) {
      std::ostringstream os;
      os << what << ": '" << name << "' has shape " << given[i].shape()
         << " but must have shape " << expected[i].shape();
      (Error(ErrorKind::transform, os.str())).raise();
    }
  }
}

VjpResult vjp(const FlatFunction& f, const Arrays& primals, const MakeSeeds& seeds,
              const std::vector<int>& argnums) {
  Traced t = trace(f, primals, argnums);
  Arrays seed = seeds(t.outputs);
  Tape tape = transforms::walk_tape(t.outputs, t.ids);
  Slots cot(t, tape);
  auto accumulate = [&](int slot, Array g) {
    std::optional<Array>& c = cot[slot];
    if (c) *c = ops::add(*c, g);
    else c = std::move(g);
  };
  // Which inputs a cotangent can flow back through to a tracer: the
  // differentiable inputs that are tracers or outputs of entries that have
  // such an input themselves. An entry on the tape only through an input
  // that lends its shape (a relative broadcast of a constant) carries none,
  // so no cotangent is built for it (a multiply per scalar operand before).
  std::vector<int>& in_slot = cot.input_slots();  // the input's slot, if it carries
  in_slot.assign(tape.inputs.size(), -1);
  std::vector<char>& carries = cot.flags();
  carries.assign(cot.size(), 0);
  std::fill(carries.begin(), carries.begin() + cot.tracers(), 1);
  for (const Tape::Entry& e : tape.entries) {
    bool any = false;
    for (uint32_t i = e.in_begin; i < e.in_end; ++i) {
      int s = cot.input(i);
      if (s >= 0 && carries[static_cast<size_t>(s)] && differentiable(tape, e, i)) {
        in_slot[i] = s;
        any = true;
      }
    }
    for (uint32_t j = e.out_begin; j < e.out_end; ++j)
      carries[static_cast<size_t>(cot.output(j))] = any;
  }
  for (size_t i = 0; i < seed.size() && i < t.outputs.size(); ++i) {
    int s = cot.root(i, t.outputs[i]);
    if (s >= 0 && carries[static_cast<size_t>(s)])
      accumulate(s, cast_to(seed[i], t.outputs[i].dtype()));  // as MLX casts
  }

  // Reused across entries: the rules take their arguments as vectors.
  Arrays ins, outs, cots;
  std::vector<int> args, arg_slots;
  for (size_t k = tape.entries.size(); k-- > 0;) {
    const Tape::Entry& e = tape.entries[k];
    bool any = false;
    for (uint32_t j = e.out_begin; j < e.out_end && !any; ++j) any = cot[cot.output(j)].has_value();
    if (!any) continue;
    args.clear();
    arg_slots.clear();
    for (uint32_t i = e.in_begin; i < e.in_end; ++i) {
      if (in_slot[i] >= 0) {
        args.push_back(static_cast<int>(i - e.in_begin));
        arg_slots.push_back(in_slot[i]);
      }
    }
    if (args.empty()) continue;
    // The outputs' cotangents move into the rule's arguments: each is used
    // once (free as we go); outputs without one get zeros.
    cots.clear();
    for (uint32_t j = e.out_begin; j < e.out_end; ++j) {
      std::optional<Array>& c = cot[cot.output(j)];
      if (c) {
        cots.push_back(std::move(*c));
        c.reset();
      } else {
        const OutputSpec& s = e.node->specs[j - e.out_begin];
        cots.push_back(transforms::zeros_like_cheap(s.shape, s.dtype));
      }
    }
    take(tape.inputs, e.in_begin, e.in_end, ins);
    take(tape.outputs, e.out_begin, e.out_end, outs);
    Arrays grads = e.primitive->vjp(ins, cots, args, outs);
    for (size_t a = 0; a < args.size(); ++a) {
      const Array& in = ins[static_cast<size_t>(args[a])];
      accumulate(arg_slots[a], fit(grads.at(a), in, *e.primitive, "vjp"));
    }
  }
  VjpResult r{t.outputs, {}};
  r.grads.reserve(primals.size());
  for (size_t i = 0; i < primals.size(); ++i) {
    int s = cot.tracer(t.tracers[i]);
    if (s >= 0 && cot[s]) r.grads.push_back(cast_to(*cot[s], primals[i].dtype()));
    else r.grads.push_back(transforms::zeros_like_cheap(primals[i].shape(), primals[i].dtype()));
  }
  transforms::release_tape(tape);
  return r;
}

VjpResult jvp(const FlatFunction& f, const Arrays& primals, const Arrays& tangents,
              const std::vector<int>& argnums) {
  if (tangents.size() != argnums.size())
    (Error(ErrorKind::transform, "jvp: " + std::to_string(argnums.size()) +
                                          " primals differentiated but " +
                                          std::to_string(tangents.size()) + " tangents given")).raise();
  Traced t = trace(f, primals, argnums);
  Tape tape = transforms::walk_tape(t.outputs, t.ids);
  Slots tan(t, tape);
  for (size_t k = 0; k < argnums.size(); ++k) {
    std::optional<Array>& v = tan[tan.tracer(t.tracers[argnums[k]])];
    if (!v) v = cast_to(tangents[k], primals[argnums[k]].dtype());  // a repeated argnum: the first
  }
  Arrays ins, tans;
  std::vector<int> args;
  for (const Tape::Entry& e : tape.entries) {
    args.clear();
    tans.clear();
    for (uint32_t i = e.in_begin; i < e.in_end; ++i) {
      int s = tan.input(i);
      if (s >= 0 && tan[s] && differentiable(tape, e, i)) {
        args.push_back(static_cast<int>(i - e.in_begin));
        tans.push_back(*tan[s]);
      }
    }
    if (args.empty()) continue;
    take(tape.inputs, e.in_begin, e.in_end, ins);
    Arrays outs = e.primitive->jvp(ins, tans, args);
    for (uint32_t j = e.out_begin; j < e.out_end; ++j) {
      std::optional<Array>& v = tan[tan.output(j)];
      if (tape.alive[j] && !v)
        v = fit(outs.at(j - e.out_begin), tape.outputs[j], *e.primitive, "jvp");
    }
  }
  VjpResult r{t.outputs, {}};
  for (size_t k = 0; k < t.outputs.size(); ++k) {
    const Array& o = t.outputs[k];
    int s = tan.root(k, o);
    r.grads.push_back(s >= 0 && tan[s] ? *tan[s]
                                       : transforms::zeros_like_cheap(o.shape(), o.dtype()));
  }
  transforms::release_tape(tape);
  return r;
}

}  // namespace nuvec::detail
