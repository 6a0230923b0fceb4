// Calling CUDA from the backend's C++ files, and the kernels of modules
// built at run time with NVRTC (fused regions: fused.cpp; fast::CudaKernel:
// cuda_kernel.cpp).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "nuvec/primitives/gpu_module.h"

namespace nuvec::cuda {

/// Throws Error(backend) "what: <CUDA's message>" unless `e` is cudaSuccess.
void check(cudaError_t e, const char* what);

/// The kernel `name` of `m`, for launch_module_kernel (the driver's
/// CUfunction of this device's context, or the runtime's cudaKernel_t
/// where the driver's entry points are not offered): the module is loaded
/// with cudaLibraryLoadData on first use and unloaded when the last
/// reference to `m` goes; looked-up kernels are remembered.
const void* module_kernel(const GpuModule& m, const std::string& name);

/// Lets module_kernel's `fn` use `bytes` of dynamic shared memory (above
/// the default 48 KiB); throws Error(backend) "what: ..." when refused.
void allow_shared_memory(const void* fn, int bytes, const char* what);

/// Enqueues module_kernel's `fn` on `s` (cuLaunchKernel, or cudaLaunchKernel
/// as above; grids of at most 256 blocks through a CUDA graph of one node,
/// kept per kernel, shape and stream in the cache of held launches' chains
/// below (a chain of one), its parameters set per launch); throws
/// Error(backend) "what: ..." when the launch fails.
void launch_module_kernel(const void* fn, dim3 grid, dim3 block, void** args, size_t shared,
                          cudaStream_t s, const char* what);

/// As launch_module_kernel, but a launch that would go through a graph may
/// be held back on `s` (the parameters copied) and launched later with the
/// kernels held after it as one CUDA graph of a chain of nodes, kept per
/// sequence of kernels, shapes and stream: by flush_launches, which every
/// other enqueue on `s` calls first, or when NUVEC_GPU_BATCH kernels are
/// held (default 16; 0 or 1: no holding). A held launch's error is thrown
/// by the flush that launches it.
void defer_module_kernel(const void* fn, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t s,
                         const char* what);

/// As defer_module_kernel, for a `__global__` function of the library's own
/// .cu files (`host_fn`: its host stub, as given to cudaLaunchKernel), at
/// any grid size: held back on `s` with the launches around it and
/// launched with them as one chain graph (the driver's function from
/// cudaGetFuncBySymbol), or launched at once with cudaLaunchKernel where
/// holding is off (NUVEC_GPU_BATCH, NUVEC_GPU_GRAPHS=0) or not offered.
/// Holds only inside a HoldingScope that allows it (runtime.cpp's eval, for
/// the primitives whose launchers enqueue nothing else on `s` without
/// flush_launches first); elsewhere (a launcher reused by another
/// primitive) it flushes and launches at once. launch.cuh's hold_launch is
/// the typed form.
void defer_kernel(const void* host_fn, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t s,
                  const char* what);

/// Whether defer_kernel may hold on this thread while the scope lives.
class HoldingScope {
 public:
  explicit HoldingScope(bool allow);
  ~HoldingScope();
  HoldingScope(const HoldingScope&) = delete;
  HoldingScope& operator=(const HoldingScope&) = delete;

 private:
  bool before_;
};

/// Records that the primitive whose launches `s` now holds writes the
/// bytes [p, p + bytes) (runtime.cpp's eval, for each output of a primitive
/// that keeps held launches); the record goes when the held chain launches.
void note_held_writes(cudaStream_t s, const void* p, size_t bytes);
/// Whether no primitive of the chain `s` holds writes any of [p, p + bytes):
/// then a held kernel may read those bytes before its predecessor in the
/// chain completes (the weights a few-row product prefetches before its
/// enter_held_kernel, launch.cuh), since only that predecessor can still run.
bool unwritten_by_held(cudaStream_t s, const void* p, size_t bytes);

/// Launches what defer_module_kernel held back on `s` (cheap when nothing
/// is). Work enqueued on `s` by any other call must come after this.
void flush_launches(cudaStream_t s);
/// flush_launches for every stream (before freeing device memory, waiting
/// for the device, unloading a module, and at the end of an eval).
void flush_all_launches();

}  // namespace nuvec::cuda
