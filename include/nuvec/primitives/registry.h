// The one registry of primitives (DESIGN.md section 4). Names, traits and
// every backend's dispatch table are expanded from these lists; there is no
// other hand-kept list of primitives.
#pragma once

#include <cstdint>

// Element-wise unary primitives: X(Name, dtype rule). Each has a functor
// kernels::Name in kernels/unary.h.
#define NUVEC_UNARY_PRIMITIVES(X) \
  X(Abs, abs)                     \
  X(Negative, signed_numeric)     \
  X(Sign, numeric)                \
  X(Exp, inexact)                 \
  X(Expm1, floating)              \
  X(Log, inexact)                 \
  X(Log1p, inexact)               \
  X(Log2, inexact)                \
  X(Log10, inexact)               \
  X(Sqrt, inexact)                \
  X(Rsqrt, inexact)               \
  X(Square, numeric)              \
  X(Reciprocal, inexact)          \
  X(Sin, inexact)                 \
  X(Cos, inexact)                 \
  X(Tan, inexact)                 \
  X(ArcSin, inexact)              \
  X(ArcCos, inexact)              \
  X(ArcTan, inexact)              \
  X(Sinh, inexact)                \
  X(Cosh, inexact)                \
  X(Tanh, inexact)                \
  X(ArcSinh, inexact)             \
  X(ArcCosh, inexact)             \
  X(ArcTanh, inexact)             \
  X(Sigmoid, floating)            \
  X(Erf, floating)                \
  X(ErfInv, floating)             \
  X(Floor, real_numeric)          \
  X(Ceil, real_numeric)           \
  X(Round, numeric)               \
  X(LogicalNot, to_bool)          \
  X(BitwiseInvert, integer)       \
  X(IsNan, to_bool)               \
  X(IsInf, to_bool)               \
  X(IsPosInf, to_bool)            \
  X(IsNegInf, to_bool)            \
  X(IsFinite, to_bool)            \
  X(Conjugate, numeric)           \
  X(Real, complex_part)           \
  X(Imag, complex_part)           \
  X(MlxExp, floating)             \
  X(MlxErf, floating)             \
  X(MlxErfInv, floating)

// Element-wise binary primitives on operands of one dtype (ops promote and
// broadcast first): X(Name, dtype rule). Functors kernels::Name in
// kernels/binary.h.
#define NUVEC_BINARY_PRIMITIVES(X) \
  X(Add, any)                      \
  X(Subtract, any)                 \
  X(Multiply, any)                 \
  X(Divide, inexact)               \
  X(FloorDivide, real_numeric)     \
  X(Remainder, real_numeric)       \
  X(Power, any)                    \
  X(Maximum, any)                  \
  X(Minimum, any)                  \
  X(Equal, compare)                \
  X(NotEqual, compare)             \
  X(Less, compare)                 \
  X(LessEqual, compare)            \
  X(Greater, compare)              \
  X(GreaterEqual, compare)         \
  X(LogicalAnd, logical)           \
  X(LogicalOr, logical)            \
  X(BitwiseAnd, integer)           \
  X(BitwiseOr, integer)            \
  X(BitwiseXor, integer)           \
  X(LeftShift, integer)            \
  X(RightShift, integer)           \
  X(ArcTan2, floating)             \
  X(LogAddExp, inexact)

