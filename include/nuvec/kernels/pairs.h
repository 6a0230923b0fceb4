// Two adjacent elements as one value: the generated GPU kernels of regions
// with 16-bit float arithmetic compute their packs a pair at a time
// (src/compile/emit_cuda.cpp), so that a float16 or bfloat16 +, - or * of
// two pairs is one paired instruction (add.rn.bf16x2 ...) on the 32-bit
// register the pair was loaded into, instead of two 16-bit instructions and
// the byte permutes that move each half into place; Maximum and Minimum
// are two paired comparisons and a blend. Every other functor is applied
// to each half. The bits are the scalar functors': a paired
// instruction rounds each half as its 16-bit instruction does (half.h).
#pragma once

#include "binary.h"

namespace nuvec::kernels {

/// Elements 2i and 2i + 1 of a pack.
template <class T>
struct alignas(2 * sizeof(T)) Two {
  T a, b;
};

namespace detail {
template <class T>
struct TwoOf {
  using type = T;
  NUVEC_KERNEL_INLINE static Two<T> of(T x) { return {x, x}; }
};
template <class T>
struct TwoOf<Two<T>> {
  using type = T;
  NUVEC_KERNEL_INLINE static Two<T> of(Two<T> x) { return x; }
};
}  // namespace detail

/// A pair as itself, one value (a literal) as two copies of it.
template <class X>
NUVEC_KERNEL_INLINE Two<typename detail::TwoOf<X>::type> as_two(X x) {
  return detail::TwoOf<X>::of(x);
}

#ifdef NUVEC_GPU_HALF_INSTRUCTIONS
// Each half of the result of set.CmpOp.u32.{f16x2,bf16x2}: all ones where
// the comparison of that half holds, zeros elsewhere.
#define NUVEC_GPU_PAIR_SET(cmp)                                                      \
  template <class T>                                                                 \
  __device__ __forceinline__ u32 gpu_pair_##cmp(u32 a, u32 b) {                      \
    u32 d;                                                                           \
    if constexpr (same_v<T, bfloat16_t>)                                             \
      asm("set." #cmp ".u32.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));          \
    else                                                                             \
      asm("set." #cmp ".u32.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));           \
    return d;                                                                        \
  }
NUVEC_GPU_PAIR_SET(lt)
NUVEC_GPU_PAIR_SET(nan)
#undef NUVEC_GPU_PAIR_SET

template <class F, class T>
inline constexpr bool paired_op_v =
    is_half_v<T> && (same_v<F, Add> || same_v<F, Subtract> || same_v<F, Multiply> ||
                     same_v<F, Maximum> || same_v<F, Minimum>);

template <class F, class T>
__device__ __forceinline__ Two<T> paired_op(Two<T> x, Two<T> y) {
  const u32 a = bit_cast<u32>(x), b = bit_cast<u32>(y);
  u32 d;
  if constexpr (same_v<F, Maximum> || same_v<F, Minimum>) {
    // Maximum: x where x is NaN or y < x, else y (Minimum: x < y); a mask
    // per half, then a blend.
    const u32 take_x = gpu_pair_nan<T>(a, a) | (same_v<F, Maximum> ? gpu_pair_lt<T>(b, a) : gpu_pair_lt<T>(a, b));
    d = (a & take_x) | (b & ~take_x);
  } else if constexpr (same_v<T, bfloat16_t>) {
    if constexpr (same_v<F, Add>) d = gpu_bfloat2_add(a, b);
    else if constexpr (same_v<F, Subtract>) d = gpu_bfloat2_sub(a, b);
    else d = gpu_bfloat2_mul(a, b);
  } else {
    if constexpr (same_v<F, Add>) d = gpu_half2_add(a, b);
    else if constexpr (same_v<F, Subtract>) d = gpu_half2_sub(a, b);
    else d = gpu_half2_mul(a, b);
  }
  return bit_cast<Two<T>>(d);
}
#endif

/// f applied to each half of its arguments (pairs, or single values used
/// for both halves).
template <class F, class X>
NUVEC_KERNEL_INLINE auto pair_call(F f, X x) {
  const auto p = as_two(x);
  return Two<decltype(f(p.a))>{f(p.a), f(p.b)};
}
template <class F, class X, class Y>
NUVEC_KERNEL_INLINE auto pair_call(F f, X x, Y y) {
  const auto p = as_two(x);
  const auto q = as_two(y);
#ifdef NUVEC_GPU_HALF_INSTRUCTIONS
  using T = typename detail::TwoOf<X>::type;
  if constexpr (paired_op_v<F, T> && same_v<T, typename detail::TwoOf<Y>::type>)
    return paired_op<F, T>(p, q);
  else
#endif
    return Two<decltype(f(p.a, q.a))>{f(p.a, q.a), f(p.b, q.b)};
}
template <class F, class X, class Y, class Z>
NUVEC_KERNEL_INLINE auto pair_call(F f, X x, Y y, Z z) {
  const auto p = as_two(x);
  const auto q = as_two(y);
  const auto r = as_two(z);
  return Two<decltype(f(p.a, q.a, r.a))>{f(p.a, q.a, r.a), f(p.b, q.b, r.b)};
}

/// Small<F>::outside of either half (kernels::Small).
template <class S, class... X>
NUVEC_KERNEL_INLINE u32 pair_outside(X... x) {
  return S::outside(as_two(x).a...) | S::outside(as_two(x).b...);
}

}  // namespace nuvec::kernels
