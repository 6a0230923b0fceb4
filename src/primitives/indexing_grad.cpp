// vjp and jvp rules of gathers, scatters, sorts and scans. A gather's vjp
// adds the cotangent back at the gathered positions; sorts and partitions
// are gathers through their own permutation; scans are rewritten as forward
// inclusive scans (reversed scans run on the flipped axis, an exclusive scan
// is the inclusive one shifted by one position).
#include <cmath>

#include "nuvec/ops/ops.h"
#include "nuvec/primitives/indexing.h"
#include "nuvec/primitives/sort.h"
#include "ops/builder.h"
#include "primitives/grad_util.h"
#include "primitives/rules.h"

namespace nuvec {

namespace {

// The tangent given for input `arg`, or zeros like that input.
Array tangent_or_zeros(int arg, const Arrays& primals, const Arrays& tangents,
                       const std::vector<int>& argnums) {
  for (size_t i = 0; i < argnums.size(); ++i)
    if (argnums[i] == arg) return tangents[i];
  return rules::zeros_of(primals[arg]);
}

// A Scatter of another type on flat x (the rules need set, add and multiply
// whatever the node's own type).
Array scatter(Scatter::Type type, const Array& x, const Array& pos,
              const Array& upd) {
  return ops::impl::build1(ops::impl::make<Scatter>(type), {x, pos, upd},
                             {}, "scatter", Location::none());
}

Array gather(const Array& x, const Array& pos) { return ops::take(x, pos, 0); }

}  // namespace

Arrays Take::vjp(const Arrays& primals, const Arrays& cotangents,
                 const std::vector<int>& argnums, const Arrays&) const {
  const Array &x = primals[0], &idx = primals[1], &g = cotangents[0];
  Arrays out;
  for (int arg : argnums) {
    if (arg != 0 || x.size() == 0 || idx.size() == 0) {
      out.push_back(rules::zeros_of(primals[arg]));
      continue;
    }
    // As (outer, n, inner) with the indices along the middle axis.
    int64_t outer = 1, inner = 1;
    for (int a = 0; a < axis_; ++a) outer *= x.shape(a);
    for (int a = axis_ + 1; a < x.ndim(); ++a) inner *= x.shape(a);
    int o = static_cast<int>(outer), i = static_cast<int>(inner);
    int k = static_cast<int>(idx.size());
    Array g3 = ops::reshape(g, {o, k, i});
    Array zeros = ops::zeros({o, x.shape(axis_), i}, g.dtype());
    Array r = ops::scatter_add_axis(zeros, ops::reshape(idx, {1, k, 1}), g3, 1);
    out.push_back(ops::reshape(r, x.shape()));
  }
  return out;
}

Arrays Take::jvp(const Arrays& primals, const Arrays& tangents,
                 const std::vector<int>&) const {
  return rules::rebuild(*this, {tangents[0], primals[1]});
}

namespace {

// Per update k of a multiplying scatter: the product of the other updates
// at its position, exact when some of them are zero.
Array other_factors(const Array& x, const Array& pos, const Array& u) {
  Array is_zero = ops::equal(u, 0);
  Array safe = ops::where(is_zero, ops::ones_like(u), u);
  Array zeros_at = gather(scatter(Scatter::Type::add, ops::zeros_like(x), pos,
                                  is_zero.astype(x.dtype())),
                          pos);
  Array nonzero_product = gather(
      scatter(Scatter::Type::multiply, ops::ones_like(x), pos, safe), pos);
  Array when_nonzero =
      ops::where(ops::equal(zeros_at, 0), nonzero_product / safe, 0);
  Array when_zero = ops::where(ops::equal(zeros_at, 1), nonzero_product, 0);
  return ops::where(is_zero, when_zero, when_nonzero);
}

// For maximum and minimum scatters: which of x and the updates reached the
// output, and how many tie at each position (ties share the cotangent, as
// Reduce's max and min).
struct Winners {
  Array x_hit, u_hit, count;
};
Winners winners(const Array& x, const Array& pos, const Array& u,
                const Array& out) {
  Winners w;
  w.x_hit = ops::equal(x, out).astype(x.dtype());
  w.u_hit = ops::equal(u, gather(out, pos)).astype(x.dtype());
  w.count =
      w.x_hit + scatter(Scatter::Type::add, ops::zeros_like(x), pos, w.u_hit);
  return w;
}

}  // namespace

Arrays Scatter::vjp(const Arrays& primals, const Arrays& cotangents,
                    const std::vector<int>& argnums,
                    const Arrays& outputs) const {
  const Array &x = primals[0], &pos = primals[1], &u = primals[2],
              &g = cotangents[0];
  Arrays out;
  for (int arg : argnums) {
    if (arg == 1) {  // positions: integers
      out.push_back(rules::zeros_of(pos));
      continue;
    }
    bool to_x = arg == 0;
    switch (type_) {
      case Type::set:
        if (to_x) {
          out.push_back(scatter(Type::set, g, pos, ops::zeros_like(u)));
        } else {  // only the last write to a position survives
          Array ids = ops::reshape(
              ops::arange(0.0, double(pos.size()), 1.0, int32), pos.shape());
          Array last =
              scatter(Type::set, ops::full(x.shape(), -1.0, int32), pos, ids);
          out.push_back(ops::where(ops::equal(gather(last, pos), ids),
                                   gather(g, pos), 0));
        }
        break;
      case Type::add:
        out.push_back(to_x ? g : gather(g, pos));
        break;
      case Type::multiply:
        out.push_back(
            to_x ? g * scatter(Type::multiply, ops::ones_like(x), pos, u)
                 : gather(g * x, pos) * other_factors(x, pos, u));
        break;
      case Type::maximum:
      case Type::minimum: {
        Array y = outputs[0].is_failed() ? rules::rebuild(*this, primals)[0]
                                         : outputs[0];
        Winners w = winners(x, pos, u, y);
        out.push_back(to_x ? g * w.x_hit / w.count
                           : gather(g / w.count, pos) * w.u_hit);
        break;
      }
    }
  }
  return out;
}

Arrays Scatter::jvp(const Arrays& primals, const Arrays& tangents,
                    const std::vector<int>& argnums) const {
  const Array &x = primals[0], &pos = primals[1], &u = primals[2];
  Array tx = tangent_or_zeros(0, primals, tangents, argnums);
  Array tu = tangent_or_zeros(2, primals, tangents, argnums);
  switch (type_) {
    case Type::set:
    case Type::add:
      return rules::rebuild(*this, {tx, pos, tu});
    case Type::multiply: {
      Array total = scatter(Type::multiply, ops::ones_like(x), pos, u);
      Array spread = scatter(Type::add, ops::zeros_like(x), pos,
                             tu * other_factors(x, pos, u));
      return {tx * total + x * spread};
    }
    case Type::maximum:
    case Type::minimum:
      break;
  }
  Winners w = winners(x, pos, u, rules::rebuild(*this, primals)[0]);
  return {(tx * w.x_hit +
           scatter(Type::add, ops::zeros_like(x), pos, tu * w.u_hit)) /
          w.count};
}

namespace {

// The permutation a sort or partition applied along `axis`.
template <PrimitiveId Id>
Array order_of(const SortPrimitive<Id>& p, const Array& x) {
  if constexpr (Id == PrimitiveId::Sort)
    return ops::argsort(x, p.axis());
  else
    return ops::argpartition(x, p.kth(), p.axis());
}

// g added back along `axis` at the positions `from` it was read from.
Array add_back(const Array& g, const Array& from, int axis) {
  return ops::scatter_add_axis(ops::zeros(g.shape(), g.dtype()), from, g, axis);
}

}  // namespace

template <>
Arrays SortPrimitive<PrimitiveId::Sort>::vjp(const Arrays& primals,
                                             const Arrays& cotangents,
                                             const std::vector<int>&,
                                             const Arrays&) const {
  return {add_back(cotangents[0], order_of(*this, primals[0]), axis_)};
}

template <>
Arrays SortPrimitive<PrimitiveId::Sort>::jvp(const Arrays& primals,
                                             const Arrays& tangents,
                                             const std::vector<int>&) const {
  return {
      ops::take_along_axis(tangents[0], order_of(*this, primals[0]), axis_)};
}

// Indices are piecewise constant: zero derivatives.
template <>
Arrays SortPrimitive<PrimitiveId::ArgSort>::vjp(const Arrays& primals,
                                                const Arrays&,
                                                const std::vector<int>&,
                                                const Arrays&) const {
  return {rules::zeros_of(primals[0])};
}

template <>
Arrays SortPrimitive<PrimitiveId::ArgSort>::jvp(const Arrays& primals,
                                                const Arrays&,
                                                const std::vector<int>&) const {
  return {ops::zeros(primals[0].shape(), uint32)};
}

template <>
Arrays SortPrimitive<PrimitiveId::Partition>::vjp(const Arrays& primals,
                                                  const Arrays& cotangents,
                                                  const std::vector<int>&,
                                                  const Arrays&) const {
  return {add_back(cotangents[0], order_of(*this, primals[0]), axis_)};
}

template <>
Arrays SortPrimitive<PrimitiveId::Partition>::jvp(
    const Arrays& primals, const Arrays& tangents,
    const std::vector<int>&) const {
  return {
      ops::take_along_axis(tangents[0], order_of(*this, primals[0]), axis_)};
}

template <>
Arrays SortPrimitive<PrimitiveId::ArgPartition>::vjp(const Arrays& primals,
                                                     const Arrays&,
                                                     const std::vector<int>&,
                                                     const Arrays&) const {
  return {rules::zeros_of(primals[0])};
}

template <>
Arrays SortPrimitive<PrimitiveId::ArgPartition>::jvp(
    const Arrays& primals, const Arrays&, const std::vector<int>&) const {
  return {ops::zeros(primals[0].shape(), uint32)};
}

namespace {

// For cummax and cummin: the index each output was read from (the latest
// element equal to the running extreme).
Array running_extreme(Scan::Type type, const Array& x, int axis) {
  Array y =
      type == Scan::Type::max ? ops::cummax(x, axis) : ops::cummin(x, axis);
  Array at = ops::where(ops::equal(x, y), rules::positions(x.shape(), axis), 0);
  return ops::cummax(at, axis);
}

// Scans as linear recurrences in the forward inclusive frame. cumprod:
// y_i = x_i y_{i-1}, so dy_i = x_i dy_{i-1} + E_i t_i (E the exclusive
// product); logcumsumexp: dy_i = exp(y_{i-1} - y_i) dy_{i-1} +
// exp(x_i - y_i) t_i. Their vjps run the same recurrence backwards. Nothing
// is divided (exact where x has zeros, to every order) and no weight
// exceeds 1 for logcumsumexp (nothing overflows).
struct Recurrence {
  Array a, c;  // s_i = a_i s_{i-1} + c_i v_i
};

Recurrence recurrence_of(Scan::Type type, const Array& x, int axis) {
  if (type == Scan::Type::prod)
    return {x, ops::cumprod(x, axis, false, false)};
  // Where y is -inf every x it covers is too: weight 0, not -inf - -inf.
  Array y = ops::logcumsumexp(x, axis);
  Array empty = ops::isneginf(y);
  Array y_prev = rules::shift(y, axis, true, 1, -INFINITY);
  Array zero = ops::zeros_like(y);
  return {ops::where(empty, zero, ops::exp(y_prev - y)),
          ops::where(empty, zero, ops::exp(x - y))};
}

// The tangent of a forward inclusive scan of `type` along `axis`.
Array inclusive_jvp(Scan::Type type, const Array& x, const Array& t, int axis) {
  switch (type) {
    case Scan::Type::sum:
      return ops::cumsum(t, axis);
    case Scan::Type::prod:
    case Scan::Type::logaddexp: {
      Recurrence r = recurrence_of(type, x, axis);
      return rules::linear_recurrence(r.a, r.c * t, axis, false);
    }
    case Scan::Type::max:
    case Scan::Type::min:
      break;
  }
  // cummax and cummin are gathers from the running extreme.
  return ops::take_along_axis(t, running_extreme(type, x, axis), axis);
}

Array inclusive_vjp(Scan::Type type, const Array& x, const Array& g, int axis) {
  switch (type) {
    case Scan::Type::sum:
      return ops::cumsum(g, axis, true, true);
    case Scan::Type::prod:
    case Scan::Type::logaddexp: {
      // xb_j = c_j S_j with S_j = g_j + a_{j+1} S_{j+1}.
      Recurrence r = recurrence_of(type, x, axis);
      Array next = rules::shift(r.a, axis, false);
      return r.c * rules::linear_recurrence(next, g, axis, true);
    }
    case Scan::Type::max:
    case Scan::Type::min:
      break;
  }
  return add_back(g, running_extreme(type, x, axis), axis);
}

}  // namespace

Arrays Scan::vjp(const Arrays& primals, const Arrays& cotangents,
                 const std::vector<int>&, const Arrays&) const {
  auto frame = [&](const Array& a) {
    return reverse_ ? ops::flip(a, axis_) : a;
  };
  Array g = frame(cotangents[0]);
  if (!inclusive_) g = rules::shift(g, axis_, false);
  return {frame(inclusive_vjp(type_, frame(primals[0]), g, axis_))};
}

Arrays Scan::jvp(const Arrays& primals, const Arrays& tangents,
                 const std::vector<int>&) const {
  auto frame = [&](const Array& a) {
    return reverse_ ? ops::flip(a, axis_) : a;
  };
  Array x = frame(primals[0]), t = frame(tangents[0]);
  Array dy = inclusive_jvp(type_, x, t, axis_);
  if (!inclusive_) dy = rules::shift(dy, axis_, true);
  return {frame(dy)};
}

}  // namespace nuvec
