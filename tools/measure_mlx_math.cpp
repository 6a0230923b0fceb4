// Exhaustive comparison of include/nuvec/kernels/mlx_math.h with MLX 0.32's
// own CPU results, and of the logs the random distributions take with the
// C library's (glibc, what MLX calls on x86 Linux). The numbers it prints
// are the ones docs/random.md states. Never needed by the build or tests.
//
// Build (MLX from the pip package):
//   mlx=$(python3 -c "import
//   mlx.core,os;print(os.path.dirname(mlx.core.__file__))")
//   g++ -std=c++20 -O2 -ffp-contract=off -fno-math-errno -Iinclude \
//     -I$mlx/include tools/measure_mlx_math.cpp -L$mlx/lib -lmlx \
//     -Wl,-rpath,$mlx/lib -o /tmp/measure_mlx_math
// Run:   nice /tmp/measure_mlx_math [exp|erf|erfinv|normal|log|gumbel|
//                                    log1p|log1p64|half]   (all by default)
//        exp and erf also take a range of input bit patterns: exp 0 0x7fffffff
#include <mlx/mlx.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "nuvec/kernels/mlx_math.h"

namespace mx = mlx::core;
namespace k = nuvec::kernels;

namespace {

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint32_t to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
// Distance in float32 steps (the ordered bit patterns), NaN apart.
int64_t ulps(float a, float b) {
  auto key = [](float f) {
    int64_t i = static_cast<int32_t>(to_bits(f));
    return i < 0 ? -(i & 0x7fffffff) : i;
  };
  return std::llabs(key(a) - key(b));
}
int64_t ulps64(double a, double b) {
  auto key = [](double d) {
    int64_t i;
    std::memcpy(&i, &d, 8);
    return i < 0 ? -(i & 0x7fffffffffffffffll) : i;
  };
  return std::llabs(key(a) - key(b));
}

struct Tally {
  uint64_t n = 0, differ = 0, nan_mismatch = 0;
  int64_t max_ulp = 0;
  float worst = 0;
  double max_abs = 0;   // largest |ours - ref| among the differing results
  double max_rel1 = 0;  // largest |ours - ref| / (1 + |ref|), in units of 2^-23
  void add(float x, float ours, float ref) {
    ++n;
    bool an = std::isnan(ours), bn = std::isnan(ref);
    if (an || bn) {
      if (an != bn) ++nan_mismatch;
      return;
    }
    if (to_bits(ours) == to_bits(ref)) return;
    ++differ;
    max_abs = std::max(max_abs, std::fabs(double(ours) - double(ref)));
    max_rel1 = std::max(max_rel1, std::fabs(double(ours) - double(ref)) /
                                      (1 + std::fabs(double(ref))) * 0x1p23);
    int64_t u = ulps(ours, ref);
    if (u > max_ulp) max_ulp = u, worst = x;
  }
  void print(const char* what) const {
    std::printf(
        "%-28s %llu inputs, %llu differ (max %lld ULP, at %a; max |difference| "
        "%a, %.3f eps * (1 + |ref|)), "
        "%llu NaN mismatches\n",
        what, (unsigned long long)n, (unsigned long long)differ,
        (long long)max_ulp, worst, max_abs, max_rel1,
        (unsigned long long)nan_mismatch);
  }
};

// Every float with bits in [lo, hi] through MLX's op `f` against `ours`.
void against_mlx(const char* what, uint64_t lo, uint64_t hi,
                 const std::function<mx::array(const mx::array&)>& f,
                 const std::function<float(float)>& ours) {
  Tally t;
  const uint64_t chunk = 1u << 24;
  std::vector<uint32_t> bits(chunk);
  for (uint64_t b = lo; b <= hi; b += chunk) {
    uint64_t n = std::min<uint64_t>(chunk, hi - b + 1);
    for (uint64_t i = 0; i < n; ++i) bits[i] = static_cast<uint32_t>(b + i);
    mx::array in = mx::view(
        mx::array(bits.data(), {static_cast<int>(n)}, mx::uint32), mx::float32);
    mx::array out = f(in);
    mx::eval(out);
    const float* r = out.data<float>();
    for (uint64_t i = 0; i < n; ++i) {
      float x = from_bits(bits[i]);
      t.add(x, ours(x), r[i]);
    }
  }
  t.print(what);
}

// Every float with bits in [lo, hi]: ours(x) against ref(x).
void against_libm(const char* what, uint64_t lo, uint64_t hi,
                  float (*ours)(float), float (*ref)(float)) {
  Tally t;
  for (uint64_t b = lo; b <= hi; ++b) {
    float x = from_bits(static_cast<uint32_t>(b));
    t.add(x, ours(x), ref(x));
  }
  t.print(what);
}

float neg_one_plus() { return std::nextafter(-1.0f, 0.0f); }

// The float16 and bfloat16 inputs through MLX in their own dtype.
void half_types() {
  for (auto dt : {mx::float16, mx::bfloat16}) {
    std::vector<uint16_t> bits(65536);
    for (int i = 0; i < 65536; ++i) bits[i] = static_cast<uint16_t>(i);
    mx::array in = mx::view(mx::array(bits.data(), {65536}, mx::uint16), dt);
    const char* name = dt == mx::float16 ? "float16" : "bfloat16";
    auto check = [&](const char* fn, mx::array out, auto ours) {
      out = mx::astype(out, mx::float32);
      mx::array x32 = mx::astype(in, mx::float32);
      mx::eval(out, x32);
      Tally t;
      for (int i = 0; i < 65536; ++i) {
        float x = x32.data<float>()[i];
        t.add(x, ours(i), out.data<float>()[i]);
      }
      t.print((std::string(name) + " " + fn).c_str());
    };
    auto as_float = [&](uint16_t b, auto f) {
      if (dt == mx::float16) {
        k::float16_t h = k::bit_cast<k::float16_t>(b);
        return float(f(h));
      }
      k::bfloat16_t h = k::bit_cast<k::bfloat16_t>(b);
      return float(f(h));
    };
    check("exp", mx::exp(in),
          [&](int i) { return as_float(bits[i], k::MlxExp{}); });
    check("erf", mx::erf(in),
          [&](int i) { return as_float(bits[i], k::MlxErf{}); });
    check("erfinv", mx::erfinv(in),
          [&](int i) { return as_float(bits[i], k::MlxErfInv{}); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  mx::set_default_device(mx::Device::cpu);
  std::string only = argc > 1 ? argv[1] : "";
  auto want = [&](const char* w) { return only.empty() || only == w; };
  // exp and erf take an optional range of bit patterns (to split the run).
  uint64_t lo = argc > 3 ? std::stoull(argv[2], nullptr, 0) : 0;
  uint64_t hi = argc > 3 ? std::stoull(argv[3], nullptr, 0) : 0xffffffffull;
  if (want("exp"))
    against_mlx(
        "exp (float bits in range)", lo, hi,
        [](const mx::array& x) { return mx::exp(x); }, k::mlx_math::exp);
  if (want("erf"))
    against_mlx(
        "erf (float bits in range)", lo, hi,
        [](const mx::array& x) { return mx::erf(x); },
        [](float x) { return k::MlxErf{}(x); });
  // erfinv and the normal draws over every float a in (-1, 1) (MLX's
  // uniform inputs lie there): bits 0 to 0x3f7fffff and their negatives.
  if (want("erfinv")) {
    against_mlx(
        "erfinv (0, 1)", 0, 0x3f7fffff,
        [](const mx::array& x) { return mx::erfinv(x); }, k::mlx_math::erfinv);
    against_mlx(
        "erfinv (-1, 0)", 0x80000000u, 0xbf7fffffu,
        [](const mx::array& x) { return mx::erfinv(x); }, k::mlx_math::erfinv);
  }
  if (want("normal")) {
    // normal's float32 draw: sqrt(2) (a float32 constant) times erfinv.
    const float sqrt2 = static_cast<float>(std::sqrt(2.0));
    auto f = [sqrt2](const mx::array& x) {
      return mx::multiply(mx::array(sqrt2), mx::erfinv(x));
    };
    auto g = [sqrt2](float x) { return sqrt2 * k::mlx_math::erfinv(x); };
    against_mlx("normal draw, a in (0, 1)", 0, 0x3f7fffff, f, g);
    against_mlx("normal draw, a in (-1, 0)", 0x80000000u, 0xbf7fffffu, f, g);
  }
  if (want("log")) {
    against_libm("log vs logf (0, 1]", 1, 0x3f800000, k::mlx_math::log,
                 [](float x) { return std::log(x); });
    against_libm("log vs logf (1, inf)", 0x3f800001, 0x7f7fffff,
                 k::mlx_math::log, [](float x) { return std::log(x); });
  }
  if (want("gumbel"))  // -log(-log(u)), u in [0, 1)
    against_libm(
        "gumbel u in [0, 1)", 0, 0x3f7fffff,
        [](float u) { return -k::mlx_math::log(-k::mlx_math::log(u)); },
        [](float u) { return -std::log(-std::log(u)); });
  if (want("log1p"))  // laplace float32: log1p(-|u|), -|u| in (-1, 0]
    against_libm(
        "log1p vs log1pf (-1, 0]", 0x80000000u, 0xbf7fffffu,
        [](float x) { return float(k::math::log1p(double(x))); },
        [](float x) { return std::log1p(x); });
  if (want("log1p64")) {  // laplace float64: log1p of the widened float
    uint64_t n = 0, differ = 0;
    int64_t worst = 0;
    for (uint64_t b = 0x80000000u; b <= 0xbf7fffffu; ++b) {
      double x = from_bits(static_cast<uint32_t>(b));
      double a = k::math::log1p(x), r = std::log1p(x);
      ++n;
      if (a != r) ++differ, worst = std::max(worst, ulps64(a, r));
    }
    std::printf("%-28s %llu inputs, %llu differ (max %lld float64 ULP)\n",
                "float64 log1p, x in (-1, 0]", (unsigned long long)n,
                (unsigned long long)differ, (long long)worst);
  }
  if (want("half")) half_types();
  (void)neg_one_plus;
  return 0;
}
