// Scans on the GPU (sort_scan.h): cumsum, cumprod, cummax, cummin and
// logcumsumexp, inclusive or exclusive, forwards or reversed, with the
// CPU's functors (kernels/, built with --fmad=false) in the output dtype.
//
// Every result is the CPU's, bit for bit:
// - Many rows: one thread walks each row (lane) along the axis, in the
//   CPU's order, so with the same roundings (float sums, products,
//   logaddexp). Few long rows: one block per row stages tiles of it in
//   shared memory and one thread scans them, still in the CPU's order.
// - Few long rows of an associative scan (integer and bool sums and
//   products, which wrap; max and min of every dtype but complex64, whose
//   lexicographic order with a NaN part is not associative) are cut into
//   chunks: each chunk's total, then per row the running totals of the
//   chunks, then each chunk rescanned from its prefix. Associativity, and
//   op(init, x) == x bitwise, make that equal to the sequential result.
// So a single long row of a floating sum, product or logaddexp runs at one
// thread's speed (a few ns per element; tens for float16 and logaddexp).
// Nothing depends on timing: the results are deterministic.
#include <cuda_runtime.h>

#include <algorithm>
#include <limits>
#include <string>

#include "backend/cuda/sort_scan.h"
#include "backend/scan_op.h"
#include "nuvec/kernels/functors.h"

namespace nuvec::cuda {

namespace {

using ST = Scan::Type;
constexpr int kThreads = 64;  // few rows still spread over the SMs

using backend::scan_init;
using backend::ScanOp;


// Whether chunks may be combined in another order with the same bits.
template <ST type, class U>
inline constexpr bool associative =
    ((type == ST::sum || type == ST::prod) && (kernels::is_int_v<U> || kernels::is_bool_v<U>)) ||
    ((type == ST::max || type == ST::min) && !kernels::is_complex_v<U>);


// Where row r starts in the dense output (its elements l.inner apart).
__device__ __forceinline__ int64_t out_row(const RowLayout& l, int64_t r) {
  return l.inner == 1 ? r * l.n : (r / l.inner) * l.n * l.inner + r % l.inner;
}

__device__ __forceinline__ int64_t global_id() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_size() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// Scan positions s0 .. s1 - 1 of one row from `acc` (s is the position in
// scan order: element n-1-s when reversed); returns the running value.
// Loads go in batches of kBatch, so that several are in flight.
constexpr int kBatch = 8;
template <ST type, class In, class U>
__device__ __forceinline__ U scan_span(const In* __restrict__ x, U* __restrict__ y, const RowLayout& l, U acc,
                                       int64_t s0, int64_t s1, bool rev, bool incl, bool first) {
  ScanOp<type> op;
  kernels::Cast<U> cast;
  const int64_t step = rev ? -1 : 1;
  for (int64_t s = s0; s < s1; s += kBatch) {
    const int64_t a = rev ? l.n - 1 - s : s;
    U v[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k)
      if (s + k < s1) v[k] = cast(x[(a + k * step) * l.axis_stride]);
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if (s + k >= s1) break;
      U* out = y ? y + (a + k * step) * l.inner : nullptr;
      if (incl) {
        acc = (first && s + k == s0) ? v[k] : op(acc, v[k]);
        if (out) *out = acc;
      } else {
        if (out) *out = acc;
        acc = op(acc, v[k]);
      }
    }
  }
  return acc;
}

// One thread per row: the CPU's sequential order.
template <ST type, class In, class U>
__global__ void scan_rows_kernel(const In* x, U* y, RowLayout l, U init, bool rev, bool incl) {
  for (int64_t r = global_id(); r < l.rows; r += grid_size())
    scan_span<type>(x + l.offset + row_offset(l, r), y + out_row(l, r), l, init, 0, l.n, rev, incl, true);
}

// Thread 0's part of scan_tiles_kernel: the tile in place, in order. Full
// batches are unrolled without conditions (registers only), then the tail.
template <bool Incl, class Op, class U>
__device__ __forceinline__ U scan_tile(Op op, U* tile, int cnt, U acc, bool first) {
  int k0 = 0;
  if (first) {  // an inclusive scan starts from the first element itself
    acc = tile[0];
    k0 = 1;
  }
  for (; k0 + kBatch <= cnt; k0 += kBatch) {
    U v[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) v[k] = tile[k0 + k];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if constexpr (Incl) {
        acc = op(acc, v[k]);
        tile[k0 + k] = acc;
      } else {
        tile[k0 + k] = acc;
        acc = op(acc, v[k]);
      }
    }
  }
  for (; k0 < cnt; ++k0) {
    U v = tile[k0];
    if constexpr (Incl) {
      acc = op(acc, v);
      tile[k0] = acc;
    } else {
      tile[k0] = acc;
      acc = op(acc, v);
    }
  }
  return acc;
}

