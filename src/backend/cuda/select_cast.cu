// GPU kernels of select and casts (elementwise.cuh).
#include "backend/cuda/elementwise.cuh"

namespace nuvec::cuda {

using namespace ew;

void launch_select(const Array& c, const Array& x, const Array& y, Array& out, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  int64_t n = out.size();
  Layout l = layout_of({&c, &x, &y}, out.shape());
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n > 0)
      select_kernel<T><<<blocks_for(n), kThreads, 0, s>>>(dev<bool>(c), dev<T>(x), dev<T>(y), dev_out<T>(out), n, l);
    check_launch("Select");
  });
}

void launch_cast(const Array& in, Array& out, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  int64_t n = out.size();
  Layout l = layout_of({&in}, in.shape());
  dispatch_dtype(in.dtype(), [&](auto from) {
    dispatch_dtype(out.dtype(), [&](auto to) {
      using A = typename decltype(from)::type;
      using O = typename decltype(to)::type;
      const A* src = dev<A>(in) + in.desc()->offset;
      if (n > 0 && l.ndim == 0 && packable<A, O>(src) && packable<A, O>(dev_out<O>(out)))
        unary_dense_kernel<kernels::Cast<O>, A, O><<<dense_blocks<A, O>(n), kThreads, 0, s>>>(src, dev_out<O>(out), n);
      else if (n > 0)
        unary_kernel<kernels::Cast<O>, A, O><<<blocks_for(n), kThreads, 0, s>>>(dev<A>(in), dev_out<O>(out), n, l);
      check_launch("AsType");
    });
  });
}

}  // namespace nuvec::cuda
