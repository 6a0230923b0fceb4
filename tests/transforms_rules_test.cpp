// The registry-wide conformance harness of the transform rules (issue 5):
// for every primitive, its probes (support/rule_cases.h) are checked for
// building the primitive, vjp and jvp against finite differences and each
// other on several layouts, vmap against a loop, and failed inputs. A rule
// that is missing throws, which fails the test naming the primitive. A
// primitive that has no rules on purpose (fast::CudaKernel, as MLX's) says
// so in its case, and each transform must refuse it with an error naming
// it.
#include <gtest/gtest.h>

#include <iterator>
#include <memory>
#include <ostream>
#include <random>

#include "support/cpu_default.h"
#include "support/rule_cases.h"
#include "support/rule_check.h"

using namespace nuvec;
using rulecases::Case;
using rulecases::Grad;
using rulecases::Probe;
using rulecases::RuleCase;

namespace {

using MakeCase = RuleCase (*)(std::mt19937&);

// One entry per primitive, in registry order, expanded from the registry
// lists: a primitive without a Case specialization is an incomplete type
// here, so the tests do not build until it has one.
#define NUVEC_RULE_CASE_ENTRY(Name, trait) &Case<PrimitiveId::Name>::make,
constexpr MakeCase kCases[] = {
    NUVEC_UNARY_PRIMITIVES(NUVEC_RULE_CASE_ENTRY)
    NUVEC_BINARY_PRIMITIVES(NUVEC_RULE_CASE_ENTRY)
    NUVEC_OTHER_PRIMITIVES(NUVEC_RULE_CASE_ENTRY)};
#undef NUVEC_RULE_CASE_ENTRY
static_assert(std::size(kCases) == static_cast<size_t>(primitive_count),
              "one rule case per registry entry");

// The test parameter: a registry entry, printed by name.
struct Entry {
  PrimitiveId id;
};
void PrintTo(const Entry& e, std::ostream* os) { *os << primitive_name(e.id); }

std::vector<Entry> all_primitives() {
  std::vector<Entry> ids;
  for (int i = 0; i < primitive_count; ++i) ids.push_back({static_cast<PrimitiveId>(i)});
  return ids;
}

// The CPU as default device while the result lives, when `pin` holds.
std::unique_ptr<nuvec::testing::CpuDefault> cpu_if(bool pin) {
  return pin ? std::make_unique<nuvec::testing::CpuDefault>() : nullptr;
}

// vmap equals the loop bit for bit on the CPU; on the GPU cuBLAS picks its
// kernels by the batch shape, so the batched products of Matmul, AddMM and
// Im2Col's convolutions run there (docs/gpu-status.md, determinism).
bool vmap_bits_need_cpu(PrimitiveId id) {
  return id == PrimitiveId::Matmul || id == PrimitiveId::AddMM || id == PrimitiveId::Im2Col;
}

class Rules : public ::testing::TestWithParam<Entry> {
 protected:
  PrimitiveId id() const { return GetParam().id; }
  // LAPACK runs on the CPU only, as MLX's linalg; the fast primitives' GPU
  // kernels take no float64 (the probes' dtype: they would run the composite).
  std::unique_ptr<nuvec::testing::CpuDefault> lapack_on_cpu = cpu_if(
      id() == PrimitiveId::Linalg || (id() >= PrimitiveId::RMSNorm && id() <= PrimitiveId::AttentionGrad));
  // A fixed seed per primitive: failures reproduce.
  std::mt19937 rng{0x5eedu + static_cast<unsigned>(id())};
  RuleCase rule_case = kCases[static_cast<int>(id())](rng);

