// The fast primitives (include/nuvec/primitives/fast.h): shape-and-dtype
// rules, composites, and transform rules. Without a dedicated rule, vjp and
// jvp differentiate the composite and vmap vectorizes it (as MLX's
// fast::Custom); row-wise primitives whose per-feature parameters are not
// batched run again with the batch in front.
#include "nuvec/primitives/fast.h"

#include <numeric>
#include <ostream>

#include "fast/composite.h"
#include "fast/route.h"
#include "nuvec/ops/ops.h"
#include "nuvec/transforms/flat.h"
#include "ops/builder.h"
#include "primitives/rules.h"

namespace nuvec {

namespace {

OutputSpec dense(Shape shape, DType dtype) {
  OutputSpec o;
  o.shape = std::move(shape);
  o.dtype = dtype;
  return o;
}

Expected<std::vector<OutputSpec>> spec_error(ErrorKind k, std::string m) {
  return op_error(k, std::move(m));
}

// A floating x of at least 1 dimension and per-feature parameters of its
// dtype: 0-d (none) or [x.shape(-1)].
Expected<std::vector<OutputSpec>> row_specs(const Arrays& in, int rows, int outputs) {
  const Array& x = in[0];
  if (x.ndim() == 0 || !is_floating(x.dtype()))
    return spec_error(ErrorKind::invalid_argument, "x must be floating with at least 1 dimension");
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i].dtype() != x.dtype())
      return spec_error(ErrorKind::unsupported_dtype, "inputs must share x's dtype");
    if (int(i) < rows) {
      if (in[i].shape() != x.shape())
        return spec_error(ErrorKind::shape_mismatch, "row inputs must have x's shape");
    } else if (in[i].ndim() != 0 && (in[i].ndim() != 1 || in[i].shape(0) != x.shape(-1))) {
      return spec_error(ErrorKind::shape_mismatch, "parameters must be 0-d or [x.shape(-1)]");
    }
  }
  return std::vector<OutputSpec>(outputs, dense(x.shape(), x.dtype()));
}

Array stats(const Array& x) { return ops::astype(x, fast::composite::stats_dtype(x.dtype())); }

std::vector<int> leading_axes(const Array& g) {
  std::vector<int> ax(g.ndim() - 1);
  std::iota(ax.begin(), ax.end(), 0);
  return ax;
}

Arrays pick(const Arrays& all, const std::vector<int>& argnums) {
  Arrays out;
  for (int a : argnums) out.push_back(all[a]);
  return out;
}

}  // namespace

// ---- Rules through the composite.

Arrays FastPrimitive::vjp(const Arrays& primals, const Arrays& cotangents,
                          const std::vector<int>& argnums, const Arrays&) const {
  FlatFunction f = [this](const Arrays& in) { return fallback(in); };
  auto seeds = [&](const Arrays&) { return cotangents; };
  return pick(detail::vjp(f, primals, seeds, argnums).grads, argnums);
}

Arrays FastPrimitive::jvp(const Arrays& primals, const Arrays& tangents,
                          const std::vector<int>& argnums) const {
  FlatFunction f = [this](const Arrays& in) { return fallback(in); };
  return detail::jvp(f, primals, tangents, argnums).grads;
}

std::pair<Arrays, std::vector<int>> FastPrimitive::vmap(const Arrays& inputs,
                                                        const std::vector<int>& axes) const {
  const int rows = row_inputs();
  bool params_batched = false;
  for (size_t i = rows; i < inputs.size(); ++i) params_batched = params_batched || axes[i] >= 0;
  if (rows > 0 && !params_batched) {
    const int n = rules::batch_size(inputs, axes);
    Arrays in = inputs;
    for (int i = 0; i < rows; ++i) in[i] = rules::front_sized(inputs[i], axes[i], n);
    Arrays outs = rules::rebuild(*this, in);
    return {outs, std::vector<int>(outs.size(), 0)};
  }
  FlatFunction f = [this](const Arrays& in) { return fallback(in); };
  auto zeros = [](const Arrays& outs) { return std::vector<int>(outs.size(), 0); };
  Arrays outs = detail::vmap(f, inputs, axes, zeros);
  return {outs, std::vector<int>(outs.size(), 0)};
}

// ---- RMSNorm, LayerNorm, AddRMSNorm.