// One block per row, for few long rows: the block stages a tile of the row
// in shared memory (loads in parallel, coalesced when the axis is the
// contiguous one), thread 0 scans it in the CPU's order, the block writes
// it out. The sequential part then runs at shared-memory speed.
constexpr int kTile = 2048;
template <ST type, class In, class U>
__global__ void scan_tiles_kernel(const In* x, U* y, RowLayout l, U init, bool rev, bool incl) {
  __shared__ alignas(16) unsigned char raw[kTile * sizeof(U)];  // U may have a constructor
  U* tile = reinterpret_cast<U*>(raw);
  ScanOp<type> op;
  kernels::Cast<U> cast;
  for (int64_t r = blockIdx.x; r < l.rows; r += gridDim.x) {
    const In* xr = x + l.offset + row_offset(l, r);
    U* yr = y + out_row(l, r);
    U acc = init;  // thread 0's
    for (int64_t s0 = 0; s0 < l.n; s0 += kTile) {
      int cnt = static_cast<int>(std::min<int64_t>(kTile, l.n - s0));
      for (int k = threadIdx.x; k < cnt; k += blockDim.x) {
        int64_t a = rev ? l.n - 1 - (s0 + k) : s0 + k;
        tile[k] = cast(xr[a * l.axis_stride]);
      }
      __syncthreads();
      if (threadIdx.x == 0) {
        if (incl) acc = scan_tile<true>(op, tile, cnt, acc, s0 == 0);
        else acc = scan_tile<false>(op, tile, cnt, acc, false);
      }
      __syncthreads();
      for (int k = threadIdx.x; k < cnt; k += blockDim.x) {
        int64_t a = rev ? l.n - 1 - (s0 + k) : s0 + k;
        yr[a * l.inner] = tile[k];
      }
      __syncthreads();  // before the next tile overwrites it
    }
  }
}

// Chunk t = r * m + c (positions c * chunk ...) of row r: its total, from init.
template <ST type, class In, class U>
__global__ void chunk_total_kernel(const In* x, U* total, RowLayout l, U init, bool rev, int64_t chunk,
                                   int64_t m) {
  for (int64_t t = global_id(); t < l.rows * m; t += grid_size()) {
    int64_t r = t / m, s0 = (t - r * m) * chunk;
    total[t] = scan_span<type, In, U>(x + l.offset + row_offset(l, r), nullptr, l, init, s0,
                                      std::min(l.n, s0 + chunk), rev, true, false);
  }
}

// Per row, each chunk's total becomes the combination of the chunks before.
template <ST type, class U>
__global__ void chunk_prefix_kernel(U* total, int64_t rows, int64_t m, U init) {
  ScanOp<type> op;
  for (int64_t r = global_id(); r < rows; r += grid_size()) {
    U acc = init;
    for (int64_t c = 0; c < m; ++c) {
      U t = total[r * m + c];
      total[r * m + c] = acc;
      acc = op(acc, t);
    }
  }
}

