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
