// Matrix products with MLX's rules: 1-D operands are promoted to a row or
// column and the added axis removed; batch axes broadcast.
#pragma once

#include "nuvec/core/array.h"

namespace nuvec::inline ops {

/// a @ b. float32 and float64 go through BLAS; other dtypes through our own
/// kernels (16-bit floats accumulate in float32).
Array matmul(const Array& a, const Array& b, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
/// Sum of products over the last axes of a and b.
Array inner(const Array& a, const Array& b, StreamOrDevice s = {},
            Location loc = NUVEC_LOC);
/// Outer product of the flattened arrays.
Array outer(const Array& a, const Array& b, StreamOrDevice s = {},
            Location loc = NUVEC_LOC);
/// sum(conj(a) * b) along `axis` (a and b broadcast; as MLX's vecdot).
Array vecdot(const Array& a, const Array& b, int axis = -1, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
/// alpha * (a @ b) + beta * c: a and b as matmul's, all three promoted to
/// their common dtype, c broadcast against the product; c is not read when
/// beta is 0. One AddMM node (docs/semantics.md): on the CPU the bits of
/// matmul, * alpha, c * beta and + as separate ops; on the GPU cuBLASLt.
Array addmm(const Array& c, const Array& a, const Array& b, float alpha = 1.0f,
            float beta = 1.0f, StreamOrDevice s = {}, Location loc = NUVEC_LOC);

}  // namespace nuvec::ops
