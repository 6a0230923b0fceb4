// fast::gated_delta and gated_delta_slots (docs/fast.md, "gated_delta"):
// values against a float64 reference written here with plain loops from the
// inputs' values (the rule as mlx-lm's gated_delta.py states it), scalar
// and per-feature gates, masks, T = 1 and T > 1, grouped heads, 16-bit
// inputs, the pool variant against per-row calls, row independence (bit
// for bit), and invalid calls.
#include <gtest/gtest.h>
#include <nuvec/nuvec.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/cpu_default.h"

using namespace nuvec;

namespace {

Array rnd(const Shape& shape, DType dt, uint64_t seed, float scale = 1.0f) {
  return ops::astype(
             ops::multiply(random::normal(shape, random::key(seed)), scale), dt)
      .eval();
}
Array uniform01(const Shape& shape, DType dt, uint64_t seed, float lo,
                float hi) {
  return ops::astype(random::uniform(array(lo), array(hi), shape, float32,
                                     random::key(seed)),
                     dt)
      .eval();
}

std::vector<double> f64(const Array& a) {
  return ops::astype(a, float64).to_vector<double>();
}

std::vector<uint64_t> bits(const Array& a) {
  DType u = a.itemsize() == 2 ? uint16 : a.itemsize() == 4 ? uint32 : uint64;
  return ops::contiguous(a).view(u).to_vector<uint64_t>();
}

struct Dims {
  int B, T, Hk, R, Dk, Dv;
  int Hv() const { return Hk * R; }
};

struct Inputs {
  Array q = array(0.0f), k = array(0.0f), v = array(0.0f), g = array(0.0f),
        beta = array(0.0f), state = array(0.0f);
  std::optional<Array> mask;
};

Inputs make_inputs(const Dims& d, DType dt, bool vector_g, bool masked,
                   uint64_t seed) {
  Inputs in;
  // q, k of unit-ish norm (as after mlx-lm's normalize_qk), g in (0.5, 1).
  const float qk = 1.0f / std::sqrt(static_cast<float>(d.Dk));
  in.q = rnd({d.B, d.T, d.Hk, d.Dk}, dt, seed, qk);
  in.k = rnd({d.B, d.T, d.Hk, d.Dk}, dt, seed + 1, qk);
  in.v = rnd({d.B, d.T, d.Hv(), d.Dv}, dt, seed + 2);
  Shape gs = vector_g ? Shape{d.B, d.T, d.Hv(), d.Dk} : Shape{d.B, d.T, d.Hv()};
  in.g = uniform01(gs, float32, seed + 3, 0.5f, 1.0f);
  in.beta = uniform01({d.B, d.T, d.Hv()}, dt, seed + 4, 0.0f, 1.0f);
  in.state = rnd({d.B, d.Hv(), d.Dv, d.Dk}, float32, seed + 5, 0.5f);
  if (masked) {
    std::vector<bool> m;
    for (int b = 0; b < d.B; ++b)
      for (int t = 0; t < d.T; ++t)
        m.push_back(((b * 7 + t * 3 + static_cast<int>(seed)) % 4) != 0);
    in.mask = array(m, Shape{d.B, d.T});
  }
  return in;
}

// The rule in float64 from the inputs' values: {y [B, T, Hv, Dv], state}.
std::pair<std::vector<double>, std::vector<double>> reference(
    const Dims& d, const Inputs& in) {
  auto q = f64(in.q), k = f64(in.k), v = f64(in.v), g = f64(in.g),
       beta = f64(in.beta);
  auto S = f64(in.state);
  std::vector<bool> mask;
  if (in.mask) mask = in.mask->to_vector<bool>();
  const bool vector_g = in.g.ndim() == 4;
  const int Hv = d.Hv();
  std::vector<double> y(static_cast<size_t>(d.B) * d.T * Hv * d.Dv, 0.0);
  for (int b = 0; b < d.B; ++b)
    for (int h = 0; h < Hv; ++h) {
      const int hk = h / d.R;
      double* s = &S[((static_cast<size_t>(b) * Hv + h) * d.Dv) * d.Dk];
      for (int t = 0; t < d.T; ++t) {
        if (in.mask && !mask[static_cast<size_t>(b) * d.T + t]) continue;
        const double* qt =
            &q[((static_cast<size_t>(b) * d.T + t) * d.Hk + hk) * d.Dk];
        const double* kt =
            &k[((static_cast<size_t>(b) * d.T + t) * d.Hk + hk) * d.Dk];
        const double* vt =
            &v[((static_cast<size_t>(b) * d.T + t) * Hv + h) * d.Dv];
        const size_t gi = (static_cast<size_t>(b) * d.T + t) * Hv + h;
        const double bt = beta[gi];
        for (int i = 0; i < d.Dv; ++i) {
          double* row = s + static_cast<size_t>(i) * d.Dk;
          double m = 0;
          for (int j = 0; j < d.Dk; ++j) {
            row[j] *= vector_g ? g[gi * d.Dk + j] : g[gi];
            m += row[j] * kt[j];
          }
          const double delta = (vt[i] - m) * bt;
          double out = 0;
          for (int j = 0; j < d.Dk; ++j) {
            row[j] += delta * kt[j];
            out += row[j] * qt[j];
          }
          y[((static_cast<size_t>(b) * d.T + t) * Hv + h) * d.Dv + i] = out;
        }
      }
    }
  return {y, S};
}

void expect_near(const std::vector<double>& got, const std::vector<double>& ref,
                 double rtol, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double scale = 0;
  for (double r : ref) scale = std::max(scale, std::abs(r));
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i)
    if (!(std::abs(got[i] - ref[i]) <=
          rtol * (std::abs(ref[i]) + 0.05 * scale))) {
      ADD_FAILURE() << what << " [" << i << "]: " << got[i] << " vs " << ref[i];
      ++bad;
    }
}

