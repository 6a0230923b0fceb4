// Transform rules of the quantization primitives (docs/quantization.md,
// "Transforms"). Derivatives flow to the floating operands (x, the dense
// matrices of gather_mm, and the affine scales and biases), never through
// the integer codes; quantize is treated as a constant (zero derivative).
// vmap folds the batch into the primitives' own batch or gather axes.
#include <numeric>

#include "nuvec/ops/ops.h"
#include "nuvec/primitives/quantized.h"
#include "ops/builder.h"
#include "primitives/rules.h"

namespace nuvec {

namespace {

using ops::impl::make;

Array build1(std::shared_ptr<const Primitive> p, Arrays in) {
  return ops::impl::build1(std::move(p), std::move(in), {}, "vmap", NUVEC_LOC);
}

// A tangent or cotangent for input i, or zeros where there is none.
Array tangent_or_zero(const Arrays& primals, const Arrays& tangents,
                      const std::vector<int>& argnums, int i) {
  for (size_t k = 0; k < argnums.size(); ++k)
    if (argnums[k] == i) return tangents[k];
  return rules::zeros_of(primals[i]);
}

bool has_arg(const std::vector<int>& argnums, int i) {
  return std::find(argnums.begin(), argnums.end(), i) != argnums.end();
}

// The integer codes of a packed affine matrix as values of `t` (exact:
// codes are below 256).
Array codes_of(const QuantSpec& q, const Array& w, const Array& scales, DType t) {
  Array one = ops::ones(scales.shape(), t), zero = ops::zeros(scales.shape(), t);
  return build1(make<Dequantize>(q, t), {w, one, zero});
}

// d/dscales and d/dbiases of W = scale * q + bias for the cotangent of W
// (dw, W's shape): sums over each group.
std::pair<Array, Array> group_grads(const QuantSpec& q, const Array& w, const Array& scales,
                                    const Array& dw) {
  Shape g = scales.shape();
  g.push_back(q.group_size);
  Array c = ops::reshape(dw, g);
  Array codes = ops::reshape(codes_of(q, w, scales, dw.dtype()), g);
  Array ds = ops::astype(ops::sum(ops::multiply(c, codes), -1), scales.dtype());
  Array db = ops::astype(ops::sum(c, -1), scales.dtype());
  return {ds, db};
}

// A one-hot [count, I] matrix (dtype t) of the flat indices `idx` (clamped
// into range): out = onehot @ per_item sums the items of each batch entry.
Array scatter_items(const Array& idx, int64_t count, const Array& per_item, const Shape& target) {
  Array flat = ops::minimum(ops::reshape(idx, {-1}), nuvec::array(uint32_t(count - 1)));
  Array hot = ops::astype(ops::equal(ops::expand_dims(ops::arange(0, double(count), 1.0, uint32), 1),
                                     ops::expand_dims(flat, 0)),
                          per_item.dtype());
  Array items = ops::reshape(per_item, {int(flat.shape(0)), -1});
  return ops::reshape(ops::matmul(hot, items), target);
}

int64_t batch_count(const Array& a) {
  int64_t n = 1;
  for (int d = 0; d + 2 < a.ndim(); ++d) n *= a.shape(d);
  return n;
}

Array flat_arange_like(const Array& idx) {
  return ops::reshape(ops::arange(0, double(idx.size()), 1.0, uint32), idx.shape());
}

}  // namespace

// ---- Quantize: a constant.

Arrays Quantize::vjp(const Arrays& primals, const Arrays&, const std::vector<int>&,
                     const Arrays&) const {
  return {rules::zeros_of(primals[0])};
}

Arrays Quantize::jvp(const Arrays& primals, const Arrays&, const std::vector<int>&) const {
  auto specs = output_specs(primals);
  Arrays out;
  for (const auto& o : *specs) out.push_back(ops::zeros(o.shape, o.dtype));
  return out;
}

std::pair<Arrays, std::vector<int>> Quantize::vmap(const Arrays& in,
                                                   const std::vector<int>& axes) const {
  Arrays out = ops::impl::build(shared_from_this(), {rules::batch_front(in[0], axes[0])}, {},
                                "vmap", NUVEC_LOC);
  return {out, std::vector<int>(out.size(), 0)};
}

// ---- Dequantize: linear in the scales and biases.

Arrays Dequantize::vjp(const Arrays& primals, const Arrays& cts, const std::vector<int>& argnums,
                       const Arrays&) const {
  Arrays out;
  if (!q_.has_biases()) {
    for (int i : argnums) out.push_back(rules::zeros_of(primals[i]));
    return out;
  }
  auto [ds, db] = group_grads(q_, primals[0], primals[1], ops::astype(cts[0], primals[1].dtype()));
  for (int i : argnums) out.push_back(i == 0 ? rules::zeros_of(primals[0]) : i == 1 ? ds : db);
  return out;
}

Arrays Dequantize::jvp(const Arrays& primals, const Arrays& tangents,
                       const std::vector<int>& argnums) const {
  if (!q_.has_biases()) {
    auto specs = output_specs(primals);
    return {ops::zeros((*specs)[0].shape, dtype_)};
  }
  Array ts = tangent_or_zero(primals, tangents, argnums, 1);
  Array tb = tangent_or_zero(primals, tangents, argnums, 2);
  return {build1(shared_from_this(), {primals[0], ts, tb})};
}

std::pair<Arrays, std::vector<int>> Dequantize::vmap(const Arrays& in,
                                                     const std::vector<int>& axes) const {
  const int n = rules::batch_size(in, axes);
  Arrays b;
  for (size_t i = 0; i < in.size(); ++i) b.push_back(rules::front_sized(in[i], axes[i], n));
  return {{build1(shared_from_this(), b)}, {0}};
}

// ---- QuantizedMatmul.

Arrays QuantizedMatmul::vjp(const Arrays& primals, const Arrays& cts,
                            const std::vector<int>& argnums, const Arrays&) const {
  const Array &x = primals[0], &w = primals[1], &c = cts[0];
  Arrays packed(primals.begin() + 1, primals.end());
  Arrays out;
  for (int i : argnums) {
    if (i == 0) {
      Arrays in{c};
      in.insert(in.end(), packed.begin(), packed.end());
      out.push_back(build1(make<QuantizedMatmul>(q_, !transpose_), in));
    } else if (i == 1) {
      out.push_back(rules::zeros_of(w));
    } else {
      // dW: [.., N, K] = c^T x (transpose) or x^T c, over every row.
      Array xr = x, cr = c;
      if (w.ndim() == 2) {
        xr = ops::reshape(x, {-1, x.shape(-1)});
        cr = ops::reshape(c, {-1, c.shape(-1)});
      }
      Array dw = transpose_ ? ops::matmul(ops::swapaxes(cr, -1, -2), xr)
                            : ops::matmul(ops::swapaxes(xr, -1, -2), cr);
      auto [ds, db] = group_grads(q_, w, primals[2], dw);
      out.push_back(i == 2 ? ds : db);
    }
  }
  return out;
}

Arrays QuantizedMatmul::jvp(const Arrays& primals, const Arrays& tangents,
                            const std::vector<int>& argnums) const {
  Array t;
  bool any = false;
  if (has_arg(argnums, 0)) {
    Arrays in = primals;
    in[0] = tangent_or_zero(primals, tangents, argnums, 0);
    t = build1(shared_from_this(), in), any = true;
  }
  if (q_.has_biases() && (has_arg(argnums, 2) || has_arg(argnums, 3))) {
    Arrays in = primals;
    in[2] = tangent_or_zero(primals, tangents, argnums, 2);
    in[3] = tangent_or_zero(primals, tangents, argnums, 3);
    Array u = build1(shared_from_this(), in);
    t = any ? ops::add(t, u) : u, any = true;
  }
  if (!any) t = ops::zeros((*output_specs(primals))[0].shape, primals[0].dtype());
  return {t};
}

std::pair<Arrays, std::vector<int>> QuantizedMatmul::vmap(const Arrays& in,
                                                          const std::vector<int>& axes) const {
  const bool packed_batched =
      std::any_of(axes.begin() + 1, axes.end(), [](int a) { return a >= 0; });
  if (!packed_batched && in[1].ndim() == 2) {  // every leading axis of x is rows
    Arrays b = in;
    b[0] = rules::batch_front(in[0], axes[0]);
    return {{build1(shared_from_this(), b)}, {0}};
  }
  const int n = rules::batch_size(in, axes);
  Arrays b;
  for (size_t i = 0; i < in.size(); ++i) b.push_back(rules::front_sized(in[i], axes[i], n));
  if (in[1].ndim() > 2) return {{build1(shared_from_this(), b)}, {0}};
  // A 2-D matrix gains the batch axis: x [n, rows..., K] as [n, R, K].
  Shape xs = b[0].shape();
  b[0] = ops::reshape(b[0], {n, -1, xs.back()});
  Array y = build1(shared_from_this(), b);
  xs.back() = y.shape(-1);
  return {{ops::reshape(y, xs)}, {0}};
}

// ---- GatherMM and GatherQMM: the batch joins the gathered axis.

namespace {

// Inputs of a gathered product with the vmap batch folded in: operands
// [n * E, ...] (their batch flattened) and indices offset by item * E.
struct Folded {
  Array operand, lhs, rhs;
};

Array fold_operand(const Array& a, int axis, int n, int64_t* count) {
  const int64_t e = batch_count(axis >= 0 ? ops::take(a, 0, axis) : a);
  *count = e;
  if (axis < 0) return a;
  Array f = rules::batch_front(a, axis);
  Shape s{-1, f.shape(-2), f.shape(-1)};
  (void)n;
  return ops::reshape(f, s);
}

Array fold_index(const Array& idx, int axis, int n, int64_t count, bool operand_batched) {
  Array f = rules::front_sized(idx, axis, n);
  if (!operand_batched) return f;
  Shape s(f.ndim(), 1);
  s[0] = n;
  Array off = ops::reshape(ops::multiply(ops::arange(0, double(n), 1.0, uint32),
                                         nuvec::array(uint32_t(count))),
                           s);
  return ops::add(ops::minimum(f, nuvec::array(uint32_t(count - 1))), off);
}

}  // namespace

Arrays GatherMM::vjp(const Arrays& primals, const Arrays& cts, const std::vector<int>& argnums,
                     const Arrays&) const {
  const Array &a = primals[0], &b = primals[1], &lhs = primals[2], &rhs = primals[3];
  const Array& c = cts[0];
  Array items = flat_arange_like(lhs);
  Arrays out;
  for (int i : argnums) {
    if (i == 0) {  // da[lhs] += c @ b[rhs]^T
      Array g = build1(make<GatherMM>(false),
                       {ops::reshape(c, {-1, c.shape(-2), c.shape(-1)}),
                        ops::swapaxes(b, -1, -2), ops::reshape(items, {-1}),
                        ops::reshape(rhs, {-1})});
      out.push_back(scatter_items(lhs, batch_count(a), g, a.shape()));
    } else if (i == 1) {  // db[rhs] += a[lhs]^T @ c
      Array g = build1(make<GatherMM>(false),
                       {ops::swapaxes(a, -1, -2), ops::reshape(c, {-1, c.shape(-2), c.shape(-1)}),
                        ops::reshape(lhs, {-1}), ops::reshape(items, {-1})});
      out.push_back(scatter_items(rhs, batch_count(b), g, b.shape()));
    } else {
      out.push_back(rules::zeros_of(primals[i]));
    }
  }
  return out;
}

Arrays GatherMM::jvp(const Arrays& primals, const Arrays& tangents,
                     const std::vector<int>& argnums) const {
  Array ta = tangent_or_zero(primals, tangents, argnums, 0);
  Array tb = tangent_or_zero(primals, tangents, argnums, 1);
  Array u = build1(shared_from_this(), {ta, primals[1], primals[2], primals[3]});
  Array v = build1(shared_from_this(), {primals[0], tb, primals[2], primals[3]});
  return {ops::add(u, v)};
}

std::pair<Arrays, std::vector<int>> GatherMM::vmap(const Arrays& in,
                                                   const std::vector<int>& axes) const {
  const int n = rules::batch_size(in, axes);
  int64_t ea, eb;
  Array a = fold_operand(in[0], axes[0], n, &ea), b = fold_operand(in[1], axes[1], n, &eb);
  Array lhs = fold_index(in[2], axes[2], n, ea, axes[0] >= 0);
  Array rhs = fold_index(in[3], axes[3], n, eb, axes[1] >= 0);
  return {{build1(make<GatherMM>(false), {a, b, lhs, rhs})}, {0}};
}

Arrays GatherQMM::vjp(const Arrays& primals, const Arrays& cts, const std::vector<int>& argnums,
                      const Arrays&) const {
  const size_t np = q_.has_biases() ? 3 : 2;
  const Array& x = primals[0];
  const Array &lhs = primals[np + 1], &rhs = primals[np + 2];
  Arrays out;
  for (int i : argnums) {
    if (i != 0) {
      out.push_back(rules::zeros_of(primals[i]));
      continue;
    }
    const Array& c = cts[0];
    Arrays in{ops::reshape(c, {-1, c.shape(-2), c.shape(-1)})};
    for (size_t k = 1; k <= np; ++k) in.push_back(primals[k]);
    in.push_back(ops::reshape(flat_arange_like(lhs), {-1}));
    in.push_back(ops::reshape(rhs, {-1}));
    Array g = build1(make<GatherQMM>(q_, !transpose_, false), in);
    out.push_back(scatter_items(lhs, batch_count(x), g, x.shape()));
  }
  return out;
}

Arrays GatherQMM::jvp(const Arrays& primals, const Arrays& tangents,
                      const std::vector<int>& argnums) const {
  Arrays in = primals;
  in[0] = tangent_or_zero(primals, tangents, argnums, 0);
  return {build1(shared_from_this(), in)};
}

std::pair<Arrays, std::vector<int>> GatherQMM::vmap(const Arrays& in,
                                                    const std::vector<int>& axes) const {
  const size_t np = q_.has_biases() ? 3 : 2;
  const int n = rules::batch_size(in, axes);
  bool packed_batched = false;
  for (size_t k = 1; k <= np; ++k) packed_batched |= axes[k] >= 0;
  int64_t ex, ew = batch_count(in[1]);
  Array x = fold_operand(in[0], axes[0], n, &ex);
  Arrays args{x};
  if (packed_batched) {
    for (size_t k = 1; k <= np; ++k) {
      Array f = rules::front_sized(in[k], axes[k], n);
      args.push_back(ops::reshape(f, {-1, f.shape(-2), f.shape(-1)}));
    }
    ew = batch_count(in[1].ndim() && axes[1] >= 0 ? ops::take(in[1], 0, axes[1]) : in[1]);
  } else {
    for (size_t k = 1; k <= np; ++k) args.push_back(in[k]);
  }
  args.push_back(fold_index(in[np + 1], axes[np + 1], n, ex, axes[0] >= 0));
  args.push_back(fold_index(in[np + 2], axes[np + 2], n, ew, packed_batched));
  return {{build1(make<GatherQMM>(q_, transpose_, false), args)}, {0}};
}

}  // namespace nuvec