Expected<std::vector<OutputSpec>> RMSNorm::output_specs(const std::vector<Array>& in) const {
  if (in.size() != 2) return spec_error(ErrorKind::internal, "RMSNorm takes x and weight");
  return row_specs(in, 1, 1);
}
Arrays RMSNorm::fallback(const Arrays& in) const {
  return {fast::composite::rms_norm(in[0], in[1], eps_)};
}
Arrays RMSNorm::vjp(const Arrays& primals, const Arrays& cotangents,
                    const std::vector<int>& argnums, const Arrays&) const {
  const Array& x = primals[0];
  const Array& w = primals[1];
  Array xf = stats(x), wf = stats(w), g = stats(cotangents[0]);
  Array n = ops::rsqrt(ops::add(ops::mean(ops::square(xf), Axes(-1), true),
                                nuvec::array(eps_, xf.dtype())));
  Array gw = ops::multiply(g, wf);
  Array t = ops::mean(ops::multiply(gw, xf), Axes(-1), true);
  Array dx = ops::subtract(ops::multiply(gw, n),
                           ops::multiply(ops::multiply(xf, t), ops::multiply(n, ops::square(n))));
  Arrays out;
  for (int a : argnums) {
    if (a == 0) out.push_back(ops::astype(dx, x.dtype()));
    else if (w.ndim() == 0) out.push_back(rules::zeros_of(w));
    else out.push_back(ops::astype(ops::sum(ops::multiply(g, ops::multiply(xf, n)),
                                            Axes(leading_axes(g)), false),
                                   w.dtype()));
  }
  return out;
}

Expected<std::vector<OutputSpec>> LayerNorm::output_specs(const std::vector<Array>& in) const {
  if (in.size() != 3) return spec_error(ErrorKind::internal, "LayerNorm takes x, weight, bias");
  return row_specs(in, 1, 1);
}
Arrays LayerNorm::fallback(const Arrays& in) const {
  return {fast::composite::layer_norm(in[0], in[1], in[2], eps_)};
}
Arrays LayerNorm::vjp(const Arrays& primals, const Arrays& cotangents,
                      const std::vector<int>& argnums, const Arrays&) const {
  const Array& x = primals[0];
  const Array& w = primals[1];
  const Array& b = primals[2];
  Array xf = stats(x), wf = stats(w), g = stats(cotangents[0]);
  Array mu = ops::mean(xf, Axes(-1), true);
  Array xc = ops::subtract(xf, mu);
  Array n = ops::rsqrt(ops::add(ops::mean(ops::square(xc), Axes(-1), true),
                                nuvec::array(eps_, xf.dtype())));
  Array xhat = ops::multiply(xc, n);
  Array wg = ops::multiply(wf, g);
  Array dx = ops::multiply(
      n, ops::subtract(ops::subtract(wg, ops::mean(wg, Axes(-1), true)),
                       ops::multiply(xhat, ops::mean(ops::multiply(wg, xhat), Axes(-1), true))));
  Arrays out;
  for (int a : argnums) {
    if (a == 0) out.push_back(ops::astype(dx, x.dtype()));
    else if (a == 1)
      out.push_back(w.ndim() == 0 ? rules::zeros_of(w)
                                  : ops::astype(ops::sum(ops::multiply(g, xhat),
                                                         Axes(leading_axes(g)), false),
                                                w.dtype()));
    else
      out.push_back(b.ndim() == 0 ? rules::zeros_of(b)
                                  : ops::astype(ops::sum(g, Axes(leading_axes(g)), false),
                                                b.dtype()));
  }
  return out;
}

Expected<std::vector<OutputSpec>> AddRMSNorm::output_specs(const std::vector<Array>& in) const {
  if (in.size() != 3) return spec_error(ErrorKind::internal, "AddRMSNorm takes x, residual, weight");
  return row_specs(in, 2, 2);
}
Arrays AddRMSNorm::fallback(const Arrays& in) const {
  Array h = ops::add(in[0], in[1]);
  return {h, fast::composite::rms_norm(h, in[2], eps_)};
}

// ---- RoPE.

