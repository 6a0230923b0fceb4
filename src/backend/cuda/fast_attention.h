// The GPU kernels of fast::scaled_dot_product_attention (the Attention
// primitive), called by its dispatch. Plain C++: no CUDA header; a
// cudaStream_t is passed as void*. The design (chunks, tiles, why the
// serial rule holds) is at the top of fast_attention.cu and
// fast_attention_tiled.cu.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nuvec/core/dtype.h"

namespace nuvec::cuda::fastk {

/// One attention call: softmax(scale * q k^T [+ mask]) v per (batch item,
/// query head), with the CPU kernel's semantics
/// (backend/cpu/fast_attention.cpp).
struct AttentionArgs {
  /// float16, bfloat16 or float32: q, k, v, out, an additive mask, sinks.
  DType t;
  /// Device pointers to element 0 of each view.
  const void* q;
  const void* k;
  const void* v;
  void* out;
  /// Hq % Hkv == 0: query head h reads key/value head h / (Hq / Hkv).
  int B, Hq, Hkv, Lq, Lk, D, Dv;
  /// Element strides of [B, H, L, D]; the last is 1 (the caller's promise).
  /// out is dense [B, Hq, Lq, Dv].
  int64_t q_st[4], k_st[4], v_st[4];
  /// Optional [B, Hq, Lq, Lk] view: bool (1 byte, keep where true) or of
  /// dtype t (added to the scores).
  const void* mask = nullptr;
  bool mask_is_bool = false;
  /// Element strides of the mask (0 on broadcast axes).
  int64_t mask_st[4] = {};
  /// Optional [Hq] of dtype t: one extra logit per head.
  const void* sinks = nullptr;
  float scale = 1.0f;
  /// Key j is hidden from query i when j > i + Lk - Lq.
  bool causal = false;
};

/// "gpu_vector" (Lq <= 8), "gpu_tiled" (Lq > 8, float16 and bfloat16), or
/// "" when these kernels do not take the call (another dtype, D or Dv
/// outside {64, 80, 96, 128, 256}, D != Dv, Hq not a multiple of Hkv, a
/// grid beyond CUDA's limits). Depends only on the shapes, dtype and options.
const char* attention_kernel(const AttentionArgs& a);

/// Scratch bytes the call needs on the device (the vector kernel's
/// per-chunk partials); 0 for the tiled kernel and for empty calls.
size_t attention_scratch_bytes(const AttentionArgs& a);

/// Runs the call attention_kernel names (which must not be ""), on
/// `stream`, with `scratch` of attention_scratch_bytes(a) bytes (16-byte
/// aligned). Lk == 0 writes zeros; an empty output launches nothing.
/// Launch errors throw nuvec::Error (backend).
void attention(const AttentionArgs& a, void* scratch, void* stream);

/// The gradients of one attention call (the same AttentionArgs as the
/// forward; a.out unused) given o (the forward's output, dense
/// [B, Hq, Lq, Dv] of dtype t) and dout (its cotangent, dense, dtype t):
/// dq [B, Hq, Lq, D], dk [B, Hkv, Lk, D], dv [B, Hkv, Lk, Dv], dense, dtype
/// t. dk and dv sum over the Hq / Hkv query heads of each key/value head.
/// Gradients with respect to masks and sinks are not computed; scores a
/// bool mask (or an all-hidden causal row) replaces by the lowest value
/// pass no gradient to q and k.
struct AttentionGradArgs {
  AttentionArgs a;
  const void* o;
  const void* dout;
  void* dq;
  void* dk;
  void* dv;
};

/// "gpu_tiled_backward" (float16 or bfloat16, D == Dv in {64, 80, 96, 128,
/// 256}, Hq a multiple of Hkv, any Lq and Lk) or "" when the call is not
/// taken. Depends only on the shapes, dtype and options.
const char* attention_backward_kernel(const AttentionArgs& a);

/// Scratch bytes the backward needs on the device (float32 row statistics:
/// 12 B Hq ceil(Lq / 64) 64 bytes); 0 when Lq or Lk is 0.
size_t attention_backward_scratch_bytes(const AttentionArgs& a);

/// Runs the backward (attention_backward_kernel(g.a) must not be "") on
/// `stream` with `scratch` of attention_backward_scratch_bytes(g.a) bytes
/// (16-byte aligned). Deterministic: the same bits on every run. Lk == 0
/// writes zeros to dq, Lq == 0 zeros to dk and dv. Launch errors throw
/// nuvec::Error (backend).
void attention_backward(const AttentionGradArgs& g, void* scratch,
                        void* stream);

}  // namespace nuvec::cuda::fastk
