// nuvec::fast on the CPU (docs/fast.md): values against float64 references
// computed here from the inputs, the CPU kernels against the MLX formulas
// written with ops (bit for bit: the kernels follow the composites' steps),
// row independence (a batch, a transposed view and each row alone give the
// same bits), the serial rule of causal attention, invalid calls, and the
// transform rules against the composites and finite differences.
#include <gtest/gtest.h>
#include <nuvec/nuvec.h>

#include <cmath>
#include <string>
#include <vector>

#include "fast/composite.h"
#include "support/cpu_default.h"

using namespace nuvec;

namespace {

Array rnd(const Shape& shape, DType dt, uint64_t seed, float scale = 1.0f) {
  return ops::astype(ops::multiply(random::normal(shape, random::key(seed)), scale), dt).eval();
}

std::vector<double> f64(const Array& a) { return ops::astype(a, float64).to_vector<double>(); }

std::vector<uint64_t> bits(const Array& a) {
  DType u = a.itemsize() == 2 ? uint16 : a.itemsize() == 4 ? uint32 : uint64;
  return ops::contiguous(a).view(u).to_vector<uint64_t>();
}

// Relative tolerance of a result rounded to `dt` (float32 statistics).
double tol(DType dt) { return dt == bfloat16 ? 1.6e-2 : dt == float16 ? 2e-3 : 2e-5; }
// The spacing of the dtype's subnormals (results near zero round there).
double tiny(DType dt) { return dt == float16 ? 6e-8 : 1e-30; }

void expect_near_all(const std::vector<double>& got, const std::vector<double>& ref, double rtol,
                     double atol, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    double err = std::abs(got[i] - ref[i]);
    if (!(err <= rtol * std::abs(ref[i]) + atol)) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", float64 gives "
                    << ref[i];
      ++bad;
    }
  }
}

// ---- float64 references, from the (rounded) input values.

std::vector<double> ref_rms(const std::vector<double>& x, const std::vector<double>& w, int n,
                            double eps) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / n; ++r) {
    double ss = 0;
    for (int i = 0; i < n; ++i) ss += x[r * n + i] * x[r * n + i];
    double inv = 1.0 / std::sqrt(ss / n + eps);
    for (int i = 0; i < n; ++i) y[r * n + i] = x[r * n + i] * inv * (w.empty() ? 1.0 : w[i]);
  }
  return y;
}

std::vector<double> ref_layer(const std::vector<double>& x, const std::vector<double>& w,
                              const std::vector<double>& b, int n, double eps) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / n; ++r) {
    double mu = 0, var = 0;
    for (int i = 0; i < n; ++i) mu += x[r * n + i];
    mu /= n;
    for (int i = 0; i < n; ++i) var += (x[r * n + i] - mu) * (x[r * n + i] - mu);
    double inv = 1.0 / std::sqrt(var / n + eps);
    for (int i = 0; i < n; ++i)
      y[r * n + i] = (x[r * n + i] - mu) * inv * (w.empty() ? 1.0 : w[i]) + (b.empty() ? 0.0 : b[i]);
  }
  return y;
}

std::vector<double> ref_softmax(const std::vector<double>& x, int n, bool log_sum = false) {
  std::vector<double> y(log_sum ? x.size() / n : x.size());
  for (size_t r = 0; r < x.size() / n; ++r) {
    double m = -INFINITY, s = 0;
    for (int i = 0; i < n; ++i) m = std::max(m, x[r * n + i]);
    for (int i = 0; i < n; ++i) s += std::exp(x[r * n + i] - m);
    if (log_sum) y[r] = std::log(s) + m;
    else
      for (int i = 0; i < n; ++i) y[r * n + i] = std::exp(x[r * n + i] - m) / s;
  }
  return y;
}

// The first `dims` features of [rows, d] rows at positions pos(row).
template <class Pos>
std::vector<double> ref_rope(const std::vector<double>& x, int d, int dims, bool trad, double base,
                             double scale, Pos pos) {
  std::vector<double> y = x;
  const int half = dims / 2;
  for (size_t r = 0; r < x.size() / d; ++r) {
    for (int i = 0; i < half; ++i) {
      double th = pos(r) * scale * std::pow(base, -double(i) / half);
      int i1 = trad ? 2 * i : i, i2 = trad ? 2 * i + 1 : i + half;
      double a = x[r * d + i1], b = x[r * d + i2];
      y[r * d + i1] = a * std::cos(th) - b * std::sin(th);
      y[r * d + i2] = a * std::sin(th) + b * std::cos(th);
    }
  }
  return y;
}

