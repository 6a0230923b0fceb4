#include "models/blocks.h"

#include <array>
#include <cmath>
#include <sstream>

#include "config.h"
#include "nuvec/compile.h"
#include "nuvec/fast.h"
#include "nuvec/fast_norm_rope.h"

namespace nuvec::lm::detail {

Array Linear::operator()(const Array& x) const {
  Array y = quantized() ? quantized_matmul(x, weight, *scales, biases, true, group_size, bits)
                        : matmul(x, weight.t());
  if (reduce) y = distributed::all_sum(y, *reduce);
  return bias ? y + *bias : y;
}

void Linear::collect(const std::string& prefix, NamedList& out) const {
  out.emplace_back(prefix + ".weight", weight);
  if (scales) out.emplace_back(prefix + ".scales", *scales);
  if (biases) out.emplace_back(prefix + ".biases", *biases);
  if (bias) out.emplace_back(prefix + ".bias", *bias);
}

std::optional<Linear> fuse_linears(const std::vector<Linear*>& parts) {
  const Linear& a = *parts.front();
  for (const Linear* p : parts) {
    const bool same = p->quantized() == a.quantized() && p->bits == a.bits && p->group_size == a.group_size &&
                      !p->reduce && p->weight.ndim() == 2 && p->weight.dtype() == a.weight.dtype() &&
                      p->weight.shape(1) == a.weight.shape(1) && p->scales.has_value() == a.scales.has_value() &&
                      p->biases.has_value() == a.biases.has_value() && p->bias.has_value() == a.bias.has_value() &&
                      (!p->scales || p->scales->dtype() == a.scales->dtype()) &&
                      (!p->bias || p->bias->dtype() == a.bias->dtype());
    if (!same) return std::nullopt;
  }
  // Each member of the layers, concatenated along the rows.
  using Member = std::optional<Array>;
  auto joined = [&](auto get) {
    std::vector<Array> xs;
    for (Linear* p : parts) xs.push_back(*get(*p));
    return concatenate(xs, 0);
  };
  Linear f = a;
  f.weight = joined([](Linear& l) { return Member(l.weight); });
  if (a.scales) f.scales = joined([](Linear& l) { return l.scales; });
  if (a.biases) f.biases = joined([](Linear& l) { return l.biases; });
  if (a.bias) f.bias = joined([](Linear& l) { return l.bias; });
  std::vector<Array> all = {f.weight};
  for (auto* m : {&f.scales, &f.biases, &f.bias})
    if (*m) all.push_back(**m);
  eval(all);
  auto rows = [](const Array& x, int r0, int r1) {
    Shape lo(x.ndim(), 0), hi = x.shape();
    lo[0] = r0;
    hi[0] = r1;
    return slice(x, lo, hi);
  };
  int r0 = 0;
  std::vector<Array> views;
  for (Linear* p : parts) {
    const int r1 = r0 + p->weight.shape(0);
    p->weight = rows(f.weight, r0, r1);
    views.push_back(p->weight);
    for (auto [mine, whole] : {std::pair{&p->scales, &f.scales}, {&p->biases, &f.biases}, {&p->bias, &f.bias}})
      if (*mine) {
        *mine = rows(**whole, r0, r1);
        views.push_back(**mine);
      }
    r0 = r1;
  }
  eval(views);
  return f;
}

Array Embedding::operator()(const Array& ids) const {
  if (!table.quantized()) return take(table.weight, ids, 0);
  return dequantize(take(table.weight, ids, 0), take(*table.scales, ids, 0), take(*table.biases, ids, 0),
                    table.group_size, table.bits);
}

namespace {
std::string shape_text(const Shape& s) {
  std::ostringstream o;
  o << "(";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << ")";
  return o.str();
}
}  // namespace

Array Weights::take(const std::string& name, const Shape& shape) {
  auto it = map_.find(name);
  if (it == map_.end()) {
    problems_.push_back("missing " + name);
    return zeros(shape);
  }
  used_.insert(name);
  if (it->second.shape() != shape) {
    problems_.push_back(name + ": expected shape " + shape_text(shape) + ", got " +
                        shape_text(it->second.shape()));
    return zeros(shape);
  }
  return it->second;
}

std::optional<Array> Weights::take_if(const std::string& name, const Shape& shape) {
  if (!has(name)) return std::nullopt;
  return take(name, shape);
}

namespace {
// Bits and group size of a quantized matrix with `in` inputs, from the
// packed and scales widths.
bool quant_params(int in, int packed, int groups, int& bits, int& group) {
  if (in <= 0 || groups <= 0 || in % groups != 0 || (int64_t(packed) * 32) % in != 0) return false;
  bits = static_cast<int>(int64_t(packed) * 32 / in);
  group = in / groups;
  const bool bits_ok = bits == 2 || bits == 3 || bits == 4 || bits == 5 || bits == 6 || bits == 8;
  return bits_ok && (group == 32 || group == 64 || group == 128);
}
}  // namespace

Linear Weights::stacked(const std::string& prefix, int n, int in, int out) {
  Linear l;
  Shape lead = n > 0 ? Shape{n} : Shape{};
  auto with = [&](Shape s) {
    Shape r = lead;
    r.insert(r.end(), s.begin(), s.end());
    return r;
  };
  const std::string wname = prefix + ".weight";
  if (has(prefix + ".scales")) {
    auto it = map_.find(wname);
    auto st = map_.find(prefix + ".scales");
    if (it == map_.end()) {
      problems_.push_back("missing " + wname);
      return l;
    }
    const Shape& ws = it->second.shape();
    const Shape& ss = st->second.shape();
    if (ws.empty() || ss.empty() ||
        !quant_params(in, ws.back(), ss.back(), l.bits, l.group_size)) {
      problems_.push_back(wname + ": shapes " + shape_text(ws) + " and scales " + shape_text(ss) +
                          " are not a quantization of " + std::to_string(in) + " inputs");
      used_.insert(wname);
      used_.insert(prefix + ".scales");
      l.bits = 0;
      return l;
    }
    int packed = in * l.bits / 32, groups = in / l.group_size;
    l.weight = take(wname, with({out, packed}));
    l.scales = take(prefix + ".scales", with({out, groups}));
    l.biases = take(prefix + ".biases", with({out, groups}));
  } else {
    l.weight = take(wname, with({out, in}));
  }
  return l;
}

Linear Weights::linear(const std::string& prefix, int in, int out, bool bias) {
  Linear l = stacked(prefix, 0, in, out);
  if (bias) l.bias = take(prefix + ".bias", {out});
  return l;
}

Embedding Weights::embedding(const std::string& prefix, int vocab, int dims) {
  return Embedding{stacked(prefix, 0, dims, vocab)};
}

void Weights::finish() {
  std::vector<std::string> all = problems_;
  for (const auto& [name, a] : map_)
    if (!used_.count(name)) all.push_back("unexpected " + name);
  if (all.empty()) return;
  std::sort(all.begin() + static_cast<std::ptrdiff_t>(problems_.size()), all.end());
  std::string msg = source_ + ": " + std::to_string(all.size()) + " problem(s) with the weights:";
  const size_t shown = std::min<size_t>(all.size(), 40);
  for (size_t i = 0; i < shown; ++i) msg += "\n  " + all[i];
  if (shown < all.size()) msg += "\n  ... and " + std::to_string(all.size() - shown) + " more";
  fail(ErrorKind::io, msg);
}

Array rms_norm(const Array& x, const Array& w, float eps) { return fast::rms_norm(x, w, eps); }

Array Attention::operator()(const AttentionSpec& spec, const Array& x, LayerCache& cache) const {
  const int B = x.shape(0), L = x.shape(1);
  // RoPE, after the per-head q/k norm where the architecture has one
  // (fast::norm_rope: Qwen3's and Gemma 3's).
  auto rope = [&](const Array& t, const std::optional<Array>& norm) {
    if (auto rows = cache.row_offsets())
      return norm ? fast::norm_rope(t, norm, spec.norm_eps, spec.rope_dims, spec.rope_traditional, spec.rope_base,
                                    spec.rope_scale, *rows, spec.rope_freqs)
                  : fast::rope(t, spec.rope_dims, spec.rope_traditional, spec.rope_base, spec.rope_scale, *rows,
                               spec.rope_freqs);
    return norm ? fast::norm_rope(t, norm, spec.norm_eps, spec.rope_dims, spec.rope_traditional, spec.rope_base,
                                  spec.rope_scale, cache.offset(), spec.rope_freqs)
                : fast::rope(t, spec.rope_dims, spec.rope_traditional, spec.rope_base, spec.rope_scale, cache.offset(),
                             spec.rope_freqs);
  };
  auto heads = [&](const Array& y, int n) { return y.reshape({B, L, n, spec.head_dim}).transpose({0, 2, 1, 3}); };
  // q, k and v with RoPE applied to q and k: from the fused product where
  // there is one; there, without per-head norms, one RoPE over the q and k
  // heads together (the rotation depends on the position and the dimension
  // only, so each head gets the bits of its own call): one launch a layer
  // fewer in a decode step.
  auto project = [&]() -> std::array<Array, 3> {
    if (!qkv) return {rope(heads(q(x), spec.heads), q_norm), rope(heads(k(x), spec.kv_heads), k_norm),
                      heads(v(x), spec.kv_heads)};
    const int nq = q.weight.shape(0), nk = k.weight.shape(0);
    Array y = (*qkv)(x);
    if (!q_norm && !k_norm) {
      auto p = split(y, std::vector<int>{nq + nk}, -1);
      auto qk = split(rope(heads(p[0], spec.heads + spec.kv_heads), std::nullopt), std::vector<int>{spec.heads}, 1);
      return {qk[0], qk[1], heads(p[1], spec.kv_heads)};
    }
    auto p = split(y, std::vector<int>{nq, nq + nk}, -1);
    return {rope(heads(p[0], spec.heads), q_norm), rope(heads(p[1], spec.kv_heads), k_norm),
            heads(p[2], spec.kv_heads)};
  };
  auto [qs, ks, vs] = project();
  Array out = cache.attend(qs, ks, vs, spec.scale);
  return o(out.transpose({0, 2, 1, 3}).reshape({B, L, spec.heads * spec.head_dim}));
}

void Attention::collect(const std::string& prefix, NamedList& out) const {
  q.collect(prefix + ".q_proj", out);
  k.collect(prefix + ".k_proj", out);
  v.collect(prefix + ".v_proj", out);
  o.collect(prefix + ".o_proj", out);
  if (q_norm) out.emplace_back(prefix + ".q_norm.weight", *q_norm);
  if (k_norm) out.emplace_back(prefix + ".k_norm.weight", *k_norm);
}

namespace {
Array silu(const Array& x) { return x * sigmoid(x); }
// The gated activations, compiled shapeless as mlx-lm compiles swiglu (and
// MLX its activations): one fused kernel each, the uncompiled bits.
Array swiglu(const Array& g, const Array& u) {
  static auto f = compile([](const Array& a, const Array& b) { return silu(a) * b; }, true);
  return f(g, u);
}
Array geglu_tanh(const Array& g, const Array& u) {
  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), mlx's gelu_approx.
  static auto f = compile(
      [](const Array& x, const Array& b) {
        return 0.5f * x * (1.0f + tanh(std::sqrt(2.0f / float(M_PI)) * (x + 0.044715f * x * x * x))) * b;
      },
      true);
  return f(g, u);
}
}  // namespace

