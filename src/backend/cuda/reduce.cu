// Reductions on the GPU: one block per output element (grid-stride over
// outputs), in the fixed order of kernels/gpu_rows.h (four accumulators a
// thread, warp shuffles, then the warps' results). The arithmetic depends
// only on the row's length, never on its layout, so results are the same
// run to run (no atomics) and equal compile's row kernels; they are not the
// CPU's bits for floating sums and products (another order of additions).
#include <cuda_runtime.h>

#include <cstring>

#include <string>

#include "backend/cpu/loops.h"
#include "backend/cuda/cuda.h"
#include "backend/reduce_op.h"
#include "nuvec/kernels/functors.h"
#include "nuvec/primitives/reduce.h"

namespace nuvec::cuda {

namespace {

using RT = Reduce::Type;
constexpr int kMax = 8;
constexpr int kThreads = 256;

struct Dims {
  int n = 0;
  int64_t shape[kMax] = {};
  int64_t strides[kMax] = {};
};

struct ReduceLayout {
  Dims kept, reduced;
  int64_t offset = 0;
  int64_t row = 1;  // elements per output
};

__device__ __forceinline__ int64_t offset_in(const Dims& d, int64_t i) {
  if (d.n == 1) return i * d.strides[0];  // no 64-bit division (slow on GPUs)
  int64_t off = 0;
  for (int k = d.n - 1; k >= 0; --k) {
    off += (i % d.shape[k]) * d.strides[k];
    i /= d.shape[k];
  }
  return off;
}

// The combining step as the functor kernels::rows takes.
template <RT type>
struct Combine {
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return backend::reduce_combine<type, A>(a, b);
  }
};

template <class T>
struct alignas(sizeof(T) * 4) Pack4 {
  T v[4];
};

// One block per row, the elements in kernels::rows' fixed order (so a
// transposed view, a dense copy and compile's row kernels give the same
// bits).
template <RT type, class In, class A, class Out>
__global__ void reduce_kernel(const In* x, Out* o, int64_t outputs, ReduceLayout l) {
  namespace rows = kernels::rows;
  static_assert(rows::kThreads == kThreads);
  __shared__ A values[kThreads / 32];
  __shared__ bool valid[kThreads / 32];
  const int t = threadIdx.x;
  const Combine<type> c;
  for (int64_t r = blockIdx.x; r < outputs; r += gridDim.x) {
    int64_t base = l.offset + offset_in(l.kept, r);
    rows::Acc4<A> part;
    const In* row = x + base;
    constexpr int64_t step = rows::kStride;
    int64_t j = rows::kPack * t;
    if (l.reduced.n == 1 && l.reduced.strides[0] == 1 && l.row % 4 == 0 &&
        reinterpret_cast<uintptr_t>(row) % sizeof(Pack4<In>) == 0) {
      // A dense row of whole packs: 16-byte loads, eight then four packs
      // in flight before they are folded, in the plain loop's order.
      auto fold = [&](const Pack4<In>& p) {
#pragma unroll
        for (int k = 0; k < 4; ++k) part.add(k, kernels::Cast<A>{}(p.v[k]), c);
      };
      for (; j + 7 * step < l.row; j += 8 * step) {
        Pack4<In> p[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) p[k] = *reinterpret_cast<const Pack4<In>*>(row + j + k * step);
#pragma unroll
        for (int k = 0; k < 8; ++k) fold(p[k]);
      }
      for (; j + 3 * step < l.row; j += 4 * step) {
        Pack4<In> p[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) p[k] = *reinterpret_cast<const Pack4<In>*>(row + j + k * step);
#pragma unroll
        for (int k = 0; k < 4; ++k) fold(p[k]);
      }
      for (; j < l.row; j += step) fold(*reinterpret_cast<const Pack4<In>*>(row + j));
    } else {
      const bool dense = l.reduced.n == 1;
      const int64_t st = l.reduced.strides[0];
      for (; j < l.row; j += step)
#pragma unroll
        for (int k = 0; k < 4; ++k)
          if (j + k < l.row)
            part.add(k, kernels::Cast<A>{}(row[dense ? (j + k) * st : offset_in(l.reduced, j + k)]), c);
    }
    A acc;
    bool have;
    part.total(acc, have, c);
    rows::block_fold(acc, have, c, values, valid);
    if (t == 0) o[r] = kernels::Cast<Out>{}(have ? acc : backend::reduce_empty<type, A>());
    __syncthreads();
  }
}

template <class In, class Out>
using acc_t = backend::reduce_acc_t<In, Out>;

// The output type of each reduction (reduce_output_dtype, as types).
template <RT R, class In>
struct out_of {
  static constexpr bool small_signed =
      std::is_same_v<In, bool> || std::is_same_v<In, signed char> || std::is_same_v<In, short>;
  static constexpr bool small_unsigned = std::is_same_v<In, unsigned char> || std::is_same_v<In, unsigned short>;
  using widened = std::conditional_t<small_signed, int, std::conditional_t<small_unsigned, unsigned int, In>>;
  using type = std::conditional_t<R == RT::all || R == RT::any, bool,
                                  std::conditional_t<R == RT::sum || R == RT::prod, widened, In>>;
};

template <RT type>
void reduce_typed(const Array& in, Array& out, const ReduceLayout& l, cudaStream_t s) {
  int64_t outputs = out.size();
  dispatch_dtype(in.dtype(), [&](auto a) {
    using In = typename decltype(a)::type;
    using Out = typename out_of<type, In>::type;
    if (dtype_v<Out> != out.dtype()) (Error(ErrorKind::internal, "reduce: unexpected output dtype")).raise();
    using A = acc_t<In, Out>;
    unsigned grid = static_cast<unsigned>(std::min<int64_t>(outputs, 65535));
    if (outputs > 0)
      reduce_kernel<type, In, A, Out><<<grid, kThreads, 0, s>>>(
          static_cast<const In*>(in.desc()->data->ptr),
          static_cast<Out*>(out.desc()->data->ptr) + out.desc()->offset, outputs, l);
  });
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) (Error(ErrorKind::backend, std::string("reduce launch: ") + cudaGetErrorString(e))).raise();
}

