// The CPU reduction contract (pinned to the CPU: on the GPU the bits are the
// same run to run but depend on the layout and the batch, docs/gpu-status.md): the bits of each output element depend only on
// its own row (length, dtype, element order), never on how many other rows
// are reduced with it, on the layout (contiguous, transposed view, reversed,
// offset) or on the thread count. Lengths straddle the kernel's thresholds:
// 16 interleaved accumulators, blocks of 2^16 combined in a tree.
#include <gtest/gtest.h>
#include <nuvec/nuvec.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "support/cpu_default.h"

using namespace nuvec;

namespace {

// One reduction: over `axes`, or over all axes when absent.
struct Reduction {
  const char* name;
  std::function<Array(const Array&, const std::optional<Axes>&)> f;
  bool near_one = false;  // wants values near 1 (products)
};

#define NUVEC_RED(name, expr)                                               \
  [](const Array& x, const std::optional<Axes>& ax) {                       \
    return ax ? ops::expr(x, *ax) : ops::expr(x);                           \
  }

std::vector<Reduction> reductions() {
  return {
      {"sum", NUVEC_RED(sum, sum)},
      {"prod", NUVEC_RED(prod, prod), true},
      {"max", NUVEC_RED(max, max)},
      {"min", NUVEC_RED(min, min)},
      {"mean", NUVEC_RED(mean, mean)},
      {"var", NUVEC_RED(var, var)},
      {"logsumexp", NUVEC_RED(logsumexp, logsumexp)},
      {"any", [](const Array& x, const std::optional<Axes>& ax) {
         Array b = ops::greater(x, 0);
         return ax ? ops::any(b, *ax) : ops::any(b);
       }},
  };
}
#undef NUVEC_RED

// The raw bits of each element (NaNs and signed zeros compare exactly).
std::vector<uint64_t> bits(const Array& a) {
  DType u = a.itemsize() == 1 ? uint8 : a.itemsize() == 2 ? uint16 : a.itemsize() == 4 ? uint32 : uint64;
  return a.copy().view(u).to_vector<uint64_t>();
}

// A (rows, n) array: normal values (or near 1 for products) of `dtype`.
Array make(DType dtype, int rows, int n, bool near_one, uint64_t seed) {
  Array k = random::key(seed);
  Array x;
  if (dtype == int32)  // products of +-1 stay meaningful at any length
    x = near_one ? ops::subtract(ops::multiply(random::randint(0, 2, {rows, n}, int32, k), 2), 1)
                 : random::randint(-50, 50, {rows, n}, int32, k);
  else if (near_one)
    x = ops::astype(ops::add(ops::multiply(random::normal({rows, n}, k), 1e-3), 1.0), dtype);
  else
    x = ops::astype(random::normal({rows, n}, k), dtype);
  return x.eval();
}

std::string label(const char* op, DType dt, int n, const char* layout) {
  return std::string(op) + " " + std::string(dtype_name(dt)) + " n=" + std::to_string(n) + " " + layout;
}

// Each row of f over axis 1 of x, over axis 0 of x.T (a copy and a view) and
// over axis 1 of a reversed view, against the row reduced alone.
void check_rows(DType dt) {
  nuvec::testing::CpuDefault cpu_default;
  for (int n : {1, 7, 4096, 65535, 65536, 65537, 100000, 300001}) {
    // Many rows for short lengths (several gathered tiles of 16 rows), a few
    // for long ones (whose blocks are then split between threads).
    int rows = n <= 4096 ? 37 : 3;
    for (const Reduction& r : reductions()) {
      Array x = make(dt, rows, n, r.near_one, 7 + static_cast<uint64_t>(n));
      Array rev = x.i(slice(), slice({}, {}, -1));
      std::vector<uint64_t> batched = bits(r.f(x, Axes{1}));
      std::vector<uint64_t> tcopy = bits(r.f(x.transpose().copy(), Axes{0}));
      std::vector<uint64_t> tview = bits(r.f(x.transpose(), Axes{0}));
      std::vector<uint64_t> reversed = bits(r.f(rev, Axes{1}));
      ASSERT_EQ(batched.size(), static_cast<size_t>(rows));
      for (int b = 0; b < rows; ++b) {
        uint64_t alone = bits(r.f(x.i(b), std::nullopt))[0];
        ASSERT_EQ(batched[b], alone) << label(r.name, dt, n, "x.sum(1)") << " row " << b;
        ASSERT_EQ(tcopy[b], alone) << label(r.name, dt, n, "copy of x.T, axis 0") << " row " << b;
        ASSERT_EQ(tview[b], alone) << label(r.name, dt, n, "view x.T, axis 0") << " row " << b;
        uint64_t rev_alone = bits(r.f(rev.i(b).copy(), std::nullopt))[0];
        ASSERT_EQ(reversed[b], rev_alone) << label(r.name, dt, n, "reversed view") << " row " << b;
      }
    }
  }
}

TEST(ReduceDeterminism, Float32RowsMatchAlone) { check_rows(float32); }
TEST(ReduceDeterminism, Float16RowsMatchAlone) { check_rows(float16); }
TEST(ReduceDeterminism, BFloat16RowsMatchAlone) { check_rows(bfloat16); }
TEST(ReduceDeterminism, Float64RowsMatchAlone) { check_rows(float64); }
TEST(ReduceDeterminism, Int32RowsMatchAlone) { check_rows(int32); }

// The case the vmap tests found: one row of 100000 floats alone and in a
// batch went through different kernels.
TEST(ReduceDeterminism, OneOutputAndManyOutputsAgree) {
  nuvec::testing::CpuDefault cpu_default;
  Array x = make(float32, 4, 100000, false, 1);
  Array batched = ops::sum(x, Axes{1});
  for (int b = 0; b < 4; ++b)
    EXPECT_EQ(bits(ops::sum(x.i(b)))[0], bits(batched)[b]) << "row " << b;
}

// Reducing several axes: a row is the reduced elements in row-major order of
// those axes as they appear in the array (the logical order, whatever the
// strides), the same as reshaping them into one axis.
TEST(ReduceDeterminism, SeveralAxesFollowLogicalOrder) {
  nuvec::testing::CpuDefault cpu_default;
  const int rows = 3, p = 300, q = 301;  // p * q spans two blocks
  for (DType dt : {float32, float16}) {
    Array x = make(dt, rows * p, q, false, 11).reshape({rows, p, q});
    for (const Reduction& r : reductions()) {
      SCOPED_TRACE(std::string(r.name) + " " + std::string(dtype_name(dt)));
      // y's rows run over (q, p): a transposed view inside each row.
      Array y = x.transpose({0, 2, 1});
      std::vector<uint64_t> xs = bits(r.f(x, Axes{1, 2}));
      std::vector<uint64_t> xflat = bits(r.f(x.reshape({rows, p * q}), Axes{1}));
      std::vector<uint64_t> xlast = bits(r.f(x.transpose({1, 2, 0}), Axes{0, 1}));
      std::vector<uint64_t> ys = bits(r.f(y, Axes{1, 2}));
      std::vector<uint64_t> yflat = bits(r.f(y.copy().reshape({rows, p * q}), Axes{1}));
      std::vector<uint64_t> ylast = bits(r.f(y.transpose({1, 2, 0}).copy(), Axes{0, 1}));
      for (int b = 0; b < rows; ++b) {
        uint64_t alone = bits(r.f(x.i(b), std::nullopt))[0];
        EXPECT_EQ(xs[b], alone) << "row " << b;
        EXPECT_EQ(xflat[b], alone) << "row " << b;
        EXPECT_EQ(xlast[b], alone) << "row " << b;
        uint64_t y_alone = bits(r.f(y.i(b), std::nullopt))[0];  // a full reduction of a view
        EXPECT_EQ(y_alone, bits(r.f(y.i(b).copy().reshape({-1}), std::nullopt))[0]) << "row " << b;
        EXPECT_EQ(ys[b], y_alone) << "row " << b;
        EXPECT_EQ(yflat[b], y_alone) << "row " << b;
        EXPECT_EQ(ylast[b], y_alone) << "row " << b;
      }
    }
  }
}

// Rows that start at odd element offsets (unaligned) give the bits of an
// aligned copy.
TEST(ReduceDeterminism, OffsetRowsMatchAlignedCopies) {
  nuvec::testing::CpuDefault cpu_default;
  const int rows = 5, n = 70001;
  Array x = make(float32, rows, n + 3, false, 5);
  Array v = x.i(slice(), slice(3, {}));
  std::vector<uint64_t> s = bits(ops::sum(v, Axes{1}));
  for (int b = 0; b < rows; ++b) EXPECT_EQ(s[b], bits(ops::sum(v.i(b).copy()))[0]) << "row " << b;
}

}  // namespace
