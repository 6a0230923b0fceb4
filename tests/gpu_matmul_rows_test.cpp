// Row independence of dense products on the GPU (docs/quantization.md, "Row
// independence"): a product of at most ROW_INDEPENDENT_ROWS rows per matrix
// (src/backend/cuda/matmul_rows.cu, also under addmm) gives each row the
// bits of that row's product alone, with the batch or without it, in
// float32, float16, bfloat16 and float64; checked bit for bit over random
// shapes (k from 1 to 8192, odd sizes, batches, broadcast, transposed and
// strided operands), and the values against a float64 reference within the
// kernels' summation bound. Skipped where no GPU is present (CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "support/gpu.h"

namespace nuvec::testing {

namespace {

const StreamOrDevice G = Device::gpu;

std::string label(DType d) { return std::string(dtype_name(d)); }

// Normal values in dtype dt, evaluated on the CPU.
Array values(const Shape& s, DType dt, int seed) {
  Array x = ops::astype(random::normal(s, random::key(seed), kCpu), dt, kCpu);
  x.eval();
  return x;
}

struct Case {
  DType dt;
  int m, k, n;
  Shape batch;
  int a_layout;  // 0 dense, 1 transposed view, 2 every other column of a wider
                 // matrix
  int b_layout;  // 0 dense [k, n], 1 transposed view of [n, k], 2 strided
                 // (copied), 3 2-D broadcast
  std::string what() const {
    std::string s = label(dt) + " m" + std::to_string(m) + " k" +
                    std::to_string(k) + " n" + std::to_string(n) + " batch(";
    for (int d : batch) s += std::to_string(d) + ",";
    return s + ") a" + std::to_string(a_layout) + " b" +
           std::to_string(b_layout);
  }
};

Shape with(const Shape& batch, int r, int c) {
  Shape s = batch;
  s.push_back(r);
  s.push_back(c);
  return s;
}

Array operand_a(const Case& c, int seed) {
  if (c.a_layout == 1)
    return ops::swapaxes(values(with(c.batch, c.k, c.m), c.dt, seed), -1, -2,
                         kCpu);
  if (c.a_layout == 2) {
    Array w = values(with(c.batch, c.m, 2 * c.k), c.dt, seed);
    std::vector<int> start(w.ndim(), 0),
        stop(w.shape().begin(), w.shape().end()), step(w.ndim(), 1);
    step.back() = 2;
    return ops::slice(w, start, stop, step, kCpu);
  }
  return values(with(c.batch, c.m, c.k), c.dt, seed);
}

Array operand_b(const Case& c, int seed) {
  if (c.b_layout == 1)
    return ops::swapaxes(values(with(c.batch, c.n, c.k), c.dt, seed), -1, -2,
                         kCpu);
  if (c.b_layout == 2) {
    Array w = values(with(c.batch, 2 * c.k, 2 * c.n), c.dt, seed);
    std::vector<int> start(w.ndim(), 0),
        stop(w.shape().begin(), w.shape().end()), step(w.ndim(), 2);
    for (size_t i = 0; i + 2 < step.size(); ++i) step[i] = 1;
    return ops::slice(w, start, stop, step, kCpu);
  }
  if (c.b_layout == 3)
    return values({c.k, c.n}, c.dt, seed);  // matmul broadcasts it
  return values(with(c.batch, c.k, c.n), c.dt, seed);
}

// x[..., r:r+1, :] (one row of every matrix).
Array row(const Array& x, int r) {
  Shape lo(std::vector<int>(x.ndim(), 0)), hi = x.shape();
  lo[x.ndim() - 2] = r, hi[x.ndim() - 2] = r + 1;
  return ops::slice(x, lo, hi, kCpu);
}

// Item `i` (row-major over the batch axes) of x, the batch axes kept at 1;
// x with fewer axes (a broadcast operand) as it is.
Array item(const Array& x, const Shape& batch, int64_t i) {
  if (x.ndim() < int(batch.size()) + 2) return x;
  Shape lo(std::vector<int>(x.ndim(), 0)), hi = x.shape();
  for (int d = int(batch.size()) - 1; d >= 0; --d) {
    lo[d] = int(i % batch[d]), hi[d] = lo[d] + 1;
    i /= batch[d];
  }
  return ops::slice(x, lo, hi, kCpu);
}

std::vector<double> as_f64(const Array& x) {
  return ops::astype(x, float64, kCpu).to_vector<double>();
}

double unit_roundoff(DType d) {
  if (d == bfloat16) return std::ldexp(1.0, -8);
  if (d == float16) return std::ldexp(1.0, -11);
  if (d == float64) return std::ldexp(1.0, -53);
  return std::ldexp(1.0, -24);
}

// |gpu - ref| <= (ceil(k / 32) + 16) u_acc sum_k |a b| + u_T (|ref| + that)
// + the smallest normal of T: the longest chain of roundings in either
// kernel is a lane's or a slice's sequential fmas (k / 32 at most) plus the
// tree over lanes, warps and blocks (at most 16 levels), then one rounding
// to T (u_acc: float's for the 16-bit types).
void expect_values(const Case& c, const Array& a, const Array& b,
                   const Array& g) {
  Array a64 = ops::astype(a, float64, kCpu),
        b64 = ops::astype(b, float64, kCpu);
  const std::vector<double> ref =
      ops::matmul(a64, b64, kCpu).to_vector<double>();
  const std::vector<double> mag =
      ops::matmul(ops::abs(a64, kCpu), ops::abs(b64, kCpu), kCpu)
          .to_vector<double>();
  const std::vector<double> got = as_f64(g);
  ASSERT_EQ(got.size(), ref.size()) << c.what();
  const double u_acc =
      c.dt == float64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  const double u = unit_roundoff(c.dt);
  const double tiny = c.dt == float16    ? std::ldexp(1.0, -24)
                      : c.dt == bfloat16 ? 1e-38
                                         : 0.0;
  const double depth = std::ceil(c.k / 32.0) + 16.0;
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double sum_err = depth * u_acc * mag[i];
    const double bound = sum_err + u * (std::fabs(ref[i]) + sum_err) + tiny;
    const double r = std::fabs(got[i] - ref[i]) / bound;
    if (!(r <= worst)) worst = r, at = i;  // NaN is the worst
  }
  EXPECT_LE(worst, 1.0) << c.what() << ": element " << at << " is " << got[at]
                        << ", float64 " << ref[at];
}

void check_case(const Case& c, int seed, std::mt19937& rng) {
  Array a = operand_a(c, seed), b = operand_b(c, seed + 1);
  Array full = ops::matmul(a, b, G);
  full.eval();
  const std::vector<uint8_t> all = bits_of(full);
  EXPECT_EQ(all, bits_of(ops::matmul(a, b, G)))
      << c.what() << ": not deterministic";
  // Each row with the batch.
  for (int r = 0; r < c.m; ++r)
    EXPECT_EQ(bits_of(row(full, r)), bits_of(ops::matmul(row(a, r), b, G)))
        << c.what() << " row " << r;
  // One row of one item, alone.
  int64_t items = 1;
  for (int d : c.batch) items *= d;
  for (int t = 0; t < 2; ++t) {
    const int64_t i = int64_t(rng() % uint32_t(items));
    const int r = int(rng() % uint32_t(c.m));
    Array one =
        ops::matmul(row(item(a, c.batch, i), r), item(b, c.batch, i), G);
    EXPECT_EQ(bits_of(row(item(full, c.batch, i), r)), bits_of(one))
        << c.what() << " item " << i << " row " << r;
  }
  expect_values(c, a, b, full);
}

const DType kFloats[] = {float32, float16, bfloat16, float64};

}  // namespace

