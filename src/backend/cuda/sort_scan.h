// Internal interface of the GPU sorts and scans (sort_scan.cpp dispatches,
// sort.cu and scan.cu hold the kernels). Both families see their input as
// rows along one axis: `RowLayout` says where row r's element j is in the
// input (any strides) and in the dense row-major output.
#pragma once

#include <cstdint>

#include "backend/cuda/cuda.h"
#include "nuvec/primitives/sort.h"

namespace nuvec::cuda {

struct RowLayout {
  static constexpr int kMaxDims = 8;
  // The dimensions other than the axis, collapsed, with the input's strides:
  // row r (row-major over them) starts at offset + offset_of_row(r).
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
  int64_t offset = 0;
  int64_t n = 0;            // length of the axis (< 2^31)
  int64_t axis_stride = 0;  // input stride along the axis
  int64_t rows = 0;         // product of the other dimensions
  // Output (dense, row-major): row r = o * inner + i is at
  // o * n * inner + i, its elements `inner` apart.
  int64_t inner = 1;
};

#ifdef __CUDACC__
/// Where row r starts, relative to RowLayout::offset.
__device__ __forceinline__ int64_t row_offset(const RowLayout& l, int64_t r) {
  if (l.ndim == 1) return r * l.strides[0];  // no 64-bit division
  int64_t off = 0;
  for (int d = l.ndim - 1; d >= 0; --d) {
    off += (r % l.shape[d]) * l.strides[d];
    r /= l.shape[d];
  }
  return off;
}
#endif

/// Sort, ArgSort, Partition, ArgPartition (sort.cu): `arg` writes uint32
/// positions, else the values. Nothing is launched for an empty input.
/// Scratch buffers come from the caching allocator of stream `st`.
void sort_rows(const Array& in, Array& out, const RowLayout& l, bool arg, Stream st,
               void* stream);

/// Scan (scan.cu).
void scan_rows(const Scan& p, const Array& in, Array& out, const RowLayout& l, Stream st,
               void* stream);

}  // namespace nuvec::cuda
