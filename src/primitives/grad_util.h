// Helpers shared by the vjp/jvp rules of the non-element-wise primitives
// (shape_grad.cpp, reduce_grad.cpp, indexing_grad.cpp, linalg_grad.cpp).
// All are written with ops, so rules built on them differentiate again.
#pragma once

#include <vector>

#include "nuvec/core/array.h"

namespace nuvec::rules {

/// x[..., start:start + size*step:step, ...] along `axis` (Python bounds
/// already resolved: `size` elements from `start` walking by `step` > 0).
Array take_range(const Array& x, int axis, int start, int size, int step = 1);

/// x moved by `by` positions along `axis`: towards higher indices when
/// `forward`, else towards lower ones; the positions left empty hold
/// `fill`.
Array shift(const Array& x, int axis, bool forward, int by = 1,
            double fill = 0.0);

/// s with s_i = b_i + a_i s_{i-1} along `axis` (s_{-1} = 0), or with
/// `reverse` s_i = b_i + a_i s_{i+1}: a first-order linear recurrence (a and
/// b of one shape), by recursive doubling: log2(n) rounds of shifted
/// multiply-adds, no division, so exact where a has zeros and
/// differentiable again.
Array linear_recurrence(Array a, Array b, int axis, bool reverse);

/// The index along `axis` of every element of `shape` (int32, a broadcast
/// view of one arange).
Array positions(const Shape& shape, int axis);

/// The matrix transpose of the last two axes.
Array mT(const Array& x);

/// g summed down to `shape` (a shape g was broadcast from, NumPy's rules).
Array sum_to_shape(const Array& g, const Shape& shape);

/// g (the values of a strided selection of an array of `shape`: per axis
/// `size` elements from `start` by `step`, which may be negative) written
/// into zeros of `shape`: the adjoint of the selection.
Array unslice(const Array& g, const Shape& shape, const std::vector<int>& start,
              const std::vector<int>& size, const std::vector<int>& step);

}  // namespace nuvec::rules
