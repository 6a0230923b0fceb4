// Scalar functors of the element-wise unary primitives, one per registry
// entry (kernels::Exp for PrimitiveId::Exp). The eager CPU loops, the CUDA
// kernels and generated fused code all call these, so fused and unfused
// results agree bit for bit. 16-bit floats compute in float32 and round.
#pragma once

#include "complex.h"
#include "math_f32_special.h"
#include "math_f64_special.h"
#include "mlx_math.h"
#include "types.h"

namespace nuvec::kernels {

// Math on the floating types (and complex where a complex overload exists).
#define NUVEC_MATH_UNARY(Name, fn)                                 \
  struct Name {                                                    \
    template <class T>                                             \
      requires requires(compute_t<T> v) { math::fn(v); }           \
    NUVEC_KERNEL_INLINE T operator()(T x) const {                  \
      return T(math::fn(compute_t<T>(x)));                         \
    }                                                              \
  };
NUVEC_MATH_UNARY(Exp, exp)
NUVEC_MATH_UNARY(Expm1, expm1)
NUVEC_MATH_UNARY(Log, log)
NUVEC_MATH_UNARY(Log1p, log1p)
NUVEC_MATH_UNARY(Log2, log2)
NUVEC_MATH_UNARY(Log10, log10)
NUVEC_MATH_UNARY(Sin, sin)
NUVEC_MATH_UNARY(Cos, cos)
NUVEC_MATH_UNARY(Tan, tan)
NUVEC_MATH_UNARY(ArcSin, asin)
NUVEC_MATH_UNARY(ArcCos, acos)
NUVEC_MATH_UNARY(ArcTan, atan)
NUVEC_MATH_UNARY(Sinh, sinh)
NUVEC_MATH_UNARY(Cosh, cosh)
NUVEC_MATH_UNARY(Tanh, tanh)
NUVEC_MATH_UNARY(ArcSinh, asinh)
NUVEC_MATH_UNARY(ArcCosh, acosh)
NUVEC_MATH_UNARY(ArcTanh, atanh)
NUVEC_MATH_UNARY(Sigmoid, sigmoid)
NUVEC_MATH_UNARY(Erf, erf)
NUVEC_MATH_UNARY(ErfInv, erfinv)
#undef NUVEC_MATH_UNARY

/// Sin and Cos of one value together, from one argument reduction (the
/// generated GPU kernels call it where a region takes both): the bits of
/// Sin{}(x) and Cos{}(x).
template <class T>
struct SinCosOf {
  T sin, cos;
};
struct SinCos {
  template <class T>
    requires same_v<compute_t<T>, float>
  NUVEC_KERNEL_INLINE SinCosOf<T> operator()(T x) const {
    float s, c;
    math::sincos(float(x), &s, &c);
    return {T(s), T(c)};
  }
};

/// The fast variant of functor F for small arguments, where it has one:
/// Small<F>{}(x) gives F's bits wherever Small<F>::outside(x) is 0, and
/// loops take it for a block whose arguments are all inside (the eager CPU
/// kernels, the generated CPU kernels). Sin and Cos on float32 and the
/// 16-bit floats (which compute through float32) have one: math::sin_small.
template <class F>
struct Small {};

#define NUVEC_SMALL_UNARY(Name, fn)                                \
  template <>                                                      \
  struct Small<Name> {                                             \
    template <class T>                                             \
      requires same_v<compute_t<T>, float>                         \
    NUVEC_KERNEL_INLINE static u32 outside(T x) {                  \
      return u32(!math::trig_small(float(x)));                     \
    }                                                              \
    template <class T>                                             \
      requires same_v<compute_t<T>, float>                         \
    NUVEC_KERNEL_INLINE T operator()(T x) const {                  \
      return T(math::fn(float(x)));                                \
    }                                                              \
  };
NUVEC_SMALL_UNARY(Sin, sin_small)
NUVEC_SMALL_UNARY(Cos, cos_small)
#undef NUVEC_SMALL_UNARY

/// float32 e^x where |x| < math::kExpNormal: Exp's bits without the clamps
/// and the second scaling (the generated GPU kernels' packs; the CPU's
/// loops do not take it: gpu_only).
template <>
struct Small<Exp> {
  static constexpr bool gpu_only = true;
  template <class T>
    requires same_v<T, float>
  NUVEC_KERNEL_INLINE static u32 outside(T x) {
    return u32(!(__builtin_fabsf(x) < math::kExpNormal));
  }
  template <class T>
    requires same_v<T, float>
  NUVEC_KERNEL_INLINE T operator()(T x) const {
    return math::exp_normal(x);
  }
};

/// SinCos through the float reduction alone (the generated GPU kernels'
/// packs of small arguments): SinCos's bits wherever outside(x) is 0.
template <>
struct Small<SinCos> {
  template <class T>
    requires same_v<compute_t<T>, float>
  NUVEC_KERNEL_INLINE static u32 outside(T x) {
    return u32(!math::trig_small(float(x)));
  }
  template <class T>
    requires same_v<compute_t<T>, float>
  NUVEC_KERNEL_INLINE SinCosOf<T> operator()(T x) const {
    math::detail::SinCosF v = math::detail::sincos_small(float(x));
    return {T(v.sin), T(v.cos)};
  }
};

struct Sqrt {
  NUVEC_KERNEL_INLINE float operator()(float x) const { return __builtin_sqrtf(x); }
  NUVEC_KERNEL_INLINE double operator()(double x) const { return __builtin_sqrt(x); }
  template <class T>
    requires is_half_v<T>
  NUVEC_KERNEL_INLINE T operator()(T x) const {
    return from_arith<T>(__builtin_sqrtf(float(x)));
  }
  NUVEC_KERNEL_INLINE complex64_t operator()(complex64_t x) const {
    return math::sqrt(x);
  }
};

struct Rsqrt {
  template <class T>
    requires is_float_v<T>
  NUVEC_KERNEL_INLINE T operator()(T x) const {
    using C = compute_t<T>;
    return T(C(1) / Sqrt{}(C(x)));
  }
  NUVEC_KERNEL_INLINE complex64_t operator()(complex64_t x) const {
    return math::rsqrt(x);
  }
};

struct Reciprocal {
  template <class T>
    requires is_float_v<T>
  NUVEC_KERNEL_INLINE T operator()(T x) const {
    using C = compute_t<T>;
    return T(C(1) / C(x));
  }
  NUVEC_KERNEL_INLINE complex64_t operator()(complex64_t x) const {
    return complex64_t(1.0f) / x;
  }
};

// IEEE 754 sign-bit operations on the floating types: abs clears the sign
// bit and negative flips it, NaN included, on every device (PTX's abs and
// neg may return a canonical NaN; the 16-bit types are not widened).
template <class T>
NUVEC_KERNEL_INLINE T with_sign_bit(T x, bool clear) {
  if constexpr (is_half_v<T>) {
    return T::from_bits(u16(clear ? (x.bits & 0x7fffu) : (x.bits ^ 0x8000u)));
  } else if constexpr (same_v<T, float>) {
    u32 b = bit_cast<u32>(x);
    return bit_cast<float>(clear ? (b & 0x7fffffffu) : (b ^ 0x80000000u));
  } else {
    u64 b = bit_cast<u64>(x);
    return bit_cast<double>(clear ? (b & 0x7fffffffffffffffull) : (b ^ 0x8000000000000000ull));
  }
}

struct Abs {
  template <class T>
  NUVEC_KERNEL_INLINE auto operator()(T x) const {
    if constexpr (is_complex_v<T>) {
      return math::abs(x);
    } else if constexpr (is_float_v<T>) {
      return with_sign_bit(x, true);
    } else if constexpr (is_signed_int_v<T>) {
      using U = unsigned_t<T>;
      return x < 0 ? T(U(0) - U(x)) : x;  // wraps at the minimum, as in C
    } else {
      return x;
    }
  }
};

struct Negative {
  template <class T>
  NUVEC_KERNEL_INLINE T operator()(T x) const {
    if constexpr (is_int_v<T>) {
      using U = unsigned_t<T>;
      return T(U(0) - U(x));
    } else if constexpr (is_bool_v<T>) {
      return x;
    } else if constexpr (is_complex_v<T>) {
      return -x;
    } else {
      return with_sign_bit(x, false);
    }
  }
};

struct Sign {
  template <class T>
  NUVEC_KERNEL_INLINE T operator()(T x) const {
    if constexpr (is_complex_v<T>) {
      return math::sign(x);
    } else if constexpr (is_float_v<T>) {
      using C = compute_t<T>;
      C v = x;
      return T(v > C(0) ? C(1) : (v < C(0) ? C(-1) : C(0)));  // NaN: 0 (MLX)
    } else if constexpr (is_bool_v<T> || !is_signed_int_v<T>) {
      return T(x != T(0));
    } else {
      return T((x > 0) - (x < 0));
    }
  }
};

struct Square {
  template <class T>
  NUVEC_KERNEL_INLINE T operator()(T x) const {
    if constexpr (is_int_v<T>) {
      using U = unsigned_t<T>;
      return T(U(x) * U(x));
    } else if constexpr (is_complex_v<T>) {
      return x * x;
    } else if constexpr (is_bool_v<T>) {
      return x;
    } else {
      using C = compute_t<T>;
      return T(C(x) * C(x));
    }
  }
};

#define NUVEC_ROUNDING_UNARY(Name, builtin_f, builtin_d)              \
  struct Name {                                                       \
    template <class T>                                                \
      requires(!is_complex_v<T>)                                      \
    NUVEC_KERNEL_INLINE T operator()(T x) const {                     \
      if constexpr (same_v<T, double>) {                              \
        return builtin_d(x);                                          \
      } else if constexpr (is_float_v<T>) {                           \
        return T(builtin_f(float(x)));                                \
      } else {                                                        \
        return x;                                                     \
      }                                                               \
    }                                                                 \
  };
NUVEC_ROUNDING_UNARY(Floor, __builtin_floorf, __builtin_floor)
NUVEC_ROUNDING_UNARY(Ceil, __builtin_ceilf, __builtin_ceil)
NUVEC_ROUNDING_UNARY(RoundReal, __builtin_rintf, __builtin_rint)  // ties to even
#undef NUVEC_ROUNDING_UNARY
// MLX rounds each part of a complex value (floor and ceil reject complex).
struct Round : RoundReal {
  using RoundReal::operator();
  NUVEC_KERNEL_INLINE complex64_t operator()(complex64_t x) const {
    return complex64_t(__builtin_rintf(x.re), __builtin_rintf(x.im));
  }
};

struct LogicalNot {
  template <class T>
  NUVEC_KERNEL_INLINE bool operator()(T x) const { return !truth(x); }
};

struct BitwiseInvert {
  template <class T>
    requires(is_int_v<T> || is_bool_v<T>)
  NUVEC_KERNEL_INLINE T operator()(T x) const {
    if constexpr (is_bool_v<T>) {
      return !x;
    } else {
      return T(~x);
    }
  }
};

#define NUVEC_FLOAT_PREDICATE(Name, expr, int_value, complex_expr)     \
  struct Name {                                                        \
    template <class T>                                                 \
    NUVEC_KERNEL_INLINE bool operator()(T x) const {                   \
      if constexpr (is_complex_v<T>) {                                 \
        float re = x.re, im = x.im;                                    \
        (void)re;                                                      \
        (void)im;                                                      \
        return complex_expr;                                           \
      } else if constexpr (is_float_v<T>) {                            \
        compute_t<T> v = x;                                            \
        return expr;                                                   \
      } else {                                                         \
        return int_value;                                              \
      }                                                                \
    }                                                                  \
  };
#define NUVEC_INF(v) (v - v != v - v && v == v)
NUVEC_FLOAT_PREDICATE(IsNan, v != v, false, re != re || im != im)
NUVEC_FLOAT_PREDICATE(IsInf, NUVEC_INF(v), false, NUVEC_INF(re) || NUVEC_INF(im))
// complex: equal to (+-inf, 0), as MLX's x == inf
NUVEC_FLOAT_PREDICATE(IsPosInf, NUVEC_INF(v) && v > 0, false,
                      NUVEC_INF(re) && re > 0 && im == 0)
NUVEC_FLOAT_PREDICATE(IsNegInf, NUVEC_INF(v) && v < 0, false,
                      NUVEC_INF(re) && re < 0 && im == 0)
NUVEC_FLOAT_PREDICATE(IsFinite, v - v == v - v, true,
                      re - re == re - re && im - im == im - im)
#undef NUVEC_INF
#undef NUVEC_FLOAT_PREDICATE

struct Conjugate {
  template <class T>
  NUVEC_KERNEL_INLINE T operator()(T x) const {
    if constexpr (is_complex_v<T>) {
      return complex64_t(x.re, -x.im);
    } else {
      return x;
    }
  }
};

struct Real {
  NUVEC_KERNEL_INLINE float operator()(complex64_t x) const { return x.re; }
};
struct Imag {
  NUVEC_KERNEL_INLINE float operator()(complex64_t x) const { return x.im; }
};

}  // namespace nuvec::kernels
