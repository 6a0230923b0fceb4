// The fast primitives on the GPU (fast.cpp): which have kernels, and their
// dispatch. Included by runtime.cpp and gpu.cpp only.
#pragma once

#include <string>
#include <vector>

#include "nuvec/core/graph.h"

namespace nuvec::cuda {

/// Whether launch_fast has a kernel for fast primitive `id` on dtype `d`.
bool has_fast_kernel(PrimitiveId id, DType d);
/// Runs a fast primitive (inputs device-resident, outputs dense device
/// buffers); returns false for other primitives.
bool launch_fast(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out,
                 void* stream, Stream s);

/// The attention kernel for [B, Hq, Hkv, Lq, Lk, D, Dv] of dtype `d` with
/// these options, or "" (fast_attention.h's attention_kernel, or
/// attention_backward_kernel with `backward`).
std::string attention_kernel_for(const std::vector<int>& dims, DType d, bool causal, bool has_mask,
                                 bool has_sinks, bool backward);

/// `x` itself when row-contiguous, else a dense copy made on stream `s`
/// (cuda_kernel.cpp; the fast kernels and users' kernels read dense rows).
Array row_contiguous(const Array& x, void* stream, Stream s);

}  // namespace nuvec::cuda