Expected<std::vector<OutputSpec>> RoPE::output_specs(const std::vector<Array>& in) const {
  if (in.size() != size_t(has_freqs_ ? 3 : 2))
    return spec_error(ErrorKind::internal, "RoPE takes x, offset and, with freqs, freqs");
  const Array& x = in[0];
  if (x.ndim() < 3 || !is_floating(x.dtype()))
    return spec_error(ErrorKind::invalid_argument, "x must be floating with at least 3 dimensions");
  if (dims_ <= 0 || dims_ % 2 || dims_ > x.shape(-1))
    return spec_error(ErrorKind::invalid_argument, "dims must be even, in (0, x.shape(-1)]");
  const Array& off = in[1];
  if (off.dtype() != int32 || !(off.ndim() == 0 || (off.ndim() == 1 && off.shape(0) == x.shape(0))))
    return spec_error(ErrorKind::invalid_argument, "offset must be int32, 0-d or [B]");
  if (has_freqs_ && (in[2].dtype() != float32 || in[2].ndim() != 1 || in[2].shape(0) != dims_ / 2))
    return spec_error(ErrorKind::invalid_argument, "freqs must be float32 [dims / 2]");
  return std::vector<OutputSpec>{dense(x.shape(), x.dtype())};
}
Arrays RoPE::fallback(const Arrays& in) const {
  std::optional<Array> f;
  if (has_freqs_) f = in[2];
  return {fast::composite::rope(in[0], in[1], f, dims_, traditional_, base_, scale_, forward_)};
}
Arrays RoPE::vjp(const Arrays& primals, const Arrays& cotangents, const std::vector<int>& argnums,
                 const Arrays&) const {
  Arrays out;
  for (int a : argnums) {
    if (a != 0) {
      out.push_back(rules::zeros_of(primals[a]));
      continue;
    }
    Arrays in = primals;
    in[0] = ops::astype(cotangents[0], primals[0].dtype());
    RoPE inverse(dims_, traditional_, base_, scale_, !forward_, has_freqs_);
    if (fast::detail::has_kernel(PrimitiveId::RoPE, {}, in[0].dtype()))
      out.push_back(ops::impl::build1(ops::impl::make<RoPE>(inverse), in, {}, "rope",
                                      Location::none()));
    else
      out.push_back(inverse.fallback(in)[0]);
  }
  return out;
}
std::pair<Arrays, std::vector<int>> RoPE::vmap(const Arrays& inputs,
                                               const std::vector<int>& axes) const {
  bool only_x = axes[0] >= 0;
  for (size_t i = 1; i < inputs.size(); ++i) only_x = only_x && axes[i] < 0;
  if (!only_x) return FastPrimitive::vmap(inputs, axes);
  // [B, V, ..., T, D]: positions stay on axis -2, batch items on axis 0.
  Arrays in = inputs;
  in[0] = ops::moveaxis(inputs[0], axes[0], 1);
  return {rules::rebuild(*this, in), {1}};
}

void RoPE::print_params(std::ostream& os) const {
  os << "dims=" << dims_ << (traditional_ ? " traditional" : "") << " base=" << base_
     << " scale=" << scale_ << (forward_ ? "" : " inverse") << (has_freqs_ ? " freqs" : "");
}

// ---- Softmax, LogSumExp.

Expected<std::vector<OutputSpec>> Softmax::output_specs(const std::vector<Array>& in) const {
  if (in.size() != 1) return spec_error(ErrorKind::internal, "Softmax takes x");
  return row_specs(in, 1, 1);
}
Arrays Softmax::fallback(const Arrays& in) const {
  return {fast::composite::softmax(in[0], {in[0].ndim() - 1})};
}
Arrays Softmax::vjp(const Arrays& primals, const Arrays& cotangents, const std::vector<int>&,
                    const Arrays& outputs) const {
  const Array& x = primals[0];
  Array y = outputs[0].is_failed() ? rules::rebuild(*this, primals)[0] : outputs[0];
  Array yf = stats(y), g = stats(cotangents[0]);
  Array dx = ops::multiply(yf, ops::subtract(g, ops::sum(ops::multiply(g, yf), Axes(-1), true)));
  return {ops::astype(dx, x.dtype())};
}

Expected<std::vector<OutputSpec>> LogSumExp::output_specs(const std::vector<Array>& in) const {
  if (in.size() != 1) return spec_error(ErrorKind::internal, "LogSumExp takes x");
  auto r = row_specs(in, 1, 1);
  if (!r) return r;
  if (in[0].shape(-1) == 0) return spec_error(ErrorKind::invalid_shape, "rows must not be empty");
  (*r)[0].shape.back() = 1;
  return r;
}
Arrays LogSumExp::fallback(const Arrays& in) const {
  return {fast::composite::logsumexp(in[0], {in[0].ndim() - 1})};
}

// ---- CrossEntropy.

