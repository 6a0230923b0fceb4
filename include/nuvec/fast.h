// nuvec::fast, as MLX's mx.fast: fused row-wise kernels (normalizations,
// RoPE, cross entropy), attention and its plan (docs/fast.md), and custom GPU
// kernels from source, as MLX's mx.fast.cuda_kernel (the spec's
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

// ---- Fused operations (docs/fast.md). Each is one node with a composite
// definition (its transforms where no dedicated rule exists, and the
// computation on a device without a kernel for the call). 16-bit inputs
// compute in float32 and round once. Invalid calls give failed arrays
// naming the argument.

/// x * rsqrt(mean(x^2, -1) + eps) * weight; weight [x.shape(-1)] or none.
Array rms_norm(const Array& x, const std::optional<Array>& weight, float eps,
               StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// (x - mean) * rsqrt(var + eps) * weight + bias over the last axis.
Array layer_norm(const Array& x, const std::optional<Array>& weight,
                 const std::optional<Array>& bias, float eps, StreamOrDevice s = {},
                 Location loc = NUVEC_LOC);

/// {h, rms_norm(h, weight, eps)} with h = x + residual (x's shape and
/// dtype), in one pass: the residual stream of a transformer block.
std::pair<Array, Array> add_rms_norm(const Array& x, const Array& residual,
                                     const std::optional<Array>& weight, float eps,
                                     StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// Rotary position embeddings over the first `dims` features of x
/// [B, ..., T, D] (at least 3 dimensions; T the positions): one of `base`
/// and `freqs` [dims / 2] gives the frequencies; positions are
/// (offset + t) * scale. `traditional` rotates adjacent pairs, else the two
/// halves of the rotated features.
Array rope(const Array& x, int dims, bool traditional, std::optional<float> base, float scale,
           int offset, const std::optional<Array>& freqs = std::nullopt, StreamOrDevice s = {},
           Location loc = NUVEC_LOC);
/// The same with one offset per batch item: an integer array, 0-d or [B].
Array rope(const Array& x, int dims, bool traditional, std::optional<float> base, float scale,
           const Array& offset, const std::optional<Array>& freqs = std::nullopt,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// softmax(scale * q k^T [+ mask]) v: q [B, Hq, Lq, D], k and v [B, Hkv, Lk, D]
/// with Hq a multiple of Hkv (grouped-query attention reads each K/V head
/// for its Hq / Hkv query heads, never copied). mask_mode "" or "causal"
/// (the last query aligned with the last key) or "array" with `mask` (bool:
/// keep where true; else added), broadcastable to [B, Hq, Lq, Lk]. `sinks`
/// [Hq]: one extra logit per head in the softmax's denominator (as MLX).
/// `force_fused` (MLX's) fails the call when no fused kernel would run.
Array scaled_dot_product_attention(const Array& q, const Array& k, const Array& v, float scale,
                                   const std::string& mask_mode = "",
                                   std::optional<Array> mask = {},
                                   const std::optional<Array>& sinks = {},
                                   bool force_fused = false, StreamOrDevice s = {},
                                   Location loc = NUVEC_LOC);

/// Which kernel a scaled_dot_product_attention call with these arguments
/// runs: it depends only on their shapes, dtypes, options and the device,
/// never on memory state (the spec's routing rule).
struct AttentionPlan {
  /// "cpu_blocked", "gpu_vector", "composite" (docs/fast.md lists them).
  std::string kernel;
  /// Why that kernel: "" for a fused kernel, else what ruled them out.
  std::string reason;
  bool fused() const { return kernel != "composite"; }
};
AttentionPlan plan_attention(const Array& q, const Array& k, const Array& v,
                             const std::string& mask_mode = "",
                             const std::optional<Array>& mask = {},
                             const std::optional<Array>& sinks = {}, StreamOrDevice s = {});

/// Options of cross_entropy beyond MLX's two arguments.
struct CrossEntropyOptions {
  /// mlx.nn.losses.cross_entropy's `weights`: multiplies the loss, of the
  /// loss's shape (or broadcastable to it).
  std::optional<Array> weights = std::nullopt;
  /// PyTorch's `weight`: one weight per class [C], the loss of a row times
  /// the weight of its target.
  std::optional<Array> class_weights = std::nullopt;
  /// As mlx.nn.losses.cross_entropy: (1 - s) * logit[t] + s * mean(logits)
  /// replaces logit[t]. In [0, 1).
  float label_smoothing = 0.0f;
  /// Rows whose target equals it get loss 0 (and no gradient).
  std::optional<int> ignore_index = std::nullopt;
};

/// Per-row logsumexp(logits) - logits[target] over the last axis, in one
/// pass: logits [..., C] floating, targets [...] integers in [0, C);
/// float32 of shape logits.shape[:-1] (as MLX's fast.cross_entropy).
Array cross_entropy(const Array& logits, const Array& targets, StreamOrDevice s = {},
                    Location loc = NUVEC_LOC);
Array cross_entropy(const Array& logits, const Array& targets, const CrossEntropyOptions& options,
                    StreamOrDevice s = {}, Location loc = NUVEC_LOC);

// ---- Gated DeltaNet (docs/fast.md, "gated_delta"): the recurrence of
// Qwen3-Next's linear-attention layers, as mlx-lm's gated_delta kernel.
// Composites of ops (one small step per time step) on every device for now.

/// The gated delta rule over T steps, per batch row b and value head h
/// (key head h / (Hv / Hk)): with S = state[b, h] [Dv, Dk], for t in 0..T-1
///   S = g_t S;  delta = (v_t - S k_t) beta_t;  S = S + delta k_t^T;
///   y_t = S q_t.
/// q, k [B, T, Hk, Dk]; v [B, T, Hv, Dv] with Hv a multiple of Hk; g
/// [B, T, Hv] (one decay per head) or [B, T, Hv, Dk] (one per key feature,
/// scaling S's columns); beta [B, T, Hv]; state [B, Hv, Dv, Dk]; mask bool
/// [B, T] or none: a step where it is false leaves S as it was and gives
/// y_t = 0 (padded positions). No scale is applied (mlx-lm folds Dk^-1/2
/// into q). Floating inputs of any dtype: the recurrence runs in float32
/// (float64 when q or state is float64), y is of q's dtype and the new state
/// of state's dtype. Returns {y [B, T, Hv, Dv], new state}. Each batch row
/// is computed on its own: its results do not depend on the other rows.
/// Invalid shapes or dtypes give two failed arrays naming the argument.
std::pair<Array, Array> gated_delta(const Array& q, const Array& k, const Array& v,
                                    const Array& g, const Array& beta, const Array& state,
                                    const std::optional<Array>& mask = std::nullopt,
                                    StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// gated_delta with the states in a pool [S, Hv, Dv, Dk] (batched serving):
/// row b starts from pool[slots[b]] (slots an integer vector [B]) and the
/// result is {y, the pool with pool[slots[b]] replaced by row b's new
/// state}, the other entries unchanged. Slots must be distinct and in
/// [0, S); out-of-range values are clamped as take/scatter do and a repeated
/// slot keeps the last row's state (neither is checked: slots are values).
std::pair<Array, Array> gated_delta_slots(const Array& q, const Array& k, const Array& v,
                                          const Array& g, const Array& beta, const Array& pool,
                                          const Array& slots,
                                          const std::optional<Array>& mask = std::nullopt,
                                          StreamOrDevice s = {}, Location loc = NUVEC_LOC);

// ---- Paged attention (docs/fast.md, "Paged attention"): a key/value cache
// held in blocks of a shared pool, each sequence's blocks listed by its row of
// a block table (batched serving). The integer arguments are read on the host
// when the op is built (evaluated if lazy): the graph depends on their values,
// so these ops are not traceable by compile or vmap, and invalid values fail
// the call.

/// Writes the new keys/values k [B, Hkv, L, D] and v [B, Hkv, L, Dv] of B
/// sequences into the pools k_pool [num_blocks, Hkv, block_size, D] and
/// v_pool [num_blocks, Hkv, block_size, Dv]: token l of row b goes to
/// position positions[b] + l of that row, i.e. pool block
/// block_table[b, pos / block_size] at offset pos % block_size. block_table
/// is an integer [B, max_blocks], positions an integer [B]. Returns the
/// updated pools (new arrays, as slice_update; the inputs are unchanged),
/// converted to the pools' dtypes. Rows that share a slot keep the last
/// row's token. A position past the table or a block outside [0, num_blocks)
/// gives failed arrays.
std::pair<Array, Array> paged_write(const Array& k_pool, const Array& v_pool,
                                    const Array& k, const Array& v,
                                    const Array& block_table,
                                    const Array& positions,
                                    StreamOrDevice s = {},
                                    Location loc = NUVEC_LOC);

/// Attention of q [B, Hq, L, D] (Hq a multiple of Hkv) over the pools of
/// paged_write: row b attends the first lengths[b] positions of its blocks
/// (lengths an integer [B], block_table as paged_write's), mask_mode
/// "causal" (the L queries are the row's last L positions; lengths[b] >= L)
/// or "" (every query sees all lengths[b] keys). Output [B, Hq, L, Dv] in
/// the promoted dtype. Each row's result is bit for bit
/// scaled_dot_product_attention of that row alone over its own contiguous
/// keys (its solo bits), whatever else is in the batch. Only the table
/// entries of the blocks a row uses are read (others may be anything); a
/// used entry outside [0, num_blocks) or a length beyond the table gives a
/// failed array.
Array paged_attention(const Array& q, const Array& k_pool, const Array& v_pool,
                      const Array& block_table, const Array& lengths,
                      float scale, const std::string& mask_mode = "causal",
                      StreamOrDevice s = {}, Location loc = NUVEC_LOC);

}  // namespace nuvec::fast
