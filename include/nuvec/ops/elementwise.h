// Element-wise operations: MLX's names and argument orders. Binary operations
// broadcast their operands (NumPy's rules) and promote them with MLX's table;
// a Python-like scalar operand is weak (it takes the array's dtype, except
// that a float scalar makes an integer or bool array float32).
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "nuvec/core/array.h"
#include "nuvec/ops/op_lists.h"

namespace nuvec::inline ops {

#define NUVEC_DECLARE_UNARY_OP(name) \
  Array name(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Element-wise unary operations. Transcendental functions of integer or
/// bool arrays compute in float32; predicates (isnan, ...) return bool.
NUVEC_UNARY_OPS(NUVEC_DECLARE_UNARY_OP)
#undef NUVEC_DECLARE_UNARY_OP

/// Rounds half to even, to `decimals` digits after the point (integers are
/// returned unchanged for decimals >= 0).
Array round(const Array& x, int decimals = 0, StreamOrDevice s = {},
            Location loc = NUVEC_LOC);

#define NUVEC_DECLARE_BINARY_OP(name)                             \
  Array name(const Operand& a, const Operand& b, StreamOrDevice s = {}, \
             Location loc = NUVEC_LOC);
/// Element-wise binary operations (broadcasting, promotion, weak scalars).
/// divide and the float functions compute in at least float32; floor_divide
/// and remainder follow Python's sign rules (for integers x // 0 is 0 and x % 0
/// is x); shifts by a negative or too-large count give 0 (or -1).
NUVEC_BINARY_OPS(NUVEC_DECLARE_BINARY_OP)
#undef NUVEC_DECLARE_BINARY_OP

/// {floor_divide(a, b), remainder(a, b)} computed together (MLX's vector).
std::vector<Array> divmod(const Operand& a, const Operand& b, StreamOrDevice s = {},
                          Location loc = NUVEC_LOC);
/// Rounds toward zero (integers are returned unchanged).
Array trunc(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// x itself (MLX's unary plus).
Array positive(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Whether exactly one of a and b is true (nonzero), element-wise: bool.
Array logical_xor(const Operand& a, const Operand& b, StreamOrDevice s = {},
                  Location loc = NUVEC_LOC);
/// x with NaN replaced by `nan`, +inf by `posinf` and -inf by `neginf`
/// (default: the dtype's largest and lowest finite values). Integer and bool
/// arrays are returned unchanged.
Array nan_to_num(const Array& x, float nan = 0.0f, std::optional<float> posinf = std::nullopt,
                 std::optional<float> neginf = std::nullopt, StreamOrDevice s = {},
                 Location loc = NUVEC_LOC);
/// cond ? x : y element-wise, broadcasting all three.
Array where(const Operand& condition, const Operand& x, const Operand& y,
            StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Limits values to [a_min, a_max]; either bound may be absent.
Array clip(const Array& x, const std::optional<Operand>& a_min = std::nullopt,
           const std::optional<Operand>& a_max = std::nullopt, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// Converts to `dtype` (float to integer truncates; see kernels/cast.h).
Array astype(const Array& x, DType dtype, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
/// Reinterprets the bytes as `dtype`; the last axis scales by the ratio of
/// the item sizes.
Array view(const Array& x, DType dtype, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// |a - b| <= atol + rtol * |b| element-wise (NaNs equal when equal_nan).
Array isclose(const Operand& a, const Operand& b, double rtol = 1e-5,
              double atol = 1e-8, bool equal_nan = false, StreamOrDevice s = {},
              Location loc = NUVEC_LOC);
/// Whether isclose holds everywhere: a 0-d bool array.
Array allclose(const Operand& a, const Operand& b, double rtol = 1e-5,
               double atol = 1e-8, bool equal_nan = false,
               StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Whether the arrays have one shape and equal values: a 0-d bool array.
Array array_equal(const Operand& a, const Operand& b, bool equal_nan = false,
                  StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The dtype the arrays promote to together (MLX's result_type).
DType result_type(const Array& a, const Array& b);
DType result_type(const Array& a, const Array& b, const Array& c);
DType result_type(const std::vector<Array>& arrays);
/// An explicit copy (kept by compile's simplification).
Array copy(const Array& x, StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// `inputs` unchanged, computed only after `dependencies`.
std::vector<Array> depends(const std::vector<Array>& inputs,
                           const std::vector<Array>& dependencies);

}  // namespace nuvec::ops

namespace nuvec {

// Operators: both sides may be arrays or arithmetic scalars (weak).
Array operator-(const Array& a);
Array operator~(const Array& a);
Array operator!(const Array& a);

Array operator+(const Operand& a, const Operand& b);
Array operator-(const Operand& a, const Operand& b);
Array operator*(const Operand& a, const Operand& b);
Array operator/(const Operand& a, const Operand& b);
Array operator%(const Operand& a, const Operand& b);
Array operator==(const Operand& a, const Operand& b);
Array operator!=(const Operand& a, const Operand& b);
Array operator<(const Operand& a, const Operand& b);
Array operator<=(const Operand& a, const Operand& b);
Array operator>(const Operand& a, const Operand& b);
Array operator>=(const Operand& a, const Operand& b);
Array operator&(const Operand& a, const Operand& b);
Array operator|(const Operand& a, const Operand& b);
Array operator^(const Operand& a, const Operand& b);
Array operator<<(const Operand& a, const Operand& b);
Array operator>>(const Operand& a, const Operand& b);
Array operator&&(const Operand& a, const Operand& b);
Array operator||(const Operand& a, const Operand& b);

}  // namespace nuvec