Expected<std::vector<OutputSpec>> CrossEntropy::output_specs(const std::vector<Array>& in) const {
  if (in.size() != 2) return spec_error(ErrorKind::internal, "CrossEntropy takes logits, targets");
  const Array& l = in[0];
  const Array& t = in[1];
  if (l.ndim() == 0 || !is_floating(l.dtype()))
    return spec_error(ErrorKind::invalid_argument, "logits must be floating with a class axis");
  Shape rows(l.shape().begin(), l.shape().end() - 1);
  if (t.dtype() != int32 || t.shape() != rows)
    return spec_error(ErrorKind::invalid_argument, "targets must be int32 of logits' row shape");
  return std::vector<OutputSpec>{dense(rows, float32)};
}
Arrays CrossEntropy::fallback(const Arrays& in) const {
  return {fast::composite::cross_entropy(in[0], in[1], smoothing_, ignore_)};
}
Arrays CrossEntropy::vjp(const Arrays& primals, const Arrays& cotangents,
                         const std::vector<int>& argnums, const Arrays&) const {
  const Array& logits = primals[0];
  const Array& t = primals[1];
  Array g = ops::astype(cotangents[0], float32);
  Array dl = fast::detail::has_kernel(PrimitiveId::CrossEntropyGrad, {}, logits.dtype())
                 ? ops::impl::build1(ops::impl::make<CrossEntropyGrad>(smoothing_, ignore_),
                                     {logits, t, g}, {}, "cross_entropy", Location::none())
                 : fast::composite::cross_entropy_grad(logits, t, g, smoothing_, ignore_);
  Arrays out;
  for (int a : argnums) out.push_back(a == 0 ? dl : rules::zeros_of(t));
  return out;
}

Expected<std::vector<OutputSpec>> CrossEntropyGrad::output_specs(const std::vector<Array>& in) const {
  if (in.size() != 3)
    return spec_error(ErrorKind::internal, "CrossEntropyGrad takes logits, targets, cotangent");
  const Array& l = in[0];
  if (l.ndim() == 0 || !is_floating(l.dtype()))
    return spec_error(ErrorKind::invalid_argument, "logits must be floating with a class axis");
  Shape rows(l.shape().begin(), l.shape().end() - 1);
  if (in[1].dtype() != int32 || in[1].shape() != rows || in[2].dtype() != float32 ||
      in[2].shape() != rows)
    return spec_error(ErrorKind::invalid_argument,
                      "targets (int32) and the cotangent (float32) must have logits' row shape");
  return std::vector<OutputSpec>{dense(l.shape(), l.dtype())};
}
Arrays CrossEntropyGrad::fallback(const Arrays& in) const {
  return {fast::composite::cross_entropy_grad(in[0], in[1], in[2], smoothing_, ignore_)};
}

// ---- Attention.

Expected<std::vector<OutputSpec>> Attention::output_specs(const std::vector<Array>& in) const {
  if (in.size() != size_t(3 + has_mask_ + has_sinks_))
    return spec_error(ErrorKind::internal, "Attention takes q, k, v[, mask][, sinks]");
  const Array &q = in[0], &k = in[1], &v = in[2];
  if (q.ndim() != 4 || k.ndim() != 4 || v.ndim() != 4 || !is_floating(q.dtype()) ||
      k.dtype() != q.dtype() || v.dtype() != q.dtype())
    return spec_error(ErrorKind::invalid_argument, "q, k, v must be 4-d of one floating dtype");
  if (k.shape(0) != q.shape(0) || v.shape(0) != q.shape(0) || k.shape(3) != q.shape(3) ||
      k.shape(1) != v.shape(1) || k.shape(2) != v.shape(2) || k.shape(1) == 0 ||
      q.shape(1) % k.shape(1) != 0)
    return spec_error(ErrorKind::shape_mismatch, "q, k, v shapes do not fit together");
  if (has_mask_ && in[3].shape() != Shape{q.shape(0), q.shape(1), q.shape(2), k.shape(2)})
    return spec_error(ErrorKind::shape_mismatch, "mask must be [B, Hq, Lq, Lk]");
  if (has_sinks_ && in.back().shape() != Shape{q.shape(1)})
    return spec_error(ErrorKind::shape_mismatch, "sinks must be [Hq]");
  return std::vector<OutputSpec>{dense(Shape{q.shape(0), q.shape(1), q.shape(2), v.shape(3)}, q.dtype())};
}
Arrays Attention::fallback(const Arrays& in) const {
  std::optional<Array> mask, sinks;
  if (has_mask_) mask = in[3];
  if (has_sinks_) sinks = in.back();
  return {fast::composite::attention(in[0], in[1], in[2], mask, sinks, scale_, causal_)};
}
namespace {

// vmap of attention-shaped primitives: the first `merged` inputs ([B, ...]
// each) with the batch in front and merged into B, the primitive run again,
// each output split back into [batch, B, ...].
std::pair<Arrays, std::vector<int>> merge_batch_into_b(const Primitive& p, const Arrays& inputs,
                                                        const std::vector<int>& axes, size_t merged) {
  const int n = rules::batch_size(inputs, axes);
  int b = 0;
  Arrays in = inputs;
  for (size_t i = 0; i < merged; ++i) {
    Array f = rules::front_sized(inputs[i], axes[i], n);
    b = f.shape(1);
    Shape s = f.shape();
    s.erase(s.begin());
    s[0] *= n;
    in[i] = ops::reshape(f, s);
  }
  Arrays outs = rules::rebuild(p, in);
  for (Array& o : outs) {
    Shape os = o.shape();
    os[0] = b;
    os.insert(os.begin(), n);
    o = ops::reshape(o, os);
  }
  return {outs, std::vector<int>(outs.size(), 0)};
}

}  // namespace

