// The one list of each family of public element-wise operations. The Array
// methods, the `ops::` free functions and their definitions are expanded from
// these lists, so adding an operation is one line here plus its definition.
#pragma once

// Unary operations without parameters: X(name).
#define NUVEC_UNARY_OPS(X) \
  X(abs)                   \
  X(negative)              \
  X(sign)                  \
  X(exp)                   \
  X(expm1)                 \
  X(log)                   \
  X(log1p)                 \
  X(log2)                  \
  X(log10)                 \
  X(sqrt)                  \
  X(rsqrt)                 \
  X(square)                \
  X(reciprocal)            \
  X(sin)                   \
  X(cos)                   \
  X(tan)                   \
  X(arcsin)                \
  X(arccos)                \
  X(arctan)                \
  X(sinh)                  \
  X(cosh)                  \
  X(tanh)                  \
  X(arcsinh)               \
  X(arccosh)               \
  X(arctanh)               \
  X(sigmoid)               \
  X(erf)                   \
  X(erfinv)                \
  X(floor)                 \
  X(ceil)                  \
  X(logical_not)           \
  X(bitwise_invert)        \
  X(isnan)                 \
  X(isinf)                 \
  X(isposinf)              \
  X(isneginf)              \
  X(isfinite)              \
  X(conjugate)             \
  X(real)                  \
  X(imag)                  \
  X(degrees)               \
  X(radians)               \
  X(stop_gradient)

// Binary operations on two operands (arrays or weak scalars): X(name).
#define NUVEC_BINARY_OPS(X) \
  X(add)                    \
  X(subtract)               \
  X(multiply)               \
  X(divide)                 \
  X(floor_divide)           \
  X(remainder)              \
  X(power)                  \
  X(maximum)                \
  X(minimum)                \
  X(equal)                  \
  X(not_equal)              \
  X(less)                   \
  X(less_equal)             \
  X(greater)                \
  X(greater_equal)          \
  X(logical_and)            \
  X(logical_or)             \
  X(bitwise_and)            \
  X(bitwise_or)             \
  X(bitwise_xor)            \
  X(left_shift)             \
  X(right_shift)            \
  X(arctan2)                \
  X(logaddexp)

// Reductions over axes with keepdims: X(name).
#define NUVEC_REDUCTION_OPS(X) \
  X(sum)                       \
  X(prod)                      \
  X(max)                       \
  X(min)                       \
  X(mean)                      \
  X(all)                       \
  X(any)                       \
  X(logsumexp)
