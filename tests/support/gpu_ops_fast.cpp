// The cross-backend checks of the fast primitives (docs/fast.md): the GPU
// within the stated bounds of the CPU, the same bits when run again, and
// row independence on the GPU (a batch gives each row the bits of that row
// alone; the serial rule of causal attention where a GPU kernel serves it).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "support/gpu_ops.h"

namespace nuvec::testing::gpu_ops {

namespace {

const DType kFloat[] = {float32, float16, bfloat16};

// Each row r of f(x) (rows along axis 0) equals f(x[r:r+1]) bit for bit on
// the GPU.
void expect_rows_solo(const std::function<Array(const Array&)>& f, const Array& x,
                      const std::string& what) {
  Array all = f(x);
  for (int r = 0; r < x.shape(0); r += 3) {
    Array row = ops::slice(x, {r}, {r + 1});
    Array solo = f(row);
    ++cases_checked();
    EXPECT_EQ(bits_of(ops::slice(all, {r}, {r + 1})), bits_of(solo)) << what << " row " << r;
  }
}

}  // namespace

void check_RMSNorm() {
  for (DType dt : kFloat)
    for (int n : {7, 256, 4096, 5000, 20000}) {
      Array x = values(dt, {9, n}, 300 + n), w = values(dt, {n}, 301);
      std::string what = "rms_norm " + name(dt) + " n=" + std::to_string(n);
      expect_close([&](StreamOrDevice s) { return fast::rms_norm(x, w, 1e-5f, s); },
                   tolerance(dt), what);
      expect_close([&](StreamOrDevice s) { return fast::rms_norm(ops::transpose(x), std::nullopt, 1e-5f, s); },
                   tolerance(dt), what + " transposed");
      expect_rows_solo([&](const Array& a) { return fast::rms_norm(a, w, 1e-5f, Device::gpu); }, x, what);
    }
}

void check_LayerNorm() {
  for (DType dt : kFloat)
    for (int n : {5, 1024, 9000}) {
      Array x = values(dt, {7, n}, 310 + n), w = values(dt, {n}, 311), b = values(dt, {n}, 312);
      std::string what = "layer_norm " + name(dt) + " n=" + std::to_string(n);
      expect_close([&](StreamOrDevice s) { return fast::layer_norm(x, w, b, 1e-5f, s); },
                   tolerance(dt) * 4, what);
      expect_close([&](StreamOrDevice s) { return fast::layer_norm(x, std::nullopt, std::nullopt, 1e-5f, s); },
                   tolerance(dt) * 4, what + " plain");
      expect_rows_solo([&](const Array& a) { return fast::layer_norm(a, w, b, 1e-5f, Device::gpu); }, x, what);
    }
}

void check_AddRMSNorm() {
  for (DType dt : kFloat)
    for (int n : {64, 4096}) {
      Array x = values(dt, {5, n}, 320), r = values(dt, {5, n}, 321), w = values(dt, {n}, 322);
      std::string what = "add_rms_norm " + name(dt) + " n=" + std::to_string(n);
      expect_same([&](StreamOrDevice s) { return fast::add_rms_norm(x, r, w, 1e-5f, s).first; },
                  what + " h");
      expect_close([&](StreamOrDevice s) { return fast::add_rms_norm(x, r, w, 1e-5f, s).second; },
                   tolerance(dt), what);
    }
}

void check_RoPE() {
  for (DType dt : kFloat)
    for (bool trad : {false, true}) {
      Array x = values(dt, {3, 4, 6, 64}, 330 + trad);
      std::string what = "rope " + name(dt) + (trad ? " traditional" : "");
      expect_close([&](StreamOrDevice s) { return fast::rope(x, 64, trad, 10000.0f, 1.0f, 11, std::nullopt, s); },
                   tolerance(dt) * 2, what);
      expect_close([&](StreamOrDevice s) { return fast::rope(x, 32, trad, 500000.0f, 0.25f, array({0, 9, 2}), std::nullopt, s); },
                   tolerance(dt) * 2, what + " offsets, dims 32");
      // Decode: one position per item, each item with its own offset, alone.
      Array one = values(dt, {4, 8, 1, 64}, 333);
      Array offs = array({5, 0, 77, 1000});
      Array all = fast::rope(one, 64, trad, 10000.0f, 1.0f, offs, std::nullopt, Device::gpu);
      auto o = offs.to_vector<int32_t>();
      for (int b = 0; b < 4; ++b) {
        ++cases_checked();
        Array solo = fast::rope(ops::slice(one, {b}, {b + 1}), 64, trad, 10000.0f, 1.0f, o[b], std::nullopt,
                                Device::gpu);
        EXPECT_EQ(bits_of(ops::slice(all, {b}, {b + 1})), bits_of(solo)) << what << " item " << b;
      }
    }
}

void check_Softmax() {
  for (DType dt : kFloat)
    for (int n : {1, 33, 1024, 8192, 40000}) {
      Array x = values(dt, {6, n}, 340 + n);
      std::string what = "softmax " + name(dt) + " n=" + std::to_string(n);
      expect_close([&](StreamOrDevice s) { return ops::softmax(x, -1, false, s); }, tolerance(dt), what);
      expect_rows_solo([&](const Array& a) { return ops::softmax(a, -1, false, Device::gpu); }, x, what);
    }
}

void check_LogSumExp() {
  for (DType dt : kFloat)
    for (int n : {3, 2048, 50000}) {
      Array x = values(dt, {5, n}, 350 + n);
      std::string what = "logsumexp " + name(dt) + " n=" + std::to_string(n);
      expect_close([&](StreamOrDevice s) { return ops::logsumexp(x, -1, true, s); }, tolerance(dt), what);
      expect_rows_solo([&](const Array& a) { return ops::logsumexp(a, -1, true, Device::gpu); }, x, what);
    }
}

void check_CrossEntropy() {
  for (DType dt : kFloat)
    for (int n : {10, 32000, 70000}) {
      Array x = values(dt, {8, n}, 360 + n);
      Array t = random::randint(0, n, {8}, int32, random::key(n));
      std::string what = "cross_entropy " + name(dt) + " n=" + std::to_string(n);
      expect_close([&](StreamOrDevice s) { return fast::cross_entropy(x, t, s); }, 1e-4, what);
      expect_close([&](StreamOrDevice s) {
        return fast::cross_entropy(x, t, {.label_smoothing = 0.1f, .ignore_index = int(n / 2)}, s);
      }, 1e-4, what + " smoothed");
      Array all = fast::cross_entropy(x, t, Device::gpu);
      for (int r = 0; r < 8; r += 3) {
        ++cases_checked();
        Array solo = fast::cross_entropy(ops::slice(x, {r}, {r + 1}), ops::slice(t, {r}, {r + 1}), Device::gpu);
        EXPECT_EQ(bits_of(ops::slice(all, {r}, {r + 1})), bits_of(solo)) << what << " row " << r;
      }
    }
  // A target out of range gives NaN on the GPU (docs/fast.md).
  ++cases_checked();
  Array bad = fast::cross_entropy(values(float32, {2, 5}, 369), array({1, 7}), Device::gpu);
  EXPECT_TRUE(std::isnan(bad.to_vector<float>()[1]));
}

void check_Attention() {
  for (DType dt : kFloat) {
    for (auto [lq, lk, causal] : {std::tuple{1, 300, false}, std::tuple{4, 300, true},
                                  std::tuple{64, 64, true}, std::tuple{130, 257, false}}) {
      Array q = values(dt, {2, 8, lq, 128}, 370) * 0.3f, k = values(dt, {2, 2, lk, 128}, 371) * 0.3f,
            v = values(dt, {2, 2, lk, 128}, 372);
      std::string what = "sdpa " + name(dt) + " Lq=" + std::to_string(lq) + " Lk=" + std::to_string(lk) +
                         (causal ? " causal" : "") + " (" +
                         fast::plan_attention(q, k, v, causal ? "causal" : "", {}, {}, Device::gpu).kernel + ")";
      expect_close([&](StreamOrDevice s) {
        return fast::scaled_dot_product_attention(q, k, v, 0.09f, causal ? "causal" : "", {}, {}, false, s);
      }, tolerance(dt) * 2, what);
    }
    // The serial rule, where a GPU kernel serves the call.
    Array k = values(dt, {1, 2, 200, 64}, 380), v = values(dt, {1, 2, 200, 64}, 381);
    Array q = values(dt, {1, 4, 5, 64}, 382);
    if (!fast::plan_attention(q, k, v, "causal", {}, {}, Device::gpu).fused()) continue;
    Array all = fast::scaled_dot_product_attention(q, k, v, 0.125f, "causal", {}, {}, false, Device::gpu);
    for (int i = 0; i < 5; ++i) {
      const int prefix = 200 - 5 + i + 1;
      ++cases_checked();
      Array one = fast::scaled_dot_product_attention(
          ops::slice(q, {0, 0, i, 0}, {1, 4, i + 1, 64}), ops::slice(k, {0, 0, 0, 0}, {1, 2, prefix, 64}),
          ops::slice(v, {0, 0, 0, 0}, {1, 2, prefix, 64}), 0.125f, "", {}, {}, false, Device::gpu);
      EXPECT_EQ(bits_of(ops::slice(all, {0, 0, i, 0}, {1, 4, i + 1, 64})), bits_of(one))
          << "serial rule " << name(dt) << " row " << i;
    }
  }
}

void check_CrossEntropyGrad() {
  for (DType dt : kFloat)
    for (int n : {10, 32000}) {
      Array x = values(dt, {6, n}, 390 + n);
      Array t = random::randint(0, n, {6}, int32, random::key(n + 1));
      std::string what = "cross_entropy grad " + name(dt) + " n=" + std::to_string(n);
      expect_close([&](StreamOrDevice s) {
        Array r;
        with_stream(s, [&] {
          r = grad([&](const Array& l) { return ops::mean(fast::cross_entropy(l, t)); })(x);
        });
        return r;
      }, tolerance(dt), what);
    }
}

void check_AttentionGrad() {
  for (DType dt : {float16, bfloat16})
    for (auto [lq, lk, causal] : {std::tuple{64, 64, true}, std::tuple{100, 200, false},
                                  std::tuple{3, 130, true}}) {
      Array q = values(dt, {1, 4, lq, 64}, 395) * 0.3f, k = values(dt, {1, 2, lk, 64}, 396) * 0.3f,
            v = values(dt, {1, 2, lk, 64}, 397);
      Array g = values(dt, {1, 4, lq, 64}, 398);
      std::string what = "sdpa grad " + name(dt) + " Lq=" + std::to_string(lq) + (causal ? " causal" : "");
      for (int which = 0; which < 3; ++which)
        expect_close([&](StreamOrDevice s) {
          std::vector<Array> r;
          with_stream(s, [&] {
            auto f = [&](const std::vector<Array>& a) {
              return std::vector<Array>{fast::scaled_dot_product_attention(a[0], a[1], a[2], 0.125f,
                                                                           causal ? "causal" : "")};
            };
            r = vjp(f, {q, k, v}, {g}).second;
          });
          return r[which];
        }, tolerance(dt) * 2, what + " input " + std::to_string(which));
    }
}

}  // namespace nuvec::testing::gpu_ops
