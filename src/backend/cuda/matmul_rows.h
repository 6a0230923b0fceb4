// The few-row dense product on the GPU (matmul_rows.cu): out = A B for
// matrices of at most ROW_INDEPENDENT_ROWS rows, where cuBLAS's choice of
// split depends on the row count. Each output element's dot product over k
// accumulates in the arithmetic type (float for the 16-bit types) in an
// order fixed by K, B's layout and the dtype alone, so every row has the
// bits of its one-row product (docs/quantization.md, "Row independence").
// Called by launch_matmul (matmul.cpp). Plain C++: no CUDA header.
#pragma once

#include <cstdint>

#include "nuvec/core/dtype.h"

namespace nuvec::cuda::rows {

/// The most batch axes a launch takes (after merging; matmul.cpp merges
/// axes that are contiguous in both operands).
inline constexpr int kMaxBatchDims = 8;

/// One product over a batch: for item i (row-major over `batch_shape`),
/// A_i(m, k) is element a_off(i) + m * a_rs + k * a_cs of `a`, B_i(k, n)
/// element b_off(i) + k * b_rs + n * b_cs of `b` (element strides, any
/// sign; a_off(i) the dot of i's indices with a_bs), and out is dense
/// [items, m, n]. B must be dense along n (b_cs == 1 or n == 1) or along
/// k (b_rs == 1 or k == 1); A may have any strides.
struct RowsArgs {
  DType t = float32;
  const void* a = nullptr;
  const void* b = nullptr;
  void* out = nullptr;
  int64_t a_rs = 0, a_cs = 1, b_rs = 0, b_cs = 1;
  int batch_ndim = 0;
  int64_t batch_shape[kMaxBatchDims] = {};
  int64_t a_bs[kMaxBatchDims] = {};
  int64_t b_bs[kMaxBatchDims] = {};
  int64_t items = 1;
  int m = 0, n = 0, k = 0;
  // B may be read before the kernel's predecessor in a held chain completes
  // (module.h, unwritten_by_held): its first loads then overlap that kernel.
  bool early_b = false;
};

/// Whether the kernels take dtype t (float32, float16, bfloat16, float64).
bool supports(DType t);

/// Whether B with these strides is taken as it is (see RowsArgs).
bool b_layout_ok(int64_t b_rs, int64_t b_cs, int k, int n);

/// Enqueues out = A B on `stream` (a cudaStream_t); m in [1, 8], n and k
/// at least 1. Launch errors throw nuvec::Error (backend).
void matmul_rows(const RowsArgs& a, void* stream);

}  // namespace nuvec::cuda::rows
