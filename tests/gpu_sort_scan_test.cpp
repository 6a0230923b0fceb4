// The GPU's sorts, partitions and scans against the CPU (src/backend/cuda/
// sort.cu, scan.cu): every dtype, short, long and many rows, any axis,
// transposed and reversed (negative-stride) inputs, with ties, signed zeros,
// infinities and NaNs. Sort, ArgSort and every scan give the CPU's bits;
// the partitions are checked for the partition property (any valid
// partition is allowed). Skipped where no GPU is present (CI).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "support/gpu.h"
#include <nuvec/kernels/functors.h>
#include <nuvec/nuvec.h>

using namespace nuvec;
using namespace nuvec::testing;

namespace {


// Values of dtype `dt`: many ties (small integers), normal values and, one
// in `special` (0: never), a NaN, a signed zero or an infinity.
Array values(const Shape& shape, DType dt, unsigned seed, int special = 8) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 3.0);
  const double inf = std::numeric_limits<double>::infinity();
  const double specials[] = {std::nan(""), -0.0, 0.0, inf, -inf};
  auto draw = [&]() -> double {
    if (special > 0 && rng() % special == 0) return specials[rng() % 5];
    return rng() % 2 ? double(int(rng() % 7) - 3) : normal(rng);
  };
  size_t n = static_cast<size_t>(shape_size(shape));
  if (dt == complex64) {
    std::vector<complex64_t> v(n);
    for (auto& z : v) z = complex64_t(float(draw()), float(rng() % 2 ? 1.0 : draw()));
    return array(v, shape);
  }
  std::vector<double> v(n);
  for (auto& e : v) e = draw();
  return ops::astype(array(v, shape), dt, kCpu);
}

// An input and the axes to run along. Layouts: dense, transposed, and every
// other element backwards along the last axis (a negative stride, an offset).
struct Case {
  std::string name;
  std::function<Array(DType, unsigned)> make;
  std::vector<int> axes;
};

Case dense(Shape s, std::vector<int> axes, int special = 8) {
  std::string name = "dense " + std::to_string(s.size()) + "-d " + std::to_string(shape_size(s));
  return {name, [=](DType dt, unsigned seed) { return values(s, dt, seed, special); }, axes};
}
Case transposed(Shape s, std::vector<int> axes) {
  return {"transposed", [=](DType dt, unsigned seed) {
            return ops::transpose(values({s[1], s[0]}, dt, seed), kCpu);
          },
          axes};
}
Case backwards(Shape s, std::vector<int> axes, int special = 8) {
  return {"backwards", [=](DType dt, unsigned seed) {
            return values({s[0], 2 * s[1]}, dt, seed, special).i(slice(), slice({}, {}, -2));
          },
          axes};
}

std::vector<Case> sort_cases() {
  return {dense({1}, {0}),          dense({7}, {0}),          dense({1000}, {0}),
          dense({64, 7}, {0, 1}),   dense({4, 33, 5}, {0, 1, 2}), dense({20000, 7}, {1}),
          transposed({37, 129}, {0, 1}), backwards({50, 301}, {0, 1}),
          dense({0}, {0}),          dense({3, 0}, {0, 1}),    dense({0, 4}, {1})};
}

std::string label(const std::string& op, DType dt, const Case& c, int axis) {
  return op + " " + std::string(dtype_name(dt)) + " " + c.name + " axis " + std::to_string(axis);
}

}  // namespace

TEST(GpuSortScan, SortAndArgSortMatchTheCpu) {
  NUVEC_GPU_REQUIRED();
  unsigned seed = 1;
  for (DType dt : kDtypes)
    for (const auto& c : sort_cases()) {
      Array x = c.make(dt, seed++);
      for (int axis : c.axes) {
        expect_same([&](StreamOrDevice s) { return ops::sort(x, axis, s); }, label("sort", dt, c, axis));
        expect_same([&](StreamOrDevice s) { return ops::argsort(x, axis, s); }, label("argsort", dt, c, axis));
      }
    }
}

