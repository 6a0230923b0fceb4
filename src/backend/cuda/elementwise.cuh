// Element-wise kernels on the GPU (shared by unary.cu, binary.cu and
// select_cast.cu, which nvcc compiles in parallel): every unary and binary primitive, select
// and casts, through the scalar functors the CPU uses (kernels/), compiled
// with --fmad=false, so that results match the CPU's bit for bit. Each
// thread handles four elements a grid apart (coalesced, four loads in
// flight); inputs with strides or broadcasts are read through a collapsed
// layout, outputs are dense.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "backend/cpu/loops.h"
#include "backend/cuda/cuda.h"
#include "backend/functor_of.h"
#include "nuvec/kernels/fastdiv.h"
#include "nuvec/kernels/functors.h"

namespace nuvec::cuda::ew {

inline constexpr int kMaxDims = 8;
inline constexpr int kThreads = 256;
inline constexpr int kPerThread = 4;

// Where input k's element i is: dense (ndim 0) or through strides. With
// `narrow` (fewer than 2^31 elements: set by fast_index), each coordinate
// comes from a 32-bit multiply and shift (kernels/fastdiv.h), not a 64-bit
// division, which costs dozens of instructions a dimension an element and
// left strided kernels 10-30 times under bandwidth (H200, bfloat16
// [64, 256, 6, 64] transposes: 122 us where the bytes take 8).
struct Layout {
  int ndim = 0;
  bool narrow = false;
  int64_t shape[kMaxDims] = {};
  kernels::FastDiv div[kMaxDims] = {};  // by shape[d], d >= 1 (narrow)
  int64_t strides[3][kMaxDims] = {};
  int64_t offset[3] = {};
};

/// Sets l.narrow and l.div where the layout's element count is below 2^31
/// and each dimension but the first has at least 2 (as collapse leaves
/// them).
inline void fast_index(Layout& l) {
  int64_t n = 1;
  bool ok = true;
  for (int d = 0; d < l.ndim; ++d) {
    n *= l.shape[d];
    ok = ok && n < (int64_t{1} << 31) && (d == 0 || l.shape[d] >= 2);
  }
  l.narrow = ok && l.ndim >= 2;
  if (!l.narrow) return;
  for (int d = 1; d < l.ndim; ++d) l.div[d] = kernels::fast_div(static_cast<kernels::u32>(l.shape[d]));
}

__device__ __forceinline__ int64_t at(const Layout& l, int k, int64_t i) {
  if (l.ndim == 0) return l.offset[k] + i;
  if (l.ndim == 1) return l.offset[k] + i * l.strides[k][0];  // no 64-bit division
  int64_t off = l.offset[k];
  if (l.narrow) {
    auto r = static_cast<kernels::u32>(i);
    for (int d = l.ndim - 1; d > 0; --d) {
      const kernels::u32 q = kernels::fast_quotient(r, l.div[d]);
      off += static_cast<int64_t>(r - q * static_cast<kernels::u32>(l.shape[d])) * l.strides[k][d];
      r = q;
    }
    return off + static_cast<int64_t>(r) * l.strides[k][0];
  }
  for (int d = l.ndim - 1; d >= 0; --d) {
    int64_t c = i % l.shape[d];
    i /= l.shape[d];
    off += c * l.strides[k][d];
  }
  return off;
}

template <class F, class A, class O>
__global__ void unary_kernel(const A* a, O* o, int64_t n, Layout l) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k, i += step)
    if (i < n) o[i] = F{}(a[at(l, 0, i)]);
}

// Dense operands: each thread takes N consecutive elements, loaded and
// stored as aligned vectors when the pointers allow it (the host checks):
// N fills 16 bytes of the wider of the input and output types, and is at
// least 4 (16-bit types: 8, bytes and bool: 16; before, 4 for every type,
// which left 16-bit types at 8-byte accesses).
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <class A, class O>
inline constexpr int kWider = static_cast<int>(sizeof(A) > sizeof(O) ? sizeof(A) : sizeof(O));
template <class A, class O>
inline constexpr int kDense = 16 / kWider<A, O> > 4 ? 16 / kWider<A, O> : 4;

template <class F, class A, class O, int N = kDense<A, O>>
__global__ void unary_dense_kernel(const A* a, O* o, int64_t n) {
  int64_t i = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * N;
  if (i + N <= n) {
    Pack<A, N> x = *reinterpret_cast<const Pack<A, N>*>(a + i);
    Pack<O, N> y;
#pragma unroll
    for (int k = 0; k < N; ++k) y.v[k] = F{}(x.v[k]);
    *reinterpret_cast<Pack<O, N>*>(o + i) = y;
  } else {
    for (; i < n; ++i) o[i] = F{}(a[i]);
  }
}