const Dims kShapes[] = {
    {1, 1, 1, 1, 8, 8},   {2, 1, 2, 2, 16, 8},   {2, 5, 1, 3, 8, 4},
    {3, 9, 2, 2, 32, 16}, {1, 17, 2, 1, 16, 32}, {2, 4, 3, 2, 4, 12},
};

TEST(FastGatedDelta, Float32MatchesTheFloat64Rule) {
  nuvec::testing::CpuDefault cpu;
  uint64_t seed = 10;
  for (const Dims& d : kShapes)
    for (bool vector_g : {false, true})
      for (bool masked : {false, true}) {
        Inputs in = make_inputs(d, float32, vector_g, masked, seed += 10);
        auto [y, st] = fast::gated_delta(in.q, in.k, in.v, in.g, in.beta,
                                         in.state, in.mask);
        ASSERT_FALSE(y.is_failed()) << y.error()->message();
        EXPECT_EQ(y.shape(), (Shape{d.B, d.T, d.Hv(), d.Dv}));
        EXPECT_EQ(y.dtype(), float32);
        EXPECT_EQ(st.shape(), in.state.shape());
        auto [ry, rs] = reference(d, in);
        const std::string what =
            "B" + std::to_string(d.B) + " T" + std::to_string(d.T) + " Hk" +
            std::to_string(d.Hk) + " R" + std::to_string(d.R) +
            (vector_g ? " vector g" : "") + (masked ? " masked" : "");
        expect_near(f64(y), ry, 1e-5, what + " y");
        expect_near(f64(st), rs, 1e-5, what + " state");
      }
}

TEST(FastGatedDelta, MaskedStepsGiveZeroAndKeepTheState) {
  nuvec::testing::CpuDefault cpu;
  Dims d{2, 3, 1, 2, 8, 4};
  Inputs in = make_inputs(d, float32, false, false, 7);
  // Row 0: every step masked; row 1: none.
  in.mask = array({false, false, false, true, true, true}, Shape{2, 3});
  auto [y, st] =
      fast::gated_delta(in.q, in.k, in.v, in.g, in.beta, in.state, in.mask);
  auto yv = f64(ops::slice(y, {0, 0, 0, 0}, {1, 3, 2, 4}));
  for (double x : yv) EXPECT_EQ(x, 0.0);
  EXPECT_EQ(bits(ops::slice(st, {0, 0, 0, 0}, {1, 2, 4, 8})),
            bits(ops::slice(in.state, {0, 0, 0, 0}, {1, 2, 4, 8})));
  // Row 1 equals the unmasked call's row 1.
  auto [y2, st2] = fast::gated_delta(in.q, in.k, in.v, in.g, in.beta, in.state);
  EXPECT_EQ(bits(ops::slice(y, {1, 0, 0, 0}, {2, 3, 2, 4})),
            bits(ops::slice(y2, {1, 0, 0, 0}, {2, 3, 2, 4})));
}

