// The composite definitions of the fast operations (MLX's fallbacks),
// written with ops: the primitives' fallback() (their transforms where no
// dedicated rule exists) and what runs where no kernel serves a call. The
// inputs are those of the primitives (include/nuvec/primitives/fast.h):
// already of the output dtype, a 0-d weight meaning none.
#pragma once

#include <optional>

#include "nuvec/core/array.h"
#include "nuvec/core/device.h"

namespace nuvec::fast::composite {

/// The float dtype the statistics use: float32, or float64 for float64.
DType stats_dtype(DType d);

Array rms_norm(const Array& x, const Array& w, float eps, const StreamOrDevice& s = {});
Array layer_norm(const Array& x, const Array& w, const Array& b, float eps,
                 const StreamOrDevice& s = {});
/// Softmax over `axes` (any), statistics in stats_dtype.
Array softmax(const Array& x, const std::vector<int>& axes, const StreamOrDevice& s = {},
              Location loc = Location::none());
/// logsumexp over `axes` (normalised, non-empty input), kept.
Array logsumexp(const Array& x, const std::vector<int>& axes, const StreamOrDevice& s = {},
                Location loc = Location::none());
/// Per-row loss (float32), rows whose target is `ignore` giving 0.
Array cross_entropy(const Array& logits, const Array& targets, float smoothing,
                    std::optional<int> ignore, const StreamOrDevice& s = {});
/// The gradient of cross_entropy's loss with respect to the logits, given
/// the loss's cotangent g (float32 [...]): of the logits' dtype.
Array cross_entropy_grad(const Array& logits, const Array& targets, const Array& g, float smoothing,
                         std::optional<int> ignore, const StreamOrDevice& s = {});
/// x [B, ..., T, D], offset int32 0-d or [B], freqs [dims / 2] or none.
Array rope(const Array& x, const Array& offset, const std::optional<Array>& freqs, int dims,
           bool traditional, float base, float scale, bool forward, const StreamOrDevice& s = {});
/// q, k, v and the optional mask [B, Hq, Lq, Lk] and sinks [Hq].
Array attention(const Array& q, const Array& k, const Array& v, const std::optional<Array>& mask,
                const std::optional<Array>& sinks, float scale, bool causal,
                const StreamOrDevice& s = {});

}  // namespace nuvec::fast::composite