template <ST type, class In, class U>
__global__ void chunk_apply_kernel(const In* x, U* y, const U* prefix, RowLayout l, bool rev, bool incl,
                                   int64_t chunk, int64_t m) {
  for (int64_t t = global_id(); t < l.rows * m; t += grid_size()) {
    int64_t r = t / m, s0 = (t - r * m) * chunk;
    scan_span<type>(x + l.offset + row_offset(l, r), y + out_row(l, r), l, prefix[t], s0,
                    std::min(l.n, s0 + chunk), rev, incl, false);
  }
}

unsigned grid_for(int64_t work) {
  return static_cast<unsigned>(std::min<int64_t>((work + kThreads - 1) / kThreads, int64_t(1) << 20));
}

void check_launch() {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) (Error(ErrorKind::backend, std::string("scan launch: ") + cudaGetErrorString(e))).raise();
}

template <ST type, class In, class U>
void scan_typed(const Scan& p, const Array& in, Array& out, const RowLayout& l, Stream st, cudaStream_t s) {
  const In* x = static_cast<const In*>(in.desc()->data->ptr);
  U* y = static_cast<U*>(out.desc()->data->ptr) + out.desc()->offset;
  const U init = scan_init<type, U>();
  bool rev = p.reverse(), incl = p.inclusive();
  if constexpr (associative<type, U>) {
    if (l.n >= 4096 && l.rows <= 1024) {
      int bits = 0;
      while ((int64_t(1) << bits) < l.n) ++bits;
      int64_t chunk = int64_t(1) << std::max(5, (bits - 2) / 2);
      int64_t m = (l.n + chunk - 1) / chunk;
      auto total = allocate(static_cast<size_t>(l.rows * m) * sizeof(U), st);
      U* t = static_cast<U*>(total->ptr);
      chunk_total_kernel<type, In, U><<<grid_for(l.rows * m), kThreads, 0, s>>>(x, t, l, init, rev, chunk, m);
      check_launch();
      chunk_prefix_kernel<type, U><<<grid_for(l.rows), kThreads, 0, s>>>(t, l.rows, m, init);
      check_launch();
      chunk_apply_kernel<type, In, U><<<grid_for(l.rows * m), kThreads, 0, s>>>(x, y, t, l, rev, incl, chunk, m);
      check_launch();
      return;
    }
  }
  if (l.n >= 64 && (l.rows <= 2048 || (l.inner == 1 && l.rows <= 16384))) {
    unsigned grid = static_cast<unsigned>(std::min<int64_t>(l.rows, int64_t(1) << 20));
    scan_tiles_kernel<type, In, U><<<grid, 256, 0, s>>>(x, y, l, init, rev, incl);
  } else {
    scan_rows_kernel<type, In, U><<<grid_for(l.rows), kThreads, 0, s>>>(x, y, l, init, rev, incl);
  }
  check_launch();
}

template <ST type>
void scan_dispatch(const Scan& p, const Array& in, Array& out, const RowLayout& l, Stream st, cudaStream_t s) {
  dispatch_dtype(in.dtype(), [&](auto ti) {
    using In = typename decltype(ti)::type;
    using U = type_of_t<scan_output_dtype(type, dtype_v<In>).val>;
    if (!(dtype_v<U> == out.dtype())) (Error(ErrorKind::internal, "scan: unexpected output dtype")).raise();
    scan_typed<type, In, U>(p, in, out, l, st, s);
  });
}

}  // namespace

void scan_rows(const Scan& p, const Array& in, Array& out, const RowLayout& l, Stream st, void* stream) {
  if (l.rows == 0 || l.n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  switch (p.type()) {
    case ST::sum: return scan_dispatch<ST::sum>(p, in, out, l, st, s);
    case ST::prod: return scan_dispatch<ST::prod>(p, in, out, l, st, s);
    case ST::max: return scan_dispatch<ST::max>(p, in, out, l, st, s);
    case ST::min: return scan_dispatch<ST::min>(p, in, out, l, st, s);
    case ST::logaddexp: return scan_dispatch<ST::logaddexp>(p, in, out, l, st, s);
  }
}

}  // namespace nuvec::cuda