  // Runs one check, reporting its problems, or what a rule threw, with the
  // primitive's and the probe's names.
  template <class F>
  void run(const Probe& p, const std::string& context, F&& check) {
    std::string problem;
    try {
      problem = check();
    } catch (const Error& e) {
      problem = std::string("threw: ") + e.what();
    } catch (const std::exception& e) {
      problem = std::string("threw a std::exception: ") + e.what();
    }
    if (!problem.empty())
      ADD_FAILURE() << primitive_name(id()) << " [" << p.label
                    << (context.empty() ? "" : ", " + context) << "]: " << problem
                    << (p.note.empty() ? "" : " (" + p.note + ")");
  }
};

TEST_P(Rules, ProbesBuildThePrimitive) {
  ASSERT_FALSE(rule_case.probes.empty()) << primitive_name(id()) << " has no probe";
  const bool reachable = rule_case.unreachable.empty();
  for (const Probe& p : rule_case.probes) {
    run(p, "", [&]() -> std::string {
      if (p.domains.size() != 1 && p.domains.size() != p.shapes.size())
        return "harness: one domain, or one per input";
      if (p.shapes.empty()) return "harness: a probe needs an input";
      bool built = rulecheck::builds(p, rulecheck::sample(p, rng), id());
      if (reachable && !built)
        return std::string("the probe's graph has no ") + primitive_name(id()) + " node";
      // An unreachable primitive that shows up after all needs its rules
      // checked like the others.
      if (!reachable && built)
        return "the probe's graph holds the primitive, which the case says is unreachable (" +
               rule_case.unreachable + ")";
      return "";
    });
  }
}

TEST_P(Rules, DerivativesMatchFiniteDifferences) {
  if (!rule_case.no_rules.empty()) {  // none to check: they must refuse
    for (const Probe& p : rule_case.probes)
      for (const char* which : {"vjp", "jvp"})
        run(p, which, [&] {
          return rulecheck::check_rules_refused(p, rulecheck::sample(p, rng), which,
                                                rule_case.no_rules);
        });
    return;
  }
  for (const Probe& p : rule_case.probes) {
    auto inputs = rulecheck::sample(p, rng);
    for (const auto& layout : rulecheck::layouts(inputs)) {
      run(p, layout.name, [&] {
        return p.grad == Grad::zero ? rulecheck::check_zero_derivatives(p, layout.inputs, rng)
                                    : rulecheck::check_finite_differences(p, layout.inputs,
                                                                          inputs, rng);
      });
    }
  }
}

TEST_P(Rules, VmapMatchesLoop) {
  auto pin = cpu_if(vmap_bits_need_cpu(id()));
  for (const Probe& p : rule_case.probes) {
    if (!rule_case.no_rules.empty())
      run(p, "vmap", [&] {
        return rulecheck::check_rules_refused(p, rulecheck::sample(p, rng), "vmap",
                                              rule_case.no_rules);
      });
    else if (p.vmap)
      run(p, "", [&] { return rulecheck::check_vmap(p, rng); });
  }
}

// Transforms of the vjp: jvp of vjp against finite differences (second
// derivatives, on contiguous inputs) and vmap of vjp against a loop.
TEST_P(Rules, SecondOrderAndVmapOfVjp) {
  auto pin = cpu_if(vmap_bits_need_cpu(id()));
  for (const Probe& p : rule_case.probes) {
    if (p.grad == Grad::zero || !rule_case.no_rules.empty()) continue;
    run(p, "jvp and vmap of its vjp", [&] {
      Probe q = rulecheck::vjp_of(p, rng);
      auto inputs = rulecheck::sample(q, rng);
      std::string problems = rulecheck::check_finite_differences(q, inputs, inputs, rng);
      if (q.vmap) problems += rulecheck::check_vmap(q, rng);
      return problems;
    });
  }
}

TEST_P(Rules, FailedInputSurfacesTheOriginalOp) {
  for (const Probe& p : rule_case.probes)
    run(p, "", [&] { return rulecheck::check_failed_input(p, rulecheck::sample(p, rng)); });
}

INSTANTIATE_TEST_SUITE_P(TransformsRules, Rules, ::testing::ValuesIn(all_primitives()),
                         [](const ::testing::TestParamInfo<Entry>& info) {
                           return std::string(primitive_name(info.param.id));
                         });

// Gradients of outputs that do not depend on an input are zeros of the
// input's shape and dtype, broadcast from one element (no buffer of that
// size).
TEST(TransformsRules, GradOfConstantFunctionIsBroadcastZeros) {
  Array x = array<double>({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  Array y = array<double>({0.5, -1.0}, {2});
  FlatFunction f = [](const std::vector<Array>& in) {
    return std::vector<Array>{(in[1] * 2.0).sum() + ops::ones({3}, float64).sum()};
  };
  auto grads = grad_flat(f, {0, 1})({x, y});
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0].shape(), x.shape());
  EXPECT_EQ(grads[0].dtype(), float64);
  EXPECT_EQ(grads[0].to_vector<double>(), std::vector<double>(6, 0.0));
  for (int64_t s : grads[0].strides()) EXPECT_EQ(s, 0) << "zeros are broadcast";
  EXPECT_EQ(grads[1].to_vector<double>(), (std::vector<double>{2.0, 2.0}));

  FlatFunction constant = [](const std::vector<Array>&) {
    return std::vector<Array>{ops::ones({}, float64)};
  };
  auto g = grad_flat(constant)({x});
  EXPECT_EQ(g[0].shape(), x.shape());
  EXPECT_EQ(g[0].to_vector<double>(), std::vector<double>(6, 0.0));
  auto [outs, tangents] = jvp_flat(constant, {x}, {ops::ones_like(x)});
  EXPECT_EQ(tangents[0].to_vector<double>(), std::vector<double>{0.0});
}

// The error of an op that fails inside a transformed function reaches the
// caller as the op made it: its name and the caller's location.
TEST(TransformsRules, FailedOpInsideGradNamesTheOp) {
  FlatFunction f = [](const std::vector<Array>& in) {
    Array bad = ops::matmul(in[0], in[0]);  // (2, 3) @ (2, 3): a shape mismatch
    return std::vector<Array>{ops::exp(bad).sum()};
  };
  try {
    grad_flat(f)({ops::ones({2, 3}, float64)});
    ADD_FAILURE() << "grad did not throw";
  } catch (const Error& e) {
    ASSERT_TRUE(e.op_name().has_value()) << e.what();
    EXPECT_EQ(*e.op_name(), "matmul") << e.what();
    EXPECT_NE(e.file().find("transforms_rules_test.cpp"), std::string::npos) << e.what();
  }
}

}  // namespace
