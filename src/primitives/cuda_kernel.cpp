#include "nuvec/primitives/cuda_kernel.h"

#include <bit>
#include <cstdint>
#include <functional>
#include <string>

#include "nuvec/primitives/params.h"

namespace nuvec {

namespace {

// Custom kernels have no transform rules, as MLX's: the error names the
// kernel and says how to give rules.
[[noreturn]] void no_rule(const CudaKernelParams& p, const char* which) {
  (Error(
      ErrorKind::transform,
      std::string(which) + " of " + cuda_kernel_label(p.name) +
          " is not defined (custom kernels have no transform rules, as MLX's): "
          "wrap the "
          "call in custom_function with your own rules (docs/cuda-kernel.md)")).raise();
}

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

}  // namespace

std::string cuda_kernel_label(const std::string& name) {
  return "fast::CudaKernel \"" + name + "\"";
}

bool CudaKernelParams::operator==(const CudaKernelParams& o) const {
  bool init = init_value.has_value() == o.init_value.has_value() &&
              (!init_value || bits(*init_value) == bits(*o.init_value));
  return init && name == o.name && function == o.function &&
         program == o.program && inputs == o.inputs &&
         output_shapes == o.output_shapes && output_dtypes == o.output_dtypes &&
         grid == o.grid && threadgroup == o.threadgroup &&
         shared_memory == o.shared_memory &&
         ensure_row_contiguous == o.ensure_row_contiguous;
}

size_t CudaKernel::params_hash() const {
  size_t h = std::hash<std::string>{}(p_.program);
  for (int g : p_.grid) h = params::combine(h, static_cast<size_t>(g));
  for (int t : p_.threadgroup) h = params::combine(h, static_cast<size_t>(t));
  for (const Shape& s : p_.output_shapes)
    h = params::combine(h, params::hash_vector(s));
  return params::combine(h, p_.init_value ? bits(*p_.init_value) : 0x5eedu);
}

void CudaKernel::print_params(std::ostream& os) const {
  os << p_.name << ", grid (" << p_.grid[0] << ", " << p_.grid[1] << ", "
     << p_.grid[2] << "), threadgroup (" << p_.threadgroup[0] << ", "
     << p_.threadgroup[1] << ", " << p_.threadgroup[2] << ")";
}

Error CudaKernel::gpu_only() const {
  return Error(
      ErrorKind::invalid_argument,
      cuda_kernel_label(p_.name) +
          " runs on a GPU stream only (CUDA compiled with NVRTC; no CPU "
          "version): set CudaKernelCall::stream to a GPU stream or "
          "Device::gpu");
}

Expected<std::vector<OutputSpec>> CudaKernel::output_specs(
    const std::vector<Array>& inputs) const {
  if (inputs.size() != p_.inputs.size())
    return op_error(ErrorKind::invalid_argument,
                    cuda_kernel_label(p_.name) + " takes " +
                        std::to_string(p_.inputs.size()) + " inputs, got " +
                        std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const CudaKernelInput& in = p_.inputs[i];
    if (!(inputs[i].dtype() == in.dtype))
      return op_error(ErrorKind::unsupported_dtype,
                      cuda_kernel_label(p_.name) + ": input " +
                          std::to_string(i) + " is " +
                          std::string(dtype_name(inputs[i].dtype())) +
                          " but the kernel was generated for " +
                          std::string(dtype_name(in.dtype)));
    if ((in.shape || in.strides) && inputs[i].ndim() > kCudaKernelMaxDims)
      return op_error(ErrorKind::invalid_shape,
                      cuda_kernel_label(p_.name) + ": input " +
                          std::to_string(i) + " has " +
                          std::to_string(inputs[i].ndim()) +
                          " axes; a kernel reads the shape or strides of " +
                          std::string("inputs of at most ") +
                          std::to_string(kCudaKernelMaxDims));
  }
  std::vector<OutputSpec> out;
  for (size_t j = 0; j < p_.output_shapes.size(); ++j) {
    for (int n : p_.output_shapes[j])
      if (n < 0)
        return op_error(ErrorKind::invalid_shape,
                        cuda_kernel_label(p_.name) + ": output " +
                            std::to_string(j) + " has a negative dimension");
    OutputSpec s;
    s.shape = p_.output_shapes[j];
    s.dtype = p_.output_dtypes[j];
    out.push_back(std::move(s));
  }
  return out;
}

Arrays CudaKernel::vjp(const Arrays&, const Arrays&, const std::vector<int>&,
                       const Arrays&) const {
  no_rule(p_, "vjp");
}
Arrays CudaKernel::jvp(const Arrays&, const Arrays&,
                       const std::vector<int>&) const {
  no_rule(p_, "jvp");
}
std::pair<Arrays, std::vector<int>> CudaKernel::vmap(
    const Arrays&, const std::vector<int>&) const {
  no_rule(p_, "vmap");
}

}  // namespace nuvec
