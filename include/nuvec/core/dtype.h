// Element types, their categories and MLX's type promotion.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

#include "nuvec/kernels/complex.h"
#include "nuvec/kernels/half.h"

namespace nuvec {

using kernels::complex64_t;

/// The element type of an array. Compare with the constants below:
/// `x.dtype() == nuvec::float32`.
struct DType {
  enum class Val : uint8_t {
    bool_,
    uint8,
    uint16,
    uint32,
    uint64,
    int8,
    int16,
    int32,
    int64,
    float16,
    bfloat16,
    float32,
    float64,
    complex64,
  };
  static constexpr int count = 14;

  Val val;
  constexpr DType() : val(Val::float32) {}
  constexpr DType(Val v) : val(v) {}
  /// Bytes per element.
  constexpr int size() const {
    constexpr int sizes[count] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8};
    return sizes[static_cast<int>(val)];
  }
  constexpr int index() const { return static_cast<int>(val); }
  friend constexpr bool operator==(DType a, DType b) { return a.val == b.val; }
};

inline constexpr DType bool_{DType::Val::bool_};
inline constexpr DType uint8{DType::Val::uint8};
inline constexpr DType uint16{DType::Val::uint16};
inline constexpr DType uint32{DType::Val::uint32};
inline constexpr DType uint64{DType::Val::uint64};
inline constexpr DType int8{DType::Val::int8};
inline constexpr DType int16{DType::Val::int16};
inline constexpr DType int32{DType::Val::int32};
inline constexpr DType int64{DType::Val::int64};
inline constexpr DType float16{DType::Val::float16};
inline constexpr DType bfloat16{DType::Val::bfloat16};
inline constexpr DType float32{DType::Val::float32};
inline constexpr DType float64{DType::Val::float64};
inline constexpr DType complex64{DType::Val::complex64};

/// The broad kind of an element type, used by promotion and dtype rules.
enum class Category { bool_, unsigned_integer, signed_integer, floating, complex };

constexpr Category category(DType d) {
  switch (d.val) {
    case DType::Val::bool_: return Category::bool_;
    case DType::Val::uint8:
    case DType::Val::uint16:
    case DType::Val::uint32:
    case DType::Val::uint64: return Category::unsigned_integer;
    case DType::Val::int8:
    case DType::Val::int16:
    case DType::Val::int32:
    case DType::Val::int64: return Category::signed_integer;
    case DType::Val::complex64: return Category::complex;
    default: return Category::floating;
  }
}

constexpr bool is_integer(DType d) {
  auto c = category(d);
  return c == Category::unsigned_integer || c == Category::signed_integer;
}
constexpr bool is_floating(DType d) { return category(d) == Category::floating; }
constexpr bool is_complex(DType d) { return category(d) == Category::complex; }
/// Floating or complex.
constexpr bool is_inexact(DType d) { return is_floating(d) || is_complex(d); }

/// MLX's name of the dtype ("float32").
std::string_view dtype_name(DType d);
std::ostream& operator<<(std::ostream& os, DType d);

/// The dtype two operands are converted to before a binary operation
/// (MLX's promotion table, quirks included: uint64 with a signed integer is
/// float32).
DType promote_types(DType a, DType b);

/// `d` if it is floating point or complex, otherwise the promotion of `d`
/// with float32. Transcendental functions and division compute in this type.
DType at_least_float(DType d);

/// The C++ element type of each dtype, and back.
template <class T>
struct dtype_of;
template <DType::Val V>
struct type_of;
#define NUVEC_DTYPE_OF(T, D)              \
  template <>                             \
  struct dtype_of<T> {                    \
    static constexpr DType value = D;     \
  };                                      \
  template <>                             \
  struct type_of<D.val> {                 \
    using type = T;                       \
  };
NUVEC_DTYPE_OF(bool, bool_)
NUVEC_DTYPE_OF(uint8_t, uint8)
NUVEC_DTYPE_OF(uint16_t, uint16)
NUVEC_DTYPE_OF(uint32_t, uint32)
NUVEC_DTYPE_OF(uint64_t, uint64)
NUVEC_DTYPE_OF(int8_t, int8)
NUVEC_DTYPE_OF(int16_t, int16)
NUVEC_DTYPE_OF(int32_t, int32)
NUVEC_DTYPE_OF(int64_t, int64)
NUVEC_DTYPE_OF(float16_t, float16)
NUVEC_DTYPE_OF(bfloat16_t, bfloat16)
NUVEC_DTYPE_OF(float, float32)
NUVEC_DTYPE_OF(double, float64)
NUVEC_DTYPE_OF(complex64_t, complex64)
#undef NUVEC_DTYPE_OF

template <class T>
inline constexpr DType dtype_v = dtype_of<T>::value;
/// The C++ type of a dtype known at compile time: type_of_t<int32.val> is
/// int32_t. (A DType template parameter crashes g++ 12 here.)
template <DType::Val V>
using type_of_t = typename type_of<V>::type;

template <class T>
struct TypeTag {
  using type = T;
};

/// Calls `f(TypeTag<T>{})` with the C++ type of `d`.
template <class F>
decltype(auto) dispatch_dtype(DType d, F&& f) {
  switch (d.val) {
    case DType::Val::bool_: return f(TypeTag<bool>{});
    case DType::Val::uint8: return f(TypeTag<uint8_t>{});
    case DType::Val::uint16: return f(TypeTag<uint16_t>{});
    case DType::Val::uint32: return f(TypeTag<uint32_t>{});
    case DType::Val::uint64: return f(TypeTag<uint64_t>{});
    case DType::Val::int8: return f(TypeTag<int8_t>{});
    case DType::Val::int16: return f(TypeTag<int16_t>{});
    case DType::Val::int32: return f(TypeTag<int32_t>{});
    case DType::Val::int64: return f(TypeTag<int64_t>{});
    case DType::Val::float16: return f(TypeTag<float16_t>{});
    case DType::Val::bfloat16: return f(TypeTag<bfloat16_t>{});
    case DType::Val::float32: return f(TypeTag<float>{});
    case DType::Val::float64: return f(TypeTag<double>{});
    default: return f(TypeTag<complex64_t>{});
  }
}

}  // namespace nuvec
