// Which computation serves a fast operation (docs/fast.md, "Routing"): the
// primitive, whose kernels run on the call's device, or the composite where
// that device has no kernel for the dtype. Decided when the op is built,
// from the primitive, the dtype and the device only.
#pragma once

#include <memory>
#include <vector>

#include "nuvec/core/array.h"
#include "nuvec/core/device.h"
#include "nuvec/primitives/registry.h"

namespace nuvec {
class Primitive;
}

namespace nuvec::fast::detail {

/// Whether the device of `s` has a kernel for fast primitive `id` on `d`.
bool has_kernel(PrimitiveId id, const StreamOrDevice& s, DType d);

/// Softmax over the last axis of a floating x (the Softmax primitive or its
/// composite); `ops::softmax` calls it for the last axis.
Array softmax_last(const Array& x, bool precise, const StreamOrDevice& s, Location loc);
/// logsumexp over the last axis of a floating, non-empty x, kept: [..., 1].
Array logsumexp_last(const Array& x, const StreamOrDevice& s, Location loc);

/// Whether the AttentionGrad primitive has a kernel for these primals
/// (q, k, v[, mask]) on the device of `s` (src/fast/attention.cpp).
bool attention_grad_kernel(const std::vector<Array>& primals, bool causal, bool has_mask,
                           const StreamOrDevice& s);

}  // namespace nuvec::fast::detail
