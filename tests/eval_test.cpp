// The evaluator: laziness, freeing intermediates, donation, deep graphs,
// async evaluation and several threads sharing nodes.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "core/eval_stats.h"
#include "support/cpu_default.h"
#include <nuvec/core/graph.h>
#include <nuvec/nuvec.h>

using namespace nuvec;

TEST(Eval, NothingRunsUntilRead) {
  uint64_t before = detail::executed_node_count();
  Array x = ops::arange(10).astype(float32);
  Array y = (x * 2.0 + 1.0).exp().sum();
  EXPECT_EQ(detail::executed_node_count(), before);
  float v = y.item<float>();
  EXPECT_GT(detail::executed_node_count(), before);
  double ref = 0;
  for (int i = 0; i < 10; ++i) ref += std::exp(2.0 * i + 1.0);
  EXPECT_NEAR(v, ref, ref * 1e-6);
}

TEST(Eval, ChainFreesIntermediates) {
  // 100 element-wise ops on 2^22 floats: the peak stays a few times the
  // array's size, not 100 times.
  const int64_t n = int64_t(1) << 22;
  const size_t bytes = size_t(n) * 4;
  clear_cache();
  Array x = ops::full({int(n)}, 1.0, float32).copy();
  x.eval();
  reset_peak_memory();
  size_t base = get_active_memory();
  Array y = x;
  for (int i = 0; i < 100; ++i) y = (i % 2) ? y * 1.0001 : y + 0.5;
  x = Array();  // let the chain own the input: it can be donated
  y.eval();
  size_t peak = get_peak_memory() - base;
  EXPECT_LE(peak, 3 * bytes) << "peak " << peak << " bytes for a " << bytes << "-byte array";
  EXPECT_NEAR(y.max().item<float>(), 26.2, 0.2);  // (1 + 50 * 0.5) * 1.0001^50 roughly
}

TEST(Eval, DonationReusesTheInputBuffer) {
  nuvec::testing::CpuDefault cpu_default;
  const int n = 1 << 20;
  Array x = ops::full({n}, 2.0, float32).copy();
  x.eval();
  const void* buffer = x.desc()->data->ptr;
  Array y = ops::exp(x);
  x = Array();  // the only handle left is inside y's node
  y.eval();
  EXPECT_EQ(y.desc()->data->ptr, buffer);
  EXPECT_FLOAT_EQ(y.to_vector<float>()[17], std::exp(2.0f));
}

TEST(Eval, DeepChainsNeitherRecurseNorOverflow) {
  Array x = array({1.0f});
  Array y = x;
  for (int i = 0; i < 100000; ++i) y = y + 1.0;
  EXPECT_EQ(y.item<float>(), 100001.0f);
  Array z = x;
  for (int i = 0; i < 300000; ++i) z = ops::negative(z);
  z = Array();  // dropping a deep unevaluated chain must not overflow
  SUCCEED();
}

TEST(Eval, AsyncEvalThenRead) {
  Array x = ops::arange(1000);
  Array y = (x * x).sum();
  async_eval({y});
  EXPECT_EQ(y.item<int>(), 332833500);
}

// eval on another thread first waits for the jobs async_eval submitted
// before it (one thread at a time enqueues work): after eval of an
// unrelated array, every earlier async result has run; a job's values are
// right.
TEST(Eval, EvalWaitsForEarlierAsyncJobs) {
  std::vector<Array> queued;
  for (int i = 0; i < 200; ++i) {
    Array x = ops::arange(100) + i;
    queued.push_back(ops::cumsum(x * x, 0).sum());
    async_eval({queued.back()});
  }
  Array other = array({2.0f}) * 3.0f;
  other.eval();
  for (const auto& q : queued) EXPECT_TRUE(q.is_available());
  // The sum of the prefix sums of (j + 199)^2, j < 100, in int64.
  int64_t want = 0, prefix = 0;
  for (int64_t j = 0; j < 100; ++j) want += prefix += (j + 199) * (j + 199);
  EXPECT_EQ(queued.back().item<int>(), want);
}