// Hand-picked edges: k below one vector, odd k and n, one column, the k at
// which the n-dense kernel's cluster grows (2048, 4096, 8192).
TEST(GpuRegistryRows, MatmulEdges) {
  NUVEC_GPU_REQUIRED();
  std::mt19937 rng(7);
  int seed = 100;
  for (DType dt : kFloats)
    for (int bl = 0; bl < 4; ++bl)
      for (auto [m, k, n] : std::vector<std::array<int, 3>>{{1, 1, 1},
                                                            {8, 1, 9},
                                                            {3, 7, 1},
                                                            {8, 9, 65},
                                                            {5, 2047, 33},
                                                            {8, 2048, 17},
                                                            {2, 4096, 70},
                                                            {7, 8192, 24}}) {
        Case c{dt, m, k, n, bl == 3 ? Shape{2} : Shape{}, seed % 3, bl};
        check_case(c, seed, rng);
        seed += 2;
      }
}

// Random shapes: m 1-8, k up to 5000, n up to 300, 0-2 batch axes.
TEST(GpuRegistryRows, MatmulRandomShapes) {
  NUVEC_GPU_REQUIRED();
  std::mt19937 rng(2026);
  const int ks[] = {2,    8,    15,   33,   100,  257, 640,
                    1000, 1023, 1500, 3001, 4100, 5000};
  const int ns[] = {1, 2, 5, 16, 63, 64, 65, 130, 257, 300};
  const Shape batches[] = {{}, {3}, {2, 2}, {1, 3}};
  for (int i = 0; i < 64; ++i) {
    Case c;
    c.dt = kFloats[i % 4];
    c.b_layout = (i / 4) % 4;
    c.m = 1 + int(rng() % 8);
    c.k = ks[rng() % std::size(ks)];
    c.n = ns[rng() % std::size(ns)];
    c.batch = batches[rng() % std::size(batches)];
    c.a_layout = int(rng() % 3);
    if (c.k >= 3000 && c.n > 64)
      c.n = 64;  // the float64 reference on the CPU stays quick
    check_case(c, 1000 + 2 * i, rng);
  }
}