TEST(FastGatedDelta, SixteenBitInputsAccumulateInFloat32) {
  nuvec::testing::CpuDefault cpu;
  uint64_t seed = 500;
  for (DType dt : {bfloat16, float16})
    for (const Dims& d : {Dims{2, 1, 2, 2, 16, 8}, Dims{2, 12, 1, 2, 32, 16}}) {
      Inputs in = make_inputs(d, dt, false, d.T > 1, seed += 10);
      auto [y, st] =
          fast::gated_delta(in.q, in.k, in.v, in.g, in.beta, in.state, in.mask);
      ASSERT_FALSE(y.is_failed()) << y.error()->message();
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_EQ(st.dtype(), float32);
      // The reference reads the 16-bit values exactly; only y's final
      // rounding (8 or 11 bits) separates them, the state stays float32.
      auto [ry, rs] = reference(d, in);
      expect_near(f64(y), ry, dt == bfloat16 ? 8e-3 : 1e-3,
                  std::string(dtype_name(dt)) + " y");
      expect_near(f64(st), rs, 1e-5, std::string(dtype_name(dt)) + " state");
      // A bfloat16 state is read and written in its dtype, computed in float32.
      auto [y16, st16] =
          fast::gated_delta(in.q, in.k, in.v, in.g, in.beta,
                            ops::astype(in.state, bfloat16), in.mask);
      EXPECT_EQ(st16.dtype(), bfloat16);
    }
}

TEST(FastGatedDelta, StepsChainLikeOneCall) {
  nuvec::testing::CpuDefault cpu;
  // T = 6 at once against six T = 1 calls (decode), state carried.
  Dims d{2, 6, 2, 2, 16, 8};
  Inputs in = make_inputs(d, float32, true, false, 77);
  auto [y, st] = fast::gated_delta(in.q, in.k, in.v, in.g, in.beta, in.state);
  Array s = in.state;
  for (int t = 0; t < d.T; ++t) {
    auto at = [&](const Array& a) {
      Shape lo(a.ndim(), 0), hi = a.shape();
      lo[1] = t;
      hi[1] = t + 1;
      return ops::slice(a, lo, hi);
    };
    auto [yt, next] = fast::gated_delta(at(in.q), at(in.k), at(in.v), at(in.g),
                                        at(in.beta), s);
    EXPECT_EQ(bits(yt), bits(at(y))) << "step " << t;
    s = next;
  }
  EXPECT_EQ(bits(s), bits(st));
}

TEST(FastGatedDelta, EachRowEqualsItsSoloCallBitForBit) {
  nuvec::testing::CpuDefault cpu;
  Dims d{3, 7, 2, 2, 16, 16};
  Inputs in = make_inputs(d, float32, false, true, 91);
  auto [y, st] =
      fast::gated_delta(in.q, in.k, in.v, in.g, in.beta, in.state, in.mask);
  for (int b = 0; b < d.B; ++b) {
    auto row = [&](const Array& a) {
      Shape lo(a.ndim(), 0), hi = a.shape();
      lo[0] = b;
      hi[0] = b + 1;
      return ops::slice(a, lo, hi);
    };
    auto [yb, sb] =
        fast::gated_delta(row(in.q), row(in.k), row(in.v), row(in.g),
                          row(in.beta), row(in.state), row(*in.mask));
    EXPECT_EQ(bits(yb), bits(row(y))) << "row " << b;
    EXPECT_EQ(bits(sb), bits(row(st))) << "row " << b;
  }
}

TEST(FastGatedDelta, SlotsEqualPerRowCalls) {
  nuvec::testing::CpuDefault cpu;
  Dims d{3, 4, 1, 2, 8, 8};
  Inputs in = make_inputs(d, float32, false, true, 123);
  Array pool = rnd({5, d.Hv(), d.Dv, d.Dk}, float32, 9);
  const std::vector<int> slot_ids{3, 0, 4};
  auto [y, next_pool] =
      fast::gated_delta_slots(in.q, in.k, in.v, in.g, in.beta, pool,
                              array(slot_ids, Shape{3}), in.mask);
  ASSERT_FALSE(y.is_failed()) << y.error()->message();
  EXPECT_EQ(next_pool.shape(), pool.shape());
  auto entry = [](const Array& p, int i) {
    return ops::slice(p, {i, 0, 0, 0},
                      {i + 1, p.shape(1), p.shape(2), p.shape(3)});
  };
  for (int b = 0; b < d.B; ++b) {
    auto row = [&](const Array& a) {
      Shape lo(a.ndim(), 0), hi = a.shape();
      lo[0] = b;
      hi[0] = b + 1;
      return ops::slice(a, lo, hi);
    };
    auto [yb, sb] = fast::gated_delta(row(in.q), row(in.k), row(in.v),
                                      row(in.g), row(in.beta),
                                      entry(pool, slot_ids[b]), row(*in.mask));
    EXPECT_EQ(bits(yb), bits(row(y))) << "row " << b;
    EXPECT_EQ(bits(sb), bits(entry(next_pool, slot_ids[b]))) << "row " << b;
  }
  for (int untouched : {1, 2})
    EXPECT_EQ(bits(entry(next_pool, untouched)), bits(entry(pool, untouched)));
}

