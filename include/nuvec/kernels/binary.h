// Scalar functors of the element-wise binary primitives, one per registry
// entry. Both operands have one dtype (ops promote first). Integer semantics
// are defined for every input: wrapping arithmetic, Python's sign rules for
// floor division and remainder, x // 0 == 0 and x % 0 == x (as MLX),
// integer powers with a negative exponent 0 (as MLX), over-wide shifts.
#pragma once

#include "complex.h"
#include "math_f32_special.h"
#include "math_f64_special.h"
#include "types.h"
#include "unary.h"

namespace nuvec::kernels {

// 16-bit float + - * in one 16-bit instruction on GPUs that have them for
// both types (half.h); elsewhere computed in float32 and rounded.
#ifdef NUVEC_GPU_HALF_INSTRUCTIONS
#define NUVEC_GPU_HALF_ARITH true
#define NUVEC_GPU_HALF_CALL(T, op, x, y)                                 \
  T::from_bits(same_v<T, bfloat16_t> ? gpu_bfloat_##op(x.bits, y.bits) \
                                     : gpu_half_##op(x.bits, y.bits))
#else
#define NUVEC_GPU_HALF_ARITH false
#define NUVEC_GPU_HALF_CALL(T, op, x, y) T()
#endif

#define NUVEC_WRAPPING_BINARY(Name, op, gpu)                         \
  struct Name {                                                      \
    template <class T>                                               \
    NUVEC_KERNEL_INLINE T operator()(T x, T y) const {               \
      if constexpr (is_int_v<T>) {                                   \
        using U = unsigned_t<T>;                                     \
        return T(U(x) op U(y));                                      \
      } else if constexpr (is_bool_v<T>) {                           \
        return bool(int(x) op int(y));                               \
      } else if constexpr (is_complex_v<T>) {                        \
        return x op y;                                               \
      } else if constexpr (NUVEC_GPU_HALF_ARITH && is_half_v<T>) {   \
        return NUVEC_GPU_HALF_CALL(T, gpu, x, y);                    \
      } else {                                                       \
        using C = compute_t<T>;                                      \
        return from_arith<T>(C(x) op C(y));                          \
      }                                                              \
    }                                                                \
  };
NUVEC_WRAPPING_BINARY(Add, +, add)
NUVEC_WRAPPING_BINARY(Subtract, -, sub)
NUVEC_WRAPPING_BINARY(Multiply, *, mul)
#undef NUVEC_WRAPPING_BINARY
#undef NUVEC_GPU_HALF_CALL
#undef NUVEC_GPU_HALF_ARITH

#ifdef NUVEC_GPU_HALF_INSTRUCTIONS
/// bfloat16(x / y) by an approximate reciprocal where that gives the same
/// bits as the IEEE division: the exact quotient of two bfloat16 values is
/// never a midpoint of the bfloat16 grid and lies at least 2^-17 of itself
/// away from every midpoint (its numerator X 2^a - (2K + 1) Y 2^(b + c - 1)
/// is a nonzero multiple of 2^(b + c - 1)), while x * rcp.approx(y) is
/// within 1.5 * 2^-23 of it where that product is a normal float. Elsewhere
/// (zeros, infinities, NaNs, subnormal or huge quotients and divisors: the
/// product leaves [2^-125, 2^127]) the IEEE division.
/// Gpu.HalfArithmeticEqualsFloatRounding checks every pair.
__device__ __forceinline__ bfloat16_t gpu_bfloat_div(bfloat16_t x, bfloat16_t y) {
  float a = x, b = y, r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(b));
  float q = a * r;
  float aq = __builtin_fabsf(q);
  if (!(aq >= 0x1p-125f && aq <= 0x1p127f)) q = a / b;
  return bfloat16_t::from_bits(gpu_bfloat_bits(q));
}
#endif

struct Divide {
  template <class T>
    requires(is_float_v<T> || is_complex_v<T>)
  NUVEC_KERNEL_INLINE T operator()(T x, T y) const {
#ifdef NUVEC_GPU_HALF_INSTRUCTIONS
    if constexpr (same_v<T, bfloat16_t>) return gpu_bfloat_div(x, y);
#endif
    using C = compute_t<T>;
    return from_arith<T>(C(x) / C(y));
  }
};

/// float32 division for the generated GPU kernels' packs (kernels::Small):
/// Divide's bits wherever outside(x, y) is 0, that is where both |x| and |y|
/// lie in [2^-60, 2^60) (so neither is 0, subnormal, inf or NaN, and the
/// quotient and every intermediate below are normal). There the GPU
/// computes the steps of its correctly rounded division without the check
/// for special operands and the call to the slow path that `x / y` compiles
/// to: a reciprocal estimate refined by one Newton step, the quotient, its
/// exact residual (fma), and the corrected quotient. Elsewhere, and on the
/// CPU, it is `x / y`.
template <>
struct Small<Divide> {
  static constexpr float kLow = 0x1.0p-60f, kHigh = 0x1.0p60f;  // |x|, |y| in [kLow, kHigh)
  NUVEC_KERNEL_INLINE static u32 outside(float x, float y) {
    float ax = __builtin_fabsf(x), ay = __builtin_fabsf(y);
    return u32(!((ax >= kLow) & (ax < kHigh) & (ay >= kLow) & (ay < kHigh)));
  }
  NUVEC_KERNEL_INLINE float operator()(float x, float y) const {
#ifdef __CUDA_ARCH__
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
    r = __builtin_fmaf(r, __builtin_fmaf(-y, r, 1.0f), r);
    float q = x * r;
    return __builtin_fmaf(r, __builtin_fmaf(-y, q, x), q);
#else
    return x / y;
#endif
  }
};

namespace math {
/// The exact remainder of x / y with the sign of x (C's fmod), by long
/// division of the significands; NaN for y == 0 or infinite x.
NUVEC_KERNEL_INLINE double fmod_exact(double x, double y) {
  double ax = __builtin_fabs(x), ay = __builtin_fabs(y);
  if (!(ay > 0.0) || !(ax - ax == 0.0) || ay != ay) return (x * y) / (x * y);
  if (ax < ay) return x;
  u64 bx = bit_cast<u64>(ax), by = bit_cast<u64>(ay);
  int ex = int(bx >> 52), ey = int(by >> 52);
  u64 mx = bx & 0xfffffffffffffull, my = by & 0xfffffffffffffull;
  if (ex == 0) {  // subnormal: normalise
    while (!(mx & (1ull << 52))) { mx <<= 1; --ex; }
    ++ex;
  } else {
    mx |= 1ull << 52;
  }
  if (ey == 0) {
    while (!(my & (1ull << 52))) { my <<= 1; --ey; }
    ++ey;
  } else {
    my |= 1ull << 52;
  }
  for (; ex > ey; --ex) {
    if (mx >= my) mx -= my;
    mx <<= 1;
  }
  if (mx >= my) mx -= my;
  if (mx == 0) return __builtin_copysign(0.0, x);
  while (!(mx & (1ull << 52))) { mx <<= 1; --ey; }
  double r;
  if (ey > 0) {
    r = bit_cast<double>((u64(ey) << 52) | (mx & 0xfffffffffffffull));
  } else {  // subnormal result: exact, built by scaling down
    r = bit_cast<double>((u64(ey + 1022) << 52) |
                         (mx & 0xfffffffffffffull)) *
        2.2250738585072014e-308;
  }
  return __builtin_copysign(r, x);
}
}  // namespace math

struct FloorDivide {
  template <class T>
    requires(!is_complex_v<T>)
  NUVEC_KERNEL_INLINE T operator()(T x, T y) const {
    if constexpr (is_float_v<T>) {
      using C = compute_t<T>;
      return T(Floor{}(C(C(x) / C(y))));
    } else if constexpr (is_bool_v<T>) {
      return y ? x : false;
    } else if constexpr (is_signed_int_v<T>) {
      if (y == 0) return T(0);
      if (y == T(-1)) return Negative{}(x);
      T q = T(x / y);
      return T((x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q);
    } else {
      return y == 0 ? T(0) : T(x / y);
    }
  }
};

struct Remainder {
  template <class T>
    requires(!is_complex_v<T>)
  NUVEC_KERNEL_INLINE T operator()(T x, T y) const {
    if constexpr (is_float_v<T>) {
      using C = compute_t<T>;
      C r = C(math::fmod_exact(double(C(x)), double(C(y))));
      C cy = y;
      return T((r != C(0) && ((r < C(0)) != (cy < C(0)))) ? C(r + cy) : r);
    } else if constexpr (is_bool_v<T>) {
      return y ? false : x;
    } else if constexpr (is_signed_int_v<T>) {
      if (y == 0) return x;
      if (y == T(-1)) return T(0);
      T r = T(x % y);
      return T((r != 0 && ((r < 0) != (y < 0))) ? r + y : r);
    } else {
      return y == 0 ? x : T(x % y);
    }
  }
};

struct Power {
  template <class T>
  NUVEC_KERNEL_INLINE T operator()(T x, T y) const {
    if constexpr (is_float_v<T>) {
      using C = compute_t<T>;
      return T(math::pow(C(x), C(y)));
    } else if constexpr (is_complex_v<T>) {
      return math::pow(x, y);
    } else if constexpr (is_bool_v<T>) {
      return x || !y;
    } else {
      using U = unsigned_t<T>;
      if constexpr (is_signed_int_v<T>) {
        if (y < 0) return T(0);  // MLX: even for a base of 1 or -1
      }
      U base = U(x), result = 1;
      for (U e = U(y); e != 0; e >>= 1) {
        if (e & 1) result = U(result * base);
        base = U(base * base);
      }
      return T(result);
    }
  }
};

/// a < b with NaN never less; complex numbers compare lexicographically.
template <class T>
NUVEC_KERNEL_INLINE bool less_than(T a, T b) {
  if constexpr (is_complex_v<T>) {
    return a.re < b.re || (a.re == b.re && a.im < b.im);
  } else if constexpr (is_half_v<T>) {
    return float(a) < float(b);
  } else {
    return a < b;
  }
}
template <class T>
NUVEC_KERNEL_INLINE bool equal_to(T a, T b) {
  if constexpr (is_complex_v<T>) {
    return a.re == b.re && a.im == b.im;
  } else if constexpr (is_half_v<T>) {
    return float(a) == float(b);
  } else {
    return a == b;
  }
}
template <class T>
NUVEC_KERNEL_INLINE bool any_nan(T a) {
  if constexpr (is_complex_v<T>) {
    return a.re != a.re || a.im != a.im;
  } else {
    return is_nan(a);
  }
}

// NaN propagates; otherwise x only when strictly greater (MLX's rule, so
// maximum(-0.0, 0.0) is 0.0 and maximum(0.0, -0.0) is -0.0).
struct Maximum {
  template <class T>
  NUVEC_KERNEL_INLINE T operator()(T x, T y) const {
    return any_nan(x) ? x : (less_than(y, x) ? x : y);
  }
};
struct Minimum {
  template <class T>
  NUVEC_KERNEL_INLINE T operator()(T x, T y) const {
    return any_nan(x) ? x : (less_than(x, y) ? x : y);
  }
};

struct Equal {
  template <class T>
  NUVEC_KERNEL_INLINE bool operator()(T x, T y) const { return equal_to(x, y); }
};
struct NotEqual {
  template <class T>
  NUVEC_KERNEL_INLINE bool operator()(T x, T y) const { return !equal_to(x, y); }
};
struct Less {
  template <class T>
  NUVEC_KERNEL_INLINE bool operator()(T x, T y) const { return less_than(x, y); }
};
struct LessEqual {
  template <class T>
  NUVEC_KERNEL_INLINE bool operator()(T x, T y) const {
    return less_than(x, y) || equal_to(x, y);
  }
};
struct Greater {
  template <class T>
  NUVEC_KERNEL_INLINE bool operator()(T x, T y) const { return less_than(y, x); }
};
struct GreaterEqual {
  template <class T>
  NUVEC_KERNEL_INLINE bool operator()(T x, T y) const {
    return less_than(y, x) || equal_to(x, y);
  }
};

struct LogicalAnd {
  template <class T>
  NUVEC_KERNEL_INLINE bool operator()(T x, T y) const { return truth(x) && truth(y); }
};
struct LogicalOr {
  template <class T>
  NUVEC_KERNEL_INLINE bool operator()(T x, T y) const { return truth(x) || truth(y); }
};

#define NUVEC_BITWISE_BINARY(Name, op)                          \
  struct Name {                                                 \
    template <class T>                                          \
      requires(is_int_v<T> || is_bool_v<T>)                     \
    NUVEC_KERNEL_INLINE T operator()(T x, T y) const {          \
      return T(x op y);                                         \
    }                                                           \
  };
NUVEC_BITWISE_BINARY(BitwiseAnd, &)
NUVEC_BITWISE_BINARY(BitwiseOr, |)
NUVEC_BITWISE_BINARY(BitwiseXor, ^)
#undef NUVEC_BITWISE_BINARY

/// x << y; a count that is negative or at least the bit width gives 0.
struct LeftShift {
  template <class T>
    requires(is_int_v<T> || is_bool_v<T>)
  NUVEC_KERNEL_INLINE T operator()(T x, T y) const {
    if constexpr (is_bool_v<T>) {
      return x && !y;
    } else {
      using U = unsigned_t<T>;
      bool in_range = y >= 0 && y < T(sizeof(T) * 8);
      return in_range ? T(U(U(x) << y)) : T(0);
    }
  }
};
/// x >> y (arithmetic for signed types); an over-wide or negative count
/// gives 0, or -1 for a negative signed x.
struct RightShift {
  template <class T>
    requires(is_int_v<T> || is_bool_v<T>)
  NUVEC_KERNEL_INLINE T operator()(T x, T y) const {
    if constexpr (is_bool_v<T>) {
      return x && !y;
    } else {
      bool in_range = y >= 0 && y < T(sizeof(T) * 8);
      T fill = T(is_signed_int_v<T> && x < 0 ? -1 : 0);
      return in_range ? T(x >> y) : fill;
    }
  }
};

struct ArcTan2 {
  template <class T>
    requires is_float_v<T>
  NUVEC_KERNEL_INLINE T operator()(T y, T x) const {
    using C = compute_t<T>;
    return T(math::atan2(C(y), C(x)));
  }
};

struct LogAddExp {
  template <class T>
    requires is_float_v<T>
  NUVEC_KERNEL_INLINE T operator()(T x, T y) const {
    using C = compute_t<T>;
    C a = x, b = y;
    C hi = a > b ? a : b, lo = a > b ? b : a;
    C r = hi + math::log1p(math::exp(lo - hi));
    r = (hi - hi != C(0)) ? hi : r;  // +-inf (both -inf gives -inf)
    return T((a != a || b != b) ? a + b : r);
  }
  NUVEC_KERNEL_INLINE complex64_t operator()(complex64_t x, complex64_t y) const {
    return math::logaddexp(x, y);
  }
};

/// cond ? x : y.
struct Select {
  template <class T>
  NUVEC_KERNEL_INLINE T operator()(bool c, T x, T y) const { return c ? x : y; }
};

}  // namespace nuvec::kernels