// softmax(scale q k^T + mask) v per (b, h), with GQA and end-aligned causal.
std::vector<double> ref_attention(const Array& q, const Array& k, const Array& v, double scale,
                                  bool causal, const std::vector<double>* add_mask = nullptr) {
  auto Q = f64(q), K = f64(k), V = f64(v);
  const int B = q.shape(0), Hq = q.shape(1), Lq = q.shape(2), D = q.shape(3);
  const int Hkv = k.shape(1), Lk = k.shape(2), Dv = v.shape(3), rep = Hq / Hkv;
  std::vector<double> out(size_t(B) * Hq * Lq * Dv);
  std::vector<double> s(Lk);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hq; ++h)
      for (int i = 0; i < Lq; ++i) {
        const int kh = h / rep;
        double m = -INFINITY;
        for (int j = 0; j < Lk; ++j) {
          double dot = 0;
          for (int e = 0; e < D; ++e)
            dot += Q[((size_t(b) * Hq + h) * Lq + i) * D + e] * K[((size_t(b) * Hkv + kh) * Lk + j) * D + e];
          s[j] = dot * scale;
          if (add_mask) s[j] += (*add_mask)[(size_t(i) * Lk) + j];
          if (causal && j > i + Lk - Lq) s[j] = -INFINITY;
          m = std::max(m, s[j]);
        }
        double l = 0;
        for (int j = 0; j < Lk; ++j) l += std::exp(s[j] - m);
        for (int e = 0; e < Dv; ++e) {
          double o = 0;
          for (int j = 0; j < Lk; ++j)
            o += std::exp(s[j] - m) / l * V[((size_t(b) * Hkv + kh) * Lk + j) * Dv + e];
          out[((size_t(b) * Hq + h) * Lq + i) * Dv + e] = o;
        }
      }
  return out;
}

const DType kFloats[] = {float32, float16, bfloat16};

}  // namespace

// ---- Values against float64.

TEST(Fast, NormsAgainstFloat64) {
  nuvec::testing::CpuDefault cpu;
  for (DType dt : kFloats)
    for (int n : {1, 7, 64, 1000, 4099}) {
      Array x = rnd({5, n}, dt, 1 + n, 2.0f), w = rnd({n}, dt, 2 + n), b = rnd({n}, dt, 3 + n);
      auto X = f64(x), W = f64(w), Bv = f64(b);
      std::string what = std::string(dtype_name(dt)) + " n=" + std::to_string(n);
      expect_near_all(f64(fast::rms_norm(x, w, 1e-5f)), ref_rms(X, W, n, 1e-5), tol(dt), tiny(dt),
                      "rms_norm " + what);
      expect_near_all(f64(fast::rms_norm(x, std::nullopt, 1e-6f)), ref_rms(X, {}, n, 1e-6), tol(dt),
                      tiny(dt), "rms_norm (no weight) " + what);
      if (n > 1) {
        expect_near_all(f64(fast::layer_norm(x, w, b, 1e-5f)), ref_layer(X, W, Bv, n, 1e-5),
                        tol(dt), tol(dt) * 4, "layer_norm " + what);
        expect_near_all(f64(fast::layer_norm(x, std::nullopt, std::nullopt, 1e-5f)),
                        ref_layer(X, {}, {}, n, 1e-5), tol(dt), tol(dt), "layer_norm (plain) " + what);
      }
      Array r = rnd({5, n}, dt, 4 + n);
      auto [h, y] = fast::add_rms_norm(x, r, w, 1e-5f);
      EXPECT_EQ(bits(h), bits(ops::add(x, r))) << what;
      expect_near_all(f64(y), ref_rms(f64(h), W, n, 1e-5), tol(dt), tiny(dt), "add_rms_norm " + what);
    }
}

TEST(Fast, SoftmaxLogsumexpCrossEntropyAgainstFloat64) {
  nuvec::testing::CpuDefault cpu;
  for (DType dt : kFloats)
    for (int n : {1, 5, 16, 33, 1000, 70000}) {
      Array x = rnd({3, n}, dt, 10 + n, 3.0f);
      auto X = f64(x);
      std::string what = std::string(dtype_name(dt)) + " n=" + std::to_string(n);
      expect_near_all(f64(ops::softmax(x, -1)), ref_softmax(X, n), tol(dt), tiny(dt), "softmax " + what);
      expect_near_all(f64(ops::logsumexp(x, -1)), ref_softmax(X, n, true), tol(dt), tol(dt),
                      "logsumexp " + what);
      Array t = random::randint(0, n, {3}, int32, random::key(n));
      auto T = t.to_vector<int32_t>();
      auto lse = ref_softmax(X, n, true);
      std::vector<double> ce(3), smooth(3);
      for (int r = 0; r < 3; ++r) {
        double mean = 0;
        for (int i = 0; i < n; ++i) mean += X[r * n + i];
        mean /= n;
        ce[r] = lse[r] - X[r * n + T[r]];
        smooth[r] = lse[r] - 0.9 * X[r * n + T[r]] - 0.1 * mean;
      }
      Array got = fast::cross_entropy(x, t);
      EXPECT_EQ(got.dtype(), float32);
      expect_near_all(f64(got), ce, 1e-5, 1e-5 * std::log(n + 1.0), "cross_entropy " + what);
      expect_near_all(f64(fast::cross_entropy(x, t, {.label_smoothing = 0.1f})), smooth, 1e-5,
                      1e-5 * std::log(n + 1.0), "cross_entropy smoothed " + what);
    }
}

