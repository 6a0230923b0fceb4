// The typed form of defer_kernel (module.h): a kernel of the library's own
// .cu files enqueued as kernel<<<grid, block, shared, s>>>(args...) would
// be, but held back on `s` and launched with the launches around it as one
// CUDA graph (a decode step's ~200 small kernels: host time per launch
// about 3.3 us through cudaLaunchKernel on the H200, far less as graph
// nodes). It holds only for the primitives runtime.cpp's eval lets hold
// (keeps_held_launches: their launchers enqueue nothing else on `s`
// without flush_launches first); called for any other, it launches at once.
#pragma once

#include <cuda_runtime.h>

#include <tuple>
#include <type_traits>
#include <utility>

#include "backend/cuda/module.h"

namespace nuvec::cuda {

/// The first statement of every kernel that may be held (hold_launch,
/// defer_module_kernel), before any access to global memory and before any
/// early return: a held chain's kernels are linked by programmatic edges
/// (module.cpp, "programmatic"), so a kernel's blocks may start while its
/// predecessor still runs; here they wait for the predecessor's completion
/// and its writes, then let their own successor begin launching. Outside a
/// programmatic launch both instructions do nothing.
__device__ __forceinline__ void enter_held_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

template <class... P, class... A>
void hold_launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, cudaStream_t s, const char* what,
                 A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "hold_launch: one argument per kernel parameter");
  std::tuple<std::decay_t<P>...> values(std::forward<A>(args)...);
  std::apply(
      [&](auto&... v) {
        void* ptrs[] = {static_cast<void*>(&v)..., nullptr};
        defer_kernel(reinterpret_cast<const void*>(kernel), grid, block, ptrs, shared, s, what);
      },
      values);
}

}  // namespace nuvec::cuda
