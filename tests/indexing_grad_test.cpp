// Derivatives and vmap of the gathers, scatters and slice updates of
// ops/indexing.h and ops/misc.h. They are composites of Take and Scatter, so
// their rules are those primitives'; this checks the composites through the
// transform-rule harness (support/rule_check.h): vjp and jvp against central
// differences of float64 functions and against each other on several
// memory layouts, second derivatives, vmap against a loop over the batch
// (indices batched too), and failed inputs surfacing unchanged. Index
// arrays are float64 inputs cast to int32 (their derivative is zero), so
// that vmap batches them as well.
#include <gtest/gtest.h>

#include <random>

#include "support/cpu_default.h"
#include "support/rule_cases.h"
#include "support/rule_check.h"

namespace nuvec {
namespace {

using rulecases::Probe;
using rulecases::probe;
namespace dom = rulecases::dom;
using Arrays = std::vector<Array>;

Array ints(const Array& x) { return x.astype(int32); }

std::vector<Probe> gather_probes() {
  return {
      probe("gather two axes, slices along the third",
            [](const Arrays& in) {
              return Arrays{
                  gather(in[0], {ints(in[1]), ints(in[2])}, {0, 1}, {1, 1, 3})};
            },
            {{3, 4, 5}, {2}, {2}},
            {dom::real, dom::index(3), dom::index(4), dom::real}),
      probe("gather one index array, 2-D",
            [](const Arrays& in) {
              return Arrays{gather(in[0], ints(in[1]), 1, {2, 1, 2})};
            },
            {{2, 4, 3}, {2, 2}}, {dom::real, dom::index(4)}),
      probe("take with an integer",
            [](const Arrays& in) {
              return Arrays{take(in[0], -1, 1), take(in[0], 3)};
            },
            {{2, 3}}),
      probe("dynamic slice",
            [](const Arrays& in) {
              return Arrays{slice(in[0], ints(in[1]), {0, 1}, {2, 3})};
            },
            {{4, 5}, {2}}, {dom::real, dom::index(4)}),
  };
}

std::vector<Probe> scatter_probes() {
  // Indices in a small range repeat: the last write of scatter, and the
  // accumulations, are exercised.
  return {
      probe("scatter rows",
            [](const Arrays& in) {
              return Arrays{
                  scatter(in[0], ints(in[1]), in[2].reshape({3, 1, 3}), 0)};
            },
            {{4, 3}, {3}, {3, 3}}, {dom::real, dom::index(4), dom::real}),
      probe("scatter_add two axes",
            [](const Arrays& in) {
              return Arrays{scatter_add(in[0], {ints(in[1]), ints(in[2])},
                                        in[3].reshape({5, 1, 1}), {0, 1})};
            },
            {{3, 4}, {5}, {5}, {5}},
            {dom::real, dom::index(3), dom::index(4), dom::real}),
      probe("scatter_prod",
            [](const Arrays& in) {
              return Arrays{
                  scatter_prod(in[0], ints(in[1]), in[2].reshape({4, 1}), 0)};
            },
            {{5}, {4}, {4}}, {dom::real, dom::index(5), dom::real}),
      probe("scatter_max",
            [](const Arrays& in) {
              return Arrays{scatter_max(in[0], {ints(in[1])},
                                        in[2].reshape({4, 1}), {0})};
            },
            {{5}, {4}, {4}}, {dom::distinct, dom::index(5), dom::distinct}),
      probe("scatter_min",
            [](const Arrays& in) {
              return Arrays{
                  scatter_min(in[0], ints(in[1]), in[2].reshape({4, 1}), 0)};
            },
            {{5}, {4}, {4}}, {dom::distinct, dom::index(5), dom::distinct}),
      probe("masked_scatter elements",
            [](const Arrays& in) {
              return Arrays{
                  masked_scatter(in[0], ops::greater(in[1], 0), in[2])};
            },
            {{2, 3}, {2, 3}, {6}}, {dom::real, dom::nonzero, dom::real}),
      probe("masked_scatter rows",
            [](const Arrays& in) {
              return Arrays{
                  masked_scatter(in[0], ops::greater(in[1], 0), in[2])};
            },
            {{3, 2}, {3}, {3, 2}}, {dom::real, dom::nonzero, dom::real}),
      probe("put_along_axis (broadcast)",
            [](const Arrays& in) {
              return Arrays{put_along_axis(in[0], ints(in[1]), in[2], 1)};
            },
            {{3, 4}, {3, 2}, {1, 2}}, {dom::real, dom::index(4), dom::real}),
      probe("scatter_add_axis",
            [](const Arrays& in) {
              return Arrays{scatter_add_axis(in[0], ints(in[1]), in[2], 0)};
            },
            {{3, 2}, {4, 2}, {4, 2}}, {dom::real, dom::index(3), dom::real}),
  };
}

std::vector<Probe> slice_update_probes() {
  return {
      probe(
          "slice_update",
          [](const Arrays& in) {
            return Arrays{slice_update(in[0], in[1], Shape{1, 1}, Shape{3, 3})};
          },
          {{3, 4}, {2, 2}}),
      probe(
          "slice_update with strides, broadcast update",
          [](const Arrays& in) {
            return Arrays{slice_update(in[0], in[1], {3, 0}, {-5, 4}, {-2, 2})};
          },
          {{4, 4}, {2}}),
      probe("slice_update_add",
            [](const Arrays& in) {
              return Arrays{
                  slice_update_add(in[0], in[1], {0, 1}, {2, 4}, {1, 2})};
            },
            {{2, 4}, {2, 2}}),
      probe("slice_update_prod",
            [](const Arrays& in) {
              return Arrays{slice_update_prod(in[0], in[1], {0, 1}, {2, 3})};
            },
            {{2, 4}, {1, 2}}),
      probe("slice_update_max",
            [](const Arrays& in) {
              return Arrays{slice_update_max(in[0], in[1], {0, 0}, {2, 2})};
            },
            {{2, 4}, {2, 2}}, {dom::distinct}),
      probe("slice_update_min",
            [](const Arrays& in) {
              return Arrays{
                  slice_update_min(in[0], in[1], {1, 0}, {2, 4}, {1, 3})};
            },
            {{2, 4}, {1, 2}}, {dom::distinct}),
      probe("dynamic slice_update",
            [](const Arrays& in) {
              return Arrays{slice_update(in[0], in[1], ints(in[2]), {1, 0})};
            },
            {{4, 5}, {2, 3}, {2}}, {dom::real, dom::real, dom::index(3)}),
  };
}

std::vector<Probe> all_probes() {
  std::vector<Probe> all = gather_probes();
  for (auto& p : scatter_probes()) all.push_back(p);
  for (auto& p : slice_update_probes()) all.push_back(p);
  return all;
}

void expect_clean(const Probe& p, const std::string& what,
                  const std::string& problems) {
  EXPECT_TRUE(problems.empty()) << p.label << " (" << what << "): " << problems;
}

TEST(IndexingGrad, MatchFiniteDifferences) {
  nuvec::testing::CpuDefault cpu;
  std::mt19937 rng(7);
  for (const Probe& p : all_probes()) {
    auto inputs = rulecheck::sample(p, rng);
    for (const auto& layout : rulecheck::layouts(inputs))
      expect_clean(
          p, layout.name,
          rulecheck::check_finite_differences(p, layout.inputs, inputs, rng));
  }
}

TEST(IndexingGrad, SecondOrder) {
  nuvec::testing::CpuDefault cpu;
  std::mt19937 rng(8);
  for (const Probe& p : all_probes()) {
    Probe q = rulecheck::vjp_of(p, rng);
    auto inputs = rulecheck::sample(q, rng);
    expect_clean(p, "jvp of its vjp",
                 rulecheck::check_finite_differences(q, inputs, inputs, rng));
  }
}

TEST(IndexingGrad, VmapMatchesLoop) {
  nuvec::testing::CpuDefault cpu;
  std::mt19937 rng(9);
  for (const Probe& p : all_probes()) {
    expect_clean(p, "vmap", rulecheck::check_vmap(p, rng));
    expect_clean(p, "vmap of its vjp",
                 rulecheck::check_vmap(rulecheck::vjp_of(p, rng), rng));
  }
}

TEST(IndexingGrad, FailedInputsSurface) {
  nuvec::testing::CpuDefault cpu;
  std::mt19937 rng(10);
  for (const Probe& p : all_probes())
    expect_clean(p, "failed input",
                 rulecheck::check_failed_input(p, rulecheck::sample(p, rng)));
}

// Hand-derived: d/dx sum(w * gather(x, ...)) puts w back at the read
// positions, accumulating where slices overlap; the gradient of scatter's
// updates reads the cotangent where they were written, and the input's is
// zero there.
TEST(IndexingGrad, HandDerived) {
  Array x = ops::zeros({4}, float64);
  Array w = array<double>({1, 10, 100, 1000}, {2, 2});
  auto g = grad([&](const Array& a) {
    return ops::sum(gather(a, array({1, 2}), 0, {2}) * w);
  })(x);
  // Slices [1, 2] and [2, 3]: position 2 is read twice.
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{0, 1, 110, 1000}));

  Array base = array<double>({1, 2, 3, 4});
  Array upd = array<double>({5, 6}, {2, 1});
  Array cot = array<double>({1, 2, 3, 4});
  auto [out, vjps] = vjp_flat(
      [](const Arrays& in) {
        return Arrays{scatter(in[0], array({3, 0}), in[1], 0)};
      },
      {base, upd}, {cot});
  EXPECT_EQ(out[0].to_vector<double>(), (std::vector<double>{6, 2, 3, 5}));
  EXPECT_EQ(vjps[0].to_vector<double>(), (std::vector<double>{0, 2, 3, 0}));
  EXPECT_EQ(vjps[1].to_vector<double>(), (std::vector<double>{4, 1}));
}

}  // namespace
}  // namespace nuvec