Dims dims_of(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  Dims d;
  if (shape.size() > kMax) (Error(ErrorKind::backend, "GPU reductions take at most 8 collapsed dimensions")).raise();
  d.n = static_cast<int>(shape.size());
  for (int k = 0; k < d.n; ++k) {
    d.shape[k] = shape[k];
    d.strides[k] = strides[k];
  }
  return d;
}

}  // namespace

void launch_reduce(const Reduce& p, const Array& in, Array& out, void* stream) {
  ReduceLayout l;
  l.offset = in.desc()->offset;
  std::vector<bool> reduced(in.ndim(), false);
  for (int a : p.axes()) reduced[a] = true;
  Shape ks, rs;
  Strides kst, rst;
  for (int d = 0; d < in.ndim(); ++d) {
    (reduced[d] ? rs : ks).push_back(in.shape()[d]);
    (reduced[d] ? rst : kst).push_back(in.strides()[d]);
  }
  auto kc = cpu::collapse<1>(ks, {&kst});
  auto rc = cpu::collapse<1>(rs, {&rst});
  l.kept = dims_of(kc.shape, kc.strides[0]);
  l.reduced = dims_of(rc.shape, rc.strides[0]);
  l.row = shape_size(rs);
  auto s = static_cast<cudaStream_t>(stream);
  switch (p.type()) {
    case RT::sum: return reduce_typed<RT::sum>(in, out, l, s);
    case RT::prod: return reduce_typed<RT::prod>(in, out, l, s);
    case RT::max: return reduce_typed<RT::max>(in, out, l, s);
    case RT::min: return reduce_typed<RT::min>(in, out, l, s);
    case RT::all: return reduce_typed<RT::all>(in, out, l, s);
    default: return reduce_typed<RT::any>(in, out, l, s);
  }
}

}  // namespace nuvec::cuda
