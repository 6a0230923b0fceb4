// Random arguments to the op constructors: every call gives a valid array or
// a failed one, never a crash (run under the sanitizer build in CI).
#include <gtest/gtest.h>

#include <random>

#include <nuvec/nuvec.h>

#include "../fuzz/fuzz_ops_extreme.h"

using namespace nuvec;

namespace {

struct Fuzzer {
  std::mt19937 rng{12345};
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  int dim() {
    switch (pick(0, 9)) {
      case 0: return -pick(1, 3);
      case 1: return 0;
      case 2: {
        static constexpr int huge[] = {1 << 30, 2147483647, 65536, 715827883};
        return huge[pick(0, 3)];
      }
      default: return pick(1, 4);
    }
  }
  Shape shape() {
    Shape s(static_cast<size_t>(pick(0, 4)));
    for (int& d : s) d = pick(0, 8) == 0 ? dim() : pick(0, 4);
    return s;
  }
  std::vector<int> axes() {
    std::vector<int> a(static_cast<size_t>(pick(0, 3)));
    for (int& x : a) x = pick(-6, 6);
    return a;
  }
  DType dtype() { return DType(static_cast<DType::Val>(pick(0, DType::count - 1))); }
  Array array_of_dtype() {
    Shape s;
    for (int i = pick(0, 3); i > 0; --i) s.push_back(pick(1, 3));
    return ops::ones(s, dtype());
  }
};

// Evaluates when the graph is valid and small; a failed array must throw.
void settle(const Array& a) {
  if (a.is_failed()) {
    EXPECT_THROW(a.eval(), Error);
    return;
  }
  if (a.size() <= 4096) {
    try {
      a.eval();
    } catch (const Error&) {  // eval-time failures are allowed, crashes are not
    }
  }
}

}  // namespace

TEST(Fuzz, OpConstructorsNeverCrash) {
  Fuzzer f;
  for (int iter = 0; iter < 1500; ++iter) {
    Array x = f.array_of_dtype();
    Array y = f.array_of_dtype();
    switch (f.pick(0, 31)) {
      case 0: settle(ops::reshape(x, f.shape())); break;
      case 1: settle(ops::zeros(f.shape(), f.dtype())); break;
      case 2: settle(ops::sum(x, Axes(f.axes()), f.pick(0, 1))); break;
      case 3: settle(ops::transpose(x, f.axes())); break;
      case 4: settle(ops::broadcast_to(x, f.shape())); break;
      case 5: settle(ops::add(x, y)); break;
      case 6: settle(ops::matmul(x, y)); break;
      case 7: settle(ops::argmax(x, f.pick(-5, 5))); break;
      case 8: settle(ops::squeeze(x, Axes(f.axes()))); break;
      case 9: settle(ops::expand_dims(x, Axes(f.axes()))); break;
      case 10: settle(ops::astype(x, f.dtype()).exp()); break;
      case 11: settle(ops::view(x, f.dtype())); break;
      case 12: settle(ops::slice(x, f.axes(), f.axes(), f.axes())); break;
      case 13: settle(ops::var(x, Axes(f.axes()), false, f.pick(-2, 3))); break;
      case 14: settle(ops::arange(f.pick(-5, 5), f.pick(-5, 5), f.pick(-2, 2))); break;
      case 15: settle(ops::sort(x, f.pick(-5, 5))); break;
      case 16: settle(ops::cumsum(x, f.pick(-5, 5), f.pick(0, 1) == 1, f.pick(0, 1) == 1)); break;
      case 17: settle(ops::partition(x, f.pick(-5, 5), f.pick(-5, 5))); break;
      case 18: settle(ops::concatenate({x, y}, f.pick(-5, 5))); break;
      case 19: settle(ops::take(x, ops::astype(y, int32), f.pick(-5, 5))); break;
      case 20: settle(x.i(f.pick(-5, 5), slice(f.pick(-5, 5), f.pick(-5, 5), f.pick(-3, 3)))); break;
      case 21: settle(x.at(ops::astype(y, int32)).add(y)); break;
      case 22: settle(ops::topk(x, f.pick(-2, 5), f.pick(-5, 5))); break;
      case 23: settle(random::uniform(f.shape(), f.dtype(), random::key(f.pick(0, 9)))); break;
      case 24: settle(ops::split(x, f.pick(-2, 4), f.pick(-5, 5)).at(0)); break;
      case 25: settle(ops::conv1d(x, y, f.pick(-1, 2), f.pick(-1, 2), f.pick(-1, 2), f.pick(-1, 2))); break;
      case 26: settle(ops::pad(x, f.pick(-2, 2))); break;
      case 27: settle(ops::diagonal(x, f.pick(-3, 3), f.pick(-3, 3), f.pick(-3, 3))); break;
      case 28: settle(ops::einsum(f.pick(0, 1) ? "ij,jk->ik" : "ii->i", {x, y})); break;
      case 29: settle(linalg::inv(x)); break;
      case 30: settle(ops::tensordot(x, y, f.pick(-1, 3))); break;
      default: settle(ops::searchsorted(x, y)); break;
    }
  }
}

// The same ops at extreme sizes (fuzz/fuzz_ops_extreme.h): dimensions and
// products near 2^31, 2^32, 2^62, 2^64 / itemsize and 2^64, zeros next to
// huge dimensions, arguments near INT_MIN and INT_MAX. Each result is
// evaluated under a 16 MiB memory limit, where a refused allocation passes.
TEST(Fuzz, ExtremeSizesNeverCrashOrWrap) {
  struct Seeded {
    std::mt19937 rng{2026};
    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  } src;
  size_t old_limit = set_memory_limit(size_t(16) << 20);
  fuzz::ExtremeOps<Seeded> ops_at_extremes(src);
  for (int iter = 0; iter < 20000; ++iter) {
    ops_at_extremes.run_one();
    ASSERT_EQ(ops_at_extremes.fault(), "") << "iteration " << iter;
  }
  set_memory_limit(old_limit);
  // All three endings were reached, many times each: refused at build,
  // evaluated, refused by the memory limit.
  const auto& n = ops_at_extremes.counts();
  EXPECT_GT(n.failed, 2000);
  EXPECT_GT(n.evaluated, 2000);
  EXPECT_GT(n.refused, 200);
}
