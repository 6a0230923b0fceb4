// MLX's compile switches and compile(f, shapeless): a disabled compiled
// function runs f itself every call (no trace); shapeless replays one trace
// for every shape of the same rank.
#include <gtest/gtest.h>

#include "support/bits.h"
#include "support/cpu_default.h"
#include <nuvec/compile.h>
#include <nuvec/nuvec.h>

using namespace nuvec;
using nuvec::testing::bits_of;

namespace {
struct EnableAtExit {
  ~EnableAtExit() { enable_compile(); }
};
}  // namespace

TEST(CompileSwitch, DisabledRunsTheFunctionUncompiled) {
  nuvec::testing::CpuDefault cpu_default;
  EnableAtExit restore;
  int runs = 0;
  auto f = compile([&](const Array& x) {
    ++runs;
    return exp(x) * 2.0f + 1.0f;
  });
  Array x = array({0.5f, -1.0f, 3.0f});
  Array want = exp(x) * 2.0f + 1.0f;

  disable_compile();
  EXPECT_FALSE(compile_enabled());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bits_of(f(x)), bits_of(want));
  EXPECT_EQ(f.trace_count(), 0u);
  EXPECT_EQ(runs, 3);  // f ran on every call, on the real arrays

  enable_compile();
  EXPECT_TRUE(compile_enabled());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bits_of(f(x)), bits_of(want));
  EXPECT_EQ(f.trace_count(), 1u);
  EXPECT_EQ(runs, 4);  // one trace, then replays
}

TEST(CompileSwitch, DisabledStepStillUpdatesItsState) {
  nuvec::testing::CpuDefault cpu_default;
  EnableAtExit restore;
  auto step = compile_mut([](Array& s, const Array& x) {
    s = s + x;
    return s * 2.0f;
  });
  Array s = array({1.0f, 2.0f});
  disable_compile();
  Array out = step(s, array({10.0f, 20.0f}));
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{22.0f, 44.0f}));
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{11.0f, 22.0f}));
  EXPECT_EQ(step.trace_count(), 0u);
}

TEST(CompileSwitch, ShapelessFlagAsMlx) {
  nuvec::testing::CpuDefault cpu_default;
  auto f = compile([](const Array& x) { return x * x + 1.0f; }, /*shapeless=*/true);
  auto g = compile([](const Array& x) { return x * x + 1.0f; }, false);
  for (int n : {3, 5, 8}) {
    Array x = arange(float(n));
    EXPECT_EQ(f(x).to_vector<float>(), (x * x + 1.0f).to_vector<float>());
    g(x);
  }
  EXPECT_EQ(f.trace_count(), 1u);
  EXPECT_EQ(g.trace_count(), 3u);
}

// Out of memory inside a compiled call names what the fused step computes,
// the line of its first operation inside f, and the compile() call.
TEST(CompileErrors, OutOfMemoryNamesTheFusedStep) {
  nuvec::testing::CpuDefault cpu_default;
  jit::Mode saved = jit::mode();
  jit::set_mode(jit::Mode::off);
  const int compile_line = __LINE__ + 1;
  auto f = compile([](const Array& x) { return exp(x) * 2.0f + 1.0f; });
  Array x = zeros({1 << 20});  // 4 MiB in, 4 MiB out
  x.eval();
  size_t old = set_memory_limit(get_active_memory() + (1 << 20));
  std::string what;
  try {
    f(x).eval();
  } catch (const Error& e) {
    what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory);
  }
  set_memory_limit(old);
  jit::set_mode(saved);
  EXPECT_EQ(what.rfind("[compiled exp, ", 0), 0u) << what;
  EXPECT_NE(what.find(", multiply, add (compiled at compile_api_test.cpp:" + std::to_string(compile_line) + ")]"),
            std::string::npos)
      << what;
  // exp(x) is the first operation with a location: f's line.
  EXPECT_NE(what.find("(at "), std::string::npos) << what;
  EXPECT_NE(what.find("compile_api_test.cpp:" + std::to_string(compile_line) + ")", what.find("(at ")),
            std::string::npos)
      << what;
}
