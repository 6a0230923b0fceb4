// The row-wise kernels of the fast primitives on the GPU (fast_rows.cu:
// the norms; fast_softmax.cu: softmax, logsumexp, cross entropy and its
// gradient; fast_rope.cu; their machinery in fast_rows.cuh), called by
// their dispatch (fast.cpp). Plain C++: no CUDA header; a
// cudaStream_t is passed as void*.
//
// All pointers are device pointers to dense row-major data: x is [rows, n]
// (row r at x + r * n). `t` is the dtype of x, the outputs and the weights:
// float32, float16 or bfloat16 (supports()). Optional pointers may be null.
// Statistics are float32 and each output is rounded once, as the CPU
// kernels (backend/cpu/fast_*.cpp); a row's bits depend on n and t only,
// never on `rows`, the row's place in the batch or the pointers' alignment.
// rows == 0 or n == 0 launches nothing (cross_entropy: see there). Launch
// errors throw nuvec::Error (backend).
#pragma once

#include <cstdint>

#include "nuvec/core/dtype.h"

namespace nuvec::cuda::fastk {

/// out = round(x * rsqrt(mean(x^2) + eps)), then round(out * w) in t's
/// arithmetic when w is given ([n]).
void rms_norm(DType t, const void* x, const void* w, void* out, int64_t rows,
              int n, float eps, void* stream);

/// h = x + residual rounded to t, out = rms_norm(h, w, eps). h and out may
/// be the buffers of x or residual (each element is read before it is
/// written, by the thread that writes it).
void add_rms_norm(DType t, const void* x, const void* residual, const void* w,
                  void* h, void* out, int64_t rows, int n, float eps,
                  void* stream);

/// xc = x - mean(x), out = round(xc * rsqrt(mean(xc^2) + eps)), then
/// * w and + b ([n] each, optional), each rounded in t.
void layer_norm(DType t, const void* x, const void* w, const void* b, void* out,
                int64_t rows, int n, float eps, void* stream);

/// out = round(e / sum(e)) with e = exp(x - max(x)) over each row.
void softmax(DType t, const void* x, void* out, int64_t rows, int n,
             void* stream);

/// One value per row (dtype t): log(sum(exp(x - m))) + m, m the row's max
/// (0 where it is infinite). Never called with n == 0.
void logsumexp(DType t, const void* x, void* out, int64_t rows, int n,
               void* stream);

/// Per row (float32 out): logsumexp(row) - row[target], or with smoothing
/// s > 0: (lse - row[target] * (1 - s)) - mean(row) * s. A row whose target
/// equals `ignore` (when has_ignore) gets 0; a target outside [0, n) gets
/// NaN (so n == 0 with rows > 0 still launches, writing 0 or NaN).
void cross_entropy(DType t, const void* logits, const int32_t* targets,
                   float* out, int64_t rows, int n, float smoothing,
                   bool has_ignore, int ignore, void* stream);

/// The gradient of cross_entropy with respect to the logits: dlogits
/// [rows, n] of dtype t, round_t(g[r] * (softmax(row)_i - (1 - s) [i ==
/// target] - s / n)), the terms in float32 (the last only when s > 0).
/// Rows whose target equals `ignore` (when has_ignore) get zeros, a target
/// outside [0, n) a NaN row. g: float32 [rows] (the cotangent of each
/// row's loss).
void cross_entropy_backward(DType t, const void* logits, const int32_t* targets,
                            const float* g, void* dlogits, int64_t rows, int n,
                            float smoothing, bool has_ignore, int ignore,
                            void* stream);

/// Rotary embedding of the first `dims` features of x, dense [rows, d],
/// rows in row-major order of [B, ..., T]: row r is batch item
/// r / per_item at position r % t_len. offsets: n_off int32 values (1:
/// shared by all items, else one per item). freqs: dims / 2 float32 (inverse
/// frequencies 1 / freqs) or null (exp(-i * (log(base) / (dims / 2)))).
/// `traditional` rotates adjacent pairs, else the two halves; `forward`
/// false negates the sines (the inverse rotation). Features from
/// 2 * (dims / 2) on are copied. The CPU's bits (no reductions).
void rope(DType t, const void* x, void* out, const int32_t* offsets, int n_off,
          const float* freqs, int64_t rows, int64_t per_item, int64_t t_len,
          int d, int dims, bool traditional, float base, float scale,
          bool forward, void* stream);

/// Whether these kernels take dtype t (float32, float16, bfloat16).
bool supports(DType t);

}  // namespace nuvec::cuda::fastk
