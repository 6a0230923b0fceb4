// Custom GPU kernels from source, as MLX's mx.fast.cuda_kernel (the spec's
// fast::MetalKernel): the user writes a CUDA kernel's body, nuvec writes
// its signature, compiles it with NVRTC for the GPU and runs it as a node of
// the graph (docs/cuda-kernel.md).
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "nuvec/core/array.h"
#include "nuvec/core/device.h"
#include "nuvec/core/error.h"

namespace nuvec::fast {

/// A template argument of a kernel, declared at the top of its body: a
/// dtype as `using Name = <its C++ type>;`, an int as `constexpr int Name`,
/// a bool as `constexpr bool Name`.
using TemplateArg = std::variant<DType, int, bool>;

/// How one call of a CudaKernel runs (MLX's call arguments).
struct CudaKernelCall {
  /// One shape and one dtype per output name.
  std::vector<Shape> output_shapes = {};
  std::vector<DType> output_dtypes = {};
  /// The threads to launch, in threads as MLX (not in blocks): blocks are
  /// ceil(grid / threadgroup) per axis. A zero launches nothing.
  std::array<int, 3> grid = {1, 1, 1};
  /// Threads per block (CUDA's block): at most 1024 in all, z at most 64.
  std::array<int, 3> threadgroup = {1, 1, 1};
  std::vector<std::pair<std::string, TemplateArg>> template_args = {};
  /// When set, every output is filled with this value (converted to its
  /// dtype) before the kernel runs; otherwise outputs start uninitialised.
  std::optional<float> init_value = std::nullopt;
  /// Prints the generated source (the kernel after nuvec's functor header).
  bool verbose = false;
  /// A GPU stream or Device::gpu (the thread's default stream when empty,
  /// which must then be a GPU stream).
  StreamOrDevice stream = {};
};

/// A CUDA kernel from source, built once and called like an op.
///
/// `source` is the body of a `__global__` function; nuvec writes the
/// signature: for each input name, `const T* name` (T the input's C++
/// type, see docs/cuda-kernel.md), followed by `name_shape`, `name_strides`
/// (in elements) and `name_ndim` when the source mentions them; then `T*
/// name` for each output (dense, row-major). `header` goes before the
/// function (helper functions). The functors of nuvec's kernels
/// (`nuvec::kernels::Exp{}(x)`: nuvec's own bits) and the storage types
/// `float16_t`, `bfloat16_t`, `complex64_t` are available; NVRTC has no
/// include path. Inputs that are not row-contiguous are copied first unless
/// `ensure_row_contiguous` is false (then pointers carry the array's offset
/// and the kernel reads through `name_strides`). `shared_memory` is the
/// dynamic shared memory per block, in bytes.
///
/// Kernels run on GPU streams only; a call on a CPU stream gives failed
/// arrays saying so. There are no vjp, jvp or vmap rules (as MLX's): give
/// them with custom_function. Compiled programs are cached in memory and on
/// disk (as compile's kernels), keyed by the source, the template arguments
/// and the GPU's architecture.
class CudaKernel {
 public:
  /// Throws nuvec::Error (invalid_argument) when a name is not a C++
  /// identifier, names repeat or clash with generated parameters, there is
  /// no output, or shared_memory is negative.
  CudaKernel(std::string name, std::vector<std::string> input_names,
             std::vector<std::string> output_names, std::string source,
             std::string header = "", bool ensure_row_contiguous = true,
             int shared_memory = 0);

  /// Runs the kernel on `inputs` (one per input name): one array per output
  /// name. Invalid calls give failed arrays (op "cuda_kernel") naming the
  /// kernel: counts that differ from the names, a threadgroup or grid out of
  /// range, bad template arguments, a CPU stream, or source NVRTC rejects
  /// (with its log); a failed input is returned for every output.
  std::vector<Array> operator()(const std::vector<Array>& inputs,
                                const CudaKernelCall& call,
                                Location loc = NUVEC_LOC) const;

  /// The CUDA C++ a call with inputs of these dtypes and ranks and these
  /// options compiles (after nuvec's functor header); throws nuvec::Error
  /// where the call would fail (except for the stream).
  std::string source(const std::vector<Array>& inputs,
                     const CudaKernelCall& call) const;

  /// The kernel's name, as given.
  const std::string& name() const;

  struct State;  // the names, sources and built programs (src/fast/)

 private:
  std::shared_ptr<State> state_;
};

}  // namespace nuvec::fast