template <class F, class A, class O, int N = kDense<A, O>>
__global__ void binary_dense_kernel(const A* a, const A* b, O* o, int64_t n) {
  int64_t i = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * N;
  if (i + N <= n) {
    Pack<A, N> x = *reinterpret_cast<const Pack<A, N>*>(a + i);
    Pack<A, N> y = *reinterpret_cast<const Pack<A, N>*>(b + i);
    Pack<O, N> z;
#pragma unroll
    for (int k = 0; k < N; ++k) z.v[k] = F{}(x.v[k], y.v[k]);
    *reinterpret_cast<Pack<O, N>*>(o + i) = z;
  } else {
    for (; i < n; ++i) o[i] = F{}(a[i], b[i]);
  }
}

// One operand by value, the other dense; `same`: both operands are the
// same dense array (x * x), loaded once.
template <class F, class A, class O, int N = kDense<A, O>>
__global__ void binary_scalar_dense_kernel(const A* a, A v, bool scalar_left, bool same, O* o, int64_t n) {
  int64_t i = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * N;
  if (i + N <= n) {
    Pack<A, N> x = *reinterpret_cast<const Pack<A, N>*>(a + i);
    Pack<O, N> z;
#pragma unroll
    for (int k = 0; k < N; ++k)
      z.v[k] = same ? F{}(x.v[k], x.v[k]) : scalar_left ? F{}(v, x.v[k]) : F{}(x.v[k], v);
    *reinterpret_cast<Pack<O, N>*>(o + i) = z;
  } else {
    for (; i < n; ++i) o[i] = same ? F{}(a[i], a[i]) : scalar_left ? F{}(v, a[i]) : F{}(a[i], v);
  }
}

// Whether a dense kernel of A -> O may use pointer p (of type A or O):
// aligned for its Pack of kDense<A, O>.
template <class A, class O, class T>
bool packable(const T* p) {
  return reinterpret_cast<uintptr_t>(p) % (sizeof(T) * kDense<A, O>) == 0;
}

// One operand by value (`scalar_left`: it is the left one).
template <class F, class A, class O>
__global__ void binary_scalar_kernel(const A* a, A v, bool scalar_left, O* o, int64_t n, Layout l) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k, i += step)
    if (i < n) o[i] = scalar_left ? F{}(v, a[at(l, 0, i)]) : F{}(a[at(l, 0, i)], v);
}

template <class F, class A, class O>
__global__ void binary_kernel(const A* a, const A* b, O* o, int64_t n, Layout l) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k, i += step)
    if (i < n) o[i] = F{}(a[at(l, 0, i)], b[at(l, 1, i)]);
}

template <class T>
__global__ void select_kernel(const bool* c, const T* x, const T* y, T* o, int64_t n, Layout l) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k, i += step)
    if (i < n) o[i] = kernels::Select{}(c[at(l, 0, i)], x[at(l, 1, i)], y[at(l, 2, i)]);
}

// The layout of `inputs` seen at the output's shape: dense when every input
// is row-contiguous at that shape.
inline Layout layout_of(const std::vector<const Array*>& inputs, const Shape& shape) {
  Layout l;
  bool dense = true;
  for (size_t k = 0; k < inputs.size(); ++k) {
    l.offset[k] = inputs[k]->desc()->offset;
    dense = dense && inputs[k]->desc()->row_contiguous && inputs[k]->shape() == shape;
  }
  if (dense) return l;
  std::array<const Strides*, 3> st{};
  Strides zero(shape.size(), 0);
  for (size_t k = 0; k < 3; ++k) st[k] = k < inputs.size() ? &inputs[k]->strides() : &zero;
  auto c = cpu::collapse<3>(shape, st);
  if (c.shape.size() > kMaxDims)
    (Error(ErrorKind::backend, "GPU element-wise kernels take at most 8 collapsed dimensions")).raise();
  l.ndim = static_cast<int>(c.shape.size());
  for (int d = 0; d < l.ndim; ++d) {
    l.shape[d] = c.shape[d];
    for (size_t k = 0; k < 3; ++k) l.strides[k][d] = c.strides[k][d];
  }
  fast_index(l);
  return l;
}