TEST(FastGatedDelta, NoStepsKeepTheState) {
  nuvec::testing::CpuDefault cpu;
  Dims d{2, 0, 1, 2, 8, 4};
  Inputs in = make_inputs(d, float32, false, false, 5);
  auto [y, st] = fast::gated_delta(in.q, in.k, in.v, in.g, in.beta, in.state);
  EXPECT_EQ(y.shape(), (Shape{2, 0, 2, 4}));
  EXPECT_EQ(bits(st), bits(in.state));
}

TEST(FastGatedDelta, InvalidCallsGiveFailedArraysNamingTheArgument) {
  nuvec::testing::CpuDefault cpu;
  Dims d{2, 3, 2, 2, 8, 4};
  Inputs in = make_inputs(d, float32, false, false, 3);
  auto message = [](const std::pair<Array, Array>& r) {
    EXPECT_TRUE(r.first.is_failed());
    EXPECT_TRUE(r.second.is_failed());
    return r.first.error() ? r.first.error()->message() : std::string();
  };
  auto has = [](const std::string& m, const std::string& w) {
    return m.find(w) != std::string::npos;
  };
  using fast::gated_delta;
  EXPECT_TRUE(has(message(gated_delta(ops::zeros({2, 3, 8}), in.k, in.v, in.g,
                                      in.beta, in.state)),
                  "q must"));
  EXPECT_TRUE(has(message(gated_delta(in.q, ops::zeros({2, 3, 2, 7}), in.v,
                                      in.g, in.beta, in.state)),
                  "k must"));
  // 3 value heads over 2 key heads.
  EXPECT_TRUE(has(message(gated_delta(in.q, in.k, ops::zeros({2, 3, 3, 4}),
                                      in.g, in.beta, in.state)),
                  "multiple"));
  EXPECT_TRUE(has(message(gated_delta(in.q, in.k, ops::zeros({2, 2, 4, 4}),
                                      in.g, in.beta, in.state)),
                  "v must"));
  EXPECT_TRUE(
      has(message(gated_delta(in.q, in.k, in.v, ops::zeros({2, 3, 4, 3}),
                              in.beta, in.state)),
          "g must"));
  EXPECT_TRUE(has(message(gated_delta(in.q, in.k, in.v, in.g,
                                      ops::zeros({2, 3, 4, 1}), in.state)),
                  "beta must"));
  EXPECT_TRUE(has(message(gated_delta(in.q, in.k, in.v, in.g, in.beta,
                                      ops::zeros({2, 4, 8, 4}))),
                  "state must"));
  EXPECT_TRUE(has(message(gated_delta(in.q, in.k, in.v, in.g, in.beta, in.state,
                                      ops::zeros({2, 3}))),
                  "mask"));
  EXPECT_TRUE(has(message(gated_delta(in.q, in.k, in.v, in.g, in.beta, in.state,
                                      array({true, false}))),
                  "mask"));
  EXPECT_TRUE(has(message(gated_delta(ops::zeros({2, 3, 2, 8}, int32), in.k,
                                      in.v, in.g, in.beta, in.state)),
                  "floating"));
  Array pool = ops::zeros({4, 4, 4, 8});
  EXPECT_TRUE(
      has(message(fast::gated_delta_slots(in.q, in.k, in.v, in.g, in.beta, pool,
                                          array({0.0f, 1.0f}))),
          "slots"));
  EXPECT_TRUE(has(message(fast::gated_delta_slots(
                      in.q, in.k, in.v, in.g, in.beta, pool, array({0, 1, 2}))),
                  "slots"));
  EXPECT_TRUE(has(
      message(fast::gated_delta_slots(in.q, in.k, in.v, in.g, in.beta,
                                      ops::zeros({4, 4, 8, 4}), array({0, 1}))),
      "pool"));
  // A failed input passes through.
  Array bad = ops::reshape(ops::zeros({6}), {4});
  EXPECT_TRUE(
      gated_delta(bad, in.k, in.v, in.g, in.beta, in.state).first.is_failed());
}

}  // namespace