TEST(Fast, CrossEntropyOptions) {
  nuvec::testing::CpuDefault cpu;
  Array x = rnd({4, 6}, float32, 5);
  Array t = array({1, -100, 5, 0});
  Array plain = fast::cross_entropy(x, array({1, 0, 5, 0}));
  auto P = plain.to_vector<float>();
  auto got = fast::cross_entropy(x, t, {.ignore_index = -100}).to_vector<float>();
  EXPECT_EQ(got[0], P[0]);
  EXPECT_EQ(got[1], 0.0f);
  EXPECT_EQ(got[2], P[2]);
  Array cw = array({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f});
  auto weighted = fast::cross_entropy(x, t, {.class_weights = cw, .ignore_index = -100}).to_vector<float>();
  EXPECT_FLOAT_EQ(weighted[0], P[0] * 2.0f);
  EXPECT_EQ(weighted[1], 0.0f);
  EXPECT_FLOAT_EQ(weighted[2], P[2] * 6.0f);
  auto w2 = fast::cross_entropy(x, array({1, 0, 5, 0}), {.weights = array({0.5f, 1.0f, 2.0f, 0.0f})})
                .to_vector<float>();
  EXPECT_FLOAT_EQ(w2[0], P[0] * 0.5f);
  EXPECT_FLOAT_EQ(w2[2], P[2] * 2.0f);
  EXPECT_EQ(w2[3], 0.0f);
  // An out-of-range target fails when evaluated (the CPU checks every row).
  Array bad = fast::cross_entropy(x, array({1, 6, 0, 0}));
  EXPECT_THROW(bad.eval(), Error);
}

TEST(Fast, RopeAgainstFloat64) {
  nuvec::testing::CpuDefault cpu;
  for (DType dt : kFloats)
    for (bool trad : {false, true})
      for (int dims : {8, 32}) {
        const int B = 2, H = 3, T = 5, D = 32;
        Array x = rnd({B, H, T, D}, dt, 20 + dims + trad);
        auto X = f64(x);
        std::string what = std::string(dtype_name(dt)) + (trad ? " traditional" : "") +
                           " dims=" + std::to_string(dims);
        auto ref = ref_rope(X, D, dims, trad, 10000.0, 0.5, [&](size_t r) { return double(r % T + 7); });
        expect_near_all(f64(fast::rope(x, dims, trad, 10000.0f, 0.5f, 7)), ref, tol(dt) * 2, tol(dt),
                        "rope " + what);
        // One offset per batch item.
        Array offs = array({3, 11});
        auto ref2 = ref_rope(X, D, dims, trad, 10000.0, 1.0, [&](size_t r) {
          return double(r % T + (r / (H * T) == 0 ? 3 : 11));
        });
        expect_near_all(f64(fast::rope(x, dims, trad, 10000.0f, 1.0f, offs)), ref2, tol(dt) * 2,
                        tol(dt), "rope (offsets) " + what);
        // Explicit frequencies: base^(i/half), the default ones.
        std::vector<float> fr(dims / 2);
        for (int i = 0; i < dims / 2; ++i) fr[i] = float(std::pow(10000.0, double(i) / (dims / 2)));
        Array freqs = array(fr.data(), {dims / 2}, float32);
        expect_near_all(f64(fast::rope(x, dims, trad, std::nullopt, 0.5f, 7, freqs)), ref,
                        tol(dt) * 2, tol(dt), "rope (freqs) " + what);
      }
}

TEST(Fast, AttentionAgainstFloat64) {
  nuvec::testing::CpuDefault cpu;
  struct Case { int B, Hq, Hkv, Lq, Lk, D; bool causal; };
  for (DType dt : kFloats)
    for (Case c : {Case{1, 2, 2, 4, 4, 16, false}, Case{2, 4, 1, 3, 70, 64, true},
                   Case{1, 8, 2, 1, 130, 128, false}, Case{1, 2, 2, 9, 9, 80, true}}) {
      Array q = rnd({c.B, c.Hq, c.Lq, c.D}, dt, 31), k = rnd({c.B, c.Hkv, c.Lk, c.D}, dt, 32),
            v = rnd({c.B, c.Hkv, c.Lk, c.D}, dt, 33);
      const float scale = 1.0f / std::sqrt(float(c.D));
      Array o = fast::scaled_dot_product_attention(q, k, v, scale, c.causal ? "causal" : "");
      EXPECT_EQ(o.dtype(), dt);
      expect_near_all(f64(o), ref_attention(q, k, v, scale, c.causal), tol(dt) * 2, tol(dt) * 4,
                      std::string("sdpa ") + std::string(dtype_name(dt)) + " Lk=" + std::to_string(c.Lk));
      EXPECT_EQ(fast::plan_attention(q, k, v, c.causal ? "causal" : "").kernel, "cpu_blocked");
    }
  // An additive mask broadcast from [Lq, Lk], a bool mask, sinks.
  Array q = rnd({1, 2, 3, 16}, float32, 41), k = rnd({1, 2, 5, 16}, float32, 42),
        v = rnd({1, 2, 5, 16}, float32, 43);
  Array add = rnd({3, 5}, float32, 44);
  const std::vector<double> add_values = f64(add);
  expect_near_all(f64(fast::scaled_dot_product_attention(q, k, v, 0.25f, "", add)),
                  ref_attention(q, k, v, 0.25, false, &add_values), 1e-5, 1e-5,
                  "sdpa additive mask");
  Array keep = ops::greater(rnd({3, 5}, float32, 45), -0.5);
  Array as_add = ops::where(keep, 0.0f, -INFINITY);
  EXPECT_TRUE(ops::allclose(fast::scaled_dot_product_attention(q, k, v, 0.25f, "", keep),
                            fast::scaled_dot_product_attention(q, k, v, 0.25f, "", as_add), 1e-6, 1e-6)
                  .item<bool>());
}

