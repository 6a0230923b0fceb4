// compile and compile_mut: the spec's examples, tracing once per key,
// retracing rules, simplification, errors, and bit-exact replays.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <variant>
#include <thread>

#include "compile/simplify.h"
#include <nuvec/compile.h>
#include <nuvec/nuvec.h>

using namespace nuvec;

namespace compiletest {
struct Scaled {
  Array w;
  float scale = 2.0f;
  bool training = true;
};
NUVEC_TREE(Scaled, w, NUVEC_STATIC(scale), NUVEC_MODE(training))
}  // namespace compiletest
using compiletest::Scaled;

TEST(Compile, SpecTraceOnceAndReplay) {
  auto f = compile([](const Array& x) { return x * x + 1.0f; });
  Array y = f(array({1.0f, 2.0f}));
  Array z = f(array({3.0f, 4.0f}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2.0f, 5.0f}));
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{10.0f, 17.0f}));
  EXPECT_EQ(f.trace_count(), 1u);
  (void)f(array({1.0f, 2.0f, 3.0f}));  // a new shape: a new trace
  EXPECT_EQ(f.trace_count(), 2u);
  (void)f(array({1.0, 2.0}, {2}).astype(float64));  // a new dtype
  EXPECT_EQ(f.trace_count(), 3u);
  (void)f(array({5.0f, 6.0f}));
  EXPECT_EQ(f.trace_count(), 3u);
}

TEST(Compile, ReplayIsBitExact) {
  auto chain = [](const Array& x, const Array& y) {
    Array a = ops::exp(x) * y - ops::tanh(y) / (ops::abs(x) + 1.0f);
    return std::make_pair(ops::sigmoid(a) + ops::log1p(ops::abs(a)), a.sum(-1));
  };
  auto cf = compile(chain);
  for (int round = 0; round < 3; ++round) {
    Array x = random::normal({7, 33}, random::key(round));
    Array y = random::normal({7, 33}, random::key(100 + round));
    auto [a, b] = chain(x, y);
    auto [c, d] = cf(x, y);
    EXPECT_EQ(a.to_vector<float>(), c.to_vector<float>());
    EXPECT_EQ(b.to_vector<float>(), d.to_vector<float>());
  }
  EXPECT_EQ(cf.trace_count(), 1u);
}

TEST(Compile, RetracesOnStructureOnly) {
  auto f = compile([](const Scaled& s) { return s.w * s.scale + (s.training ? 1.0f : 0.0f); });
  Scaled s{array({1.0f})};
  EXPECT_EQ(f(s).item<float>(), 3.0f);
  s.w = array({2.0f});
  EXPECT_EQ(f(s).item<float>(), 5.0f);
  EXPECT_EQ(f.trace_count(), 1u);
  s.scale = 3.0f;  // a static field: retrace once instead of a stale constant
  EXPECT_EQ(f(s).item<float>(), 7.0f);
  EXPECT_EQ(f(s).item<float>(), 7.0f);
  EXPECT_EQ(f.trace_count(), 2u);
  s.training = false;  // a mode switch
  EXPECT_EQ(f(s).item<float>(), 6.0f);
  EXPECT_EQ(f.trace_count(), 3u);
  std::pair<Param, Array> p{Param(array({1.0f})), array({1.0f})};
  auto g = compile([](const std::pair<Param, Array>& q) { return q.first.value + q.second; });
  (void)g(p);
  p.first.frozen = true;  // a frozen flag
  (void)g(p);
  EXPECT_EQ(g.trace_count(), 2u);
}

TEST(Compile, CacheCapacity) {
  auto f = compile([](const Array& x) { return x + 1.0f; }, CompileOptions{.cache_capacity = 2});
  for (int n : {1, 2, 3, 1}) (void)f(ops::ones({n}));
  EXPECT_EQ(f.trace_count(), 4u);  // shape 1 was evicted by 3
  (void)f(ops::ones({3}));
  EXPECT_EQ(f.trace_count(), 4u);
  auto g = compile([](const Array& x) { return x + 1.0f; }, CompileOptions{.cache_capacity = 0});
  (void)g(ops::ones({2}));
  (void)g(ops::ones({2}));
  EXPECT_EQ(g.trace_count(), 2u);
}