TEST(GpuSortScan, LongRowsSortLikeTheCpu) {
  NUVEC_GPU_REQUIRED();
  // One row of 2^20 and a few long rows (one device-wide sort per row), a
  // long strided axis, and many rows (the segmented sort).
  // (Rows of an odd length start at unaligned addresses in the scratch.)
  std::vector<Case> cases = {dense({1 << 20}, {0}), dense({3, 65539}, {1}), transposed({1 << 17, 3}, {0}),
                             dense({1 << 14, 64}, {1})};
  for (DType dt : {float32, float16, float64, int64, bool_, complex64})
    for (size_t i = 0; i < cases.size(); ++i) {
      if (i >= 2 && dt != float32) continue;  // the CPU's sorts take most of the time
      const Case& c = cases[i];
      Array x = c.make(dt, 7);
      for (int axis : c.axes) {
        expect_same([&](StreamOrDevice s) { return ops::sort(x, axis, s); }, label("sort", dt, c, axis));
        expect_same([&](StreamOrDevice s) { return ops::argsort(x, axis, s); }, label("argsort", dt, c, axis));
      }
    }
}

namespace {

// Every row of `p` (values, the axis moved last) is partitioned at kth:
// nothing before it orders after it, nothing after it orders before it
// (NaN after every number).
void expect_partitioned(const Array& p, int axis, int kth, const std::string& what) {
  Array rows = ops::moveaxis(p, axis, -1, kCpu);
  int64_t n = rows.shape().back();
  if (n == 0) return;
  dispatch_dtype(p.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto less = [](T a, T b) {
      if (kernels::any_nan(a)) return false;
      if (kernels::any_nan(b)) return true;
      return kernels::less_than(a, b);
    };
    auto v = rows.to_vector<T>();
    for (size_t r = 0; r < v.size(); r += static_cast<size_t>(n)) {
      auto at = [&](int64_t i) { return T(v[r + static_cast<size_t>(i)]); };  // v may be vector<bool>
      for (int64_t i = 0; i < n; ++i) {
        bool ok = i < kth ? !less(at(kth), at(i)) : i > kth ? !less(at(i), at(kth)) : true;
        if (!ok) {
          ADD_FAILURE() << what << ": row " << r / n << " element " << i << " breaks the partition";
          return;
        }
      }
    }
  });
}

// Every row of `idx` (the axis moved last) is a permutation of 0 .. n-1.
void expect_permutations(const Array& idx, int axis, const std::string& what) {
  Array rows = ops::moveaxis(idx, axis, -1, kCpu);
  int64_t n = rows.shape().back();
  auto v = rows.to_vector<uint32_t>();
  for (size_t r = 0; r < v.size(); r += static_cast<size_t>(n)) {
    std::vector<char> seen(static_cast<size_t>(n), 0);
    for (int64_t i = 0; i < n; ++i) {
      uint32_t k = v[r + i];
      if (k >= n || seen[k]++) {
        ADD_FAILURE() << what << ": row " << r / n << " is not a permutation";
        return;
      }
    }
  }
}

}  // namespace

TEST(GpuSortScan, PartitionsArePartitions) {
  NUVEC_GPU_REQUIRED();
  std::vector<Case> cases = {dense({7}, {0}), dense({1000}, {0}), dense({64, 7}, {0, 1}),
                             transposed({37, 129}, {0, 1}), backwards({50, 301}, {1}), dense({1 << 20}, {0})};
  unsigned seed = 100;
  for (DType dt : kDtypes)
    for (const auto& c : cases) {
      Array x = c.make(dt, seed++);
      if (x.size() > 100000 && !(dt == float32 || dt == int16 || dt == complex64)) continue;
      for (int axis : c.axes) {
        int n = x.shape()[axis];
        for (int kth : {0, n / 2, n - 1, -1}) {
          if (x.size() > 100000 && kth != n / 2) continue;  // (time)
          std::string what = label("partition kth " + std::to_string(kth), dt, c, axis);
          int k = kth < 0 ? kth + n : kth;
          auto pv = run_both([&](StreamOrDevice s) { return ops::partition(x, kth, axis, s); }, what);
          if (!pv) continue;
          expect_partitioned(pv->second, axis, k, what);
          // The same values as the input (sorted, compared by value).
          EXPECT_TRUE(ops::array_equal(ops::sort(pv->second, axis, kCpu), ops::sort(x, axis, kCpu), true, kCpu)
                          .item<bool>())
              << what;
          auto pi = run_both([&](StreamOrDevice s) { return ops::argpartition(x, kth, axis, s); }, "arg" + what);
          if (!pi) continue;
          expect_permutations(pi->second, axis, "arg" + what);
          expect_partitioned(ops::take_along_axis(x, pi->second, axis, kCpu), axis, k, "arg" + what);
        }
      }
    }
}

