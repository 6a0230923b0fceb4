// fast::CudaKernel's generated CUDA C++ (cuda_kernel_source.cpp): the
// validation of a kernel's names and of a call's options, and the program
// NVRTC compiles after nuvec's functor header.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "nuvec/fast.h"
#include "nuvec/primitives/cuda_kernel.h"

namespace nuvec::fast {

/// What a CudaKernel was built with.
struct CudaKernel::State {
  std::string name;
  std::vector<std::string> input_names, output_names;
  std::string source, header;
  bool ensure_row_contiguous = true;
  int shared_memory = 0;
  /// Per input: which of `<name>_shape`, `_strides`, `_ndim` the source
  /// mentions (the dtype is the call's).
  std::vector<CudaKernelInput> layouts;
  /// The programs of earlier calls built for this process's GPU.
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<const GpuModule>> modules;
};

namespace detail {

/// Checks the names (Error invalid_argument) and finds which layouts the
/// source reads.
void validate(CudaKernel::State& s);

/// The parameters of a call on inputs of these dtypes: the program and
/// the launch, or why the call is invalid (an Error without op name).
Expected<CudaKernelParams> call_params(const CudaKernel::State& s,
                                       const std::vector<Array>& inputs,
                                       const CudaKernelCall& call);

}  // namespace detail

}  // namespace nuvec::fast