TEST(Compile, EvaluatingInsideTheTraceIsAnError) {
  auto f = compile([](const Array& x) {
    Array y = x * 2.0f;
    (void)y.item<float>();
    return y;
  });
  try {
    (void)f(array(1.0f));
    FAIL() << "must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("while compile traced it"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)f(array(1.0f)), Error);  // a failed trace is not cached
}

// async_eval (and a schedule's async_eval) of a traced value is refused as
// eval is: the same kind and wording, the op named; outside a trace, and
// inside other transforms, it still evaluates.
TEST(Compile, AsyncEvalInsideTheTraceIsAnError) {
  auto caught = [](const auto& f) -> std::optional<Error> {
    try {
      (void)f(array({1.0f, 2.0f}));
    } catch (const Error& e) {
      return e;
    }
    return std::nullopt;
  };
  auto by_eval = compile([](const Array& x) {
    Array y = x * 2.0f;
    eval(std::vector<Array>{y});
    return y;
  });
  auto by_async = compile([](const Array& x) {
    Array y = x * 2.0f;
    async_eval(std::vector<Array>{y + 1.0f});
    return y;
  });
  auto by_schedule = compile([](const Array& x) {
    Array y = ops::exp(x);
    schedule(std::vector<Array>{y}).async_eval();
    return y;
  });
  auto e = caught(by_eval), a = caught(by_async), s = caught(by_schedule);
  ASSERT_TRUE(e && a && s);
  const std::string tail = "while compile traced it (values do not exist during the trace); "
                           "evaluate outside the compiled function";
  for (const Error* err : {&*e, &*a, &*s}) {
    EXPECT_EQ(err->kind(), ErrorKind::transform) << err->what();
    EXPECT_NE(err->message().find(tail), std::string::npos) << err->what();
  }
  EXPECT_EQ(a->op_name(), std::optional<std::string>("async_eval"));
  EXPECT_NE(a->message().find("called async_eval"), std::string::npos) << a->what();
  EXPECT_TRUE(caught(by_async)) << "a failed trace is not cached";
  EXPECT_EQ(by_async.trace_count(), 2u);
  // Outside a trace and inside grad, async_eval evaluates.
  Array z = array({1.0f, 2.0f}) * 3.0f;
  async_eval(std::vector<Array>{z});
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{3.0f, 6.0f}));
  auto g = grad([](const Array& x) {
    Array y = x * x;
    async_eval(std::vector<Array>{y});
    return y.sum();
  });
  EXPECT_EQ(g(array({1.0f, 2.0f})).to_vector<float>(), (std::vector<float>{2.0f, 4.0f}));
}

TEST(Compile, CapturesAndRandomDrawsAreConstants) {
  Array c = array({1.0f, 2.0f});
  auto f = compile([&](const Array& x) { return x + c + random::uniform({2}); });
  Array a = f(ops::zeros({2}));
  c = array({100.0f, 100.0f});  // the trace holds the old array
  Array b = f(ops::zeros({2}));
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  EXPECT_LT(b.to_vector<float>()[0], 2.0f);
}

TEST(Compile, SimplifiesTheGraph) {
  auto f = compile([](const Array& x) {
    Array a = ops::exp(x) + ops::exp(x);              // one exp
    Array b = (x * 2.0f) + (x * 2.0f);                // one product, one constant
    return a + b.astype(float32) + ops::reshape(x, x.shape());
  });
  Array x = array({0.5f, 1.5f});
  Array y = f(x);
  auto st = compiler::last_simplify_stats();
  EXPECT_GE(st.common_subexpressions, 2);
  EXPECT_GE(st.constants_merged, 1);
  auto v = y.to_vector<float>();
  for (int i = 0; i < 2; ++i) {
    float xi = i ? 1.5f : 0.5f;
    EXPECT_FLOAT_EQ(v[i], 2 * std::exp(xi) + 4 * xi + xi);
  }
}

