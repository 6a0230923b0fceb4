// Type traits of the element types, for the functor headers (builtins only).
#pragma once

#include "complex.h"
#include "half.h"

namespace nuvec::kernels {

template <class A, class B>
inline constexpr bool same_v = false;
template <class A>
inline constexpr bool same_v<A, A> = true;

template <class T>
inline constexpr bool is_half_v =
    same_v<T, float16_t> || same_v<T, bfloat16_t>;
template <class T>
inline constexpr bool is_float_v =
    is_half_v<T> || same_v<T, float> || same_v<T, double>;
template <class T>
inline constexpr bool is_complex_v = same_v<T, complex64_t>;
template <class T>
inline constexpr bool is_bool_v = same_v<T, bool>;
template <class T>
inline constexpr bool is_int_v = !is_float_v<T> && !is_complex_v<T> &&
                                 !is_bool_v<T>;
template <class T>
inline constexpr bool is_signed_int_v = is_int_v<T> && (T(-1) < T(0));

/// The type a value computes in: float for the 16-bit floats, else itself.
template <class T>
struct compute_type {
  using type = T;
};
template <>
struct compute_type<float16_t> {
  using type = float;
};
template <>
struct compute_type<bfloat16_t> {
  using type = float;
};
template <class T>
using compute_t = typename compute_type<T>::type;

/// T(v) for v the result of one IEEE arithmetic instruction (+ - * /,
/// sqrt) in T's compute type. On the GPU such a result, when NaN, is the
/// canonical 0x7fffffff, which the 16-bit conversion instructions round to
/// the very bits the NaN rule of float_to_half_bits/float_to_bfloat_bits
/// gives (0x7fff), so the rule's test is left out there; elsewhere this is
/// T(v). Gpu.ArithmeticNaNsAreCanonical checks the premise on the GPU.
template <class T, class C>
NUVEC_KERNEL_INLINE T from_arith(C v) {
#ifdef __CUDA_ARCH__
  if constexpr (same_v<T, bfloat16_t>) {
    return T::from_bits(gpu_bfloat_bits(v));
  } else if constexpr (same_v<T, float16_t>) {
    return T::from_bits(gpu_half_bits(v));
  } else {
    return T(v);
  }
#else
  return T(v);
#endif
}

/// The unsigned type of an integer type's width (for wrapping arithmetic).
template <class T>
struct unsigned_of;
template <> struct unsigned_of<signed char> { using type = unsigned char; };
template <> struct unsigned_of<unsigned char> { using type = unsigned char; };
template <> struct unsigned_of<short> { using type = unsigned short; };
template <> struct unsigned_of<unsigned short> { using type = unsigned short; };
template <> struct unsigned_of<int> { using type = unsigned int; };
template <> struct unsigned_of<unsigned int> { using type = unsigned int; };
template <> struct unsigned_of<long> { using type = unsigned long; };
template <> struct unsigned_of<unsigned long> { using type = unsigned long; };
template <> struct unsigned_of<long long> { using type = unsigned long long; };
template <> struct unsigned_of<unsigned long long> {
  using type = unsigned long long;
};
template <class T>
using unsigned_t = typename unsigned_of<T>::type;

template <class T>
NUVEC_KERNEL_INLINE bool is_nan(T x) {
  if constexpr (is_float_v<T>) {
    compute_t<T> v = x;
    return v != v;
  } else {
    return false;
  }
}

/// Whether a value is nonzero (the truth value of every dtype).
template <class T>
NUVEC_KERNEL_INLINE bool truth(T x) {
  if constexpr (is_complex_v<T>) {
    return x.re != 0.0f || x.im != 0.0f;
  } else if constexpr (is_half_v<T>) {
    return float(x) != 0.0f;
  } else {
    return x != T(0);
  }
}

}  // namespace nuvec::kernels
