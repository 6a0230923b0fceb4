// compile's standard set of functions (issue 6), shared by the CPU
// benchmark (compile_bench.cpp, which pairs each with a hand-written loop)
// and the GPU one (gpu_compile_bench.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nuvec/nuvec.h>

namespace nuvec::bench {

using Fn = std::function<Arrays(const Arrays&)>;

struct StandardFunction {
  const char* name;
  int inputs;
  int outputs;
  Fn f;
  Shape shape;  // empty: {n}, the benchmark's size
  Shape side;   // the shape of inputs after the first (broadcast), if any
};

inline constexpr float kRsqrt2 = 0.70710678118654752f;
inline constexpr float kC = 0.7978845608028654f;  // sqrt(2 / pi)
inline constexpr float b1 = 0.9f, b2 = 0.999f, lr = 1e-3f, eps = 1e-8f;

inline std::vector<StandardFunction> standard_set() {
  using A = const Arrays&;
  return {
      {"x*x+1", 1, 1, [](A a) { return Arrays{a[0] * a[0] + 1.0f}; }, {}, {}},
      {"GELU (erf)", 1, 1, [](A a) { return Arrays{a[0] * (ops::erf(a[0] * kRsqrt2) + 1.0f) * 0.5f}; }, {}, {}},
      {"GELU (tanh)", 1, 1,
       [](A a) {
         const Array& x = a[0];
         return Arrays{x * (ops::tanh((x + x * x * x * 0.044715f) * kC) + 1.0f) * 0.5f};
       },
       {}, {}},
      {"SwiGLU silu(g) * u", 2, 1, [](A a) { return Arrays{a[0] * ops::sigmoid(a[0]) * a[1]}; }, {}, {}},
      {"Adam update (4 in, 3 out)", 4, 3,
       [](A a) {
         Array m = a[2] * b1 + a[1] * (1.0f - b1);
         Array v = a[3] * b2 + a[1] * a[1] * (1.0f - b2);
         return Arrays{a[0] - m * lr / (ops::sqrt(v) + eps), m, v};
       },
       {}, {}},
      {"exp(sin(x)*2+cos(x))/(1+abs(x))", 1, 1,
       [](A a) {
         const Array& x = a[0];
         return Arrays{ops::exp(ops::sin(x) * 2.0f + ops::cos(x)) / (ops::abs(x) + 1.0f)};
       },
       {}, {}},
      {"scale-bias-relu [4096,4096]", 3, 1, [](A a) { return Arrays{ops::maximum(a[0] * a[1] + a[2], 0.0f)}; },
       {4096, 4096}, {4096}},
  };
}

/// An optimizer step: the set's Adam update over `params` parameters as one
/// function of [p..., m..., v..., g...] returning [p..., m..., v...]
/// (gpu_compile_bench step, compile_bench).
inline Fn adam_step(int params) {
  Fn adam;
  for (const auto& c : standard_set())
    if (std::string(c.name).rfind("Adam", 0) == 0) adam = c.f;
  return [adam, params](const Arrays& a) {
    Arrays out(3 * static_cast<size_t>(params));
    for (int k = 0; k < params; ++k) {
      Arrays r = adam(Arrays{a[k], a[3 * params + k], a[params + k], a[2 * params + k]});
      for (int j = 0; j < 3; ++j) out[j * params + k] = r[j];
    }
    return out;
  };
}

}  // namespace nuvec::bench
