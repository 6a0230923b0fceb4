// The cross-backend checks of the quantization primitives
// (docs/quantization.md): Quantize and Dequantize give the CPU's bits on
// the GPU in every format; the products are within a tolerance of the CPU
// (relative to the largest value of the result: another summation
// order, and the many-row path's dequantized weights in the input dtype),
// identical when run again, and row independent on the GPU (a matrix of up
// to ROW_INDEPENDENT_ROWS rows gives each row the bits of that row alone).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/gpu_ops.h"

namespace nuvec::testing::gpu_ops {

namespace {

const DType kFloat[] = {float32, float16, bfloat16};

struct Format {
  const char* mode;
  int group, bits;
};

std::string label(const Format& f) {
  return std::string(f.mode) + " g" + std::to_string(f.group) + " b" + std::to_string(f.bits);
}

// Every format: affine bits 2-8 (no 7) and groups 32, 64, 128; the
// floating modes.
std::vector<Format> all_formats() {
  std::vector<Format> f;
  for (int bits : {2, 3, 4, 5, 6, 8})
    for (int g : {32, 64, 128}) f.push_back({"affine", g, bits});
  f.push_back({"mxfp4", 32, 4});
  f.push_back({"nvfp4", 16, 4});
  f.push_back({"mxfp8", 32, 8});
  return f;
}

// A subset for the products (each bit width's unpacking, each mode).
std::vector<Format> product_formats() {
  return {{"affine", 64, 4}, {"affine", 32, 3}, {"affine", 128, 8}, {"affine", 64, 2},
          {"affine", 32, 5}, {"affine", 64, 6}, {"mxfp4", 32, 4},   {"nvfp4", 16, 4},
          {"mxfp8", 32, 8}};
}

std::optional<Array> biases_of(const std::vector<Array>& q) {
  if (q.size() > 2) return q[2];
  return std::nullopt;
}

// The packed form of w, made on the CPU and evaluated.
std::vector<Array> packed(const Array& w, const Format& f) {
  auto q = ops::quantize(w, f.group, f.bits, f.mode, std::nullopt, kCpu);
  for (Array& a : q) a.eval();
  return q;
}

double max_abs(const Array& x) {
  return ops::max(ops::abs(ops::astype(x, float64, kCpu), kCpu), false, kCpu).item<double>();
}

// The GPU within tol * max|cpu| of the CPU everywhere, the same bits when
// run again.
void expect_near(const std::function<Array(StreamOrDevice)>& f, double tol,
                 const std::string& what) {
  auto r = run_both(f, what);
  if (!r) return;
  const auto& [c, g] = *r;
  EXPECT_EQ(bits_of(g), bits_of(f(Device::gpu))) << what << ": not deterministic";
  const double scale = std::max(max_abs(c), 1e-30);
  const double err = max_abs(ops::subtract(ops::astype(c, float64, kCpu),
                                           ops::astype(g, float64, kCpu), kCpu));
  EXPECT_LE(err, tol * scale) << what << ": max error " << err << " of " << scale;
}

// Rows r of f(x) along axis `axis` (0 ... ndim - 2) equal f(x[r:r+1]) on
// the GPU, bit for bit.
void expect_rows_alone(const std::function<Array(const Array&)>& f, const Array& x, int axis,
                       const std::string& what) {
  Array all = f(x);
  const int n = x.shape(axis);
  for (int r = 0; r < n; ++r) {
    Shape lo(std::vector<int>(x.ndim(), 0)), hi = x.shape();
    lo[axis] = r, hi[axis] = r + 1;
    Shape olo(std::vector<int>(all.ndim(), 0)), ohi = all.shape();
    const int oaxis = axis + (all.ndim() - x.ndim());
    olo[oaxis] = r, ohi[oaxis] = r + 1;
    Array solo = f(ops::slice(x, lo, hi, kCpu));
    ++cases_checked();
    EXPECT_EQ(bits_of(ops::slice(all, olo, ohi, kCpu)), bits_of(solo)) << what << " row " << r;
  }
}

double product_tol(DType dt) { return dt == float32 ? 1e-5 : 2e-2; }

Array u32(const std::vector<uint32_t>& v) {
  return array(v, Shape{static_cast<int>(v.size())});
}

}  // namespace

void check_Quantize() {
  for (DType dt : {float32, float16, bfloat16, float64}) {
    Array w = values(dt, {6, 256}, 400);
    // Groups of zeros, of one value, and a wide range.
    Array special = ops::concatenate(
        {ops::zeros({1, 256}, dt, kCpu), ops::ones({1, 256}, dt, kCpu),
         ops::astype(ops::multiply(values(float32, {1, 256}, 401), 1e3f, kCpu), dt, kCpu),
         ops::astype(ops::multiply(values(float32, {1, 256}, 402), 1e-6f, kCpu), dt, kCpu)},
        0, kCpu);
    Array strided = ops::transpose(values(dt, {256, 4}, 403), kCpu);
    for (const Format& f : all_formats()) {
      if (dt == float64 && f.group != 64 && std::string(f.mode) == "affine") continue;
      for (const Array* x : {&w, &special, &strided}) {
        const size_t outs = std::string(f.mode) == "affine" ? 3 : 2;
        for (size_t i = 0; i < outs; ++i)
          expect_same([&](StreamOrDevice s) { return ops::quantize(*x, f.group, f.bits, f.mode,
                                                                   std::nullopt, s)[i]; },
                      "quantize " + name(dt) + " " + label(f) + " output " + std::to_string(i));
      }
    }
  }
  // A batch of matrices (rows over all leading axes).
  Array b = values(bfloat16, {2, 3, 128}, 404);
  expect_same([&](StreamOrDevice s) { return ops::quantize(b, 64, 4, "affine", std::nullopt, s)[0]; },
              "quantize batched");
}

void check_Dequantize() {
  for (DType dt : {float32, float16, bfloat16, float64}) {
    Array w = values(dt, {5, 256}, 410);
    for (const Format& f : all_formats()) {
      if (dt == float64 && f.group != 64 && std::string(f.mode) == "affine") continue;
      auto q = packed(w, f);
      for (std::optional<DType> out : {std::optional<DType>{}, std::optional<DType>{float32},
                                       std::optional<DType>{bfloat16},
                                       std::optional<DType>{float64}})
        expect_same([&](StreamOrDevice s) {
          return ops::dequantize(q[0], q[1], biases_of(q), f.group, f.bits, f.mode, std::nullopt,
                                 out, s);
        }, "dequantize " + name(dt) + " " + label(f) + " to " + (out ? name(*out) : "default"));
      // Sliced packed inputs (an offset into the buffers).
      expect_same([&](StreamOrDevice s) {
        return ops::dequantize(ops::slice(q[0], {1, 0}, {5, q[0].shape(1)}, kCpu),
                               ops::slice(q[1], {1, 0}, {5, q[1].shape(1)}, kCpu),
                               q.size() > 2 ? std::optional<Array>(ops::slice(
                                                  q[2], {1, 0}, {5, q[2].shape(1)}, kCpu))
                                            : std::nullopt,
                               f.group, f.bits, f.mode, std::nullopt, std::nullopt, s);
      }, "dequantize sliced " + name(dt) + " " + label(f));
    }
  }
}

void check_QuantizedMatmul() {
  const int K = 256, N = 256;
  for (DType dt : kFloat)
    for (const Format& f : product_formats())
      for (bool tr : {true, false}) {
        // W is [N, K] with transpose, else [K, N]; groups run along the last axis.
        Array w = ops::multiply(values(dt, tr ? Shape{N, K} : Shape{K, N}, 420), 0.3f, kCpu);
        auto q = packed(w, f);
        const std::string base = "quantized_matmul " + name(dt) + " " + label(f) +
                                 (tr ? " transposed" : "");
        auto qmm = [&](const Array& x, StreamOrDevice s) {
          return ops::quantized_matmul(x, q[0], q[1], biases_of(q), tr, f.group, f.bits, f.mode,
                                       s);
        };
        for (int m : {1, 3, 8, 9, 40}) {
          Array x = ops::multiply(values(dt, {m, K}, 421 + m), 0.3f, kCpu);
          const std::string what = base + " M=" + std::to_string(m);
          expect_near([&](StreamOrDevice s) { return qmm(x, s); }, product_tol(dt), what);
          if (m <= ROW_INDEPENDENT_ROWS && m > 1)
            expect_rows_alone([&](const Array& a) { return qmm(a, Device::gpu); }, x, 0, what);
        }
        // x [2, 3, K] against one matrix; transposed x; a vector.
        Array xb = ops::multiply(values(dt, {2, 3, K}, 430), 0.3f, kCpu);
        expect_near([&](StreamOrDevice s) { return qmm(xb, s); }, product_tol(dt), base + " x batched");
        expect_rows_alone([&](const Array& a) { return qmm(a, Device::gpu); }, xb, 1, base + " x batched");
        Array xt = ops::transpose(ops::multiply(values(dt, {K, 5}, 431), 0.3f, kCpu), kCpu);
        expect_near([&](StreamOrDevice s) { return qmm(xt, s); }, product_tol(dt), base + " x transposed");
        Array xv = ops::multiply(values(dt, {K}, 432), 0.3f, kCpu);
        expect_near([&](StreamOrDevice s) { return qmm(xv, s); }, product_tol(dt), base + " x vector");
      }
  // Batched matrices (each item its own W), a broadcast W and float64.
  for (DType dt : kFloat) {
    Format f{"affine", 64, 4};
    auto q = packed(ops::multiply(values(dt, {3, 128, 256}, 440), 0.3f, kCpu), f);
    for (int m : {2, 12}) {
      Array x = ops::multiply(values(dt, {3, m, 256}, 441), 0.3f, kCpu);
      const std::string what = "quantized_matmul batched W " + name(dt) + " M=" + std::to_string(m);
      expect_near([&](StreamOrDevice s) {
        return ops::quantized_matmul(x, q[0], q[1], q[2], true, 64, 4, "affine", s);
      }, product_tol(dt), what);
      if (m <= ROW_INDEPENDENT_ROWS)
        expect_rows_alone([&](const Array& a) {
          return ops::quantized_matmul(a, q[0], q[1], q[2], true, 64, 4, "affine", Device::gpu);
        }, x, 1, what);
    }
    auto one = packed(ops::multiply(values(dt, {128, 256}, 442), 0.3f, kCpu), f);
    Array x = ops::multiply(values(dt, {4, 2, 256}, 443), 0.3f, kCpu);
    auto bc = [&](const Array& a) { return ops::broadcast_to(a, {4, a.shape(0), a.shape(1)}, kCpu); };
    expect_near([&](StreamOrDevice s) {
      return ops::quantized_matmul(x, bc(one[0]), bc(one[1]), bc(one[2]), true, 64, 4, "affine", s);
    }, product_tol(dt), "quantized_matmul broadcast W " + name(dt));
  }
  // The tensor-core few-row kernel (4-bit affine, transposed, 16-bit x):
  // each group size, N not a multiple of 16, K over 4 to 16 warps, groups
  // left after the warps' steps (the scalar loads), a tall W, x at an
  // address that is not 16-byte aligned (the scalar loads).
  for (DType dt : {float16, bfloat16})
    for (int g : {32, 64, 128})
      for (auto [n, k] : {std::pair{72, 384}, std::pair{40, 8192}, std::pair{24, 2176}, std::pair{8200, 256}}) {
        const Format f{"affine", g, 4};
        auto qw = packed(ops::multiply(values(dt, {n, k}, 490), 0.3f, kCpu), f);
        auto qmm = [&](const Array& x, StreamOrDevice s) {
          return ops::quantized_matmul(x, qw[0], qw[1], qw[2], true, g, 4, "affine", s);
        };
        const std::string base = "quantized_matmul mma " + name(dt) + " g" + std::to_string(g) +
                                 " N=" + std::to_string(n) + " K=" + std::to_string(k);
        for (int m : {1, 2, 3, 5, 8}) {
          Array x = ops::multiply(values(dt, {m, k}, 491 + m), 0.3f, kCpu);
          const std::string what = base + " M=" + std::to_string(m);
          expect_near([&](StreamOrDevice s) { return qmm(x, s); }, product_tol(dt), what);
          if (m > 1) expect_rows_alone([&](const Array& a) { return qmm(a, Device::gpu); }, x, 0, what);
        }
        Array flat = ops::multiply(values(dt, {4 * k + 1}, 499), 0.3f, kCpu);
        flat.eval();
        Array xu = ops::reshape(ops::slice(flat, {1}, {4 * k + 1}, kCpu), {4, k}, kCpu);
        expect_near([&](StreamOrDevice s) { return qmm(xu, s); }, product_tol(dt), base + " x unaligned");
        expect_rows_alone([&](const Array& a) { return qmm(a, Device::gpu); }, xu, 0, base + " x unaligned");
      }
  auto q = packed(values(float64, {64, 128}, 450), {"affine", 64, 4});
  for (int m : {2, 10}) {
    Array x = values(float64, {m, 128}, 451);
    expect_near([&](StreamOrDevice s) {
      return ops::quantized_matmul(x, q[0], q[1], q[2], true, 64, 4, "affine", s);
    }, 1e-12, "quantized_matmul float64 M=" + std::to_string(m));
  }
}

void check_GatherMM() {
  for (DType dt : {float32, float16, bfloat16, float64})
    for (int m : {1, 3, 8, 9, 40})
      for (bool sorted : {false, true}) {
        Array a = ops::multiply(values(dt, {4, m, 96}, 460 + m), 0.3f, kCpu);
        Array b = ops::multiply(values(dt, {3, 96, 72}, 461), 0.3f, kCpu);
        // Unsorted indices, one past the end of b (clamped), or sorted runs.
        Array lhs = sorted ? u32({0, 0, 1, 2, 3, 3}) : u32({3, 0, 1, 1, 2, 0});
        Array rhs = sorted ? u32({0, 0, 1, 1, 2, 2}) : u32({2, 0, 3, 1, 0, 2});
        const std::string what = "gather_mm " + name(dt) + " M=" + std::to_string(m) +
                                 (sorted ? " sorted" : "");
        const double tol = dt == float64 ? 1e-12 : product_tol(dt);
        expect_near([&](StreamOrDevice s) { return ops::gather_mm(a, b, lhs, rhs, sorted, s); },
                    tol, what);
        if (m <= ROW_INDEPENDENT_ROWS && m > 1)
          expect_rows_alone([&](const Array& x) {
            return ops::gather_mm(x, b, lhs, rhs, sorted, Device::gpu);
          }, a, 1, what);
        // Strided operands: a transposed b stack, a broadcast a.
        Array bt = ops::swapaxes(ops::multiply(values(dt, {3, 72, 96}, 462), 0.3f, kCpu), 1, 2, kCpu);
        Array ab = ops::broadcast_to(ops::slice(a, {0, 0, 0}, {1, m, 96}, kCpu), {4, m, 96}, kCpu);
        expect_near([&](StreamOrDevice s) { return ops::gather_mm(ab, bt, lhs, rhs, sorted, s); },
                    tol, what + " strided");
      }
}

void check_GatherQMM() {
  const int E = 4, K = 256, N = 128;
  for (DType dt : kFloat)
    for (const Format& f : {Format{"affine", 64, 4}, Format{"affine", 32, 3}, Format{"mxfp4", 32, 4},
                            Format{"nvfp4", 16, 4}, Format{"mxfp8", 32, 8}})
      for (bool tr : {true, false})
        for (int m : {1, 3, 8, 9, 40})
          for (bool sorted : {false, true}) {
            Array w = ops::multiply(values(dt, tr ? Shape{E, N, K} : Shape{E, K, N}, 470), 0.3f, kCpu);
            auto q = packed(w, f);
            Array x = ops::multiply(values(dt, {3, m, K}, 471 + m), 0.3f, kCpu);
            Array lhs = sorted ? u32({0, 0, 1, 1, 2}) : u32({2, 0, 1, 2, 0});
            Array rhs = sorted ? u32({0, 1, 1, 3, 3}) : u32({3, 0, 2, 0, 5});
            const std::string what = "gather_qmm " + name(dt) + " " + label(f) +
                                     (tr ? " transposed" : "") + " M=" + std::to_string(m) +
                                     (sorted ? " sorted" : "");
            auto gq = [&](const Array& a, StreamOrDevice s) {
              return ops::gather_qmm(a, q[0], q[1], biases_of(q), lhs, rhs, tr, f.group, f.bits,
                                     f.mode, std::nullopt, sorted, s);
            };
            expect_near([&](StreamOrDevice s) { return gq(x, s); }, product_tol(dt), what);
            if (m <= ROW_INDEPENDENT_ROWS && m > 1)
              expect_rows_alone([&](const Array& a) { return gq(a, Device::gpu); }, x, 1, what);
          }
  // The decode shape of a mixture-of-experts layer: [T, 1, 1, K] tokens,
  // top-2 experts each.
  Format f{"affine", 64, 4};
  auto q = packed(ops::multiply(values(bfloat16, {8, 128, 512}, 480), 0.3f, kCpu), f);
  Array x = ops::multiply(values(bfloat16, {3, 1, 1, 512}, 481), 0.3f, kCpu);
  Array rhs = ops::reshape(u32({1, 6, 0, 1, 7, 2}), {3, 2}, kCpu);
  expect_near([&](StreamOrDevice s) {
    return ops::gather_qmm(x, q[0], q[1], q[2], std::nullopt, rhs, true, 64, 4, "affine",
                           std::nullopt, false, s);
  }, product_tol(bfloat16), "gather_qmm decode top-2");
}

}  // namespace nuvec::testing::gpu_ops
