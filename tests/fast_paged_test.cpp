// fast::paged_write and fast::paged_attention (docs/fast.md, "Paged
// attention"): pools checked against host-side placement, attention against
// a float64 reference built on the host from the same (rounded) values, the
// solo-bits contract against scaled_dot_product_attention over contiguous
// keys, and invalid arguments as failed arrays.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "nuvec/fast.h"
#include "nuvec/nuvec.h"
#include "support/bits.h"

namespace nuvec {
namespace {

using testing::bits_of;

std::vector<float> host(const Array& a) {
  return a.astype(float32).reshape({-1}).to_vector<float>();
}

// Uniform values in [-1, 1) rounded to `dt`, and their float copy.
Array rnd(const Shape& s, DType dt, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int64_t n = 1;
  for (int d : s) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = u(g);
  return array(v, s).astype(dt);
}

// A random layout: B sequences of the given lengths in a pool of nb blocks
// of bs positions, each sequence's blocks distinct pool blocks in shuffled
// order; unused table entries are -1 (never read).
struct Layout {
  int B = 0, bs = 0, nb = 0, max_blocks = 0;
  std::vector<int> lengths;
  std::vector<int32_t> table;  // [B, max_blocks]
  Array table_array() const { return array(table, Shape{B, max_blocks}); }
  Array lengths_array() const {
    return array(std::vector<int32_t>(lengths.begin(), lengths.end()),
                 Shape{B});
  }
  int block(int b, int pos) const {
    return table[static_cast<size_t>(b * max_blocks + pos / bs)];
  }
};

Layout make_layout(const std::vector<int>& lengths, int bs, uint32_t seed,
                   int spare = 3) {
  Layout l;
  l.B = static_cast<int>(lengths.size());
  l.bs = bs;
  l.lengths = lengths;
  int total = 0;
  for (int n : lengths) {
    l.max_blocks = std::max(l.max_blocks, (n + bs - 1) / bs);
    total += (n + bs - 1) / bs;
  }
  l.max_blocks += 1;  // one unused column
  l.nb = total + spare;
  std::vector<int> ids(static_cast<size_t>(l.nb));
  std::iota(ids.begin(), ids.end(), 0);
  std::mt19937 g(seed);
  std::shuffle(ids.begin(), ids.end(), g);
  l.table.assign(static_cast<size_t>(l.B * l.max_blocks), -1);
  size_t next = 0;
  for (int b = 0; b < l.B; ++b)
    for (int j = 0; j < (lengths[b] + bs - 1) / bs; ++j)
      l.table[static_cast<size_t>(b * l.max_blocks + j)] = ids[next++];
  return l;
}

// Row b's keys [1, H, len, D] gathered on the host from a pool's values.
Array contiguous(const std::vector<float>& pool, const Shape& ps,
                 const Layout& l, int b, DType dt) {
  const int H = ps[1], bs = ps[2], D = ps[3], n = l.lengths[b];
  std::vector<float> out(static_cast<size_t>(H) * n * D);
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < n; ++t)
      for (int d = 0; d < D; ++d)
        out[(static_cast<size_t>(h) * n + t) * D + d] =
            pool[((static_cast<size_t>(l.block(b, t)) * H + h) * bs + t % bs) *
                     D +
                 d];
  return array(out, Shape{1, H, n, D}).astype(dt);
}

// float64 attention of q [1, Hq, L, D] over k/v [1, Hkv, T, D] (host values).
std::vector<double> reference(const std::vector<float>& q,
                              const std::vector<float>& k,
                              const std::vector<float>& v, int Hq, int Hkv,
                              int L, int T, int D, float scale, bool causal) {
  std::vector<double> out(static_cast<size_t>(Hq) * L * D, 0.0);
  for (int h = 0; h < Hq; ++h) {
    const int kh = h / (Hq / Hkv);
    for (int i = 0; i < L; ++i) {
      const int visible = causal ? T - L + i + 1 : T;
      std::vector<double> s(static_cast<size_t>(visible));
      double mx = -1e300;
      for (int t = 0; t < visible; ++t) {
        double dot = 0;
        for (int d = 0; d < D; ++d)
          dot += double(q[(static_cast<size_t>(h) * L + i) * D + d]) *
                 k[(static_cast<size_t>(kh) * T + t) * D + d];
        s[t] = dot * scale;
        mx = std::max(mx, s[t]);
      }
      double sum = 0;
      for (auto& x : s) sum += (x = std::exp(x - mx));
      for (int t = 0; t < visible; ++t)
        for (int d = 0; d < D; ++d)
          out[(static_cast<size_t>(h) * L + i) * D + d] +=
              s[t] / sum * v[(static_cast<size_t>(kh) * T + t) * D + d];
    }
  }
  return out;
}

TEST(FastPaged, WritePlacesEveryTokenAtItsBlockAndOffset) {
  for (DType dt : {float32, bfloat16}) {
    for (int bs : {1, 4, 16}) {
      const int H = 2, D = 8, L = 5;
      Layout l = make_layout({7, 12, 5}, bs, 3 + static_cast<uint32_t>(bs));
      const std::vector<int32_t> start = {2, 7,
                                          0};  // new tokens end at the lengths
      Shape ps{l.nb, H, bs, D};
      Array kp = rnd(ps, dt, 1), vp = rnd(ps, dt, 2);
      Array k = rnd({l.B, H, L, D}, dt, 3), v = rnd({l.B, H, L, D}, dt, 4);
      auto [k2, v2] = fast::paged_write(kp, vp, k, v, l.table_array(),
                                        array(start, Shape{l.B}));
      ASSERT_EQ(k2.shape(), ps);
      EXPECT_EQ(k2.dtype(), dt);
      // Expected: the old pool with each new token copied to its slot.
      for (auto [pool, x, got] :
           {std::tuple{kp, k, k2}, std::tuple{vp, v, v2}}) {
        auto want = host(pool), xs = host(x);
        for (int b = 0; b < l.B; ++b)
          for (int t = 0; t < L; ++t) {
            const int at = start[b] + t;
            for (int h = 0; h < H; ++h)
              for (int d = 0; d < D; ++d)
                want[((static_cast<size_t>(l.block(b, at)) * H + h) * bs +
                      at % bs) *
                         D +
                     d] =
                    xs[((static_cast<size_t>(b) * H + h) * L + t) * D + d];
          }
        EXPECT_EQ(host(got), want) << dtype_name(dt) << " bs=" << bs;
      }
      // Functional: the inputs are unchanged.
      EXPECT_EQ(host(kp), host(rnd(ps, dt, 1)));
    }
  }
}

TEST(FastPaged, AttentionMatchesFloat64AndTheSoloBits) {
  std::mt19937 g(11);
  int cases = 0;
  for (DType dt : {float32, bfloat16}) {
    for (int bs : {1, 3, 16, 32}) {
      for (auto [Hq, Hkv] :
           {std::pair{4, 2}, std::pair{2, 2}, std::pair{6, 1}}) {
        for (int L : {1, 3}) {
          const int D = 16, B = 4;
          std::uniform_int_distribution<int> len(L, 70);
          std::vector<int> lens;
          for (int b = 0; b < B; ++b) lens.push_back(len(g));
          Layout l = make_layout(lens, bs, g());
          Shape ps{l.nb, Hkv, bs, D};
          Array kp = rnd(ps, dt, g()), vp = rnd(ps, dt, g());
          Array q = rnd({B, Hq, L, D}, dt, g());
          const float scale = 0.25f;
          Array out = fast::paged_attention(q, kp, vp, l.table_array(),
                                            l.lengths_array(), scale, "causal");
          ASSERT_EQ(out.shape(), (Shape{B, Hq, L, D}));
          EXPECT_EQ(out.dtype(), dt);
          auto kh = host(kp), vh = host(vp);
          const double rtol = dt == float32 ? 4e-5 : 3.2e-2,
                       atol = dt == float32 ? 8e-5 : 6.4e-2;
          for (int b = 0; b < B; ++b) {
            Array kb = contiguous(kh, ps, l, b, dt),
                  vb = contiguous(vh, ps, l, b, dt);
            Array qb = ops::slice(q, {b, 0, 0, 0}, {b + 1, Hq, L, D});
            Array row = ops::slice(out, {b, 0, 0, 0}, {b + 1, Hq, L, D});
            // The solo rule: the row alone over its contiguous keys.
            Array solo = fast::scaled_dot_product_attention(
                qb, kb, vb, scale, L > 1 ? "causal" : "");
            EXPECT_EQ(bits_of(row), bits_of(solo))
                << dtype_name(dt) << " bs=" << bs << " b=" << b;
            auto ref = reference(host(qb), host(kb), host(vb), Hq, Hkv, L,
                                 lens[b], D, scale, true);
            auto got = host(row);
            for (size_t i = 0; i < ref.size(); ++i)
              ASSERT_LE(std::abs(got[i] - ref[i]),
                        rtol * std::abs(ref[i]) + atol)
                  << dtype_name(dt) << " bs=" << bs << " b=" << b << " i=" << i;
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 4 * 3 * 2 * 4);
}

TEST(FastPaged, ARowsBitsDoNotDependOnTheBatch) {
  // Row 0 alone, then with other rows around it in other blocks: same bits.
  for (DType dt : {float32, bfloat16}) {
    const int bs = 8, H = 2, D = 32;
    Layout l = make_layout({37, 5, 64, 19, 1}, bs, 5);
    Shape ps{l.nb, H, bs, D};
    Array kp = rnd(ps, dt, 6), vp = rnd(ps, dt, 7),
          q = rnd({l.B, 4, 1, D}, dt, 8);
    Array all = fast::paged_attention(q, kp, vp, l.table_array(),
                                      l.lengths_array(), 0.2f);
    for (int b = 0; b < l.B; ++b) {
      std::vector<int32_t> row(l.table.begin() + b * l.max_blocks,
                               l.table.begin() + (b + 1) * l.max_blocks);
      Array alone = fast::paged_attention(
          ops::slice(q, {b, 0, 0, 0}, {b + 1, 4, 1, D}), kp, vp,
          array(row, Shape{1, l.max_blocks}),
          array(std::vector<int32_t>{l.lengths[b]}, Shape{1}), 0.2f);
      EXPECT_EQ(bits_of(ops::slice(all, {b, 0, 0, 0}, {b + 1, 4, 1, D})),
                bits_of(alone))
          << dtype_name(dt) << " " << b;
    }
  }
}

TEST(FastPaged, WriteThenAttendEqualsAContiguousCache) {
  // Tokens appended in steps of uneven sizes through paged_write give the
  // attention of a contiguous cache holding the same keys.
  const int bs = 4, H = 2, D = 16, B = 3;
  Layout l = make_layout({24, 24, 24}, bs, 9, 0);
  Shape ps{l.nb, H, bs, D};
  Array kp = zeros(ps), vp = zeros(ps);
  Array kall = rnd({B, H, 24, D}, float32, 10),
        vall = rnd({B, H, 24, D}, float32, 11);
  int at = 0;
  for (int step : {5, 1, 7, 1, 10}) {
    Array k = ops::slice(kall, {0, 0, at, 0}, {B, H, at + step, D});
    Array v = ops::slice(vall, {0, 0, at, 0}, {B, H, at + step, D});
    auto [k2, v2] =
        fast::paged_write(kp, vp, k, v, l.table_array(),
                          array(std::vector<int32_t>(B, at), Shape{B}));
    kp = k2;
    vp = v2;
    at += step;
    Array q = rnd({B, 4, step, D}, float32, 20 + static_cast<uint32_t>(at));
    Array got = fast::paged_attention(
        q, kp, vp, l.table_array(),
        array(std::vector<int32_t>(B, at), Shape{B}), 0.25f);
    for (int b = 0; b < B; ++b) {
      Array kb = ops::slice(kall, {b, 0, 0, 0}, {b + 1, H, at, D}),
            vb = ops::slice(vall, {b, 0, 0, 0}, {b + 1, H, at, D});
      Array want = fast::scaled_dot_product_attention(
          ops::slice(q, {b, 0, 0, 0}, {b + 1, 4, step, D}), kb, vb, 0.25f,
          step > 1 ? "causal" : "");
      EXPECT_EQ(bits_of(ops::slice(got, {b, 0, 0, 0}, {b + 1, 4, step, D})),
                bits_of(want))
          << at << " " << b;
    }
  }
}

TEST(FastPaged, NoMaskSeesEveryKeyAndEmptyRowsGiveZeros) {
  const int bs = 4, H = 1, D = 8, L = 2;
  Layout l = make_layout({6, 0}, bs, 12);
  Shape ps{l.nb, H, bs, D};
  Array kp = rnd(ps, float32, 13), vp = rnd(ps, float32, 14),
        q = rnd({2, H, L, D}, float32, 15);
  Array out = fast::paged_attention(q, kp, vp, l.table_array(),
                                    l.lengths_array(), 0.5f, "");
  auto ref = reference(host(ops::slice(q, {0, 0, 0, 0}, {1, H, L, D})),
                       host(contiguous(host(kp), ps, l, 0, float32)),
                       host(contiguous(host(vp), ps, l, 0, float32)), H, H, L,
                       6, D, 0.5f, false);
  auto got = host(out);
  for (size_t i = 0; i < ref.size(); ++i)
    EXPECT_NEAR(got[i], ref[i], 4e-5 * std::abs(ref[i]) + 8e-5) << i;
  for (size_t i = ref.size(); i < got.size(); ++i)
    EXPECT_EQ(got[i], 0.0f) << i;  // no keys: zeros (as attention)
}

void expect_failed(const Array& a, ErrorKind kind, const std::string& part) {
  ASSERT_TRUE(a.is_failed()) << part;
  EXPECT_EQ(a.error()->kind(), kind) << a.error()->message();
  EXPECT_NE(a.error()->message().find(part), std::string::npos)
      << a.error()->message();
  EXPECT_THROW(a.eval(), Error);
}

TEST(FastPaged, InvalidArgumentsGiveFailedArrays) {
  const int bs = 4, H = 2, D = 8;
  Shape ps{5, H, bs, D};
  Array kp = zeros(ps), vp = zeros(ps), q = zeros({2, 4, 1, D}),
        k = zeros({2, H, 1, D});
  auto table = [](std::vector<int32_t> t) { return array(t, Shape{2, 2}); };
  auto ints = [](std::vector<int32_t> t) {
    return array(t, Shape{static_cast<int>(t.size())});
  };
  // A used block outside the pool; an unused entry is never read.
  expect_failed(
      fast::paged_attention(q, kp, vp, table({0, 1, 5, 2}), ints({8, 3}), 1.0f),
      ErrorKind::out_of_range, "block_table[1, 0] = 5");
  expect_failed(fast::paged_attention(q, kp, vp, table({0, -1, 2, 3}),
                                      ints({5, 3}), 1.0f),
                ErrorKind::out_of_range, "block_table[0, 1] = -1");
  EXPECT_FALSE(
      fast::paged_attention(q, kp, vp, table({0, -1, 2, 9}), ints({4, 3}), 1.0f)
          .is_failed());
  // Lengths beyond the table, negative, or shorter than the causal queries.
  expect_failed(
      fast::paged_attention(q, kp, vp, table({0, 1, 2, 3}), ints({9, 3}), 1.0f),
      ErrorKind::out_of_range, "lengths[0] = 9");
  expect_failed(fast::paged_attention(q, kp, vp, table({0, 1, 2, 3}),
                                      ints({1, -1}), 1.0f),
                ErrorKind::out_of_range, "lengths[1] = -1");
  expect_failed(fast::paged_attention(zeros({2, 4, 3, D}), kp, vp,
                                      table({0, 1, 2, 3}), ints({2, 3}), 1.0f),
                ErrorKind::invalid_argument, "at least as many");
  // Shapes, dtypes and modes.
  expect_failed(fast::paged_attention(q, kp, vp, table({0, 1, 2, 3}),
                                      ints({1, 2, 3}), 1.0f),
                ErrorKind::shape_mismatch, "one row per sequence");
  expect_failed(fast::paged_attention(
                    q, kp, vp, array({0.0f, 1.0f, 2.0f, 3.0f}, Shape{2, 2}),
                    ints({1, 2}), 1.0f),
                ErrorKind::unsupported_dtype, "block_table must be an integer");
  expect_failed(fast::paged_attention(zeros({2, 3, 1, D}), kp, vp,
                                      table({0, 1, 2, 3}), ints({1, 2}), 1.0f),
                ErrorKind::shape_mismatch, "multiple of the key/value heads");
  expect_failed(fast::paged_attention(q, kp, zeros({4, H, bs, D}),
                                      table({0, 1, 2, 3}), ints({1, 2}), 1.0f),
                ErrorKind::shape_mismatch, "one num_blocks");
  expect_failed(fast::paged_attention(q, kp, vp, table({0, 1, 2, 3}),
                                      ints({1, 2}), 1.0f, "array"),
                ErrorKind::invalid_argument, "mask_mode");
  expect_failed(fast::paged_attention(q, kp, vp, table({0, 1, 2, 3}),
                                      ints({1, 2}) / 0.0f, 1.0f),
                ErrorKind::unsupported_dtype, "lengths must be an integer");
  // A failed argument passes through.
  Array bad = reshape(zeros({3}), {2, 2});
  ASSERT_TRUE(bad.is_failed());
  EXPECT_TRUE(
      fast::paged_attention(q, kp, vp, bad, ints({1, 2}), 1.0f).is_failed());
  // paged_write: positions past the table, blocks outside the pool, shapes.
  auto [a1, b1] =
      fast::paged_write(kp, vp, k, k, table({0, 1, 2, 3}), ints({8, 0}));
  expect_failed(a1, ErrorKind::out_of_range, "positions[0] = 8");
  expect_failed(b1, ErrorKind::out_of_range, "positions[0] = 8");
  auto [a2, b2] =
      fast::paged_write(kp, vp, k, k, table({0, 1, 7, 3}), ints({0, 2}));
  expect_failed(a2, ErrorKind::out_of_range, "block_table[1, 0] = 7");
  auto [a3, b3] =
      fast::paged_write(kp, vp, zeros({2, 3, 1, D}), zeros({2, 3, 1, D}),
                        table({0, 1, 2, 3}), ints({0, 0}));
  expect_failed(a3, ErrorKind::shape_mismatch, "heads and head dimensions");
  auto [a4, b4] =
      fast::paged_write(kp, vp, k, k, table({0, 1, 2, 3}), ints({-1, 0}));
  expect_failed(a4, ErrorKind::out_of_range, "positions[0] = -1");
  (void)b2;
  (void)b3;
  (void)b4;
}

}  // namespace
}  // namespace nuvec
