// A CUDA module built at run time with NVRTC: the kernels compile generates
// for fused regions (src/compile/jit_cuda.cpp) and fast::CudaKernel's.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nuvec {

/// NVRTC's output for one program. The CUDA backend loads it on first use
/// (src/backend/cuda/module.cpp), keeps the handle in `loaded` (unloaded
/// with the last reference to the module) and the kernels it looked up in
/// `kernels`; `mu` guards both.
struct GpuModule {
  std::string binary;  // the cubin
  mutable std::mutex mu;
  mutable std::shared_ptr<void> loaded;
  mutable std::vector<std::pair<std::string, const void*>> kernels;
};

}  // namespace nuvec