// ---- The CPU kernels follow the composites: bit for bit with the MLX
// formulas written with ops.

TEST(Fast, CpuKernelsEqualTheirFormulas) {
  nuvec::testing::CpuDefault cpu;
  for (int n : {3, 16, 100, 4096}) {
    Array x = rnd({4, n}, float32, 50 + n), w = rnd({n}, float32, 51 + n);
    Array ms = ops::mean(ops::square(x), -1, true);
    Array rms = ops::multiply(ops::multiply(x, ops::rsqrt(ops::add(ms, 1e-5f))), w);
    EXPECT_EQ(bits(fast::rms_norm(x, w, 1e-5f)), bits(rms)) << n;
    Array mu = ops::mean(x, -1, true);
    Array xc = ops::subtract(x, mu);
    Array ln = ops::multiply(xc, ops::rsqrt(ops::add(ops::mean(ops::square(xc), -1, true), 1e-5f)));
    EXPECT_EQ(bits(fast::layer_norm(x, std::nullopt, std::nullopt, 1e-5f)), bits(ln)) << n;
    Array m = ops::max(x, -1, true);
    Array e = ops::exp(ops::subtract(x, m));
    EXPECT_EQ(bits(ops::softmax(x, -1)), bits(ops::divide(e, ops::sum(e, -1, true)))) << n;
    Array lse = ops::add(ops::log(ops::sum(ops::exp(ops::subtract(x, m)), -1, true)), m);
    EXPECT_EQ(bits(ops::logsumexp(x, -1, true)), bits(lse)) << n;
    Array t = random::randint(0, n, {4}, int32, random::key(n));
    Array picked = ops::squeeze(ops::take_along_axis(x, ops::expand_dims(t, -1), -1), -1);
    EXPECT_EQ(bits(fast::cross_entropy(x, t)), bits(ops::subtract(ops::squeeze(lse, -1), picked))) << n;
  }
}

// ---- Row independence and layouts.

TEST(Fast, RowsGetTheirSoloBits) {
  nuvec::testing::CpuDefault cpu;
  for (DType dt : kFloats) {
    const int R = 9, n = 300;
    Array x = rnd({R, n}, dt, 60), w = rnd({n}, dt, 61), res = rnd({R, n}, dt, 62);
    Array xt = ops::transpose(rnd({n, R}, dt, 63));  // a strided view
    Array t = random::randint(0, n, {R}, int32, random::key(64));
    auto ops_of = [&](const Array& a, const Array& r, const Array& tt) {
      return std::vector<Array>{fast::rms_norm(a, w, 1e-5f), fast::layer_norm(a, w, w, 1e-5f),
                                fast::add_rms_norm(a, r, w, 1e-5f).second, ops::softmax(a, -1),
                                ops::logsumexp(a, -1, true), fast::cross_entropy(a, tt)};
    };
    for (const Array& in : {x, xt}) {
      auto batch = ops_of(in, res, t);
      auto dense = ops_of(ops::contiguous(in), res, t);
      for (int r = 0; r < R; ++r) {
        Array row = ops::slice(in, {r, 0}, {r + 1, n});
        auto solo = ops_of(row, ops::slice(res, {r, 0}, {r + 1, n}), ops::slice(t, {r}, {r + 1}));
        for (size_t k = 0; k < solo.size(); ++k) {
          Array b = batch[k].ndim() == 1 ? ops::slice(batch[k], {r}, {r + 1})
                                         : ops::slice(batch[k], {r, 0}, {r + 1, batch[k].shape(1)});
          EXPECT_EQ(bits(b), bits(solo[k])) << "op " << k << " row " << r << " " << dtype_name(dt);
        }
      }
      for (size_t k = 0; k < batch.size(); ++k) EXPECT_EQ(bits(batch[k]), bits(dense[k])) << k;
    }
    // RoPE with per-row offsets: each batch item alone with its offset.
    Array xr = rnd({4, 2, 1, 64}, dt, 65);
    Array offs = array({0, 17, 5, 300});
    Array all = fast::rope(xr, 64, false, 10000.0f, 1.0f, offs);
    auto O = offs.to_vector<int32_t>();
    for (int b = 0; b < 4; ++b) {
      Array one = fast::rope(ops::slice(xr, {b, 0, 0, 0}, {b + 1, 2, 1, 64}), 64, false, 10000.0f,
                             1.0f, O[b]);
      EXPECT_EQ(bits(ops::slice(all, {b, 0, 0, 0}, {b + 1, 2, 1, 64})), bits(one)) << b;
    }
  }
}