// All other primitives: X(Name, kind).
#define NUVEC_OTHER_PRIMITIVES(X) \
  X(Select, elementwise)          \
  X(AsType, elementwise)          \
  X(DivMod, elementwise)          \
  X(BitCast, other)               \
  X(Copy, other)                  \
  X(StopGradient, view)           \
  X(Reshape, view)                \
  X(Transpose, view)              \
  X(Broadcast, view)              \
  X(Slice, view)                  \
  X(Reduce, reduction)            \
  X(ArgReduce, reduction)         \
  X(NumberOf, other)              \
  X(Matmul, other)                \
  X(AddMM, other)                 \
  X(Arange, other)                \
  X(Take, other)                  \
  X(Scatter, other)               \
  X(Linalg, other)                \
  X(RandomBits, other)            \
  X(Depends, other)               \
  X(Sort, other)                  \
  X(ArgSort, other)               \
  X(Partition, other)             \
  X(ArgPartition, other)          \
  X(Scan, other)                  \
  X(Concatenate, other)           \
  X(Im2Col, other)                \
  X(Custom, other)                \
  X(CudaKernel, other)            \
  X(RMSNorm, other)               \
  X(LayerNorm, other)             \
  X(AddRMSNorm, other)            \
  X(RoPE, other)                  \
  X(Softmax, other)               \
  X(LogSumExp, other)             \
  X(CrossEntropy, other)          \
  X(Attention, other)             \
  X(CrossEntropyGrad, other)      \
  X(AttentionGrad, other)         \
  X(Placeholder, other)           \
  X(Fused, other)                 \
  X(FusedReduce, other)           \
  X(Quantize, other)              \
  X(Dequantize, other)            \
  X(QuantizedMatmul, other)       \
  X(GatherMM, other)              \
  X(GatherQMM, other)             \
  X(Collective, other)

namespace nuvec {

enum class PrimitiveId : uint16_t {
#define NUVEC_ENUM_ENTRY(Name, trait) Name,
  NUVEC_UNARY_PRIMITIVES(NUVEC_ENUM_ENTRY)
  NUVEC_BINARY_PRIMITIVES(NUVEC_ENUM_ENTRY)
  NUVEC_OTHER_PRIMITIVES(NUVEC_ENUM_ENTRY)
#undef NUVEC_ENUM_ENTRY
  count_
};

inline constexpr int primitive_count = static_cast<int>(PrimitiveId::count_);

/// The family of a primitive, from the registry lists.
enum class PrimitiveKind { unary, binary, elementwise, view, reduction, other };

namespace detail {
inline constexpr PrimitiveKind primitive_kinds[] = {
#define NUVEC_KIND_UNARY(Name, rule) PrimitiveKind::unary,
#define NUVEC_KIND_BINARY(Name, rule) PrimitiveKind::binary,
#define NUVEC_KIND_OTHER(Name, kind) PrimitiveKind::kind,
    NUVEC_UNARY_PRIMITIVES(NUVEC_KIND_UNARY)
    NUVEC_BINARY_PRIMITIVES(NUVEC_KIND_BINARY)
    NUVEC_OTHER_PRIMITIVES(NUVEC_KIND_OTHER)
#undef NUVEC_KIND_UNARY
#undef NUVEC_KIND_BINARY
#undef NUVEC_KIND_OTHER
};
inline constexpr const char* primitive_names[] = {
#define NUVEC_NAME_ENTRY(Name, trait) #Name,
    NUVEC_UNARY_PRIMITIVES(NUVEC_NAME_ENTRY)
    NUVEC_BINARY_PRIMITIVES(NUVEC_NAME_ENTRY)
    NUVEC_OTHER_PRIMITIVES(NUVEC_NAME_ENTRY)
#undef NUVEC_NAME_ENTRY
};
}  // namespace detail

constexpr PrimitiveKind primitive_kind(PrimitiveId id) {
  return detail::primitive_kinds[static_cast<int>(id)];
}
/// The registry name ("Exp").
constexpr const char* primitive_name(PrimitiveId id) {
  return detail::primitive_names[static_cast<int>(id)];
}
/// Whether the primitive maps each output element to the same position of
/// its inputs (what fusion asks).
constexpr bool is_elementwise(PrimitiveId id) {
  auto k = primitive_kind(id);
  return k == PrimitiveKind::unary || k == PrimitiveKind::binary ||
         k == PrimitiveKind::elementwise;
}
constexpr bool is_view(PrimitiveId id) {
  return primitive_kind(id) == PrimitiveKind::view;
}

}  // namespace nuvec
