// Copies of elements between strided layouts on the GPU, moving each
// element's bits as one unsigned word of its item size (as the CPU's
// copy_general): BitCast, Depends, Custom, Concatenate and Scatter's first
// copy are built on it (data.cpp); and fills of one value (NumberOf,
// fast::CudaKernel's init_value). One thread per element, grid-stride;
// where both layouts hold runs of elements contiguous and aligned (a head
// transpose's rows of 64), one thread per 16-, 8- or 4-byte word of them.
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

// The widest word (16, 8 or 4 bytes, over `item`) that the copy of layout
// `c` from `src` to `dst` may move whole: the innermost axis contiguous on
// both sides, its extent, the other strides and both offsets multiples of
// the word's elements, both pointers aligned to it; `item` where none is.
int word_size(const cpu::Layout<2>& c, int item, const void* src,
              const void* dst, const int64_t (&offset)[2]) {
  const size_t last = c.shape.size() - 1;
  if (c.strides[0][last] != 1 || c.strides[1][last] != 1) return item;
  for (int w = 16; w > item; w /= 2) {
    const int64_t f = w / item;
    bool ok = c.shape[last] % f == 0 &&
              reinterpret_cast<uintptr_t>(src) % w == 0 &&
              reinterpret_cast<uintptr_t>(dst) % w == 0;
    for (int k = 0; k < 2; ++k) {
      ok = ok && offset[k] % f == 0;
      for (size_t d = 0; d < last; ++d) ok = ok && c.strides[k][d] % f == 0;
    }
    if (ok) return w;
  }
  return item;
}

template <class W>
void launch_copy(const void* src, void* dst, int64_t n, const Layout& l,
                 cudaStream_t s) {
  copy_kernel<W><<<grid_for(n), kThreads, 0, s>>>(static_cast<const W*>(src),
                                                  static_cast<W*>(dst), n, l);
}

}  // namespace

void copy_elements(const Array& in, void* dst, const Strides& dst_strides,
                   int64_t dst_offset, cudaStream_t s) {
  int64_t n = in.size();
  if (n == 0) return;
  auto c = cpu::collapse<2>(in.shape(), {&in.strides(), &dst_strides});
  if (c.shape.size() > static_cast<size_t>(ew::kMaxDims))
    (Error(ErrorKind::backend,
           "GPU copies take at most 8 collapsed dimensions"))
        .raise();
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
             std::string("GPU copy: ") + cudaGetErrorString(e)))
          .raise();
    return;
  }
  Layout l;
  l.offset[0] = in.desc()->offset;
  l.offset[1] = dst_offset;
  // In words of `word` bytes, f elements each: the innermost extent and the
  // other strides divided by f, the axis dropped where one word covers it.
  const int word = word_size(c, item, src, dst, {l.offset[0], l.offset[1]});
  const int64_t f = word / item;
  const int last = static_cast<int>(c.shape.size()) - 1;
  for (int d = 0; d <= last; ++d) {
    const int64_t extent = d == last ? c.shape[d] / f : c.shape[d];
    if (extent == 1 && d == last && last > 0) break;
    l.shape[l.ndim] = extent;
    for (int k = 0; k < 2; ++k)
      l.strides[k][l.ndim] = d == last ? c.strides[k][d] : c.strides[k][d] / f;
    ++l.ndim;
  }
  for (int k = 0; k < 2; ++k) l.offset[k] /= f;
  ew::fast_index(l);
  const int64_t words = n / f;
  if (word == 16)
    launch_copy<uint4>(src, dst, words, l, s);
  else
    by_word("GPU copy", word,
            [&](auto w) { launch_copy<decltype(w)>(src, dst, words, l, s); });
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