TEST(Compile, InsideTransformsRunsTheFunction) {
  auto f = compile([](const Array& x) { return (x * x).sum(); });
  auto g = grad([&](const Array& x) { return f(x); })(array({1.0f, 3.0f}));
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{2.0f, 6.0f}));
  EXPECT_EQ(f.trace_count(), 0u);
  auto cg = compile(grad([](const Array& x) { return (x * x * x).sum(); }));
  EXPECT_EQ(cg(array({1.0f, 2.0f})).to_vector<float>(), (std::vector<float>{3.0f, 12.0f}));
  EXPECT_EQ(cg(array({2.0f, 3.0f})).to_vector<float>(), (std::vector<float>{12.0f, 27.0f}));
  EXPECT_EQ(cg.trace_count(), 1u);
}

TEST(Compile, SpecCompileMutTrainingStep) {
  auto step = compile_mut([](Array& w, const std::pair<Array, Array>& xy) {
    const auto& [x, y] = xy;
    auto loss = [&](const Array& v) {
      Array r = v * x - y;
      return (r * r).sum();
    };
    auto [l, g] = value_and_grad(loss)(w);
    w = w - g * 0.1f;
    return l;
  });
  Array w = array({0.0f});
  for (int i = 0; i < 50; ++i) (void)step(w, std::make_pair(array({1.0f}), array({2.0f})));
  EXPECT_NEAR(w.item<float>(), 2.0f, 1e-3f);
  EXPECT_EQ(step.trace_count(), 1u);
}

TEST(Compile, CompileMutThreadsTheRandomKey) {
  auto body = [](Array& s, const Array& x) {
    s = s + random::uniform({3}) * x;
    return s.sum();
  };
  auto step = compile_mut(body);
  random::seed(5);
  Array a = ops::zeros({3});
  std::vector<float> compiled;
  for (int i = 0; i < 3; ++i) compiled.push_back(step(a, array(1.0f)).item<float>());
  random::seed(5);
  Array b = ops::zeros({3});
  std::vector<float> plain;
  for (int i = 0; i < 3; ++i) plain.push_back(body(b, array(1.0f)).item<float>());
  EXPECT_EQ(compiled, plain);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  EXPECT_EQ(step.trace_count(), 1u);
}

// compile_mut splits one visit of (state, inputs) at the state's last leaf:
// a state of three leaves and inputs of two, each leaf used differently,
// step by step equal to the plain function (a wrong split would swap
// state and inputs, or keep state leaves as inputs).
TEST(Compile, CompileMutSeveralStateAndInputLeaves) {
  auto body = [](std::vector<Array>& s, const std::pair<Array, Array>& in) {
    const auto& [x, y] = in;
    s[0] = s[0] * 0.5f + x;
    s[1] = s[1] - y * 2.0f;
    s[2] = s[2] * s[0] + s[1];
    return (s[2] * x).sum();
  };
  auto step = compile_mut(body);
  auto init = [] { return std::vector<Array>{array({1.0f, 2.0f}), array({3.0f, -1.0f}), array({0.5f, 0.25f})}; };
  std::vector<Array> a = init(), b = init();
  for (int i = 0; i < 4; ++i) {
    auto in = std::make_pair(array({0.1f * i, 1.0f}), array({2.0f, -0.5f * i}));
    EXPECT_EQ(step(a, in).item<float>(), body(b, in).item<float>()) << i;
    for (int k = 0; k < 3; ++k) EXPECT_EQ(a[k].to_vector<float>(), b[k].to_vector<float>()) << i << " " << k;
  }
  EXPECT_EQ(step.trace_count(), 1u);
}

TEST(Compile, CompileMutStructureChangeIsAnError) {
  auto step = compile_mut([](Scaled& s, const Array& x) {
    s.scale += 1.0f;  // a host counter in a static field
    return s.w * x;
  });
  Scaled s{array({1.0f})};
  EXPECT_THROW((void)step(s, array(1.0f)), Error);
  EXPECT_EQ(s.scale, 2.0f);  // unchanged on failure
}

