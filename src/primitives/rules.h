// Helpers shared by the primitives' transform rules (*_grad.cpp, *_vmap.cpp).
// Rules are written with ops, so their results are differentiable again.
#pragma once

#include <utility>
#include <vector>

#include "nuvec/ops/ops.h"
#include "nuvec/primitives/primitive.h"

namespace nuvec::rules {

/// The node of `p` built again on new inputs (vmap rules of primitives
/// whose parameters do not depend on the batch).
Arrays rebuild(const Primitive& p, Arrays inputs);

/// `x` with its batch axis moved to the front; an unbatched input (axis -1)
/// gets a size-1 front axis instead.
Array batch_front(const Array& x, int axis);

/// The batch size: that of any batched input (the engine checked they
/// agree); 1 when none is batched.
int batch_size(const Arrays& inputs, const std::vector<int>& axes);

/// An axis of one slice, as an axis of the batched array whose batch axis is
/// `batch`.
inline int lift(int axis, int batch) { return axis < batch ? axis : axis + 1; }

/// `x` with the batch in front, broadcast along it to `size` when unbatched.
Array front_sized(const Array& x, int axis, int size);

/// The vmap rule of element-wise primitives: batch axes to the front,
/// unbatched inputs broadcast along the batch, the same primitive applied.
std::pair<Arrays, std::vector<int>> elementwise_vmap(const Primitive& p, const Arrays& inputs,
                                                     const std::vector<int>& axes);

/// Zeros of x's shape and dtype, broadcast from one element.
Array zeros_of(const Array& x);

/// Throws nuvec::Error (transform): `p` has no rule for `which`.
[[noreturn]] void no_rule(const Primitive& p, const char* which);

}  // namespace nuvec::rules
