// Long element-wise chains: compile fuses them into one region (in time
// linear in the chain: bench/compile_bench's "compile time" table; no test
// times it), equal to eager bit for bit; a region too long for the
// compiler keeps the interpreter instead of running it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "compile/jit.h"
#include "compile/simplify.h"
#include "support/bits.h"
#include "support/cpu_default.h"
#include <nuvec/compile.h>
#include <nuvec/nuvec.h>

using namespace nuvec;
using nuvec::testing::bits_of;

namespace {

struct ModeScope {
  explicit ModeScope(jit::Mode m) : saved(jit::mode()) { jit::set_mode(m); }
  ~ModeScope() {
    jit::wait();
    jit::set_mode(saved);
  }
  jit::Mode saved;
};

}  // namespace

// n steps of y = y + c, with c a weak scalar (merged into one constant) and
// with c a captured array shared by every step, and a chain whose steps
// also read one computed value (exp(x): every step uses it).
TEST(CompileChain, LongChainsAreOneRegion) {
  nuvec::testing::CpuDefault cpu_default;
  ModeScope mode(jit::Mode::off);
  const int n = 20000;
  Array x = random::normal({257}, random::key(1));
  Array c = random::normal({257}, random::key(2));
  auto literal = [&](const Array& v) {
    Array y = v;
    for (int i = 0; i < n; ++i) y = y + 0.5f;
    return y;
  };
  auto captured = [&](const Array& v) {
    Array y = v;
    for (int i = 0; i < n; ++i) y = y + c;
    return y;
  };
  auto shared = [&](const Array& v) {
    Array e = ops::exp(v);
    Array y = v;
    for (int i = 0; i < n / 2; ++i) y = y * 0.999f + e;
    return y;
  };
  EXPECT_EQ(bits_of(compile(literal)(x)), bits_of(literal(x)));
  auto st = compiler::last_simplify_stats();
  EXPECT_EQ(st.fused_kernels, 1);
  EXPECT_EQ(st.fused_ops, n);
  EXPECT_EQ(st.constants_merged, n - 1);
  EXPECT_EQ(bits_of(compile(captured)(x)), bits_of(captured(x)));
  st = compiler::last_simplify_stats();
  EXPECT_EQ(st.fused_kernels, 1);
  EXPECT_EQ(st.fused_ops, n);
  EXPECT_EQ(bits_of(compile(shared)(x)), bits_of(shared(x)));
  st = compiler::last_simplify_stats();
  EXPECT_EQ(st.fused_kernels, 1);
  EXPECT_EQ(st.fused_ops, n + 1);  // exp joins: every use of it is inside
}

// A value used inside the region and by a later reduction stays outside:
// the region stops at it (and the rest fuses), however many steps read it.
TEST(CompileChain, SharedValueUsedOutsideStaysOut) {
  nuvec::testing::CpuDefault cpu_default;
  ModeScope mode(jit::Mode::off);
  Array x = random::normal({4, 33}, random::key(3));
  auto f = [](const Array& v) {
    Array e = ops::exp(v) * 2.0f;
    Array y = v;
    for (int i = 0; i < 500; ++i) y = (y - e) * 0.999f;
    return y + ops::sum(e, -1, true);
  };
  auto cf = compile(f);
  EXPECT_EQ(bits_of(cf(x)), bits_of(f(x)));
  auto st = compiler::last_simplify_stats();
  EXPECT_EQ(st.fused_kernels, 2);   // exp(v) * 2, and the chain with the sum's row
  EXPECT_EQ(st.fused_ops, 2 + 1000 + 1);
}

// Over 4096 operations in one region: no generated kernel is built (the
// compiler's time grows faster than the region); the interpreter runs it.
TEST(CompileChain, RegionsTooLongForTheCompilerAreInterpreted) {
  nuvec::testing::CpuDefault cpu_default;
  char tmpl[] = "/tmp/nuvec-chain-test-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  ModeScope mode(jit::Mode::sync);
  jit_detail::reset_for_tests(dir, "");
  Array x = random::normal({100}, random::key(4));
  auto f = [](const Array& v) {
    Array y = v;
    for (int i = 0; i < 2500; ++i) y = y * 0.999f + 0.001f;  // 5000 operations
    return y;
  };
  auto before = jit::stats();
  EXPECT_EQ(bits_of(compile(f)(x)), bits_of(f(x)));
  EXPECT_EQ(jit::stats().compiled, before.compiled);
  EXPECT_EQ(jit::stats().generated_runs, before.generated_runs);
  EXPECT_EQ(jit::stats().interpreted_runs, before.interpreted_runs + 1);
  // A short region is built.
  auto g = [](const Array& v) {
    Array y = v;
    for (int i = 0; i < 20; ++i) y = y * 0.999f + 0.001f;
    return y;
  };
  EXPECT_EQ(bits_of(compile(g)(x)), bits_of(g(x)));
  EXPECT_EQ(jit::stats().compiled, before.compiled + 1);
  jit_detail::reset_for_tests("", "");
  std::filesystem::remove_all(dir);
}