TEST(Compile, ShapelessSwiGLUTracesOnce) {
  auto body = [](const std::pair<Array, Array>& gu) {
    const auto& [g, u] = gu;
    return g * ops::sigmoid(g) * u + 0.5f;
  };
  auto swiglu = compile(body, CompileOptions{.shapeless = true});
  auto shaped = compile(body);
  for (int rows : {7, 512, 2048}) {
    Array g = random::normal({rows, 64}, random::key(rows));
    Array u = random::normal({rows, 64}, random::key(rows + 1));
    Array a = swiglu(std::make_pair(g, u));
    ASSERT_EQ(a.shape(), (Shape{rows, 64}));
    EXPECT_EQ(a.to_vector<float>(), shaped(std::make_pair(g, u)).to_vector<float>());
  }
  EXPECT_EQ(swiglu.trace_count(), 1u);
  EXPECT_EQ(shaped.trace_count(), 3u);
  // Broadcasting is replayed as the uncompiled op does it.
  auto add = compile([](const Array& a, const Array& b) { return a + b; }, CompileOptions{.shapeless = true});
  EXPECT_EQ(add(ops::ones({2, 3}), ops::ones({3})).shape(), (Shape{2, 3}));
  EXPECT_EQ(add(ops::ones({4, 5}), ops::ones({5})).shape(), (Shape{4, 5}));
  EXPECT_EQ(add(ops::ones({4, 1}), ops::ones({5})).shape(), (Shape{4, 5}));
  EXPECT_EQ(add.trace_count(), 1u);
}

TEST(Compile, ShapelessRejectsTracedSizes) {
  auto f = compile([](const Array& x) { return ops::reshape(x, {-1}) * 2.0f; },
                   CompileOptions{.shapeless = true});
  try {
    (void)f(ops::ones({2, 3}));
    FAIL() << "must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("reshape"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("shapeless"), std::string::npos) << e.what();
  }
}

TEST(Compile, FusesElementwiseChainsBitExactly) {
  // Mixed dtypes (float16 intermediates round as the unfused stores do),
  // broadcast operands (a row, a scalar), transposed inputs, an intermediate
  // returned as a second output, and sizes over several chunks.
  auto body = [](const Array& x, const Array& row) {
    Array h = (x * 1.5f + row).astype(float16);
    Array a = ops::exp(h) * h - ops::sigmoid(h);
    Array b = ops::where(ops::greater(x, row), ops::tanh(x), ops::sqrt(ops::abs(x)));
    return std::make_tuple(a.astype(float32) + b, h);
  };
  auto cf = compile(body);
  for (auto shape : {Shape{3, 5}, Shape{300, 257}, Shape{1, 70001}}) {
    Array x = random::normal(shape, random::key(shape[1]));
    Array row = random::normal({shape[1]}, random::key(7));
    for (bool transposed : {false, true}) {
      Array xi = transposed ? ops::transpose(ops::transpose(x).copy()) : x;
      auto [a, h] = body(xi, row);
      auto [c, hc] = cf(xi, row);
      EXPECT_EQ(a.to_vector<float>(), c.to_vector<float>()) << shape[0] << "x" << shape[1];
      EXPECT_EQ(h.astype(float32).to_vector<float>(), hc.astype(float32).to_vector<float>());
    }
  }
  auto st = compiler::last_simplify_stats();
  EXPECT_GE(st.fused_kernels, 1);
  EXPECT_GE(st.fused_ops, 8);
}

TEST(Compile, SpecExampleIsOneKernel) {
  auto f = compile([](const Array& x) { return x * x + 1.0f; });
  EXPECT_EQ(f(array({1.0f, 2.0f})).to_vector<float>(), (std::vector<float>{2.0f, 5.0f}));
  auto st = compiler::last_simplify_stats();
  EXPECT_EQ(st.fused_kernels, 1);
  EXPECT_EQ(st.fused_ops, 2);
}

