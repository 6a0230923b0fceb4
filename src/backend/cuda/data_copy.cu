// Copies of elements between strided layouts on the GPU, moving each
// element's bits as one unsigned word of its item size (as the CPU's
// copy_general): BitCast, Depends, Custom, Concatenate and Scatter's first
// copy are built on it (data.cpp); and fills of one value (NumberOf,
// fast::CudaKernel's init_value). One thread per element, grid-stride.
#include "backend/cuda/data.h"
#include "backend/cuda/elementwise.cuh"

namespace nuvec::cuda::data {

namespace {

using ew::Layout;


// Operand 0 is the source, operand 1 the destination.
template <class W>
__global__ void copy_kernel(const W* src, W* dst, int64_t n, Layout l) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += step)
    dst[ew::at(l, 1, i)] = src[ew::at(l, 0, i)];
}

template <class W>
__global__ void fill_kernel(W* dst, W v, int64_t n) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += step)
    dst[i] = v;
}

}  // namespace

void copy_elements(const Array& in, void* dst, const Strides& dst_strides,
                   int64_t dst_offset, cudaStream_t s) {
  int64_t n = in.size();
  if (n == 0) return;
  auto c = cpu::collapse<2>(in.shape(), {&in.strides(), &dst_strides});
  if (c.shape.size() > static_cast<size_t>(ew::kMaxDims))
    (Error(ErrorKind::backend,
                "GPU copies take at most 8 collapsed dimensions")).raise();
  const int item = in.itemsize();
  const char* src = static_cast<const char*>(in.desc()->data->ptr);
  if (c.shape.size() == 1 && c.strides[0][0] == 1 && c.strides[1][0] == 1) {
    // Both dense: one copy of the bytes.
    cudaError_t e = cudaMemcpyAsync(static_cast<char*>(dst) + dst_offset * item,
                                    src + in.desc()->offset * item,
                                    static_cast<size_t>(n) * item,
                                    cudaMemcpyDeviceToDevice, s);
    if (e != cudaSuccess)
      (Error(ErrorKind::backend,
                  std::string("GPU copy: ") + cudaGetErrorString(e))).raise();
    return;
  }
  Layout l;
  l.ndim = static_cast<int>(c.shape.size());
  l.offset[0] = in.desc()->offset;
  l.offset[1] = dst_offset;
  for (int d = 0; d < l.ndim; ++d) {
    l.shape[d] = c.shape[d];
    l.strides[0][d] = c.strides[0][d];
    l.strides[1][d] = c.strides[1][d];
  }
  by_word("GPU copy", item, [&](auto w) {
    using W = decltype(w);
    copy_kernel<W><<<grid_for(n), kThreads, 0, s>>>(
        reinterpret_cast<const W*>(src), static_cast<W*>(dst), n, l);
  });
  ew::check_launch("copy");
}

void copy_into(const Array& in, Array& out, cudaStream_t s) {
  copy_elements(in, out.desc()->data->ptr, out.strides(), out.desc()->offset,
                s);
}

void fill_elements(void* dst, uint64_t bits, int itemsize, int64_t n,
                   cudaStream_t s) {
  if (n == 0) return;
  by_word("GPU fill", itemsize, [&](auto w) {
    using W = decltype(w);
    fill_kernel<W><<<grid_for(n), kThreads, 0, s>>>(static_cast<W*>(dst),
                                                   static_cast<W>(bits), n);
  });
  ew::check_launch("fill");
}

}  // namespace nuvec::cuda::data