inline unsigned blocks_for(int64_t n, int per_thread = kPerThread) {
  int64_t per_block = static_cast<int64_t>(kThreads) * per_thread;
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}
// The grid of a dense kernel of A -> O.
template <class A, class O>
unsigned dense_blocks(int64_t n) {
  return blocks_for(n, kDense<A, O>);
}

template <class T>
const T* dev(const Array& a) {
  return static_cast<const T*>(a.desc()->data->ptr);  // offsets go through Layout
}
template <class T>
T* dev_out(Array& a) {
  return static_cast<T*>(a.desc()->data->ptr) + a.desc()->offset;
}

inline void check_launch(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    (Error(ErrorKind::backend, std::string("CUDA launch of ") + what + " failed: " + cudaGetErrorString(e))).raise();
}

[[noreturn]] inline void no_kernel(const char* what, DType d) {
  (Error(ErrorKind::unsupported_dtype,
              std::string("no GPU kernel for ") + what + " on " + std::string(dtype_name(d)))).raise();
}

template <PrimitiveId Id>
void unary(const Array& in, Array& out, cudaStream_t s) {
  using F = backend::functor_of_t<Id>;
  int64_t n = out.size();
  Layout l = layout_of({&in}, out.shape());
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_invocable_v<F, T>) {
      using O = std::decay_t<decltype(F{}(T{}))>;
      const T* src = dev<T>(in) + in.desc()->offset;
      if (n > 0 && l.ndim == 0 && packable<T, O>(src) && packable<T, O>(dev_out<O>(out)))
        unary_dense_kernel<F, T, O><<<dense_blocks<T, O>(n), kThreads, 0, s>>>(src, dev_out<O>(out), n);
      else if (n > 0)
        unary_kernel<F, T, O><<<blocks_for(n), kThreads, 0, s>>>(dev<T>(in), dev_out<O>(out), n, l);
      check_launch(primitive_name(Id));
    } else {
      no_kernel(primitive_name(Id), in.dtype());
    }
  });
}

template <PrimitiveId Id>
void binary(const Array& a, const Array& b, Array& out, cudaStream_t s) {
  using F = backend::functor_of_t<Id>;
  int64_t n = out.size();
  Layout l = layout_of({&a, &b}, out.shape());
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_invocable_v<F, T, T>) {
      using O = std::decay_t<decltype(F{}(T{}, T{}))>;
      if (host_scalar(a) || host_scalar(b)) {
        bool left = host_scalar(a);
        const Array& arr = left ? b : a;
        const Array& sc = left ? a : b;
        T v = static_cast<const T*>(sc.desc()->data->ptr)[sc.desc()->offset];
        Layout la = layout_of({&arr}, out.shape());
        const T* pa = dev<T>(arr) + arr.desc()->offset;
        if (n > 0 && la.ndim == 0 && packable<T, O>(pa) && packable<T, O>(dev_out<O>(out)))
          binary_scalar_dense_kernel<F, T, O>
              <<<dense_blocks<T, O>(n), kThreads, 0, s>>>(pa, v, left, false, dev_out<O>(out), n);
        else if (n > 0)
          binary_scalar_kernel<F, T, O><<<blocks_for(n), kThreads, 0, s>>>(dev<T>(arr), v, left, dev_out<O>(out), n, la);
        check_launch(primitive_name(Id));
        return;
      }
      const T* pa = dev<T>(a) + a.desc()->offset;
      const T* pb = dev<T>(b) + b.desc()->offset;
      const bool dense_out = packable<T, O>(dev_out<O>(out));
      if (n > 0 && l.ndim == 0 && pa == pb && packable<T, O>(pa) && dense_out)
        binary_scalar_dense_kernel<F, T, O>
            <<<dense_blocks<T, O>(n), kThreads, 0, s>>>(pa, T{}, false, true, dev_out<O>(out), n);
      else if (n > 0 && l.ndim == 0 && packable<T, O>(pa) && packable<T, O>(pb) && dense_out)
        binary_dense_kernel<F, T, O><<<dense_blocks<T, O>(n), kThreads, 0, s>>>(pa, pb, dev_out<O>(out), n);
      else if (n > 0)
        binary_kernel<F, T, O><<<blocks_for(n), kThreads, 0, s>>>(dev<T>(a), dev<T>(b), dev_out<O>(out), n, l);
      check_launch(primitive_name(Id));
    } else {
      no_kernel(primitive_name(Id), a.dtype());
    }
  });
}

}  // namespace nuvec::cuda::ew