std::pair<Arrays, std::vector<int>> Attention::vmap(const Arrays& inputs,
                                                    const std::vector<int>& axes) const {
  if (has_sinks_ && axes.back() >= 0) {
    // Batched sinks: one call per batch element (sinks are per head), so
    // each element keeps the bits of its call alone.
    const int n = rules::batch_size(inputs, axes);
    Arrays outs;
    for (int e = 0; e < n; ++e) {
      Arrays in;
      for (size_t i = 0; i < inputs.size(); ++i)
        in.push_back(axes[i] < 0 ? inputs[i] : ops::take(inputs[i], nuvec::array(e), axes[i]));
      outs.push_back(rules::rebuild(*this, in)[0]);
    }
    return {{ops::stack(outs, 0)}, {0}};
  }
  return merge_batch_into_b(*this, inputs, axes, 3 + has_mask_);
}

std::pair<Arrays, std::vector<int>> AttentionGrad::vmap(const Arrays& inputs,
                                                        const std::vector<int>& axes) const {
  return merge_batch_into_b(*this, inputs, axes, inputs.size());
}

Arrays Attention::vjp(const Arrays& primals, const Arrays& cotangents,
                      const std::vector<int>& argnums, const Arrays& outputs) const {
  bool qkv_only = !has_sinks_;
  for (int a : argnums) qkv_only = qkv_only && a < 3;
  if (!qkv_only || !fast::detail::attention_grad_kernel(primals, causal_, has_mask_, {}))
    return FastPrimitive::vjp(primals, cotangents, argnums, outputs);
  Array o = outputs[0].is_failed() ? rules::rebuild(*this, primals)[0] : outputs[0];
  Arrays in{primals[0], primals[1], primals[2], o, ops::astype(cotangents[0], primals[0].dtype())};
  if (has_mask_) in.push_back(primals[3]);
  Arrays grads = ops::impl::build(ops::impl::make<AttentionGrad>(scale_, causal_, has_mask_), in, {},
                                  "scaled_dot_product_attention", Location::none());
  Arrays out;
  for (int a : argnums) out.push_back(grads[a]);
  return out;
}

Expected<std::vector<OutputSpec>> AttentionGrad::output_specs(const std::vector<Array>& in) const {
  if (in.size() != size_t(5 + has_mask_))
    return spec_error(ErrorKind::internal, "AttentionGrad takes q, k, v, o, dout[, mask]");
  const Array &q = in[0], &k = in[1], &v = in[2];
  Shape os{q.shape(0), q.shape(1), q.shape(2), v.shape(3)};
  if (q.ndim() != 4 || k.ndim() != 4 || v.ndim() != 4 || in[3].shape() != os ||
      in[4].shape() != os || in[3].dtype() != q.dtype() || in[4].dtype() != q.dtype())
    return spec_error(ErrorKind::shape_mismatch, "o and dout must be [B, Hq, Lq, Dv] of q's dtype");
  return std::vector<OutputSpec>{dense(q.shape(), q.dtype()), dense(k.shape(), k.dtype()),
                                 dense(v.shape(), v.dtype())};
}
Arrays AttentionGrad::fallback(const Arrays& in) const {
  std::optional<Array> mask;
  if (has_mask_) mask = in[5];
  const float scale = scale_;
  const bool causal = causal_;
  FlatFunction f = [mask, scale, causal](const Arrays& qkv) {
    return Arrays{fast::composite::attention(qkv[0], qkv[1], qkv[2], mask, std::nullopt, scale, causal)};
  };
  auto seeds = [&](const Arrays&) { return Arrays{in[4]}; };
  return detail::vjp(f, {in[0], in[1], in[2]}, seeds, {0, 1, 2}).grads;
}

void Attention::print_params(std::ostream& os) const {
  os << "scale=" << scale_ << (causal_ ? " causal" : "") << (has_mask_ ? " mask" : "")
     << (has_sinks_ ? " sinks" : "");
}

}  // namespace nuvec
