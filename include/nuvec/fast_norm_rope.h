// fast::norm_rope (docs/fast.md, "norm_rope"): the per-head query/key norm
// of Qwen3 and Gemma 3, RoPE, and the write of the rotated keys into a
// cache, as one call. A composite of rms_norm, rope and slice_update for now
// (so bit for bit those calls), row independent as they are; a header of its
// own beside <nuvec/fast.h> (include it explicitly).
#pragma once

#include <optional>
#include <utility>

#include "nuvec/fast.h"

namespace nuvec::fast {

/// rope(rms_norm(x, weight, eps), dims, traditional, base, scale, offset,
/// freqs) for x [B, H, T, D] (weight [D] or none).
Array norm_rope(const Array& x, const std::optional<Array>& weight, float eps, int dims, bool traditional,
                std::optional<float> base, float scale, int offset,
                const std::optional<Array>& freqs = std::nullopt, StreamOrDevice s = {},
                Location loc = NUVEC_LOC);
/// The same with one offset per batch item (an integer array, 0-d or [B]).
Array norm_rope(const Array& x, const std::optional<Array>& weight, float eps, int dims, bool traditional,
                std::optional<float> base, float scale, const Array& offset,
                const std::optional<Array>& freqs = std::nullopt, StreamOrDevice s = {},
                Location loc = NUVEC_LOC);
/// norm_rope, and the result written into `cache` [B, H, C, D] at positions
/// [offset, offset + T) (offset + T <= C): {the rotated x, the updated cache}
/// (a new array as slice_update's; the cache's buffer is reused when nothing
/// else holds it). Positions past the cache or a cache of other B, H or D
/// give failed arrays.
std::pair<Array, Array> norm_rope(const Array& x, const std::optional<Array>& weight, float eps, int dims,
                                  bool traditional, std::optional<float> base, float scale, int offset,
                                  const Array& cache, const std::optional<Array>& freqs = std::nullopt,
                                  StreamOrDevice s = {}, Location loc = NUVEC_LOC);

}  // namespace nuvec::fast