TEST(Fast, AttentionSerialRuleAndSoloRows) {
  nuvec::testing::CpuDefault cpu;
  for (DType dt : kFloats) {
    const int Lk = 150, D = 64;
    Array k = rnd({2, 2, Lk, D}, dt, 70), v = rnd({2, 2, Lk, D}, dt, 71);
    for (int lq = 2; lq <= 8; ++lq) {
      Array q = rnd({2, 4, lq, D}, dt, 72 + lq);
      Array all = fast::scaled_dot_product_attention(q, k, v, 0.125f, "causal");
      for (int i = 0; i < lq; ++i) {
        const int prefix = Lk - lq + i + 1;
        Array qi = ops::slice(q, {0, 0, i, 0}, {2, 4, i + 1, D});
        Array one = fast::scaled_dot_product_attention(
            qi, ops::slice(k, {0, 0, 0, 0}, {2, 2, prefix, D}),
            ops::slice(v, {0, 0, 0, 0}, {2, 2, prefix, D}), 0.125f);
        EXPECT_EQ(bits(ops::slice(all, {0, 0, i, 0}, {2, 4, i + 1, D})), bits(one))
            << dtype_name(dt) << " lq=" << lq << " row " << i;
      }
    }
    // One query row per batch item: the batch equals each item alone.
    Array q1 = rnd({2, 4, 1, D}, dt, 80);
    Array both = fast::scaled_dot_product_attention(q1, k, v, 0.125f);
    for (int b = 0; b < 2; ++b) {
      Array one = fast::scaled_dot_product_attention(
          ops::slice(q1, {b, 0, 0, 0}, {b + 1, 4, 1, D}), ops::slice(k, {b, 0, 0, 0}, {b + 1, 2, Lk, D}),
          ops::slice(v, {b, 0, 0, 0}, {b + 1, 2, Lk, D}), 0.125f);
      EXPECT_EQ(bits(ops::slice(both, {b, 0, 0, 0}, {b + 1, 4, 1, D})), bits(one)) << b;
    }
  }
}

TEST(Fast, EdgeValues) {
  nuvec::testing::CpuDefault cpu;
  // A row of -inf: the composite's NaN (max - max); a row with one +inf.
  Array x = array({-INFINITY, -INFINITY, -INFINITY, 1.0f, INFINITY, 0.0f}).reshape({2, 3});
  auto s = ops::softmax(x, -1).to_vector<float>();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(s[i]));
  EXPECT_EQ(ops::logsumexp(array({-INFINITY, -INFINITY}), -1).item<float>(), -INFINITY);
  // Empty batches keep their shapes.
  Array empty = ops::zeros({0, 8});
  EXPECT_EQ(fast::rms_norm(empty, std::nullopt, 1e-5f).shape(), (Shape{0, 8}));
  EXPECT_EQ(ops::softmax(empty, -1).shape(), (Shape{0, 8}));
  EXPECT_EQ(fast::cross_entropy(empty, ops::zeros({0}, int32)).shape(), (Shape{0}));
  Array q0 = ops::zeros({0, 2, 3, 16});
  EXPECT_EQ(fast::scaled_dot_product_attention(q0, ops::zeros({0, 2, 4, 16}), ops::zeros({0, 2, 4, 16}),
                                               1.0f)
                .eval()
                .shape(),
            (Shape{0, 2, 3, 16}));
  // No key at all: zeros from the kernel and from the composite (which the
  // GPU runs for head sizes without a kernel).
  Array k0 = ops::zeros({1, 1, 0, 8}), qz = rnd({1, 1, 2, 8}, float32, 93);
  Array none = fast::scaled_dot_product_attention(qz, k0, k0, 1.0f);
  Array none_composite = fast::composite::attention(qz, k0, k0, std::nullopt, std::nullopt, 1.0f, false, {});
  for (const Array& z : {none, none_composite}) {
    ASSERT_EQ(z.shape(), (Shape{1, 1, 2, 8}));
    EXPECT_TRUE(ops::array_equal(z, ops::zeros({1, 1, 2, 8})).item<bool>());
  }
  // A bool mask that hides every key of a row averages the values (as MLX's
  // composite, whose hidden scores are the dtype's lowest value).
  Array q = rnd({1, 1, 2, 8}, float32, 90), k = rnd({1, 1, 3, 8}, float32, 91),
        v = rnd({1, 1, 3, 8}, float32, 92);
  Array mask = array({true, true, false, false, false, false}).reshape({2, 3});
  Array o = fast::scaled_dot_product_attention(q, k, v, 1.0f, "", mask);
  EXPECT_TRUE(ops::allclose(ops::slice(o, {0, 0, 1, 0}, {1, 1, 2, 8}), ops::mean(v, 2, true), 1e-6, 1e-6)
                  .item<bool>());
}

