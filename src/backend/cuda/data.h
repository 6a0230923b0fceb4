// Internal interface of the data-movement kernels (launch_data in data.cpp
// dispatches to them): gathers (gather.cu), scatters (scatter.cu), copies
// (data_copy.cu), and divmod and arg-reductions (data_math.cu). Each matches
// its CPU kernel (src/backend/cpu) bit for bit; none uses floating-point
// atomics, so results are the same run to run.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "nuvec/core/graph.h"
#include "nuvec/primitives/conv.h"
#include "nuvec/primitives/indexing.h"
#include "nuvec/primitives/reduce.h"

#include "backend/cuda/cuda.h"
#ifdef __CUDACC__
#include "backend/cuda/elementwise.cuh"
#endif

namespace nuvec::cuda::data {

inline constexpr int kThreads = 256;

/// Blocks of kThreads for n elements, at most 2^20 (kernels loop over the
/// rest).
inline unsigned grid_for(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 1 << 20));
}

#ifdef __CUDACC__
/// Operand 0 of an element-wise layout of (shape, strides) at `offset`
/// (collapsed; at most 8 dimensions, else an Error). gather.cu.
ew::Layout layout1(const Shape& shape, const Strides& strides, int64_t offset);
#endif

/// Calls f with an unsigned integer of `itemsize` bytes (a value of the
/// type): kernels that move bits use words of the element's size.
template <class F>
void by_word(const char* what, int itemsize, F&& f) {
  switch (itemsize) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default:
      (Error(ErrorKind::internal, std::string(what) + ": unexpected item size " + std::to_string(itemsize))).raise();
  }
}

/// Device memory for one primitive's kernels from the caching allocator
/// of nuvec stream `s` (counted in the memory statistics and limit). It
/// goes back to that stream's cache when dropped, which is safe as soon as
/// its kernels are enqueued: only later work of the same stream reuses it.
class Scratch {
 public:
  Scratch(size_t bytes, Stream s) : d_(allocate(bytes, s)) {}
  template <class T>
  T* as() const {
    return static_cast<T*>(d_->ptr);
  }

 private:
  std::shared_ptr<Data> d_;
};

// data_copy.cu

/// Copies the elements of `in` (any strides, in its row-major order) to
/// `dst` at element offset `dst_offset` plus the index times `dst_strides`
/// (in's shape), moving the bits as words of the item size (any byte
/// pattern survives, as the CPU's copy_general).
void copy_elements(const Array& in, void* dst, const Strides& dst_strides,
                   int64_t dst_offset, cudaStream_t s);
/// copy_elements into `out` through its own strides and offset.
void copy_into(const Array& in, Array& out, cudaStream_t s);
/// The bytes of `v` converted to `d` as the CPU converts (kernels::Cast),
/// zero-extended (data.cpp).
uint64_t cast_bits(double v, DType d);
/// Writes the low `itemsize` bytes of `bits` to the `n` elements at `dst`.
void fill_elements(void* dst, uint64_t bits, int itemsize, int64_t n,
                   cudaStream_t s);

// gather.cu

/// Take along p.axis(): indices wrapped once when negative, then clamped.
void take(const Take& p, const Array& x, const Array& indices, Array& out,
          cudaStream_t s);
/// Im2Col: kernel taps of every output position (zeros in padding and in
/// input-dilation holes).
void im2col(const Im2Col& p, const Array& x, Array& out, cudaStream_t s);

// scatter.cu

/// Scatter: a copy of x updated in the CPU's order (see scatter.cu).
void scatter(const Scatter& p, const Array& x, const Array& positions,
             const Array& updates, Array& out, cudaStream_t s, Stream st);

// data_math.cu

/// (floor_divide, remainder) of two operands of the output's shape.
void divmod(const Array& a, const Array& b, Array& quotient, Array& remainder,
            cudaStream_t s);
/// argmax / argmin along p.axis(): the first NaN, else the first extremum.
void arg_reduce(const ArgReduce& p, const Array& x, Array& out, cudaStream_t s, Stream st);

}  // namespace nuvec::cuda::data
