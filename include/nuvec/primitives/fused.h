// Fused: a connected region of element-wise primitives that compile runs as
// one kernel (docs/compile.md). Each value keeps its own dtype, so fused
// results equal the unfused ones bit for bit.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nuvec/primitives/gpu_module.h"
#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// One operation of a fused program: an element-wise primitive applied to
/// earlier values (inputs first, then operations in order).
struct FusedOp {
  std::shared_ptr<const Primitive> primitive;
  std::vector<int> args;
  DType dtype;
};

/// An input of the region that is a scalar constant of the trace: generated
/// kernels use its bits as a literal (the input is still passed, for the
/// interpreter).
struct FusedLiteral {
  int input;
  uint64_t bits;  // the value's bytes, zero-extended
  bool operator==(const FusedLiteral&) const = default;
};

/// A generated CPU kernel of a region (src/compile/jit.cpp builds them).
/// `contig` runs n elements with every input dense; `strided` runs one row
/// of n elements reading input k at in[k][i * strides[k]]. Outputs are dense
/// and never alias the inputs.
struct FusedCpuKernel {
  using Contig = void (*)(const void* const* in, void* const* out, long n);
  using Strided = void (*)(const void* const* in, void* const* out, const long* strides, long n);
  Contig contig = nullptr;
  Strided strided = nullptr;
  Contig stream = nullptr;  // as contig, with non-temporal stores; may be absent
  // A row of a FusedReduce stage (FusedReduce.h): the inputs that hold one
  // value per row (RowStage::row_scalar) read at [0], the others dense; absent
  // for regions without such inputs.
  Contig rows = nullptr;
  std::vector<DType> input_dtypes;     // what the kernel was generated for
  std::shared_ptr<const void> module;  // keeps the shared object loaded
};

/// One region's kernels in the module compile builds for a trace's fused
/// regions on the GPU (src/compile/jit_cuda.cpp): `contig` and `strided`
/// name them (compiler::emit_cuda_kernel gives their parameters); each
/// thread of the contiguous one handles `per_thread` consecutive elements.
struct FusedGpuKernel {
  std::shared_ptr<const GpuModule> module;  // the contiguous kernels (shared by a trace's regions)
  // The strided kernels' module, built on first need (a trace whose inputs
  // are dense never compiles them); null when that build failed.
  std::function<std::shared_ptr<const GpuModule>()> strided_module;
  std::string contig, strided;
  int per_thread = 4;
  std::vector<DType> input_dtypes;  // what the kernels were generated for
  std::vector<int> params;          // the inputs passed, in parameter order
  // Per parameter: whether the contiguous kernel reads it only as dense
  // (compiler::EmitRegion::dense); where it is not, the strided kernel runs.
  std::vector<bool> dense;
  mutable std::mutex mu;            // guards the looked-up functions and the tables
  mutable const void* contig_fn = nullptr;
  mutable const void* strided_fn = nullptr;
  // Values of the region (one 16-bit input each, 1 or 2 bytes, a
  // transcendental function) the contiguous kernel reads from tables of
  // 65536 entries passed after its NvRows, which the kernels `builder` of
  // the same module write on first use.
  struct Table {
    std::string builder;
    int value_size = 2;
  };
  std::vector<Table> tables;
  mutable std::vector<std::shared_ptr<void>> built;  // device buffers, once built
};

class Fused : public PrimitiveBase<PrimitiveId::Fused> {
 public:
  Fused(int num_inputs, std::vector<FusedOp> ops, std::vector<int> outputs,
        std::vector<FusedLiteral> literals = {})
      : num_inputs_(num_inputs),
        ops_(std::move(ops)),
        outputs_(std::move(outputs)),
        literals_(std::move(literals)) {}
  int num_inputs() const { return num_inputs_; }
  const std::vector<FusedOp>& ops() const { return ops_; }
  /// The values (indices as in FusedOp::args) the node outputs.
  const std::vector<int>& outputs() const { return outputs_; }
  const std::vector<FusedLiteral>& literals() const { return literals_; }
  /// The generated CPU kernel once it is ready; null before (the backend
  /// interprets the region meanwhile, with the same bits).
  std::shared_ptr<const FusedCpuKernel> cpu_kernel() const;
  void set_cpu_kernel(std::shared_ptr<const FusedCpuKernel> k) const;
  /// The generated GPU kernels, once compile built them (null: the CUDA
  /// backend runs the region's primitives one kernel each).
  std::shared_ptr<const FusedGpuKernel> gpu_kernel() const;
  void set_gpu_kernel(std::shared_ptr<const FusedGpuKernel> k) const;
  /// Every output has the broadcast shape of the inputs (the region's
  /// operands are read through broadcast strides).
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override;
  size_t params_hash() const override;
  void print_params(std::ostream& os) const override;
  /// The region as ordinary element-wise nodes (transforms use it).
  Arrays expand(const Arrays& inputs) const;

 private:
  int num_inputs_;
  std::vector<FusedOp> ops_;
  std::vector<int> outputs_;
  std::vector<FusedLiteral> literals_;
  struct KernelSlot {
    std::mutex mu;
    std::shared_ptr<const FusedCpuKernel> cpu;
    std::shared_ptr<const FusedGpuKernel> gpu;
  };
  std::shared_ptr<KernelSlot> slot_ = std::make_shared<KernelSlot>();
};

namespace detail {
/// How many times fused regions ran as generated kernels (true) or through
/// the interpreter (false); jit::stats reports them.
std::atomic<uint64_t>& fused_runs(bool generated);
/// How many of the generated runs went through the streaming variant.
std::atomic<uint64_t>& streamed_runs();
/// How many generated GPU runs were table lookups.
std::atomic<uint64_t>& table_runs();
/// How many GPU kernels built at run time were launched through a CUDA
/// graph (src/backend/cuda/module.cpp).
std::atomic<uint64_t>& graph_launches();
/// Bytes of output above which a generated CPU kernel writes with
/// non-temporal stores (jit::set_stream_min_bytes; by default the size of
/// the largest cache).
long long stream_min_bytes();
void set_stream_min_bytes(long long bytes);
}  // namespace detail

}  // namespace nuvec