Array Mlp::operator()(const Array& x) const {
  Array g = array(0.0f), u = g;
  if (gate_up) {
    auto y = split((*gate_up)(x), std::vector<int>{static_cast<int>(gate.weight.shape(0))}, -1);
    g = y[0], u = y[1];
  } else {
    g = gate(x), u = up(x);
  }
  return down(gelu ? geglu_tanh(g, u) : swiglu(g, u));
}

void Mlp::collect(const std::string& prefix, NamedList& out) const {
  gate.collect(prefix + ".gate_proj", out);
  up.collect(prefix + ".up_proj", out);
  down.collect(prefix + ".down_proj", out);
}

namespace {
Array switch_linear(const Linear& l, const Array& x, const Array& idx, bool sorted) {
  if (l.quantized())
    return gather_qmm(x, l.weight, *l.scales, l.biases, std::nullopt, idx, true, l.group_size, l.bits,
                      "affine", std::nullopt, sorted);
  return gather_mm(x, l.weight.swapaxes(-1, -2), std::nullopt, idx, sorted);
}
}  // namespace

Array SwitchMlp::operator()(const Array& x, const Array& indices) const {
  // mlx-lm's SwitchGLU: x [..., D] -> [..., k, D]; sorted by expert once
  // there are 64 or more (token, expert) pairs.
  Array xe = expand_dims(x, {-2, -3});
  const bool sort = indices.size() >= 64;
  Array idx = indices;
  std::optional<Array> inv;
  if (sort) {
    const int M = indices.shape(-1);
    Array flat = indices.flatten();
    Array order = argsort(flat);
    inv = argsort(order);
    xe = take(xe.flatten(0, -3), floor_divide(order, array(M, order.dtype())), 0);
    idx = take(flat, order, 0);
  }
  Array g = switch_linear(gate, xe, idx, sort);
  Array u = switch_linear(up, xe, idx, sort);
  Array y = switch_linear(down, swiglu(g, u), idx, sort);
  if (sort) {
    y = take(y, *inv, 0);
    Shape s = indices.shape();
    s.push_back(y.shape(-2));
    s.push_back(y.shape(-1));
    y = y.reshape(s);
  }
  return y.squeeze({-2});
}

void SwitchMlp::collect(const std::string& prefix, NamedList& out) const {
  gate.collect(prefix + ".gate_proj", out);
  up.collect(prefix + ".up_proj", out);
  down.collect(prefix + ".down_proj", out);
}

void convert(Linear& w, DType dtype, bool dequantize_weights) {
  auto conv = [&](Array& a) {
    if (is_floating(a.dtype()) && a.dtype() != dtype) a = a.astype(dtype);
  };
  if (w.quantized() && dequantize_weights) {
    // Scales and biases in the target dtype first (exact from float16), as
    // mlx-lm's loaders dequantize.
    std::optional<Array> b = w.biases ? std::optional<Array>(w.biases->astype(dtype)) : std::nullopt;
    w.weight = dequantize(w.weight, w.scales->astype(dtype), b, w.group_size, w.bits, "affine", std::nullopt, dtype);
    w.scales.reset();
    w.biases.reset();
    w.bits = w.group_size = 0;
  } else if (w.quantized()) {
    conv(*w.scales);
    if (w.biases) conv(*w.biases);
  } else {
    conv(w.weight);
  }
  if (w.bias) conv(*w.bias);
}

}  // namespace nuvec::lm::detail