// addmm with at most 8 rows: the product is the few-row kernel's, then the
// element-wise tail (alpha, beta, c); each row alone has the same bits, and
// the values are the CPU's within the harness's tolerance.
TEST(GpuRegistryRows, AddmmRows) {
  NUVEC_GPU_REQUIRED();
  int seed = 5000;
  for (DType dt : kFloats)
    for (auto [m, k, n] : std::vector<std::array<int, 3>>{
             {1, 64, 48}, {8, 300, 65}, {6, 4096, 40}}) {
      Array a = values({m, k}, dt, seed), b = values({k, n}, dt, seed + 1);
      Array bias = values({n}, dt, seed + 2),
            full_c = values({m, n}, dt, seed + 3);
      seed += 4;
      struct Sub {
        const char* what;
        const Array& c;
        float alpha, beta;
      };
      for (const Sub& s :
           {Sub{"bias", bias, 1.0f, 1.0f}, Sub{"bias alpha", bias, 0.5f, 1.0f},
            Sub{"full c", full_c, -2.0f, 0.5f}}) {
        const std::string what = std::string("addmm ") + s.what + " " +
                                 label(dt) + " m" + std::to_string(m) + " k" +
                                 std::to_string(k);
        Array g = ops::addmm(s.c, a, b, s.alpha, s.beta, G);
        for (int r = 0; r < m; ++r) {
          Array cr = s.c.ndim() == 2 ? row(s.c, r) : s.c;
          EXPECT_EQ(bits_of(row(g, r)),
                    bits_of(ops::addmm(cr, row(a, r), b, s.alpha, s.beta, G)))
              << what << " row " << r;
        }
        Array cpu = ops::addmm(s.c, a, b, s.alpha, s.beta, kCpu);
        EXPECT_TRUE(ops::allclose(ops::astype(cpu, float64, kCpu),
                                  ops::astype(g, float64, kCpu), tolerance(dt),
                                  tolerance(dt), true, kCpu)
                        .item<bool>())
            << what;
      }
    }
}

}  // namespace nuvec::testing
