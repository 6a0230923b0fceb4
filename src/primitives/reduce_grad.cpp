// vjp and jvp rules of reductions, products, arange, concatenate, im2col and
// random bits. Reductions keep their reduced axes with size 1, so a
// cotangent broadcasts straight back to the input's shape.
#include <algorithm>

#include "nuvec/ops/ops.h"
#include "nuvec/primitives/conv.h"
#include "nuvec/primitives/linalg.h"
#include "nuvec/primitives/random.h"
#include "nuvec/primitives/reduce.h"
#include "nuvec/primitives/sort.h"
#include "primitives/grad_util.h"
#include "primitives/rules.h"

namespace nuvec {

namespace {

// The product of all other elements of each reduced group (exact with
// zeros in the input, unlike prod / x): an exclusive cumprod from each side.
Array exclusive_products(const Array& x, const std::vector<int>& axes) {
  auto both_sides = [](const Array& v, int axis) {
    return ops::cumprod(v, axis, false, false) *
           ops::cumprod(v, axis, true, false);
  };
  if (axes.size() == 1) return both_sides(x, axes[0]);
  // Several axes: move them to the back and merge them into one.
  std::vector<int> perm, inverse(static_cast<size_t>(x.ndim()));
  Shape flat;
  for (int a = 0; a < x.ndim(); ++a)
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) {
      perm.push_back(a);
      flat.push_back(x.shape(a));
    }
  int64_t group = 1;
  for (int a : axes) {
    perm.push_back(a);
    group *= x.shape(a);
  }
  flat.push_back(static_cast<int>(group));
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = static_cast<int>(i);
  Array moved = ops::transpose(x, perm);
  Array r =
      both_sides(ops::reshape(moved, flat), static_cast<int>(flat.size()) - 1);
  return ops::transpose(ops::reshape(r, moved.shape()), inverse);
}

// The output of `p` on `primals`: the kept one, or rebuilt when the engine
// passed a placeholder.
Array output_of(const Primitive& p, const Arrays& primals,
                const Arrays& outputs, size_t i = 0) {
  if (i < outputs.size() && !outputs[i].is_failed()) return outputs[i];
  return rules::rebuild(p, primals)[i];
}

// The tangent given for input `arg`, or none.
const Array* tangent_of(int arg, const Arrays& tangents,
                        const std::vector<int>& argnums) {
  for (size_t i = 0; i < argnums.size(); ++i)
    if (argnums[i] == arg) return &tangents[i];
  return nullptr;
}

}  // namespace

Arrays Reduce::vjp(const Arrays& primals, const Arrays& cotangents,
                   const std::vector<int>&, const Arrays& outputs) const {
  const Array& x = primals[0];
  const Array& g = cotangents[0];
  switch (type_) {
    case Type::sum:
      return {ops::broadcast_to(g, x.shape())};
    case Type::prod:
      return {g * exclusive_products(x, axes_)};
    case Type::max:
    case Type::min: {
      // As MLX: ties share the cotangent equally.
      Array mask =
          ops::equal(x, output_of(*this, primals, outputs)).astype(g.dtype());
      return {g * mask / ops::sum(mask, Axes(axes_), true)};
    }
    case Type::all:
    case Type::any:
      break;
  }
  return {rules::zeros_of(x)};
}

Arrays Reduce::jvp(const Arrays& primals, const Arrays& tangents,
                   const std::vector<int>&) const {
  const Array& x = primals[0];
  const Array& t = tangents[0];
  switch (type_) {
    case Type::sum:
      return rules::rebuild(*this, {t});
    case Type::prod:
      return {ops::sum(t * exclusive_products(x, axes_), Axes(axes_), true)};
    case Type::max:
    case Type::min: {
      Array y = rules::rebuild(*this, primals)[0];
      Array mask = ops::equal(x, y).astype(t.dtype());
      return {ops::sum(t * mask, Axes(axes_), true) /
              ops::sum(mask, Axes(axes_), true)};
    }
    case Type::all:
    case Type::any:
      break;
  }
  auto spec = output_specs(primals);
  return {ops::zeros(spec->at(0).shape, bool_)};
}