namespace {

using ScanFn = Array (*)(const Array&, int, bool, bool, StreamOrDevice);

const std::pair<const char*, ScanFn> kScans[] = {
    {"cumsum", [](const Array& x, int a, bool r, bool i, StreamOrDevice s) { return ops::cumsum(x, a, r, i, s); }},
    {"cumprod", [](const Array& x, int a, bool r, bool i, StreamOrDevice s) { return ops::cumprod(x, a, r, i, s); }},
    {"cummax", [](const Array& x, int a, bool r, bool i, StreamOrDevice s) { return ops::cummax(x, a, r, i, s); }},
    {"cummin", [](const Array& x, int a, bool r, bool i, StreamOrDevice s) { return ops::cummin(x, a, r, i, s); }},
    {"logcumsumexp",
     [](const Array& x, int a, bool r, bool i, StreamOrDevice s) { return ops::logcumsumexp(x, a, r, i, s); }},
};

void expect_scans_same(const Array& x, int axis, const std::string& what, const char* only = nullptr) {
  for (const auto& [name, f] : kScans) {
    if (only && std::string(only) != name) continue;
    for (bool reverse : {false, true})
      for (bool inclusive : {true, false}) {
        expect_same([&, f = f](StreamOrDevice s) { return f(x, axis, reverse, inclusive, s); },
                    what + " " + name + (reverse ? " reverse" : "") + (inclusive ? "" : " exclusive"));
      }
  }
}

}  // namespace

TEST(GpuSortScan, ScansMatchTheCpu) {
  NUVEC_GPU_REQUIRED();
  // Short rows, rows along a middle or first axis (several lanes per row
  // block), and few rows of 5000 (the chunked path of associative scans).
  std::vector<Case> cases = {dense({1}, {0}),        dense({7}, {0}),          dense({33, 1000}, {0, 1}),
                             dense({4, 33, 5}, {0, 1, 2}), transposed({37, 129}, {0, 1}),
                             dense({2, 5000}, {1}, 64), dense({5000, 3}, {0}, 64), backwards({3, 4500}, {1}, 64),
                             dense({0, 5}, {0, 1})};
  unsigned seed = 200;
  for (DType dt : kDtypes)
    for (const auto& c : cases) {
      Array x = c.make(dt, seed++);
      for (int axis : c.axes) expect_scans_same(x, axis, label("", dt, c, axis));
    }
}

TEST(GpuSortScan, LongScansMatchTheCpu) {
  NUVEC_GPU_REQUIRED();
  // One row of 2^20: chunked for integer sums and products and for max and
  // min, one sequential thread for floating sums, products and logaddexp.
  const Shape s{1 << 20};
  expect_scans_same(values(s, int32, 1, 0), 0, "int32 2^20");
  expect_scans_same(values(s, uint8, 2, 0), 0, "uint8 2^20", "cumprod");
  expect_scans_same(values(s, bool_, 3, 0), 0, "bool 2^20", "cumsum");
  expect_scans_same(values(s, float16, 4, 1000), 0, "float16 2^20", "cummax");
  expect_scans_same(values(s, float32, 5, 1000), 0, "float32 2^20", "cummin");
  expect_scans_same(values(s, float32, 6, 0), 0, "float32 2^20", "cumsum");
  expect_scans_same(values(s, complex64, 7, 0), 0, "complex64 2^20", "cummax");
  expect_scans_same(values({4, 1 << 18}, float64, 8, 0), 1, "float64 4 x 2^18", "logcumsumexp");
}
