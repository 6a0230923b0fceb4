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
/// as above; grids of at most 256 blocks through a one-node CUDA graph kept
/// per kernel, shape and stream, its parameters set per launch); throws
/// Error(backend) "what: ..." when the launch fails.
void launch_module_kernel(const void* fn, dim3 grid, dim3 block, void** args, size_t shared,
                          cudaStream_t s, const char* what);

}  // namespace nuvec::cuda
