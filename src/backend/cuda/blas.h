// What the cuBLAS (matmul.cpp) and cuBLASLt (addmm.cpp) paths share: status
// checks, the data and compute types of a product, and how row-major
// operands are seen by a column-major library (a transposed operand is a
// flag; other layouts are copied dense).
#pragma once

#include <cublas_v2.h>

#include <cstdint>
#include <vector>

#include "backend/cuda/cuda.h"

namespace nuvec::cuda::blas {

/// The cuBLAS handle of stream `s` (made on first use, default math mode;
/// matmul.cpp), shared by every cuBLAS caller.
cublasHandle_t handle_for(cudaStream_t s);

/// Throws Error(backend) naming `what` unless `st` is success.
void check(cublasStatus_t st, const char* what);

/// The element, compute and scale (alpha, beta) types of a product in `d`:
/// float32 with TF32 only when set_matmul_tf32(true); 16-bit floats
/// accumulate in float32. Throws for other dtypes.
struct Types {
  cudaDataType data;
  cublasComputeType_t compute;
  cudaDataType scale;
};
Types types_of(DType d);

/// How a row-major [rows, cols] matrix with strides (rs, cs) is seen
/// column-major: usable as is (`ld`), or as the transpose.
struct View {
  bool usable = false, transposed = false;
  int64_t ld = 0;
};
View view_of(int64_t rows, int64_t cols, int64_t rs, int64_t cs);

/// The operands of a batched product a [..., m, k] @ b [..., k, n] (equal
/// batch shapes): views, copies where a view is not usable, and the
/// element offset of each batch's matrix. With `even`, operands whose
/// batch offsets are not evenly spaced are copied dense too, so that one
/// strided-batched call serves.
struct Operands {
  Array a, b;
  View va, vb;
  int m = 0, n = 0, k = 0;
  std::vector<int64_t> oa, ob;
  bool even = false;                   // offsets evenly spaced (count > 1)
  int64_t stride_a = 0, stride_b = 0;  // when even
};
Operands operands(const Array& a, const Array& b, void* stream, Stream st,
                  bool even);

/// out = a b for operands with one matrix or evenly spaced batches (at
/// least 0 apart), as one cuBLASLt call (addmm.cpp); false, with nothing
/// enqueued, where the heuristic offers no algorithm.
bool lt_product(const Operands& o, const Types& ty, Array& out, cudaStream_t stream, Stream st);

/// The first element of a device array, as bytes.
inline char* bytes(const Array& x) {
  return static_cast<char*>(x.desc()->data->ptr) +
         x.desc()->offset * x.itemsize();
}

}  // namespace nuvec::cuda::blas
