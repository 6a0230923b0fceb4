// CudaKernel: one call of a fast::CudaKernel (include/nuvec/fast.h), a
// user's CUDA source compiled with NVRTC (docs/cuda-kernel.md). GPU streams
// only; no transform rules (as MLX's custom kernels).
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nuvec/primitives/gpu_module.h"
#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// The most dimensions of an input whose shape or strides a kernel reads
/// (the fixed-size `<name>_shape` and `<name>_strides` parameters).
inline constexpr int kCudaKernelMaxDims = 10;

/// An input as the generated signature takes it: its pointer's element
/// type, then the parameters `<name>_shape`, `<name>_strides` (in elements)
/// and `<name>_ndim` for those the source mentions.
struct CudaKernelInput {
  DType dtype;
  bool shape = false, strides = false, ndim = false;
  bool operator==(const CudaKernelInput&) const = default;
};

/// Everything one call compiles and launches; equal parameters give equal
/// results, so compile's CSE merges two calls only when all of it is equal
/// (init_value bitwise).
struct CudaKernelParams {
  std::string name;      // the user's name for the kernel (errors, printing)
  std::string function;  // the __global__ function in `program`
  std::string program;   // CUDA C++ that follows nuvec's functor header
  std::vector<CudaKernelInput> inputs;
  std::vector<Shape> output_shapes;
  std::vector<DType> output_dtypes;
  std::array<int, 3> grid{};         // threads (MLX's convention), >= 0
  std::array<int, 3> threadgroup{};  // threads per block, >= 1
  int shared_memory = 0;             // dynamic shared memory, bytes
  bool ensure_row_contiguous = true;
  std::optional<float> init_value;  // every output filled with it first
  bool operator==(const CudaKernelParams& o) const;
};

/// `fast::CudaKernel "name"`: how messages name a kernel.
std::string cuda_kernel_label(const std::string& name);

class CudaKernel : public PrimitiveBase<PrimitiveId::CudaKernel> {
 public:
  /// `module` is the program built for this process's GPU (null where
  /// there is none: the node then fails when evaluated, as every GPU node).
  CudaKernel(CudaKernelParams p, std::shared_ptr<const GpuModule> module)
      : p_(std::move(p)), module_(std::move(module)) {}
  const CudaKernelParams& params() const { return p_; }
  const std::shared_ptr<const GpuModule>& module() const { return module_; }
  /// Outputs of the given shapes and dtypes, for inputs of the dtypes the
  /// program was generated for (and at most kCudaKernelMaxDims axes where
  /// the kernel reads a shape or strides).
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  /// vjp, jvp and vmap throw an Error (transform) naming the kernel.
  NUVEC_TRANSFORM_RULES
  bool shape_polymorphic() const override { return false; }
  bool params_equal(const Primitive& o) const override {
    return static_cast<const CudaKernel&>(o).p_ == p_;
  }
  size_t params_hash() const override;
  void print_params(std::ostream& os) const override;
  /// The error of evaluating it on the CPU (and of calling it on a CPU
  /// stream): it runs on a GPU stream only.
  Error gpu_only() const;

 private:
  CudaKernelParams p_;
  std::shared_ptr<const GpuModule> module_;
};

}  // namespace nuvec