TEST(Compile, ConcurrentFirstCallsTraceOnce) {
  std::atomic<int> running{0};
  auto f = compile([&](const Array& x) {
    ++running;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // others arrive meanwhile
    return ops::exp(x) * 2.0f;
  });
  Array x = array({1.0f, 2.0f, 3.0f});
  std::vector<std::vector<float>> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back([&, t] { results[t] = f(x).to_vector<float>(); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(f.trace_count(), 1u);
  EXPECT_EQ(running.load(), 1);
  for (const auto& r : results) EXPECT_EQ(r, (ops::exp(x) * 2.0f).to_vector<float>());
}

TEST(Compile, FailedTraceLetsTheNextCallerTrace) {
  std::atomic<int> calls{0};
  auto f = compile([&](const Array& x) {
    if (calls++ == 0) throw Error(ErrorKind::invalid_argument, "first trace fails");
    return x + 1.0f;
  });
  EXPECT_THROW((void)f(array({1.0f})), Error);
  EXPECT_EQ(f(array({1.0f})).item<float>(), 2.0f);
  EXPECT_EQ(f.trace_count(), 2u);
}

TEST(Compile, GraphReportShowsFusedAndUnfusedSteps) {
  auto f = compile([](const Array& x) {
    Array a = ops::exp(x) * 2.0f;           // fused with the multiply
    Array s = ops::sum(a, 0, true);         // over a leading axis: its own kernel
    return ops::sigmoid(s);                 // element-wise, but alone
  });
  Array x = random::normal({3, 4}, random::key(1));
  GraphReport r = f.graph(x);
  EXPECT_NE(r.text.find("inputs: %in0 float32(3, 4)"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("fused kernel, 2 ops: v2 = Exp(v0); v3 = Multiply(v2, v1)"), std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("Reduce("), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("Sigmoid(%1)"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("not fused"), std::string::npos) << r.text;
  EXPECT_EQ(r.dot.rfind("digraph compiled {", 0), 0u);
  EXPECT_NE(r.dot.find("\"%0\" -> \"%1\""), std::string::npos) << r.dot;
  EXPECT_EQ(f.trace_count(), 1u);
  (void)f(x);  // the report's trace is reused
  EXPECT_EQ(f.trace_count(), 1u);
}

// Over the trailing axes, the same function is one step over rows.
TEST(Compile, GraphReportShowsRowRegions) {
  auto f = compile([](const Array& x) {
    return ops::sigmoid(ops::sum(ops::exp(x) * 2.0f, -1, true));
  });
  GraphReport r = f.graph(random::normal({3, 4}, random::key(1)));
  EXPECT_NE(r.text.find("%0 = FusedReduce(%in0, %c0) -> float32(3, 1)\n"
                        "    fused over rows (axes 1.. of (3, 4)): map (2 ops), reduce sum, scalars (1 ops)"),
            std::string::npos)
      << r.text;
  EXPECT_EQ(r.text.find("%1 ="), std::string::npos) << r.text;
}

// Each part of the signature retraces once when it changes, and only then.
TEST(Compile, RetracesOnEveryPartOfTheSignature) {
  using V = std::variant<Array, std::pair<Array, Array>>;
  auto total = [](const auto& tree) {
    Array s = array(0.0f);
    for (const auto& leaf : tree_leaves(tree)) s = s + leaf.astype(float32).sum();
    return s;
  };
  auto fv = compile([&](const V& v) { return total(v); });
  (void)fv(V(array({1.0f})));
  (void)fv(V(std::make_pair(array({1.0f}), array({2.0f}))));  // the variant's alternative
  (void)fv(V(array({5.0f})));
  EXPECT_EQ(fv.trace_count(), 2u);
  auto fo = compile([&](const std::optional<Array>& o) { return o ? total(*o) : array(0.0f); });
  (void)fo(std::optional<Array>(array({1.0f})));
  (void)fo(std::optional<Array>());  // an optional's presence
  (void)fo(std::optional<Array>(array({3.0f})));
  EXPECT_EQ(fo.trace_count(), 2u);
  auto fl = compile([&](const std::vector<Array>& xs) { return total(xs); });
  (void)fl(std::vector<Array>{array({1.0f})});
  (void)fl(std::vector<Array>{array({1.0f}), array({2.0f})});  // a container's length
  EXPECT_EQ(fl.trace_count(), 2u);
  auto fm = compile([&](const std::map<std::string, Array>& m) { return total(m); });
  (void)fm(std::map<std::string, Array>{{"a", array({1.0f})}});
  (void)fm(std::map<std::string, Array>{{"b", array({1.0f})}});  // a path
  EXPECT_EQ(fm.trace_count(), 2u);
  auto fa = compile([](const Array& x) { return x * 2; });
  (void)fa(array({1.0f, 2.0f}));
  (void)fa(array({1, 2}));                     // a dtype
  (void)fa(array({1.0f, 2.0f, 3.0f}));         // a shape
  with_stream(new_stream(Device::cpu), [&] { (void)fa(array({1.0f, 2.0f})); });  // the stream
  (void)fa(array({4.0f, 5.0f}));
  EXPECT_EQ(fa.trace_count(), 4u);
}