// ---- Invalid calls name the argument.

TEST(Fast, InvalidCallsNameTheArgument) {
  nuvec::testing::CpuDefault cpu;
  auto message = [](const Array& a) {
    EXPECT_TRUE(a.is_failed());
    return a.error() ? a.error()->message() : std::string();
  };
  Array x = ops::zeros({2, 8});
  EXPECT_NE(message(fast::rms_norm(x, ops::zeros({7}), 1e-5f)).find("weight"), std::string::npos);
  EXPECT_NE(message(fast::layer_norm(x, std::nullopt, ops::zeros({2, 8}), 1e-5f)).find("bias"),
            std::string::npos);
  EXPECT_NE(message(fast::rms_norm(ops::zeros({2, 8}, int32), std::nullopt, 1e-5f)).find("floating"),
            std::string::npos);
  EXPECT_NE(message(fast::add_rms_norm(x, ops::zeros({2, 7}), std::nullopt, 1e-5f).first).find("residual"),
            std::string::npos);
  Array x4 = ops::zeros({1, 2, 3, 8});
  EXPECT_NE(message(fast::rope(x4, 10, false, 10000.0f, 1.0f, 0)).find("dims"), std::string::npos);
  EXPECT_NE(message(fast::rope(x4, 3, false, 10000.0f, 1.0f, 0)).find("dims"), std::string::npos);
  EXPECT_NE(message(fast::rope(x4, 8, false, std::nullopt, 1.0f, 0)).find("base"), std::string::npos);
  EXPECT_NE(message(fast::rope(x4, 8, false, 10000.0f, 1.0f, array({1, 2, 3}))).find("offset"),
            std::string::npos);
  Array q = ops::zeros({1, 3, 2, 8}), k = ops::zeros({1, 2, 4, 8});
  EXPECT_NE(message(fast::scaled_dot_product_attention(q, k, k, 1.0f)).find("multiple"),
            std::string::npos);
  Array q2 = ops::zeros({1, 2, 2, 8});
  EXPECT_NE(message(fast::scaled_dot_product_attention(q2, k, k, 1.0f, "", ops::zeros({3, 4})))
                .find("mask"),
            std::string::npos);
  EXPECT_NE(message(fast::scaled_dot_product_attention(q2, k, k, 1.0f, "causal", ops::zeros({2, 4})))
                .find("causal"),
            std::string::npos);
  EXPECT_NE(message(fast::scaled_dot_product_attention(q2, k, k, 1.0f, "sideways")).find("mask_mode"),
            std::string::npos);
  EXPECT_NE(message(fast::scaled_dot_product_attention(q2, k, k, 1.0f, "", std::nullopt, ops::zeros({3})))
                .find("sinks"),
            std::string::npos);
  EXPECT_NE(message(fast::cross_entropy(x, ops::zeros({3}, int32))).find("targets"), std::string::npos);
  EXPECT_NE(message(fast::cross_entropy(x, ops::zeros({2}))).find("integer"), std::string::npos);
  EXPECT_NE(message(fast::cross_entropy(x, ops::zeros({2}, int32), {.label_smoothing = 1.5f}))
                .find("label_smoothing"),
            std::string::npos);
}

// ---- Transforms: dedicated rules against the composites' derivatives.

