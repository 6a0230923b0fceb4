// vmap rules of gathers, scatters, sorts, scans and linear algebra. Gathers
// and scatters with a batch on both the data and the indices merge the batch
// into the indexed axis and offset each slice's indices by its start.
#include <utility>

#include "nuvec/primitives/indexing.h"
#include "nuvec/primitives/linalg.h"
#include "nuvec/primitives/sort.h"
#include "ops/builder.h"
#include "primitives/rules.h"

namespace nuvec {

namespace {

using VmapResult = std::pair<Arrays, std::vector<int>>;

using rules::batch_size;
using rules::front_sized;
using rules::lift;


// Indices with the batch in front (shape (B, ...)), normalised as Take and
// Scatter read them (negative wrapped once, then clamped into [0, n)), then
// offset by b * n: positions in slice b's part of the batch merged with an
// axis of size n. Normalising first keeps a clamped index in its own slice.
Array offset_indices(const Array& idx, int n) {
  Array i = ops::astype(idx, int64);
  i = ops::where(ops::less(i, 0), ops::add(i, n), i);
  i = ops::clip(i, Operand(0), Operand(n > 0 ? n - 1 : 0));
  int size = idx.shape(0);
  Shape at(static_cast<size_t>(idx.ndim()), 1);
  at[0] = size;
  // An empty axis admits only empty indices (arange cannot step by 0).
  Array starts = n > 0 ? ops::arange(0.0, double(size) * n, double(n), int64)
                       : ops::zeros({size}, int64);
  return ops::add(i, ops::reshape(starts, at));
}

}  // namespace

VmapResult Take::vmap(const Arrays& inputs,
                      const std::vector<int>& axes) const {
  const Array &x = inputs[0], &idx = inputs[1];
  int bx = axes[0], bi = axes[1];
  // The same indices for every slice: gather along the lifted axis.
  if (bi < 0) {
    int a = lift(axis_, bx);
    return {{ops::take(x, idx, a)}, {bx < a ? bx : bx + idx.ndim() - 1}};
  }
  // One array, a batch of indices: the batch lands among the indices' axes.
  if (bx < 0) return {{ops::take(x, idx, axis_)}, {axis_ + bi}};
  // Both batched: gather from (B * n, rest...) at offset indices; the result
  // (B, idx..., before..., after...) goes back to Take's order.
  Array xb = ops::moveaxis(rules::batch_front(x, bx), axis_ + 1, 1);
  int size = xb.shape(0), n = xb.shape(1);
  Shape merged(xb.shape().begin() + 1, xb.shape().end());
  merged[0] = size * n;
  Array ib = rules::batch_front(idx, bi);
  Array g = ops::take(ops::reshape(xb, merged), offset_indices(ib, n), 0);
  int ni = ib.ndim() - 1;
  std::vector<int> perm{0};
  for (int k = 0; k < axis_; ++k) perm.push_back(1 + ni + k);
  for (int k = 0; k < ni; ++k) perm.push_back(1 + k);
  for (int k = 1 + ni + axis_; k < g.ndim(); ++k) perm.push_back(k);
  return {{ops::transpose(g, perm)}, {0}};
}

// One Scatter over the batch flattened: positions offset per slice, so
// slices never collide and each keeps its own order of updates.
VmapResult Scatter::vmap(const Arrays& inputs,
                         const std::vector<int>& axes) const {
  int size = batch_size(inputs, axes);
  Array x = front_sized(inputs[0], axes[0], size);
  int n = x.shape(1);
  Array pos = offset_indices(front_sized(inputs[1], axes[1], size), n);
  Array upd = front_sized(inputs[2], axes[2], size);
  Array out = ops::impl::build1(ops::impl::make<Scatter>(type_),
                                  {ops::reshape(x, {-1}), pos, upd}, {}, name(),
                                  Location::none());
  return {{ops::reshape(out, {size, n})}, {0}};
}

namespace {

// The sorts along their axis lifted around the batch, which stays in place.
template <PrimitiveId Id>
VmapResult sort_vmap(const SortPrimitive<Id>& p, const Arrays& inputs,
                     const std::vector<int>& axes) {
  int b = axes[0];
  auto prim = ops::impl::make<SortPrimitive<Id>>(lift(p.axis(), b), p.kth());
  return {
      {ops::impl::build1(prim, {inputs[0]}, {}, p.name(), Location::none())},
      {b}};
}

}  // namespace

template <>
VmapResult SortPrimitive<PrimitiveId::Sort>::vmap(
    const Arrays& inputs, const std::vector<int>& axes) const {
  return sort_vmap(*this, inputs, axes);
}

template <>
VmapResult SortPrimitive<PrimitiveId::ArgSort>::vmap(
    const Arrays& inputs, const std::vector<int>& axes) const {
  return sort_vmap(*this, inputs, axes);
}

template <>
VmapResult SortPrimitive<PrimitiveId::Partition>::vmap(
    const Arrays& inputs, const std::vector<int>& axes) const {
  return sort_vmap(*this, inputs, axes);
}

template <>
VmapResult SortPrimitive<PrimitiveId::ArgPartition>::vmap(
    const Arrays& inputs, const std::vector<int>& axes) const {
  return sort_vmap(*this, inputs, axes);
}

VmapResult Scan::vmap(const Arrays& inputs,
                      const std::vector<int>& axes) const {
  int b = axes[0];
  auto prim =
      ops::impl::make<Scan>(type_, lift(axis_, b), reverse_, inclusive_);
  return {
      {ops::impl::build1(prim, {inputs[0]}, {}, name(), Location::none())},
      {b}};
}

// Linalg batches over leading axes: the batch goes in front (an unbatched
// right-hand side of solve is broadcast), and every output keeps it there.
VmapResult Linalg::vmap(const Arrays& inputs,
                        const std::vector<int>& axes) const {
  int size = batch_size(inputs, axes);
  Arrays ins;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(front_sized(inputs[i], axes[i], size));
  Arrays outs = rules::rebuild(*this, std::move(ins));
  return {outs, std::vector<int>(outs.size(), 0)};
}

}  // namespace nuvec
