// C++ source of the CPU kernels of fused regions (DESIGN.md sections 5, 10).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "nuvec/primitives/fused.h"
#include "nuvec/primitives/fused_reduce.h"

namespace nuvec::compiler {

struct EmitRegion {
  const Fused* fused;
  std::vector<DType> input_dtypes;
  // Whether an input of several elements is read broadcast at the trace's
  // shapes (a row repeated over leading axes): the GPU gives such regions
  // two packs per thread.
  bool broadcast = false;
  // Per input: whether it has the output's shape at the trace, with more
  // than one element. The GPU's contiguous kernel loads such an input as
  // dense without testing how it is read (FusedGpuKernel::dense), so the
  // compiler issues every input's loads at once. Empty: none known.
  std::vector<bool> dense;
  // Per input (CPU): whether it holds one value per row of a FusedReduce
  // stage; when any does, the region also gets `nuvec_k<i>_rows`
  // (FusedCpuKernel::rows). Empty: none.
  std::vector<bool> row_scalar;
};

/// The kernels of `regions` as C++ to append to the functor header: region
/// i becomes `nuvec_k<i>_contig` and `nuvec_k<i>_strided` (the signatures
/// of FusedCpuKernel). Each value is held in its own dtype and computed by
/// the functor the eager kernel calls, so the bits are the eager ones. In a
/// region with functors that have fast variants for small arguments (sin,
/// cos: kernels::Small), the contiguous kernel runs blocks of 256 through
/// them when every such argument of the block is small, else through the
/// strided kernel: the same bits.
std::string emit_cpu_kernels(const std::vector<EmitRegion>& regions);

/// The C++ type generated code uses for `d` (kernels' names).
const char* cpp_type(DType d);
/// cpp_type(d), or with `pairs` the kernels::Two of it (kernels/pairs.h).
std::string value_type(DType d, bool pairs);

// Pieces shared by the CPU and CUDA emitters (emit_cuda.cpp).

/// `const T vK = <bits>;` for each literal input of the region.
void emit_literals(std::ostream& os, const EmitRegion& r, const char* indent);
/// `const auto vN = Functor{}(...);` for each operation, with a
/// static_assert that the value has the eager kernel's dtype. With `small`,
/// operations that have a fast variant for small arguments call it
/// (`Small<Functor>{}`, kernels/unary.h) and OR `Small<Functor>::outside`
/// of their argument into `outside`. With `pair_trig` (the GPU emitter), a
/// Sin and a Cos of one float32/16-bit value come from one kernels::SinCos
/// call (one argument reduction, the same bits).
/// `keep` (per operation) emits only those operations; `lookup` (per value,
/// "" for none) gives a value by an expression instead of its operation.
/// `gpu` (with `small`) also takes the fast variants only GPU kernels have
/// (Small<Divide>, Small<Exp>). `pairs`: every value is a kernels::Two of
/// adjacent elements (literals stay single values), each operation a
/// pair_call (kernels/pairs.h), lookups give pairs.
struct OpChoice {
  const std::vector<bool>* keep = nullptr;
  const std::vector<std::string>* lookup = nullptr;
  bool gpu = false;
  bool pairs = false;
};
void emit_ops(std::ostream& os, const EmitRegion& r, const char* indent, bool small = false,
              bool pair_trig = false, OpChoice choice = {});
/// Whether operation j of the region has a fast variant for small
/// arguments in a GPU kernel (kernels::Small: sin and cos of float32 and
/// the 16-bit floats, float32 division and exp).
bool has_small_on_gpu(const EmitRegion& r, size_t j);
/// Whether operation `id` is a transcendental function (compute_bound).
bool heavy_op(PrimitiveId id);
/// Whether the region computes a transcendental function (exp, log,
/// trigonometric, hyperbolic, erf, sigmoid, power...): its time is
/// arithmetic rather than memory traffic. The CPU emitter gives such
/// regions no streaming variant, the GPU one two packs per thread.
bool compute_bound(const EmitRegion& r);
/// The dtype of value `v` (inputs first, then operations).
DType value_dtype(const EmitRegion& r, int v);
/// Which inputs are literals (not passed to generated kernels).
std::vector<bool> literal_inputs(const Fused& f);

/// One of the CUDA kernels of region `index` of a trace, in a namespace of
/// their own (no functor header): `nuvec_contig_<index>` (each input dense at the
/// output's shape, a single value, or a dense row repeated over the leading
/// axes, as NvRows::len says: 0, 1, or the row's length; each thread loads,
/// computes and stores CudaParams::per_thread elements as aligned 16-byte
/// packs, consecutive or interleaved across the block) and `nuvec_strided_<index>` (any strides, through a collapsed
/// layout of at most 8 dimensions). Parameters: the non-literal inputs'
/// pointers in order, the outputs' pointers, the element count, then
/// NvRows {len[inputs]} (contig) or NvLayout {ndim, shape[8],
/// strides[inputs][8], div[8], narrow} (strided), all 64-bit integers but
/// div (kernels::FastDiv by each dimension but the first, used when
/// narrow: fewer than 2^31 elements).
enum class CudaVariant { contig, strided };
std::string emit_cuda_kernel(const EmitRegion& r, int index, CudaVariant v);

/// The inputs a region's GPU kernels take (the non-literal ones, in order)
/// and the elements per thread of its contiguous kernel (16-byte packs of
/// its smallest dtype, at least 4).
struct GpuTable {
  int value;  // looked up instead of computed
  int input;  // the 16-bit value it is a function of (an input, or an operation's value)
};
struct CudaParams {
  std::vector<int> inputs;
  int per_thread = 4;  // packs per thread times pack
  int pack = 4;        // elements per 16-byte pack of the smallest dtype (at least 4)
  // Values of 1 or 2 bytes that depend on one 16-bit input and compute a
  // transcendental function, maximal such (an output, or used by an
  // operation that reads another input), and single sqrt, rsqrt or
  // transcendental operations of a 16-bit value made from several inputs
  // (keyed by that value): the contiguous kernel reads them
  // from tables of 65536 entries (parameters after NvRows, in this order)
  // that kernels `nuvec_table_<index>_<t>(const u16* patterns, W* table)`
  // of the same program write (W the value's unsigned word). Empty with
  // NUVEC_GPU_TABLES=0 (read once; for measuring without them) and in
  // regions with more than 4 such values.
  std::vector<GpuTable> tables;
};
CudaParams cuda_params(const EmitRegion& r);

/// The CUDA kernel `nuvec_rows_<index>` of a FusedReduce step
/// (emit_cuda_rows.cpp; FusedRowsGpuKernel gives its parameters) and the
/// inputs it takes (those some stage reads other than as a literal).
std::string emit_cuda_rows_kernel(const FusedReduce& f, int index);
std::vector<int> cuda_rows_params(const FusedReduce& f);

/// What goes before the functor headers in a source NVRTC compiles.
const char* cuda_prelude();

}  // namespace nuvec::compiler
