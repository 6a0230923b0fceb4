// Fusion into reductions (docs/compile.md, "Fusion into reductions"):
// hand-written softmax, normalizations, norms and losses compile into one
// FusedReduce step over rows, whose results equal the uncompiled graph's
// bit for bit: through the interpreter and the generated kernels, every
// layout, 16-bit and 32-bit floats, short rows, rows past the reductions'
// groups and blocks, and gradients.
#include <gtest/gtest.h>

#include "compile/jit.h"
#include "support/bits.h"
#include <nuvec/compile.h>
#include <nuvec/nuvec.h>

using namespace nuvec;
using namespace nuvec::testing;

namespace {

using Fn = std::function<Array(const Array&)>;

struct Named {
  const char* name;
  Fn f;
};

std::vector<Named> row_functions() {
  return {
      {"softmax",
       [](const Array& x) {
         Array e = ops::exp(x - ops::max(x, {-1}, true));
         return e / ops::sum(e, {-1}, true);
       }},
      {"log_softmax", [](const Array& x) {
         Array m = ops::max(x, {-1}, true);
         return x - m - ops::log(ops::sum(ops::exp(x - m), {-1}, true));
       }},
      {"rms_norm",
       [](const Array& x) {
         Array xf = ops::astype(x, float32);
         return ops::astype(xf * ops::rsqrt(ops::mean(ops::square(xf), {-1}, true) + 1e-5f), x.dtype());
       }},
      {"layer_norm (mean, then variance)",
       [](const Array& x) {
         Array mu = ops::mean(x, {-1}, true);
         Array c = x - mu;
         return c * ops::rsqrt(ops::mean(c * c, {-1}, true) + 1e-5f);
       }},
      {"sum of squares (all axes)", [](const Array& x) { return ops::sum(x * x); }},
      {"max of abs over the last two axes", [](const Array& x) { return ops::max(ops::abs(x), {-2, -1}); }},
      {"norm", [](const Array& x) { return ops::sqrt(ops::sum(ops::square(ops::astype(x, float32)))); }},
  };
}

// The same values in several layouts.
std::vector<std::pair<std::string, Array>> layouts(const Shape& s, DType dt, int seed) {
  auto v = [&](const Shape& sh) { return (random::normal(sh, random::key(seed)) * 3.0f).astype(dt); };
  Shape t(s.rbegin(), s.rend()), wide = s;
  wide.back() *= 2;
  std::vector<int> start(s.size(), 0), stop(wide.begin(), wide.end()), step(s.size(), 1);
  step.back() = 2;
  Shape row(s.end() - 1, s.end());
  return {{"dense", v(s)},
          {"transposed", ops::transpose(v(t))},
          {"sliced", ops::slice(v(wide), start, stop, step)},
          {"broadcast row", ops::broadcast_to(v(row), s)}};
}

int row_regions(const GraphReport& r) {
  int n = 0;
  for (size_t p = r.text.find("FusedReduce("); p != std::string::npos; p = r.text.find("FusedReduce(", p + 1)) ++n;
  return n;
}

void check_all(jit::Mode mode, const std::vector<Shape>& shapes) {
  jit::Mode saved = jit::mode();
  jit::set_mode(mode);
  for (const auto& [name, f] : row_functions())
    for (DType dt : {float32, float16, bfloat16})
      for (const Shape& s : shapes)
        for (const auto& [layout, x] : layouts(s, dt, 3)) {
          SCOPED_TRACE(std::string(name) + " " + std::string(dtype_name(dt)) + " " + layout);
          auto c = compile(f);
          Array got = c(x);
          EXPECT_EQ(bits_of(got), bits_of(f(x)));
          // A row region whenever the rows hold more than one element.
          if (s.back() > 1) EXPECT_EQ(row_regions(c.graph(x)), 1) << c.graph(x).text;
        }
  jit::set_mode(saved);
}

}  // namespace