TEST(Fast, GradientsMatchTheComposites) {
  nuvec::testing::CpuDefault cpu;
  Array x = rnd({3, 10}, float64, 100), w = rnd({10}, float64, 101), b = rnd({10}, float64, 102);
  Array t = array({1, 9, 0});
  auto check = [](const FlatFunction& fast_f, const FlatFunction& ref_f, const std::vector<Array>& in,
                  const char* what, double tolerance = 1e-10) {
    Array g = rnd(fast_f(in)[0].shape(), float64, 103);
    auto [o1, g1] = vjp(fast_f, in, {g});
    auto [o2, g2] = vjp(ref_f, in, {g});
    for (size_t i = 0; i < g1.size(); ++i)
      EXPECT_TRUE(ops::allclose(g1[i], g2[i], tolerance, tolerance).item<bool>()) << what << " input " << i;
    std::vector<Array> tans;
    for (const Array& a : in) tans.push_back(is_floating(a.dtype()) ? rnd(a.shape(), a.dtype(), 104) : ops::zeros_like(a));
    std::vector<Array> fin;
    for (size_t i = 0; i < in.size(); ++i) if (is_floating(in[i].dtype())) fin.push_back(in[i]);
    auto j1 = jvp(fast_f, in, tans).second, j2 = jvp(ref_f, in, tans).second;
    EXPECT_TRUE(ops::allclose(j1[0], j2[0], tolerance, tolerance).item<bool>()) << what << " jvp";
  };
  check([](const std::vector<Array>& a) { return std::vector<Array>{fast::rms_norm(a[0], a[1], 1e-5f)}; },
        [](const std::vector<Array>& a) {
          return std::vector<Array>{a[0] * ops::rsqrt(ops::mean(ops::square(a[0]), -1, true) + 1e-5) * a[1]};
        },
        {x, w}, "rms_norm");
  check([](const std::vector<Array>& a) { return std::vector<Array>{fast::layer_norm(a[0], a[1], a[2], 1e-5f)}; },
        [](const std::vector<Array>& a) {
          Array xc = a[0] - ops::mean(a[0], -1, true);
          return std::vector<Array>{xc * ops::rsqrt(ops::mean(ops::square(xc), -1, true) + 1e-5) * a[1] + a[2]};
        },
        {x, w, b}, "layer_norm");
  check([](const std::vector<Array>& a) { return std::vector<Array>{ops::softmax(a[0], -1)}; },
        [](const std::vector<Array>& a) {
          Array e = ops::exp(a[0] - ops::stop_gradient(ops::max(a[0], -1, true)));
          return std::vector<Array>{e / ops::sum(e, -1, true)};
        },
        {x}, "softmax");
  check([t](const std::vector<Array>& a) {
          return std::vector<Array>{fast::cross_entropy(ops::astype(a[0], float32), t, {.label_smoothing = 0.2f})};
        },
        [t](const std::vector<Array>& a) {
          Array l = ops::astype(a[0], float32);
          Array lse = ops::logsumexp(l, -1);
          Array picked = ops::squeeze(ops::take_along_axis(l, ops::expand_dims(t, -1), -1), -1);
          return std::vector<Array>{lse - picked * 0.8f - ops::mean(l, -1) * 0.2f};
        },
        {x}, "cross_entropy", 1e-5);
  // RoPE's vjp is the inverse rotation: the gradient of sum(rope(x) * g).
  Array xr = rnd({1, 2, 4, 16}, float64, 105);
  auto rope_f = [](const std::vector<Array>& a) {
    return std::vector<Array>{fast::rope(a[0], 16, false, 10000.0f, 1.0f, 3)};
  };
  Array g = rnd({1, 2, 4, 16}, float64, 106);
  auto gx = vjp(rope_f, {xr}, {g}).second[0];
  // A rotation's adjoint is its inverse: <rope(x), g> == <x, rope^T(g)>.
  double lhs = ops::sum(rope_f({xr})[0] * g).item<double>();
  double rhs = ops::sum(xr * gx).item<double>();
  EXPECT_NEAR(lhs, rhs, 1e-9 * std::abs(lhs) + 1e-9);
}

TEST(Fast, FiniteDifferencesOfAttention) {
  nuvec::testing::CpuDefault cpu;
  Array q = rnd({1, 2, 3, 8}, float64, 110), k = rnd({1, 1, 5, 8}, float64, 111),
        v = rnd({1, 1, 5, 8}, float64, 112);
  auto f = [](const std::vector<Array>& a) {
    return ops::sum(ops::square(fast::scaled_dot_product_attention(a[0], a[1], a[2], 0.3f, "causal")));
  };
  auto grads = grad([&](const std::vector<Array>& a) { return f(a); }, std::vector<int>{0, 1, 2})({q, k, v});
  const double h = 1e-6;
  std::vector<Array> in{q, k, v};
  for (int a = 0; a < 3; ++a) {
    auto base_vals = in[a].to_vector<double>();
    auto g = grads[a].to_vector<double>();
    for (size_t e = 0; e < base_vals.size(); e += 7) {
      auto plus = base_vals, minus = base_vals;
      plus[e] += h;
      minus[e] -= h;
      std::vector<Array> ip = in, im = in;
      ip[a] = array(plus.data(), in[a].shape(), float64);
      im[a] = array(minus.data(), in[a].shape(), float64);
      double fd = (f(ip).item<double>() - f(im).item<double>()) / (2 * h);
      EXPECT_NEAR(g[e], fd, 1e-6 * (1 + std::abs(fd))) << "input " << a << " element " << e;
    }
  }
}

