// Property test of compile: random graphs of element-wise operations (every
// unary and binary op, casts, select, scalar constants, several outputs;
// and reductions over trailing axes among them)
// over random shapes, layouts (broadcast, transposed, strided) and dtypes.
// Compiled results equal uncompiled ones bit for bit (NaN payloads aside),
// shaped and shapeless, through the interpreter (many cases) and through
// generated kernels (batches of cases in one trace, so one compiler run
// each). The seeds are a fixed one and one that changes daily; a failure
// prints both the seed and the program.
#include <gtest/gtest.h>

#include "compile/jit.h"
#include "support/programs.h"
#include <nuvec/compile.h>

using namespace nuvec;
using namespace nuvec::testing;

namespace {

// Through the interpreter: one compiled function per case, shaped and
// shapeless.
void interpreted_cases(uint32_t seed, int count, bool reductions = false) {
  jit::Mode saved = jit::mode();
  jit::set_mode(jit::Mode::off);
  std::mt19937 rng(seed);
  auto before = jit::stats();
  size_t ops = 0;
  for (int i = 0; i < count; ++i) {
    Case c = random_case(rng, i, reductions);
    SCOPED_TRACE("seed " + std::to_string(seed) + " case " + std::to_string(i) + ":" + c.program.text);
    auto eager = run(c.program, c.inputs);
    ops += c.program.ops.size();
    FlatFunction f = [p = c.program](const Arrays& in) { return run(p, in); };
    std::string why;
    EXPECT_TRUE(same_bits(eager, compile_flat(f)(c.inputs), why)) << why;
    EXPECT_TRUE(same_bits(eager, compile_flat_with({.shapeless = true}, f)(c.inputs), why)) << why;
    if (::testing::Test::HasFailure()) break;
  }
  // The cases exercise fusion: most of them run at least one region.
  EXPECT_GT(jit::stats().interpreted_runs - before.interpreted_runs, static_cast<uint64_t>(count));
  EXPECT_GT(ops, static_cast<size_t>(count) * 3);
  jit::set_mode(saved);
}

// Through generated kernels: `count` cases traced as one function, so
// their regions share one shared object.
void generated_cases(uint32_t seed, int count, bool reductions = false) {
  jit::Mode saved = jit::mode();
  jit::set_mode(jit::Mode::sync);
  Batch b = batch(seed, count, 1000, reductions);
  SCOPED_TRACE("seed " + std::to_string(seed) + b.text);
  auto eager = b.f()(b.inputs);
  auto before = jit::stats();
  std::string why;
  EXPECT_TRUE(same_bits(eager, compile_flat(b.f())(b.inputs), why)) << why;
  EXPECT_GT(jit::stats().generated_runs, before.generated_runs);
  EXPECT_EQ(jit::stats().failures, before.failures) << jit::unavailable_reason();
  jit::set_mode(saved);
}

}  // namespace

TEST(CompileProperty, InterpretedFixedSeed) { interpreted_cases(20261129, 3000); }
TEST(CompileProperty, InterpretedDailySeed) { interpreted_cases(daily_seed(), 1000); }
TEST(CompileProperty, GeneratedFixedSeed) {
  for (uint32_t s : {11u, 12u}) generated_cases(s, 25);
}
TEST(CompileProperty, GeneratedDailySeed) { generated_cases(daily_seed() * 3 + 1, 25); }

// With reductions over trailing axes among the steps (fused into rows:
// FusedReduce), on larger shapes.
TEST(CompileProperty, ReductionsInterpretedFixedSeed) { interpreted_cases(20261202, 800, true); }
TEST(CompileProperty, ReductionsInterpretedDailySeed) { interpreted_cases(daily_seed() + 7, 300, true); }
TEST(CompileProperty, ReductionsGeneratedFixedSeed) {
  for (uint32_t s : {21u, 22u}) generated_cases(s, 25, true);
}
TEST(CompileProperty, ReductionsGeneratedDailySeed) { generated_cases(daily_seed() * 5 + 2, 25, true); }