// Indices and counts are piecewise constant: zero derivatives.
Arrays ArgReduce::vjp(const Arrays& primals, const Arrays&,
                      const std::vector<int>&, const Arrays&) const {
  return {rules::zeros_of(primals[0])};
}

Arrays ArgReduce::jvp(const Arrays& primals, const Arrays&,
                      const std::vector<int>&) const {
  Shape s = primals[0].shape();
  s[axis_] = 1;
  return {ops::zeros(s, uint32)};
}

Arrays NumberOf::vjp(const Arrays& primals, const Arrays&,
                     const std::vector<int>&, const Arrays&) const {
  return {rules::zeros_of(primals[0])};
}

Arrays NumberOf::jvp(const Arrays&, const Arrays&,
                     const std::vector<int>&) const {
  return {ops::zeros({}, dtype_)};
}

// C = A B: dC = dA B + A dB; the cotangents are G B^T and A^T G (plain
// transposes for complex too, MLX's convention). Batch shapes are equal
// here: ops::matmul broadcast them through Broadcast nodes, whose vjp sums.
Arrays Matmul::vjp(const Arrays& primals, const Arrays& cotangents,
                   const std::vector<int>& argnums, const Arrays&) const {
  const Array& g = cotangents[0];
  Arrays out;
  for (int arg : argnums)
    out.push_back(arg == 0 ? ops::matmul(g, rules::mT(primals[1]))
                           : ops::matmul(rules::mT(primals[0]), g));
  return out;
}

Arrays Matmul::jvp(const Arrays& primals, const Arrays& tangents,
                   const std::vector<int>& argnums) const {
  Array sum;
  for (size_t i = 0; i < argnums.size(); ++i) {
    Array t = argnums[i] == 0 ? ops::matmul(tangents[i], primals[1])
                              : ops::matmul(primals[0], tangents[i]);
    sum = i == 0 ? t : sum + t;
  }
  return {sum};
}

// No inputs: nothing to differentiate; the output is a constant.
Arrays Arange::vjp(const Arrays&, const Arrays&, const std::vector<int>&,
                   const Arrays&) const {
  return {};
}

Arrays Arange::jvp(const Arrays&, const Arrays&,
                   const std::vector<int>&) const {
  return {ops::zeros({size_}, dtype_)};
}

Arrays Concatenate::vjp(const Arrays& primals, const Arrays& cotangents,
                        const std::vector<int>& argnums, const Arrays&) const {
  std::vector<int> offsets{0};
  for (const Array& p : primals)
    offsets.push_back(offsets.back() + p.shape(axis_));
  Arrays out;
  for (int arg : argnums)
    out.push_back(rules::take_range(cotangents[0], axis_, offsets[arg],
                                    primals[arg].shape(axis_)));
  return out;
}

Arrays Concatenate::jvp(const Arrays& primals, const Arrays& tangents,
                        const std::vector<int>& argnums) const {
  Arrays parts;
  for (size_t i = 0; i < primals.size(); ++i) {
    const Array* t = tangent_of(static_cast<int>(i), tangents, argnums);
    parts.push_back(t ? *t : rules::zeros_of(primals[i]));
  }
  return rules::rebuild(*this, parts);
}

