// MLX's dtype utilities: the category constants and issubdtype, finfo and
// iinfo (mlx/dtype.h, mlx/utils.h).
#pragma once

#include <cstdint>

#include "nuvec/core/dtype.h"

namespace nuvec {

/// MLX's dtype categories (NumPy's abstract types): complexfloating and
/// floating are inexact; signedinteger and unsignedinteger are integer;
/// inexact and integer are number; everything (bool too) is generic.
enum class DtypeCategory {
  complexfloating,
  floating,
  inexact,
  signedinteger,
  unsignedinteger,
  integer,
  number,
  generic,
};
inline constexpr DtypeCategory complexfloating = DtypeCategory::complexfloating;
inline constexpr DtypeCategory floating = DtypeCategory::floating;
inline constexpr DtypeCategory inexact = DtypeCategory::inexact;
inline constexpr DtypeCategory signedinteger = DtypeCategory::signedinteger;
inline constexpr DtypeCategory unsignedinteger = DtypeCategory::unsignedinteger;
inline constexpr DtypeCategory integer = DtypeCategory::integer;
inline constexpr DtypeCategory number = DtypeCategory::number;
inline constexpr DtypeCategory generic = DtypeCategory::generic;

/// Whether `a` is `b` (two dtypes), of category `b`, or a subcategory of
/// `b` (two categories); a category is never a subtype of a dtype (MLX).
bool issubdtype(DType a, DType b);
bool issubdtype(DType a, DtypeCategory b);
bool issubdtype(DtypeCategory a, DType b);
bool issubdtype(DtypeCategory a, DtypeCategory b);

/// Limits of a floating dtype (complex64: of its float32 parts, as MLX):
/// the largest finite value and its negative, the gap from 1 to the next
/// value, the smallest positive normal value. Throws std::invalid_argument
/// (as nuvec::Error) for other dtypes.
struct finfo {
  explicit finfo(DType dtype);
  DType dtype;
  int bits;
  double min;
  double max;
  double eps;
  double smallest_normal;
};

/// Limits of an integer dtype. Throws std::invalid_argument (as
/// nuvec::Error) for bool and non-integer dtypes.
struct iinfo {
  explicit iinfo(DType dtype);
  DType dtype;
  int64_t min;
  uint64_t max;
};

}  // namespace nuvec