TEST(Fast, VmapOfRowOps) {
  nuvec::testing::CpuDefault cpu;
  Array x = rnd({3, 4, 16}, float32, 120), w = rnd({16}, float32, 121);
  auto f = [w](const Array& a) { return fast::rms_norm(a, w, 1e-5f); };
  Array batched = vmap(f, 1, 0)(x);  // the batch along axis 1
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(bits(ops::slice(batched, {i, 0, 0}, {i + 1, 3, 16})),
              bits(f(ops::slice(ops::swapaxes(x, 0, 1), {i, 0, 0}, {i + 1, 3, 16}))))
        << i;
  auto sm = [](const Array& a) { return ops::softmax(a, -1); };
  EXPECT_EQ(bits(vmap(sm, 0, 0)(x)), bits(sm(x)));
  // A batched weight goes through the composite's vmap.
  Array ws = rnd({3, 16}, float32, 122);
  auto g = [](const std::vector<Array>& a) { return std::vector<Array>{fast::rms_norm(a[0], a[1], 1e-5f)}; };
  Array xs = rnd({3, 16}, float32, 123);
  Array out = vmap(g, {0, 0})({xs, ws})[0];
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(ops::allclose(ops::slice(out, {i, 0}, {i + 1, 16}),
                              fast::rms_norm(ops::slice(xs, {i, 0}, {i + 1, 16}),
                                             ops::reshape(ops::slice(ws, {i, 0}, {i + 1, 16}), {16}), 1e-5f),
                              1e-6, 1e-6)
                    .item<bool>())
        << i;
}

// The backward kernels against the composites' gradients: CrossEntropyGrad
// bit for bit (the CPU kernel follows the composite's steps), AttentionGrad
// within float32 rounding (another order of the sums).
TEST(Fast, BackwardKernelsMatchTheComposites) {
  nuvec::testing::CpuDefault cpu;
  for (DType dt : kFloats) {
    Array x = rnd({5, 37}, dt, 130, 2.0f);
    Array t = array({0, 36, 5, -1, 17});
    Array g = rnd({5}, float32, 131);
    for (float s : {0.0f, 0.25f}) {
      auto f = [&](const std::vector<Array>& a) {
        return std::vector<Array>{fast::cross_entropy(a[0], t, {.label_smoothing = s, .ignore_index = -1})};
      };
      Array got = vjp(f, {x}, {g}).second[0];
      // The formula, written with ops.
      Array lf = ops::astype(x, float32);
      Array e = ops::exp(lf - ops::max(lf, -1, true));
      Array p = e / ops::sum(e, -1, true);
      Array onehot = ops::astype(ops::equal(ops::arange(0, 37), ops::expand_dims(t, -1)), float32);
      Array d = p - onehot * (1.0f - s);
      if (s > 0) d = d - s / 37.0f;
      d = ops::where(ops::expand_dims(ops::equal(t, -1), -1), 0.0f, d);
      Array want = ops::astype(ops::expand_dims(g, -1) * d, dt);
      EXPECT_EQ(bits(got), bits(want)) << dtype_name(dt) << " smoothing " << s;
    }
  }
  // Attention: grouped heads, a bool mask and an additive one, causal.
  for (DType dt : {float32, bfloat16}) {
    Array q = rnd({2, 4, 6, 16}, dt, 140), k = rnd({2, 2, 9, 16}, dt, 141), v = rnd({2, 2, 9, 16}, dt, 142);
    Array g = rnd({2, 4, 6, 16}, dt, 143);
    Array add = rnd({6, 9}, dt, 144);
    for (int mode = 0; mode < 3; ++mode) {
      auto f = [&](const std::vector<Array>& a) {
        return std::vector<Array>{mode == 0   ? fast::scaled_dot_product_attention(a[0], a[1], a[2], 0.25f, "causal")
                                  : mode == 1 ? fast::scaled_dot_product_attention(a[0], a[1], a[2], 0.25f, "", add)
                                              : fast::scaled_dot_product_attention(a[0], a[1], a[2], 0.25f, "",
                                                                                   ops::greater(add, 0.0f))};
      };
      auto composite = [&](const std::vector<Array>& a) {
        // The float64 composite: scores, mask, softmax, values.
        Array qq = ops::astype(a[0], float64), kk = ops::astype(a[1], float64), vv = ops::astype(a[2], float64);
        kk = ops::repeat(kk, 2, 1);
        vv = ops::repeat(vv, 2, 1);
        Array sc = ops::matmul(qq, ops::swapaxes(kk, -1, -2)) * 0.25;
        if (mode == 0) sc = ops::where(ops::greater_equal(ops::expand_dims(ops::arange(3, 9), 1),
                                                          ops::expand_dims(ops::arange(0, 9), 0)),
                                       sc, -1e300);
        if (mode == 1) sc = sc + ops::astype(add, float64);
        if (mode == 2) sc = ops::where(ops::greater(add, 0.0f), sc, -1e300);
        return std::vector<Array>{ops::matmul(ops::softmax(sc, -1), vv)};
      };
      auto got = vjp(f, {q, k, v}, {g}).second;
      auto want = vjp(composite, {q, k, v}, {ops::astype(g, float64)}).second;
      for (int i = 0; i < 3; ++i)
        expect_near_all(f64(got[i]), f64(want[i]), tol(dt) * 4, tol(dt) * 8,
                        std::string("sdpa grad ") + std::string(dtype_name(dt)) + " mode " +
                            std::to_string(mode) + " input " + std::to_string(i));
    }
  }
}
