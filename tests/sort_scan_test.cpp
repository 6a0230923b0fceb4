// Sorting, scans and joins beyond the MLX reference file: error details
// (op name, kind, message, caller's line), rows long enough for the
// parallel merge path, the partition property, and scans along a middle
// axis wider than one lane chunk. Expected values come from std:: algorithms
// or hand loops, never from nuvec.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <nuvec/nuvec.h>

namespace nuvec {
namespace {

void expect_error(const Array& a, const char* op, ErrorKind kind, const char* needle, int line) {
  ASSERT_TRUE(a.is_failed());
  const Error* e = a.error();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->op_name().value_or(""), op);
  EXPECT_EQ(e->kind(), kind) << e->message();
  EXPECT_NE(e->message().find(needle), std::string::npos) << e->message();
  EXPECT_EQ(e->line(), line);
}

TEST(SortScan, InvalidCallsGiveFailedArrays) {
  Array x = ops::zeros({2, 3});
  int line = __LINE__ + 1;
  expect_error(ops::sort(x, 2), "sort", ErrorKind::invalid_axis, "axis 2", line);
  line = __LINE__ + 1;
  expect_error(ops::partition(x, 3, 1), "partition", ErrorKind::out_of_range, "kth 3", line);
  line = __LINE__ + 1;
  expect_error(ops::argpartition(x, -4, 1), "argpartition", ErrorKind::out_of_range, "kth -4", line);
  line = __LINE__ + 1;
  expect_error(ops::topk(x, 4, 1), "topk", ErrorKind::out_of_range, "k 4", line);
  line = __LINE__ + 1;
  expect_error(ops::cumsum(x, -3), "cumsum", ErrorKind::invalid_axis, "axis -3", line);
  line = __LINE__ + 1;
  expect_error(ops::concatenate({x, ops::zeros({3, 2})}, 0), "concatenate", ErrorKind::shape_mismatch,
               "(2, 3)", line);
  line = __LINE__ + 1;
  expect_error(ops::concatenate({}, 0), "concatenate", ErrorKind::invalid_argument, "no arrays", line);
  line = __LINE__ + 1;
  auto parts = ops::split(x, 2, 1);
  ASSERT_EQ(parts.size(), 1u);
  expect_error(parts[0], "split", ErrorKind::invalid_argument, "size 3", line);
  line = __LINE__ + 1;
  expect_error(ops::stack({x, ops::zeros({3})}), "stack", ErrorKind::shape_mismatch, "same shape", line);
  line = __LINE__ + 1;
  expect_error(ops::repeat(x, -1, 0), "repeat", ErrorKind::invalid_argument, "-1", line);
  line = __LINE__ + 1;
  expect_error(ops::tril(ops::zeros({3})), "tril", ErrorKind::invalid_shape, "2-D", line);
  line = __LINE__ + 1;
  expect_error(ops::roll(x, Shape{1}, {0, 1}), "roll", ErrorKind::invalid_argument, "1 shifts", line);
  // A failed input passes through unchanged.
  Array bad = ops::sort(x, 5);
  EXPECT_EQ(ops::cumsum(ops::argsort(bad)).error()->op_name().value_or(""), "sort");
}

std::vector<float> random_with_nans(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-50, 50);  // many ties
  std::vector<float> v(n);
  for (float& f : v) f = static_cast<float>(d(gen));
  for (int i = 0; i < n; i += 97) v[i] = NAN;
  return v;
}

bool nan_less(float a, float b) { return !std::isnan(a) && (std::isnan(b) || a < b); }

TEST(SortScan, LongRowsSortStably) {
  const int n = 300000;  // above the parallel chunked path's threshold
  auto v = random_with_nans(n, 7);
  Array x = array<float>(v.data(), {n});
  std::vector<uint32_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0u);
  std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return nan_less(v[a], v[b]); });
  EXPECT_EQ(ops::argsort(x).to_vector<uint32_t>(), idx);
  auto sorted = ops::sort(x).to_vector<float>();
  for (int i = 0; i < n; ++i) {
    float want = v[idx[i]];
    ASSERT_TRUE(std::isnan(want) ? std::isnan(sorted[i]) : sorted[i] == want) << i;
  }
}

TEST(SortScan, PartitionProperty) {
  auto v = random_with_nans(1001, 11);
  Array x = array<float>(v.data(), {7, 143});
  for (int kth : {0, 5, 71, 142}) {
    auto p = ops::partition(x, kth, 1).to_vector<float>();
    auto ip = ops::argpartition(x, kth, 1).to_vector<uint32_t>();
    for (int r = 0; r < 7; ++r) {
      std::vector<float> row(v.begin() + r * 143, v.begin() + (r + 1) * 143);
      std::vector<float> s = row;
      std::sort(s.begin(), s.end(), nan_less);
      float pivot = p[r * 143 + kth];
      EXPECT_TRUE(std::isnan(s[kth]) ? std::isnan(pivot) : pivot == s[kth]);
      for (int i = 0; i < 143; ++i) {
        float a = p[r * 143 + i];
        if (i < kth) EXPECT_FALSE(nan_less(pivot, a));
        if (i > kth) EXPECT_FALSE(nan_less(a, pivot));
        float b = row[ip[r * 143 + i]];
        if (i < kth) EXPECT_FALSE(nan_less(pivot, b));
        if (i > kth) EXPECT_FALSE(nan_less(b, pivot));
      }
    }
  }
}

TEST(SortScan, ScanAlongMiddleAxisOfWideArray) {
  const int a = 3, n = 5, inner = 600;  // inner spans several lane chunks
  std::vector<int32_t> v(a * n * inner);
  std::iota(v.begin(), v.end(), -4000);
  Array x = ops::transpose(array<int32_t>(v.data(), {a, n, inner}), {0, 1, 2});
  auto got = ops::cumsum(x, 1, true, false).to_vector<int32_t>();
  for (int o = 0; o < a; ++o)
    for (int i = 0; i < inner; ++i) {
      int32_t acc = 0;
      for (int k = n - 1; k >= 0; --k) {
        size_t at = (size_t(o) * n + k) * inner + i;
        ASSERT_EQ(got[at], acc) << o << " " << k << " " << i;
        acc += v[at];
      }
    }
}

TEST(SortScan, SplitGivesViews) {
  Array x = ops::arange(12);
  auto parts = ops::split(x, std::vector<int>{3, 7});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].to_vector<int32_t>(), (std::vector<int32_t>{3, 4, 5, 6}));
  EXPECT_EQ(parts[2].shape(), Shape{5});
}

}  // namespace
}  // namespace nuvec
