// The kernels of the quantization primitives on the GPU
// (quantized_pack.cu: quantize, dequantize, the dequantized slabs of the
// many-row products and cuBLAS pointer arrays; quantized_mv.cu: the
// few-row products), called by their dispatch (quantized.cpp). Plain C++:
// no CUDA header; a cudaStream_t is passed as void*.
//
// Pointers are device pointers to dense row-major data. `t` names the
// element type (float32, float16, bfloat16 or float64). A stack of packed
// matrices is [count, rows, words] uint32 with scales (and biases)
// [count, rows, cols / group]. Indices (lhs, rhs: uint32, one per item, or
// null for "item i uses matrix i", or matrix 0 when the stack holds one)
// are clamped to the last matrix. Launch errors throw nuvec::Error
// (backend).
#pragma once

#include <cstdint>

#include "nuvec/core/dtype.h"
#include "nuvec/primitives/quantized.h"

namespace nuvec::cuda::quantk {

/// Packed matrices: `count` of them, each `rows` rows of `cols` elements.
struct Packed {
  const uint32_t* w = nullptr;
  const void* scales = nullptr;  // t, or uint8 codes for the floating modes
  const void* biases = nullptr;  // affine only
  int64_t count = 1;
  int rows = 0, cols = 0;
  QuantSpec q;
};

/// w [rows, k] of dtype t into wq [rows, k * bits / 32], scales and
/// biases [rows, k / group]: MLX's arithmetic, the CPU's bits.
void quantize(DType t, const QuantSpec& q, const void* w, uint32_t* wq, void* scales,
              void* biases, int64_t rows, int64_t k, void* stream);

/// The values [rows, k] in dtype `out_t` of wq [rows, k * bits / 32]:
/// affine: T(T(scale * q) + bias), T = `t` the scales' dtype, then cast;
/// floating modes (t ignored): value(code) * scale in float32, then cast.
void dequantize(DType t, DType out_t, const QuantSpec& q, const uint32_t* wq,
                const void* scales, const void* biases, void* out, int64_t rows, int64_t k,
                void* stream);

/// The slab of `items` gathered matrices, item j the matrix
/// rhs[i0 + j] (or i0 + j without rhs) of `p`, dequantized as dequantize
/// does into dtype t: with `transpose` rows [c0, c0 + nc) of each
/// ([items, nc, p.cols]), else columns [c0, c0 + nc) of every row
/// ([items, p.rows, nc]; c0 and nc multiples of the group size).
void dequantize_slab(DType t, const Packed& p, const uint32_t* rhs, int64_t i0, int items,
                     bool transpose, int c0, int nc, void* out, void* stream);

/// ptrs[j] = base + matrix(i0 + j) * stride bytes for j < n, matrix(i) =
/// min(idx[i], count - 1) (i without idx): cublasGemmBatchedEx's arrays.
void gather_pointers(const void* base, int64_t stride, const uint32_t* idx, int64_t count,
                     int64_t i0, int n, const void** ptrs, void* stream);

/// The few-row product: items i of x [x_count, M, K] (matrix lhs[i]) and
/// the packed matrices (matrix rhs[i]; with `transpose` each is [N, K],
/// else [K, N]) into out [items, M, N] (dtype t). A row's bits depend on
/// K, N, the format and t only: not on M, the item or the other rows.
struct MvArgs {
  DType t = float32;
  const void* x = nullptr;
  int64_t x_count = 1;
  Packed w;
  const uint32_t* lhs = nullptr;
  const uint32_t* rhs = nullptr;
  int64_t items = 1;
  int m = 1, n = 0, k = 0;
  bool transpose = true;
  void* out = nullptr;
  // The packed matrices may be read before the kernel's predecessor in a
  // held chain completes (module.h, unwritten_by_held): the transposed
  // kernel then warms the L2 with its first weights while it runs.
  bool early_w = false;
};
void qmv(const MvArgs& a, void* stream);

/// The few-row dense gathered product: out[i] = a[lhs[i]] @ b[rhs[i]],
/// a [a_count, M, K], b [b_count, K, N], out [items, M, N], one dtype t.
/// Row bits as qmv's (independent of M).
void gmv(DType t, const void* a, int64_t a_count, const void* b, int64_t b_count,
         const uint32_t* lhs, const uint32_t* rhs, int64_t items, int m, int n, int k, void* out,
         void* stream);

/// Whether these kernels take dtype t (float32, float16, bfloat16, float64).
bool supports(DType t);

}  // namespace nuvec::cuda::quantk
