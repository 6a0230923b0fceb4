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

/// The kernel `name` of `m` (a cudaKernel_t, for cudaLaunchKernel): the
/// module is loaded with cudaLibraryLoadData on first use and unloaded when
/// the last reference to `m` goes; looked-up kernels are remembered.
const void* module_kernel(const GpuModule& m, const std::string& name);

}  // namespace nuvec::cuda