namespace {
// The same graph each time: a shared part and one branch per thread.
std::vector<Array> shared_graph(int branches) {
  Array base = ops::arange(1 << 16).astype(float32);
  Array shared = ops::sqrt(base * 3.0 + 1.0);
  std::vector<Array> outs;
  for (int t = 0; t < branches; ++t) outs.push_back((shared + float(t)).sum());
  return outs;
}
}  // namespace

TEST(Eval, ThreadsSharingNodesRunEachOnce) {
  uint64_t before = detail::executed_node_count();
  auto serial = shared_graph(8);
  eval(serial);
  uint64_t nodes = detail::executed_node_count() - before;

  auto outs = shared_graph(8);
  before = detail::executed_node_count();
  std::vector<float> results(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] { results[t] = outs[t].item<float>(); });
  for (auto& th : threads) th.join();
  EXPECT_EQ(detail::executed_node_count() - before, nodes);  // no node ran twice
  for (int t = 0; t < 8; ++t) EXPECT_EQ(results[t], serial[t].item<float>());
}

TEST(Eval, MemoryLimitFailsTheNodeNotTheProcess) {
  nuvec::testing::CpuDefault cpu_default;
  size_t old = set_memory_limit(size_t(1) << 20);
  Array big = ops::full({1 << 22}, 1.0, float32).copy();
  EXPECT_THROW(big.eval(), Error);
  try {
    big.eval();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory);
    EXPECT_EQ(e.op_name(), std::optional<std::string>("copy"));
  }
  set_memory_limit(old);
  Array ok = ops::full({1 << 10}, 1.0, float32).copy();
  EXPECT_EQ(ok.sum().item<float>(), 1024.0f);
}

// schedule orders the work without running it; Scheduled::eval runs it
// once (work done meanwhile by another eval of shared nodes is not run
// again), async_eval starts it on the worker, and failures surface at eval.
TEST(Eval, ScheduleOrdersWithoutRunning) {
  // The same graph evaluated alone: how many nodes a's work takes.
  auto graph = [] {
    Array t = ops::arange(1000);
    t = t * t;
    return std::pair<Array, Array>{t.sum(), (t - 1).sum()};
  };
  uint64_t before = detail::executed_node_count();
  graph().first.eval();
  const uint64_t alone = detail::executed_node_count() - before;
  auto [a, b] = graph();
  before = detail::executed_node_count();
  Scheduled s = schedule({a});
  EXPECT_EQ(detail::executed_node_count(), before);  // nothing ran
  EXPECT_FALSE(a.is_available());
  ASSERT_EQ(s.arrays().size(), 1u);
  b.eval();  // runs the nodes a shares with b (arange, t * t) and b's own
  before = detail::executed_node_count();
  s.eval();  // only what a does not share is left
  const uint64_t ran = detail::executed_node_count() - before;
  EXPECT_GE(ran, 1u);
  EXPECT_LT(ran, alone);
  EXPECT_EQ(a.item<int>(), 332833500);  // the sum of i^2 below 1000
  EXPECT_EQ(b.item<int>(), 332833500 - 1000);
  s.eval();  // nothing left to run
  EXPECT_EQ(detail::executed_node_count(), before + ran);
  Scheduled().eval();  // an empty schedule does nothing
}

TEST(Eval, ScheduledAsyncEvalThenRead) {
  Array y = array({1.0f});
  for (int i = 0; i < 1000; ++i) y = y + 1.0;
  Scheduled s = schedule({y});
  s.async_eval();
  EXPECT_EQ(y.item<float>(), 1001.0f);
}

TEST(Eval, ScheduledEvalThrowsTheFailure) {
  Array bad = ops::reshape(ops::arange(10), {7});
  ASSERT_TRUE(bad.is_failed());
  Array good = ops::arange(3) + 1;
  Scheduled s = schedule({good, bad});
  EXPECT_THROW(s.eval(), Error);
  EXPECT_EQ(good.to_vector<int>(), (std::vector<int>{1, 2, 3}));
}
