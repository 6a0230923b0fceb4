// Gathers on the GPU: Take along an axis and Im2Col. One thread per output
// element (grid-stride) copies one element's bits as a word of its item
// size, reading the input through its strides; the index rules are the
// CPU's (src/backend/cpu/take.cpp, conv.cpp), so the results are its bits.
#include "backend/cuda/data.h"
#include "backend/cuda/elementwise.cuh"

namespace nuvec::cuda::data {

namespace {

using ew::Layout;



// The CPU's index rule: wrapped once when negative, then clamped to [0, n).
template <class I>
__device__ __forceinline__ int64_t clamp_index(I raw, int64_t n) {
  int64_t v = static_cast<int64_t>(raw);
  if (v < 0) v += n;
  return v < 0 ? 0 : (v >= n ? n - 1 : v);
}

// Output element i is (outer o, index j, inner k) with k fastest.
struct TakeGeometry {
  Layout outer, inner, index;  // operand 0 of each; `outer` carries x's offset
  int64_t m = 1, ni = 1;       // inner elements, indices
  int64_t n = 1;               // the axis' length
  int64_t axis_stride = 0;
};

template <class W, class I>
__global__ void take_kernel(const W* x, const I* idx, W* o, int64_t total,
                            TakeGeometry g) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < total; i += step) {
    int64_t k = i % g.m, q = i / g.m;
    int64_t j = q % g.ni, r = q / g.ni;
    int64_t v = clamp_index(idx[ew::at(g.index, 0, j)], g.n);
    o[i] = x[ew::at(g.outer, 0, r) + v * g.axis_stride + ew::at(g.inner, 0, k)];
  }
}

struct Im2ColGeometry {
  int d = 0;
  int64_t channels = 0, taps = 1, rows_per_batch = 1;
  int64_t x_offset = 0, batch_stride = 0, channel_stride = 0;
  int64_t out_size[3] = {}, kernel_size[3] = {}, stride[3] = {},
          kernel_dilation[3] = {};
  int64_t pad_lo[3] = {}, input_dilation[3] = {}, dilated[3] = {},
          x_stride[3] = {};
};

template <class W>
__global__ void im2col_kernel(const W* x, W* o, int64_t total,
                              Im2ColGeometry g) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < total; i += step) {
    int64_t c = i % g.channels, q = i / g.channels;
    int64_t t = q % g.taps, r = q / g.taps;
    int64_t rem = r % g.rows_per_batch;
    int64_t off = g.x_offset + (r / g.rows_per_batch) * g.batch_stride;
    bool zero = false;
    for (int a = g.d - 1; a >= 0;
         --a) {  // the last spatial axis varies fastest
      int64_t oi = rem % g.out_size[a], ki = t % g.kernel_size[a];
      rem /= g.out_size[a];
      t /= g.kernel_size[a];
      int64_t pos = oi * g.stride[a] + ki * g.kernel_dilation[a] - g.pad_lo[a];
      if (pos < 0 || pos >= g.dilated[a] || pos % g.input_dilation[a] != 0)
        zero = true;
      else
        off += (pos / g.input_dilation[a]) * g.x_stride[a];
    }
    o[i] = zero ? W(0) : x[off + c * g.channel_stride];
  }
}

}  // namespace

ew::Layout layout1(const Shape& shape, const Strides& strides, int64_t offset) {
  auto c = cpu::collapse<1>(shape, {&strides});
  if (c.shape.size() > static_cast<size_t>(ew::kMaxDims))
    (Error(ErrorKind::backend,
                "GPU data kernels take at most 8 collapsed dimensions")).raise();
  ew::Layout l;
  l.ndim = static_cast<int>(c.shape.size());
  l.offset[0] = offset;
  for (int d = 0; d < l.ndim; ++d) {
    l.shape[d] = c.shape[d];
    l.strides[0][d] = c.strides[0][d];
  }
  return l;
}

void take(const Take& p, const Array& x, const Array& indices, Array& out,
          cudaStream_t s) {
  int64_t total = out.size();
  if (total == 0) return;
  const int axis = p.axis();
  const Shape& xs = x.shape();
  const Strides& xst = x.strides();
  TakeGeometry g;
  g.outer = layout1(Shape(xs.begin(), xs.begin() + axis),
                    Strides(xst.begin(), xst.begin() + axis), x.desc()->offset);
  Shape inner(xs.begin() + axis + 1, xs.end());
  g.inner = layout1(inner, Strides(xst.begin() + axis + 1, xst.end()), 0);
  g.index = layout1(indices.shape(), indices.strides(), indices.desc()->offset);
  g.m = shape_size(inner);
  g.ni = indices.size();
  g.n = xs[axis];
  g.axis_stride = xst[axis];
  by_word("GPU gather", x.itemsize(), [&](auto w) {
    using W = decltype(w);
    dispatch_dtype(indices.dtype(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
        take_kernel<W, I><<<grid_for(total), kThreads, 0, s>>>(
            static_cast<const W*>(x.desc()->data->ptr),
            static_cast<const I*>(indices.desc()->data->ptr),
            static_cast<W*>(out.desc()->data->ptr) + out.desc()->offset, total,
            g);
      } else {
        (Error(ErrorKind::unsupported_dtype,
                    "take: indices must be integers")).raise();
      }
    });
  });
  ew::check_launch("Take");
}

void im2col(const Im2Col& p, const Array& x, Array& out, cudaStream_t s) {
  int64_t total = out.size();
  if (total == 0) return;
  Im2ColGeometry g;
  g.d = x.ndim() - 2;
  if (g.d < 1 || g.d > 3)
    (Error(ErrorKind::internal, "im2col: 1 to 3 spatial axes")).raise();
  for (int a = 0; a < g.d; ++a) {
    g.out_size[a] = out.shape(1 + a);
    g.kernel_size[a] = out.shape(1 + g.d + a);
    int64_t n = x.shape(1 + a);
    g.stride[a] = p.stride()[a];
    g.kernel_dilation[a] = p.kernel_dilation()[a];
    g.pad_lo[a] = p.padding_lo()[a];
    g.input_dilation[a] = p.input_dilation()[a];
    g.dilated[a] = n == 0 ? 0 : (n - 1) * g.input_dilation[a] + 1;
    g.x_stride[a] = x.strides()[1 + a];
    g.taps *= g.kernel_size[a];
    g.rows_per_batch *= g.out_size[a];
  }
  g.channels = x.shape(-1);
  g.x_offset = x.desc()->offset;
  g.batch_stride = x.strides()[0];
  g.channel_stride = x.strides()[g.d + 1];
  by_word("GPU gather", x.itemsize(), [&](auto w) {
    using W = decltype(w);
    im2col_kernel<W><<<grid_for(total), kThreads, 0, s>>>(
        static_cast<const W*>(x.desc()->data->ptr),
        static_cast<W*>(out.desc()->data->ptr) + out.desc()->offset, total, g);
  });
  ew::check_launch("Im2Col");
}

}  // namespace nuvec::cuda::data
