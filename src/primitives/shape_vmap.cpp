// vmap rules of the shape, reduction, product and other primitives. Rules
// whose parameters are axes leave the batch axis where it is and lift the
// axes around it (fewer transposes); the others move it to the front.
#include <memory>
#include <utility>

#include "nuvec/primitives/conv.h"
#include "nuvec/primitives/linalg.h"
#include "nuvec/primitives/random.h"
#include "nuvec/primitives/reduce.h"
#include "nuvec/primitives/shape_ops.h"
#include "nuvec/primitives/sort.h"
#include "ops/builder.h"
#include "primitives/rules.h"

namespace nuvec {

namespace {

using VmapResult = std::pair<Arrays, std::vector<int>>;

using rules::batch_size;
using rules::front_sized;
using rules::lift;

std::vector<int> lift(const std::vector<int>& axes, int batch) {
  std::vector<int> out;
  for (int a : axes) out.push_back(lift(a, batch));
  return out;
}

Shape with_batch(int size, const Shape& s) {
  Shape out{size};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

Array build(std::shared_ptr<const Primitive> p, Arrays inputs, const char* op) {
  return ops::impl::build1(std::move(p), std::move(inputs), {}, op,
                             Location::none());
}

}  // namespace

VmapResult Reshape::vmap(const Arrays& inputs,
                         const std::vector<int>& axes) const {
  Array x = rules::batch_front(inputs[0], axes[0]);
  return {{ops::reshape(x, with_batch(x.shape(0), shape_))}, {0}};
}

// One transpose that also brings the batch to the front.
VmapResult Transpose::vmap(const Arrays& inputs,
                           const std::vector<int>& axes) const {
  int b = axes[0];
  std::vector<int> perm{b};
  for (int a : perm_) perm.push_back(lift(a, b));
  return {{ops::transpose(inputs[0], perm)}, {0}};
}

// The slice's dimensions align with the last ones of the target, so size-1
// axes go between the batch and them.
VmapResult Broadcast::vmap(const Arrays& inputs,
                           const std::vector<int>& axes) const {
  if (relative_) {
    // Every input: batch axis first (size 1 when unbatched), then size-1
    // axes up to the common rank, so the batch axes line up.
    size_t rank = 0;
    for (size_t i = 0; i < inputs.size(); ++i)
      rank = std::max(rank, static_cast<size_t>(inputs[i].ndim() - (axes[i] >= 0 ? 1 : 0)));
    Arrays ins;
    for (size_t i = 0; i < inputs.size(); ++i) {
      Array x = rules::batch_front(inputs[i], axes[i]);
      Shape aligned{x.shape(0)};
      aligned.insert(aligned.end(), rank - static_cast<size_t>(x.ndim() - 1), 1);
      aligned.insert(aligned.end(), x.shape().begin() + 1, x.shape().end());
      ins.push_back(ops::reshape(x, aligned));
    }
    return {rules::rebuild(*this, std::move(ins)), {0}};
  }
  Array x = rules::batch_front(inputs[0], axes[0]);
  int size = x.shape(0);
  Shape aligned{size};
  aligned.insert(aligned.end(),
                 shape_.size() - static_cast<size_t>(x.ndim() - 1), 1);
  aligned.insert(aligned.end(), x.shape().begin() + 1, x.shape().end());
  return {
      {ops::broadcast_to(ops::reshape(x, aligned), with_batch(size, shape_))},
      {0}};
}

// The whole batch axis is kept; no public op takes (start, size, step).
VmapResult Slice::vmap(const Arrays& inputs,
                       const std::vector<int>& axes) const {
  const Array& x = inputs[0];
  int b = axes[0];
  std::vector<int> start = start_, size = size_, step = step_;
  start.insert(start.begin() + b, 0);
  size.insert(size.begin() + b, x.shape(b));
  step.insert(step.begin() + b, 1);
  return {{build(ops::impl::make<Slice>(start, size, step), {x}, name())},
          {b}};
}

VmapResult StopGradient::vmap(const Arrays& inputs,
                              const std::vector<int>& axes) const {
  return {rules::rebuild(*this, inputs), {axes[0]}};
}

VmapResult Copy::vmap(const Arrays& inputs,
                      const std::vector<int>& axes) const {
  return {rules::rebuild(*this, inputs), {axes[0]}};
}

// A cast to another width rescales the last axis, which must not be the batch.
VmapResult BitCast::vmap(const Arrays& inputs,
                         const std::vector<int>& axes) const {
  int b = axes[0];
  Array x = inputs[0];
  if (b == x.ndim() - 1 && x.itemsize() != dtype_.size()) {
    x = rules::batch_front(x, b);
    b = 0;
  }
  return {rules::rebuild(*this, {x}), {b}};
}

// The value passes through; the dependencies only order, whatever their
// batch axes. An unbatched value is broadcast so that the output is batched.
VmapResult Depends::vmap(const Arrays& inputs,
                         const std::vector<int>& axes) const {
  Arrays ins = inputs;
  int b = axes[0];
  if (b < 0) {
    ins[0] = front_sized(inputs[0], -1, batch_size(inputs, axes));
    b = 0;
  }
  return {rules::rebuild(*this, std::move(ins)), {b}};
}

// The batch stays an unreduced axis. (A slice reduced to one element of more
// than 2^16 contiguous values takes the CPU kernel's blocked path, which a
// batch of outputs does not: equal up to rounding there, not bit for bit.)
VmapResult Reduce::vmap(const Arrays& inputs,
                        const std::vector<int>& axes) const {
  int b = axes[0];
  return {{build(ops::impl::make<Reduce>(type_, lift(axes_, b)), {inputs[0]},
                 name())},
          {b}};
}

VmapResult ArgReduce::vmap(const Arrays& inputs,
                           const std::vector<int>& axes) const {
  int b = axes[0];
  return {{build(ops::impl::make<ArgReduce>(type_, lift(axis_, b)),
                 {inputs[0]}, name())},
          {b}};
}

// Every slice counts the same elements: the count of the slice's axes,
// repeated along the batch.
VmapResult NumberOf::vmap(const Arrays& inputs,
                          const std::vector<int>& axes) const {
  int b = axes[0];
  Array n = build(ops::impl::make<NumberOf>(lift(axes_, b), dtype_),
                  {inputs[0]}, name());
  return {{ops::broadcast_to(n, {inputs[0].shape(b)})}, {0}};
}

// Operands have rank >= 2 here (ops::matmul reshapes 1-D ones first), so
// the batch goes in front of the broadcast batch axes; an unbatched operand
// gets a size-1 axis that matmul broadcasts.
VmapResult Matmul::vmap(const Arrays& inputs,
                        const std::vector<int>& axes) const {
  Array a = rules::batch_front(inputs[0], axes[0]);
  Array b = rules::batch_front(inputs[1], axes[1]);
  return {{ops::matmul(a, b)}, {0}};
}

// Never called by the engine: Arange has no inputs, so none is batched and
// its node stays an unbatched constant. A direct caller gets that constant
// and -1 (unbatched).
VmapResult Arange::vmap(const Arrays& inputs, const std::vector<int>&) const {
  return {rules::rebuild(*this, inputs), {-1}};
}

VmapResult Concatenate::vmap(const Arrays& inputs,
                             const std::vector<int>& axes) const {
  int size = batch_size(inputs, axes);
  Arrays ins;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(front_sized(inputs[i], axes[i], size));
  return {{ops::concatenate(ins, axis_ + 1)}, {0}};
}

// The batch merges into the N axis of the input. The weight is read for its
// shape only, which every slice shares: one slice of a batched weight serves.
VmapResult Im2Col::vmap(const Arrays& inputs,
                        const std::vector<int>& axes) const {
  Array w = inputs[1];
  if (axes[1] >= 0) {
    std::vector<int> start(static_cast<size_t>(w.ndim()), 0);
    std::vector<int> stop(w.shape().begin(), w.shape().end());
    stop[axes[1]] = 1;
    w = ops::squeeze(ops::slice(w, start, stop), {axes[1]});
  }
  if (axes[0] < 0) {  // only the weight is batched: one result for all
    Array cols = rules::rebuild(*this, {inputs[0], w})[0];
    int size = inputs[1].shape(axes[1]);
    return {{ops::broadcast_to(ops::expand_dims(cols, {0}),
                               with_batch(size, cols.shape()))},
            {0}};
  }
  Array x = rules::batch_front(inputs[0], axes[0]);
  int size = x.shape(0);
  Shape merged(x.shape().begin() + 1, x.shape().end());
  merged[0] *= size;
  Array cols = rules::rebuild(*this, {ops::reshape(x, merged), w})[0];
  Shape split = cols.shape();
  split[0] = x.shape(1);
  return {{ops::reshape(cols, with_batch(size, split))}, {0}};
}

// Keys of shape (..., 2) with the batch in front: each key fills its own
// block of the output, so the batch of draws equals the loop over keys.
VmapResult RandomBits::vmap(const Arrays& inputs,
                            const std::vector<int>& axes) const {
  return {rules::rebuild(*this, {rules::batch_front(inputs[0], axes[0])}), {0}};
}

}  // namespace nuvec