namespace {

// The adjoint of im2col: every patch entry added back at the input position
// it was read from. Per spatial axis, entry (o, t) came from position
// o * stride + t * kdil of the input dilated by idil and padded by (lo, hi).
Array col2im(const Im2Col& p, const Array& x, const Array& g) {
  int d = x.ndim() - 2;
  if (x.size() == 0 || g.size() == 0) return rules::zeros_of(x);
  // Spread the output positions `stride` apart once for all taps.
  Shape spread = g.shape();
  std::vector<int> zero(static_cast<size_t>(g.ndim()), 0),
      steps(static_cast<size_t>(g.ndim()), 1);
  std::vector<int> padded(static_cast<size_t>(d));
  for (int a = 0; a < d; ++a) {
    spread[1 + a] = (g.shape(1 + a) - 1) * p.stride()[a] + 1;
    steps[1 + a] = p.stride()[a];
    int dilated = (x.shape(1 + a) - 1) * p.input_dilation()[a] + 1;
    padded[a] = dilated + p.padding_lo()[a] + p.padding_hi()[a];
  }
  Array gs = rules::unslice(g, spread, zero, g.shape(), steps);
  // One shifted copy per kernel tap, summed in the padded input's frame.
  std::vector<int> tap(static_cast<size_t>(d), 0);
  int64_t taps = 1;
  for (int a = 0; a < d; ++a) taps *= g.shape(1 + d + a);
  Array acc;
  for (int64_t k = 0; k < taps; ++k) {
    Array part = gs;
    std::vector<std::pair<int, int>> pads(static_cast<size_t>(d + 2), {0, 0});
    for (int a = 0; a < d; ++a) {
      part = rules::take_range(part, 1 + d + a, tap[a], 1);
      int before = tap[a] * p.kernel_dilation()[a];
      pads[1 + a] = {before, padded[a] - spread[1 + a] - before};
    }
    Shape dense = part.shape();
    dense.erase(dense.begin() + 1 + d, dense.begin() + 1 + 2 * d);
    part = ops::pad(ops::reshape(part, dense), pads);
    acc = k == 0 ? part : acc + part;
    for (int a = d - 1; a >= 0; --a) {  // the next tap, row-major
      if (++tap[a] < g.shape(1 + d + a)) break;
      tap[a] = 0;
    }
  }
  // Back from the padded, dilated frame: undo negative padding (a crop),
  // skip the low padding, keep every idil-th position.
  std::vector<std::pair<int, int>> uncrop(static_cast<size_t>(d + 2), {0, 0});
  for (int a = 0; a < d; ++a)
    uncrop[1 + a] = {std::max(0, -p.padding_lo()[a]),
                     std::max(0, -p.padding_hi()[a])};
  acc = ops::pad(acc, uncrop);
  for (int a = 0; a < d; ++a)
    acc = rules::take_range(acc, 1 + a, std::max(0, p.padding_lo()[a]),
                            x.shape(1 + a), p.input_dilation()[a]);
  return acc;
}

}  // namespace

Arrays Im2Col::vjp(const Arrays& primals, const Arrays& cotangents,
                   const std::vector<int>& argnums, const Arrays&) const {
  Arrays out;
  for (int arg : argnums)  // the weight is read for its shape only
    out.push_back(arg == 0 ? col2im(*this, primals[0], cotangents[0])
                           : rules::zeros_of(primals[arg]));
  return out;
}

Arrays Im2Col::jvp(const Arrays& primals, const Arrays& tangents,
                   const std::vector<int>& argnums) const {
  const Array* t = tangent_of(0, tangents, argnums);
  if (t) return rules::rebuild(*this, {*t, primals[1]});
  auto spec = output_specs(primals);
  return {ops::zeros(spec->at(0).shape, primals[0].dtype())};
}

// Keys are uint32 and the bits integers: nothing is differentiable.
Arrays RandomBits::vjp(const Arrays& primals, const Arrays&,
                       const std::vector<int>& argnums, const Arrays&) const {
  Arrays out;
  for (int arg : argnums) out.push_back(rules::zeros_of(primals[arg]));
  return out;
}

Arrays RandomBits::jvp(const Arrays& primals, const Arrays&,
                       const std::vector<int>&) const {
  auto spec = output_specs(primals);
  return {ops::zeros(spec->at(0).shape, spec->at(0).dtype)};
}

}  // namespace nuvec
