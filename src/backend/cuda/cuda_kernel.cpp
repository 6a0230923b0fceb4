// fast::CudaKernel on the GPU (cuda.h: launch_cuda_kernel): the outputs
// filled with the initial value, inputs made row-contiguous where the
// kernel asks for it (copies on the stream), then one launch of the
// program built when the kernel was called (src/fast/cuda_kernel.cpp) with
// ceil(grid / threadgroup) blocks. The arguments follow the generated
// signature (src/fast/cuda_kernel_source.cpp).
#include "nuvec/primitives/cuda_kernel.h"

#include <algorithm>
#include <cstdint>

#include "backend/cuda/cuda.h"
#include "backend/cuda/fast.h"
#include "backend/cuda/data.h"
#include "backend/cuda/module.h"
#include "nuvec/core/shape.h"

namespace nuvec::cuda {

namespace {

// The generated nuvec_shape and nuvec_strides (int and long by value).
struct ShapeArg {
  int v[kCudaKernelMaxDims];
};
struct StridesArg {
  long v[kCudaKernelMaxDims];
};
static_assert(sizeof(long) == sizeof(int64_t),
              "strides are 64-bit on the host and the device");

const void* element0(const Array& a) {
  return static_cast<const char*>(a.desc()->data->ptr) +
         a.desc()->offset * a.itemsize();
}

unsigned blocks(int threads, int per_block) {
  return static_cast<unsigned>(
      (static_cast<long long>(threads) + per_block - 1) / per_block);
}

}  // namespace

// `x` itself when row-contiguous, else a dense copy made on the stream (its
// buffer returns to the stream's cache once the launch is enqueued: later
// work on the stream runs after the kernel).
Array row_contiguous(const Array& x, void* stream, Stream s) {
  if (x.desc()->row_contiguous) return x;
  auto cs = static_cast<cudaStream_t>(stream);
  auto d = std::make_shared<ArrayDesc>();
  d->shape = x.shape();
  d->strides = row_major_strides(x.shape());
  d->size = x.size();
  d->dtype = x.dtype();
  d->row_contiguous = true;
  d->data = allocate(static_cast<size_t>(x.size()) * x.itemsize(), s);
  Array dense(std::move(d));
  flush_launches(cs);  // after the launches held before it (launch.cuh)
  data::copy_into(x, dense, cs);
  return dense;
}

void launch_cuda_kernel(const CudaKernel& k, const std::vector<Array>& given,
                        std::vector<Array>& out, void* stream, Stream s) {
  const CudaKernelParams& p = k.params();
  auto cs = static_cast<cudaStream_t>(stream);
  if (!k.module())
    (Error(ErrorKind::backend,
                cuda_kernel_label(p.name) +
                    " was not compiled: no GPU when it was called")).raise();
  const void* fn = module_kernel(*k.module(), p.function);
  if (p.shared_memory > 48 * 1024)  // above the default limit: an opt-in
    allow_shared_memory(fn, p.shared_memory, (cuda_kernel_label(p.name) + ": shared_memory").c_str());
  if (p.init_value)
    for (auto& o : out)
      data::fill_elements(o.desc()->data->ptr,
                          data::cast_bits(*p.init_value, o.dtype()),
                          o.itemsize(), o.size(), cs);

  const size_t n = given.size();
  std::vector<Array> in;  // held until the launch is enqueued
  for (const auto& x : given)
    in.push_back(p.ensure_row_contiguous ? row_contiguous(x, cs, s) : x);
  std::vector<const void*> pointers;
  pointers.reserve(n + out.size());  // (arguments point into these vectors)
  std::vector<ShapeArg> shapes(n);
  std::vector<StridesArg> strides(n);
  std::vector<int> ndims(n);
  std::vector<void*> args;
  for (size_t i = 0; i < n; ++i) {
    const Array& x = in[i];
    pointers.push_back(element0(x));
    args.push_back(&pointers.back());
    for (int d = 0; d < std::min(x.ndim(), kCudaKernelMaxDims); ++d) {
      shapes[i].v[d] = x.shape()[d];
      strides[i].v[d] = x.strides()[d];
    }
    ndims[i] = x.ndim();
    if (p.inputs[i].shape) args.push_back(&shapes[i]);
    if (p.inputs[i].strides) args.push_back(&strides[i]);
    if (p.inputs[i].ndim) args.push_back(&ndims[i]);
  }
  for (auto& o : out) {
    pointers.push_back(o.desc()->data->ptr);
    args.push_back(&pointers.back());
  }
  const auto& g = p.grid;
  const auto& t = p.threadgroup;
  if (g[0] == 0 || g[1] == 0 || g[2] == 0) return;
  dim3 grid(blocks(g[0], t[0]), blocks(g[1], t[1]), blocks(g[2], t[2]));
  launch_module_kernel(fn, grid, dim3(t[0], t[1], t[2]), args.data(), static_cast<size_t>(p.shared_memory), cs,
                       (cuda_kernel_label(p.name) + ": launch").c_str());
}

}  // namespace nuvec::cuda
