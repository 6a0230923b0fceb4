// Optimizers, schedules and clip_grad_norm against MLX 0.32.4's values
// (tests/refs/nn_optim.ref, tools/record_mlx_nn_optim.py): 10 steps of every
// optimizer on recorded gradients, parameters and state after steps 1 and
// 10; frozen parameters, init, a compiled step, invalid hyperparameters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>

#include "nn/support/nn_refs.h"
#include "nuvec/nn.h"
#include "support/refs.h"

using namespace nuvec;
using nuvec::nn_test::ref_array;
using nuvec::nn_test::same_bits;

namespace {

constexpr int64_t TOL_MUON = 4, TOL_ROUNDING = 1;

struct Tiny : nn::Module<Tiny> {
  Param w, b;
};
NUVEC_TREE(Tiny, w, b)

const std::map<std::string, refs::Case>& cases() {
  static const auto all = nn_test::ref_cases("nn_optim.ref");
  return all;
}

const refs::Case& get(const std::string& id) {
  auto it = cases().find(id);
  if (it == cases().end()) throw std::runtime_error("no case " + id);
  return it->second;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

// The schedules of the recording script's SCHEDULES table.
optim::Schedule named_schedule(const std::string& name) {
  if (name == "cosine") return optim::cosine_decay(0.05, 8, 0.005);
  if (name == "warmup_cosine")
    return optim::join_schedules(
        {optim::linear_schedule(0.0, 0.05, 3), optim::cosine_decay(0.05, 8)},
        {3});
  if (name == "step") return optim::step_decay(0.1, 0.5, 3);
  throw std::runtime_error("unknown schedule " + name);
}

// Reads the recorded constructor arguments; an absent one takes the value
// a default-constructed optimizer of ours has (so the defaults are MLX's
// exactly when the results match).
struct Args {
  const refs::Case& c;
  optim::LearningRate lr() const {
    if (c.has("schedule")) return named_schedule(c.param("schedule"));
    return c.param_double("learning_rate");
  }
  double d(const char* k, double dflt) const {
    return c.has(k) ? c.param_double(k) : dflt;
  }
  bool flag(const char* k, bool dflt) const {
    return c.has(k) ? c.param_bool(k) : dflt;
  }
  std::vector<double> list(const char* k,
                           const std::vector<double>& dflt) const {
    if (!c.has(k)) return dflt;
    std::vector<double> out;
    for (auto& s : split(c.param(k))) out.push_back(std::stod(s));
    return out;
  }
};

std::unique_ptr<optim::Optimizer> make(const refs::Case& c) {
  Args a{c};
  const std::string& op = c.op;
  if (op == "SGD") {
    optim::SGD d(1.0);
    return std::make_unique<optim::SGD>(a.lr(), a.d("momentum", d.momentum),
                                        a.d("weight_decay", d.weight_decay),
                                        a.d("dampening", d.dampening),
                                        a.flag("nesterov", d.nesterov));
  }
  if (op == "RMSprop") {
    optim::RMSprop d(1.0);
    return std::make_unique<optim::RMSprop>(a.lr(), a.d("alpha", d.alpha),
                                            a.d("eps", d.eps));
  }
  if (op == "Adagrad") {
    optim::Adagrad d(1.0);
    return std::make_unique<optim::Adagrad>(a.lr(), a.d("eps", d.eps));
  }
  if (op == "AdaDelta") {
    optim::AdaDelta d(1.0);
    return std::make_unique<optim::AdaDelta>(a.lr(), a.d("rho", d.rho),
                                             a.d("eps", d.eps));
  }
  if (op == "Adam") {
    optim::Adam d(1.0);
    return std::make_unique<optim::Adam>(
        a.lr(), a.list("betas", d.betas), a.d("eps", d.eps),
        a.flag("bias_correction", d.bias_correction));
  }
  if (op == "AdamW") {
    optim::AdamW d(1.0);
    return std::make_unique<optim::AdamW>(
        a.lr(), a.list("betas", d.betas), a.d("eps", d.eps),
        a.d("weight_decay", d.weight_decay),
        a.flag("bias_correction", d.bias_correction));
  }
  if (op == "Adamax") {
    optim::Adamax d(1.0);
    return std::make_unique<optim::Adamax>(a.lr(), a.list("betas", d.betas),
                                           a.d("eps", d.eps));
  }
  if (op == "Lion") {
    optim::Lion d(1.0);
    return std::make_unique<optim::Lion>(a.lr(), a.list("betas", d.betas),
                                         a.d("weight_decay", d.weight_decay));
  }
  if (op == "Adafactor") {
    optim::Adafactor d;
    std::optional<optim::LearningRate> lr;
    if (c.has("learning_rate") || c.has("schedule")) lr = a.lr();
    std::optional<double> beta_1 = d.beta_1;
    if (c.has("beta_1")) beta_1 = c.param_double("beta_1");
    return std::make_unique<optim::Adafactor>(
        lr, a.list("eps", d.eps), a.d("clip_threshold", d.clip_threshold),
        a.d("decay_rate", d.decay_rate), beta_1,
        a.d("weight_decay", d.weight_decay),
        a.flag("scale_parameter", d.scale_parameter),
        a.flag("relative_step", d.relative_step),
        a.flag("warmup_init", d.warmup_init));
  }
  if (op == "Muon") {
    optim::Muon d(1.0);
    return std::make_unique<optim::Muon>(
        a.lr(), a.d("momentum", d.momentum),
        a.d("weight_decay", d.weight_decay), a.flag("nesterov", d.nesterov),
        c.has("ns_steps") ? static_cast<int>(c.param_int("ns_steps"))
                          : d.ns_steps);
  }
  throw std::runtime_error("unknown optimizer " + op);
}

// Whether `got` equals the recorded `want` in shape and dtype and, with
// `ulps` 0, bit for bit; otherwise max |got - want| <= ulps float32 units in
// the last place of max |want| (a normwise bound: the arrays are updates of
// whole tensors, whose small elements carry the large ones' rounding).
::testing::AssertionResult matches(const Array& got, const refs::Tensor& want_t,
                                   int64_t ulps) {
  Array want = ref_array(want_t);
  auto r = same_bits(got, want);
  if (r || !is_floating(want.dtype()) || got.shape() != want.shape() ||
      got.dtype() != want.dtype()) {
    if (!r && is_floating(want.dtype()) && got.size() == want.size() &&
        got.size() <= 32) {
      auto vg = got.astype(float32).to_vector<float>(),
           vw = want.astype(float32).to_vector<float>();
      for (size_t i = 0; i < vg.size(); ++i)
        if (vg[i] != vw[i])
          r << "\n  [" << i << "] " << vg[i] << " want " << vw[i];
    }
    return r;
  }
  double diff = ops::max(ops::abs(got.astype(float64) - want.astype(float64)))
                    .item<double>();
  double scale = ops::max(ops::abs(want.astype(float64))).item<double>();
  double bound = static_cast<double>(ulps) * std::ldexp(scale, -23);
  if (diff > bound)
    return ::testing::AssertionFailure()
           << "max |got - want| = " << diff << " is "
           << diff / std::ldexp(scale, -23) << " ulps of max |want|, over "
           << ulps;
  return ::testing::AssertionSuccess();
}

// Bit for bit, except where nuvec's core computes a step otherwise than
// MLX's CPU backend (docs/semantics.md): Muon's Newton-Schulz matrix
// products (summed in another order than MLX's BLAS, and the iteration
// amplifies the difference over 10 steps); float sums of more than 16
// elements (another order: Adafactor's RMS of a 24-element parameter); cos
// (nuvec's is rounded once from double, MLX's is not: the cosine schedules).
int64_t tolerance(const refs::Case& c) {
  if (c.op == "Muon") return TOL_MUON;
  if (c.id == "opt_Adafactor_3d" || c.id.find("_sched") != std::string::npos)
    return TOL_ROUNDING;
  return 0;
}

Tiny initial(const refs::Case& c) {
  Tiny m;
  m.w = Param(ref_array(c.inputs[0]));
  m.b = Param(ref_array(c.inputs[1]));
  return m;
}

Tiny gradients(const refs::Case& c, int step) {
  Tiny g;
  g.w = Param(ref_array(c.inputs[2 + 2 * step]));
  g.b = Param(ref_array(c.inputs[3 + 2 * step]));
  return g;
}

// Compares the model and the state with the outputs recorded after one
// checkpoint, starting at output `k`; returns the index after them.
size_t expect_recorded(const refs::Case& c, size_t k, const Tiny& m,
                       const optim::Optimizer& opt, const std::string& when,
                       bool with_b = true) {
  int64_t tol = tolerance(c);
  EXPECT_TRUE(matches(m.w.value, c.outputs[k], tol))
      << c.where() << " w " << when;
  ++k;
  if (with_b)
    EXPECT_TRUE(matches(m.b.value, c.outputs[k], tol))
        << c.where() << " b " << when;
  ++k;
  for (const char* p : {"w", "b"}) {
    auto names = split(c.param(std::string("slots_") + p));
    if (!with_b && std::string(p) == "b") {
      EXPECT_EQ(opt.state.count("b"), 0u) << c.where();
      k += names.size();
      continue;
    }
    const optim::Slots& slots = opt.state.at(p);
    std::vector<std::string> have;
    for (auto& [name, a] : slots) have.push_back(name);
    EXPECT_EQ(have, names) << c.where() << " slots of " << p;
    for (auto& name : names) {
      if (slots.count(name))
        EXPECT_TRUE(matches(slots.at(name), c.outputs[k], tol))
            << c.where() << " " << p << "." << name << " " << when;
      ++k;
    }
  }
  EXPECT_TRUE(matches(opt.step.value, c.outputs[k++], 0))
      << c.where() << " step " << when;
  EXPECT_TRUE(matches(opt.learning_rate.value, c.outputs[k++], 0))
      << c.where() << " learning_rate " << when;
  return k;
}

void replay(const refs::Case& c, bool freeze_b = false) {
  auto opt = make(c);
  Tiny m = initial(c);
  Array b0 = m.b.value;
  if (freeze_b) m.freeze({"b"});
  size_t k = 0;
  for (int i = 0; i < 10; ++i) {
    opt->update(m, gradients(c, i));
    eval(m);
    if (i == 0 || i == 9)
      k = expect_recorded(c, k, m, *opt,
                          i == 0 ? "after step 1" : "after step 10", !freeze_b);
  }
  EXPECT_EQ(k, c.outputs.size()) << c.where();
  if (freeze_b) EXPECT_TRUE(m.b.value.id() == b0.id()) << c.where();
}

std::vector<std::string> ids_with_prefix(const std::string& prefix,
                                         bool errors) {
  std::vector<std::string> out;
  for (auto& [id, c] : cases())
    if (id.rfind(prefix, 0) == 0 && c.error.has_value() == errors)
      out.push_back(id);
  return out;
}

}  // namespace

TEST(NnOptimRefs, EveryOptimizerMatchesMlxAfterOneAndTenSteps) {
  auto ids = ids_with_prefix("opt_", false);
  EXPECT_EQ(ids.size(), 36u);
  for (auto& id : ids) {
    SCOPED_TRACE(id);
    replay(get(id));
  }
}

TEST(NnOptimRefs, InvalidHyperparametersThrowAsMlxRaises) {
  auto ids = ids_with_prefix("opt_", true);
  EXPECT_EQ(ids.size(), 13u);
  for (auto& id : ids)
    EXPECT_THROW(make(get(id)), Error) << id << ": MLX: " << *get(id).error;
  EXPECT_THROW(optim::Adafactor(std::nullopt, {1e-30, 1e-3}, 1.0, -0.8,
                                std::nullopt, 0.0, true, false),
               Error);
  EXPECT_THROW(optim::Adafactor(0.1, {1e-30}), Error);
  EXPECT_THROW(optim::Adam(0.1, {0.9}), Error);
  try {
    optim::RMSprop(0.1, -0.5);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_EQ(e.message(), "RMSprop: alpha should be >= 0, got -0.5");
  }
}

TEST(NnOptimRefs, FrozenParametersAreUntouchedAndGetNoState) {
  for (const char* id : {"opt_Adam_default", "opt_SGD_momentum",
                         "opt_Adafactor_beta1", "opt_Muon_default"}) {
    SCOPED_TRACE(id);
    replay(get(id), /*freeze_b=*/true);
  }
}

TEST(NnOptimRefs, InitCreatesTheStateBeforeTheFirstUpdate) {
  const refs::Case& c = get("opt_Adafactor_beta1");
  auto opt = make(c);
  Tiny m = initial(c);
  EXPECT_TRUE(opt->state.empty());
  opt->init(m);
  ASSERT_EQ(opt->state.size(), 2u);
  auto& w = opt->state.at("w");
  EXPECT_EQ(w.at("exp_avg_sq_row").shape(), (Shape{3}));
  EXPECT_EQ(w.at("exp_avg_sq_col").shape(), (Shape{4}));
  EXPECT_EQ(w.at("exp_avg").shape(), (Shape{3, 4}));
  EXPECT_EQ(opt->state.at("b").at("exp_avg_sq").shape(), (Shape{4}));
  // The tree's paths, MLX's names under "state.".
  optim::Adafactor& a = static_cast<optim::Adafactor&>(*opt);
  std::vector<std::string> paths;
  for (auto& [p, x] : tree_flatten(a)) paths.push_back(p);
  std::vector<std::string> want = {"step",
                                   "learning_rate",
                                   "state.b.exp_avg",
                                   "state.b.exp_avg_sq",
                                   "state.w.exp_avg",
                                   "state.w.exp_avg_sq_col",
                                   "state.w.exp_avg_sq_row"};
  EXPECT_EQ(paths, want);
  // The structure stays the same through updates: a compiled step traces once.
  TreeDef before = tree_def(a);
  opt->update(m, gradients(c, 0));
  EXPECT_TRUE(tree_def(a) == before);
  EXPECT_EQ(opt->step.value.item<uint64_t>(), 1u);
}

namespace {
struct TrainState {
  Tiny model;
  optim::AdamW opt;
};
NUVEC_TREE(TrainState, model, opt)
}  // namespace

TEST(NnOptimRefs, CompiledStepTracesOnceAndGivesTheUncompiledBits) {
  // AdamW on the cosine schedule: the schedule runs inside the trace.
  const refs::Case& c = get("opt_AdamW_sched");
  auto fresh = [&] {
    auto made = make(c);
    TrainState s{initial(c), dynamic_cast<optim::AdamW&>(*made)};
    s.opt.init(s.model);
    return s;
  };
  TrainState plain = fresh(), compiled = fresh();
  auto step = compile_mut([](TrainState& s, const Tiny& g) {
    s.opt.update(s.model, g);
    return s.opt.learning_rate.value;
  });
  size_t k = 0;
  for (int i = 0; i < 10; ++i) {
    plain.opt.update(plain.model, gradients(c, i));
    Array lr = step(compiled, gradients(c, i));
    eval(plain);
    eval(compiled);
    EXPECT_TRUE(same_bits(lr, plain.opt.learning_rate.value)) << i;
    auto pa = tree_flatten(plain), pb = tree_flatten(compiled);
    ASSERT_EQ(pa.size(), pb.size());
    for (size_t j = 0; j < pa.size(); ++j)
      EXPECT_TRUE(same_bits(pa[j].second, pb[j].second)) << pa[j].first;
    if (i == 0 || i == 9)
      k = expect_recorded(c, k, compiled.model, compiled.opt,
                          "compiled step " + std::to_string(i + 1));
  }
  EXPECT_EQ(step.trace_count(), 1u);
}

TEST(NnOptimSchedules, ValuesEqualMlxAtEveryStep) {
  auto ids = ids_with_prefix("sched_", false);
  EXPECT_EQ(ids.size(), 11u);
  for (auto& id : ids) {
    const refs::Case& c = get(id);
    Args a{c};
    optim::Schedule s;
    if (c.op == "exponential_decay")
      s = optim::exponential_decay(a.d("init", 0), a.d("decay_rate", 0));
    else if (c.op == "step_decay")
      s = optim::step_decay(a.d("init", 0), a.d("decay_rate", 0),
                            c.param_int("step_size"));
    else if (c.op == "cosine_decay")
      s = c.has("end")
              ? optim::cosine_decay(a.d("init", 0), c.param_int("decay_steps"),
                                    a.d("end", 0))
              : optim::cosine_decay(a.d("init", 0), c.param_int("decay_steps"));
    else if (c.op == "linear_schedule")
      s = optim::linear_schedule(a.d("init", 0), a.d("end", 0),
                                 c.param_int("steps"));
    else if (id == "sched_join_schedules_warmup_cosine")
      s = named_schedule("warmup_cosine");
    else
      s = optim::join_schedules({optim::linear_schedule(0.0, 1.0, 4),
                                 optim::exponential_decay(1.0, 0.8),
                                 optim::cosine_decay(0.5, 5, 0.1)},
                                {4, 9});
    std::vector<Array> values;
    for (int64_t i = 0; i < c.param_int("steps_recorded"); ++i)
      values.push_back(s(array(uint64_t(i))));
    int64_t tol =
        c.op == "cosine_decay" || c.op == "join_schedules" ? TOL_ROUNDING : 0;
    EXPECT_TRUE(matches(ops::stack(values), c.outputs[0], tol)) << c.where();
  }
}

TEST(NnOptimSchedules, InvalidArgumentsThrow) {
  EXPECT_EQ(ids_with_prefix("sched_", true).size(),
            5u);  // the MLX errors below
  EXPECT_THROW(optim::step_decay(0.1, 0.9, 0), Error);
  EXPECT_THROW(optim::cosine_decay(0.1, 0), Error);
  EXPECT_THROW(optim::linear_schedule(0.1, 0.0, 0), Error);
  EXPECT_THROW(optim::join_schedules({}, {}), Error);
  EXPECT_THROW(optim::join_schedules({optim::exponential_decay(0.1, 0.9)}, {3}),
               Error);
  EXPECT_THROW(optim::SGD(optim::Schedule{}), Error);
}

TEST(NnOptimSchedules, AScheduleDrivesTheLearningRate) {
  // MLX's docstring example: exponential_decay(0.1, 0.9) after 5 updates.
  optim::SGD opt(optim::exponential_decay(1e-1, 0.9));
  EXPECT_FLOAT_EQ(opt.learning_rate.value.item<float>(), 0.1f);
  Tiny m;
  m.w = Param(ops::ones({2}));
  m.b = Param(ops::ones({2}));
  for (int i = 0; i < 6; ++i) opt.update(m, m);
  // The update at step i uses the schedule's value at i: 0.9^5 at the sixth.
  EXPECT_NEAR(opt.learning_rate.value.item<float>(), 0.1 * std::pow(0.9, 5),
              1e-8);
  EXPECT_EQ(opt.learning_rate.value.dtype(), float32);
}

TEST(NnOptimClip, ClipGradNormEqualsMlx) {
  auto ids = ids_with_prefix("clip_", false);
  EXPECT_EQ(ids.size(), 6u);
  for (auto& id : ids) {
    const refs::Case& c = get(id);
    std::vector<Array> grads = {ref_array(c.inputs[0]), ref_array(c.inputs[1])};
    auto [clipped, norm] =
        optim::clip_grad_norm(grads, c.param_double("max_norm"));
    EXPECT_TRUE(matches(clipped[0], c.outputs[0], 0)) << c.where();
    EXPECT_TRUE(matches(clipped[1], c.outputs[1], 0)) << c.where();
    EXPECT_TRUE(matches(norm, c.outputs[2], 0)) << c.where();
    // The same through a module's gradient tree (paths w, b, in that order).
    Tiny g;
    g.w = Param(grads[0]);
    g.b = Param(grads[1]);
    auto [gm, nm] = optim::clip_grad_norm(g, c.param_double("max_norm"));
    EXPECT_TRUE(matches(gm.w.value, c.outputs[0], 0)) << c.where();
    EXPECT_TRUE(matches(gm.b.value, c.outputs[1], 0)) << c.where();
    EXPECT_TRUE(matches(nm, c.outputs[2], 0)) << c.where();
  }
  EXPECT_THROW(optim::clip_grad_norm(std::vector<Array>{ops::ones({3})}, -1.0),
               Error);
}

namespace {
using AdamSgd = optim::MultiOptimizer<optim::Adam, optim::SGD>;
AdamSgd adam_sgd() {
  return AdamSgd(
      {optim::Adam(0.01, {0.9, 0.999}, 1e-8, true), optim::SGD(0.1, 0.9)},
      {[](const std::string&, const Array& g) { return g.ndim() >= 2; }});
}
struct MultiState {
  Tiny model;
  AdamSgd opt;
};
NUVEC_TREE(MultiState, model, opt)
}  // namespace

TEST(NnOptimMulti, MultiOptimizerRoutesByFilterAsMlx) {
  const refs::Case& c = get("multi_adam_sgd");
  MultiState plain{initial(c), adam_sgd()}, compiled{initial(c), adam_sgd()};
  plain.opt.init(plain.model);
  compiled.opt.init(compiled.model);
  auto& adam = plain.opt.get<0>();
  auto& sgd = plain.opt.get<1>();
  EXPECT_EQ(adam.state.size(), 1u);
  EXPECT_EQ(adam.state.count("w"), 1u);
  EXPECT_EQ(sgd.state.count("b"), 1u);
  std::vector<std::string> paths;
  for (auto& [p, x] : tree_flatten(plain.opt)) paths.push_back(p);
  std::vector<std::string> want = {
      "states.0.step",      "states.0.learning_rate", "states.0.state.w.m",
      "states.0.state.w.v", "states.1.step",          "states.1.learning_rate",
      "states.1.state.b.v"};
  EXPECT_EQ(paths, want);
  auto step = compile_mut([](MultiState& s, const Tiny& g) {
    s.opt.update(s.model, g);
    return s.opt.learning_rate();
  });
  size_t k = 0;
  for (int i = 0; i < 10; ++i) {
    plain.opt.update(plain.model, gradients(c, i));
    step(compiled, gradients(c, i));
    eval(plain);
    eval(compiled);
    if (i != 0 && i != 9) continue;
    for (MultiState* s : {&plain, &compiled}) {
      auto& a = s->opt.get<0>();
      auto& b = s->opt.get<1>();
      std::vector<Array> got = {
          s->model.w.value,        s->model.b.value, a.state.at("w").at("m"),
          a.state.at("w").at("v"), a.step.value,     a.learning_rate.value,
          b.state.at("b").at("v"), b.step.value,     b.learning_rate.value};
      for (size_t j = 0; j < got.size(); ++j)
        EXPECT_TRUE(matches(got[j], c.outputs[k + j], 0))
            << c.where() << " output " << k + j;
    }
    k += 9;
  }
  EXPECT_EQ(k, c.outputs.size());
  EXPECT_EQ(step.trace_count(), 1u);
  plain.opt.set_learning_rate(0.5);
  EXPECT_EQ(plain.opt.get<1>().learning_rate.value.item<float>(), 0.5f);
  EXPECT_THROW(AdamSgd({optim::Adam(0.1), optim::SGD(0.1)}, {}), Error);
}
