// What the evaluator asks of a backend. Nothing outside src/backend includes
// this header's implementations' headers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nuvec/core/graph.h"

namespace nuvec::backend {

/// Runs `p` on the CPU: `outputs` have their buffers (donated or fresh) and
/// must be filled; inputs are available.
void eval_cpu(const Primitive& p, const std::vector<Array>& inputs,
              std::vector<Array>& outputs);

/// A host pointer to element `offset` of an available array (a GPU
/// array's data is copied to the host once, when first read there).
const void* host_pointer(const Array& a);

// The GPU (src/backend/gpu.cpp; the CUDA backend when built with it).

/// Whether a GPU can run operations in this process.
bool gpu_available();
/// Why not ("" when it can).
std::string gpu_unavailable_reason();
/// A device buffer of `nbytes` for work on stream `s`.
std::shared_ptr<Data> allocate_gpu(size_t nbytes, Stream s);
/// Whether an element-wise kernel on GPU stream `s` may write its output
/// into `d`, the buffer of an input nothing else holds (see cuda::donate).
bool gpu_donate(const Data& d, Stream s);
/// Whether the GPU backend has a kernel for fast primitive `id` on dtype
/// `d` (src/fast/route.h routes to the composite otherwise).
bool gpu_fast_kernel(PrimitiveId id, DType d);
/// The GPU attention kernel a call of these shapes [B, Hq, Hkv, Lq, Lk, D,
/// Dv], dtype and options runs ("gpu_vector", "gpu_tiled"; with `backward`,
/// the gradients' "gpu_tiled_backward"), or "" for none.
std::string gpu_attention_kernel(const std::vector<int>& bhhlldd, DType d, bool causal,
                                 bool has_mask, bool has_sinks, bool backward);
/// Waits for all enqueued GPU work (throws for a kernel that failed).
void gpu_synchronize();
/// Waits for the GPU work that writes `d` (cuda::wait_written).
void gpu_wait(const Data& d);
/// Enqueues the GPU work eval_gpu held back (launches it may batch); an
/// eval calls it once its nodes have run.
void gpu_flush();
/// Runs `p` on GPU stream `s` (inputs on the host are uploaded).
void eval_gpu(const Primitive& p, const std::vector<Array>& inputs, std::vector<Array>& outputs,
              Stream s);
/// The GPU allocator's statistics and limits (bytes; zeros without a GPU).
struct GpuMemory {
  size_t active = 0, peak = 0, cached = 0, limit = 0, cache_limit = 0;
};
GpuMemory gpu_memory();
void gpu_reset_peak_memory();
/// Set a limit (memory: `cache` false; cache: true); return the previous.
size_t gpu_set_limit(size_t bytes, bool cache);
void gpu_clear_cache();

/// What generated GPU code is built for: `arch` ("sm_90"; "" without a
/// GPU) and the identity of the compiler and driver (for cache keys).
struct GpuTarget {
  std::string arch;
  std::string identity;
};
GpuTarget gpu_target();
/// Compiles CUDA C++ `source` with NVRTC for `arch` into `binary`; returns
/// "" or the compiler's log. Needs no GPU (tests compile generated code).
std::string gpu_compile(const std::string& source, const std::string& arch, std::string& binary);
/// The host copy of a GPU buffer's bytes (made once, on first read).
const void* host_data(const Data& d);
/// `inputs` readable by CPU kernels: GPU-resident ones replaced by views of
/// their host copies.
std::vector<Array> on_host(const std::vector<Array>& inputs);

}  // namespace nuvec::backend