TEST(CompileRows, HandWrittenFunctionsInterpreted) {
  check_all(jit::Mode::off, {Shape{5, 37}, Shape{3, 4, 130}, Shape{2, 1}});
}

// One shape (each function, dtype and shape is a kernel build).
TEST(CompileRows, HandWrittenFunctionsGenerated) {
  auto before = jit::stats();
  check_all(jit::Mode::sync, {Shape{3, 4, 130}});
  EXPECT_GT(jit::stats().generated_runs, before.generated_runs);
  EXPECT_EQ(jit::stats().failures, before.failures) << jit::unavailable_reason();
}

// A whole softmax is one step: nothing else runs.
TEST(CompileRows, SoftmaxIsOneStep) {
  auto c = compile(row_functions()[0].f);
  GraphReport r = c.graph(ops::ones({4, 8}));
  EXPECT_NE(r.text.find("%0 = FusedReduce(%in0) -> float32(4, 8)"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("%1 ="), std::string::npos) << r.text;
}

// Rows longer than a reduction block (65536 elements) run stage by stage
// over (row, block) units, combined in the eager kernel's tree.
TEST(CompileRows, LongRowsMatchEager) {
  jit::Mode saved = jit::mode();
  for (jit::Mode mode : {jit::Mode::off, jit::Mode::sync}) {
    jit::set_mode(mode);
    for (const Shape& s : {Shape{3, 2 * 65536 + 77}, Shape{1, 65536 * 3 + 5}}) {
      Array x = random::normal(s, random::key(9));
      for (const auto& [name, f] : row_functions()) {
        SCOPED_TRACE(std::string(name) + " " + std::to_string(s[0]));
        EXPECT_EQ(bits_of(compile(f)(x)), bits_of(f(x)));
      }
    }
  }
  jit::set_mode(saved);
}

// The gradient-clipping norm over several arrays: each array's sum of
// squares is a region; the total is element-wise work on their results.
TEST(CompileRows, ClipNormOverManyArrays) {
  auto norm = [](const std::vector<Array>& gs) {
    Array total = array(0.0f);
    for (const auto& g : gs) total = total + ops::sum(ops::square(g));
    return ops::sqrt(total);
  };
  std::vector<Array> gs = {random::normal({64, 33}, random::key(1)), random::normal({1000}, random::key(2)),
                           random::normal({7, 5, 3}, random::key(3))};
  auto c = compile(norm);
  EXPECT_EQ(bits_of(c(gs)), bits_of(norm(gs)));
  EXPECT_EQ(row_regions(c.graph(gs)), 3) << c.graph(gs).text;
}

// Gradients: a compiled loss gradient (its backward holds reductions and
// row-wise work too) equals the uncompiled one; a transform of a compiled
// function's replay expands the region.
TEST(CompileRows, Gradients) {
  auto loss = [](const Array& x) {
    Array e = ops::exp(x - ops::max(x, {-1}, true));
    Array p = e / ops::sum(e, {-1}, true);
    return ops::sum(p * p);
  };
  Array x = random::normal({6, 19}, random::key(4));
  auto g = grad(loss);
  EXPECT_EQ(bits_of(compile(g)(x)), bits_of(g(x)));
  auto fused = compile(loss);
  Array probe = fused(x);  // a replay: its node is the FusedReduce step
  EXPECT_EQ(bits_of(probe), bits_of(loss(x)));
  EXPECT_EQ(bits_of(grad([&](const Array& v) { return compile(loss)(v); })(x)), bits_of(g(x)));
}

// Shapeless traces keep reductions as their own steps (the region's plan
// holds the traced shapes) and give the same bits.
TEST(CompileRows, ShapelessKeepsReductionsApart) {
  auto f = row_functions()[0].f;
  auto c = compile(f, CompileOptions{.shapeless = true});
  for (int rows : {3, 9}) {
    Array x = random::normal({rows, 12}, random::key(rows));
    EXPECT_EQ(bits_of(c(x)), bits_of(f(x)));
    EXPECT_EQ(row_regions(c.graph(x)), 0);
  }
}
