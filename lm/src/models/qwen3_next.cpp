// qwen3_next (docs/lm-qwen3-next.md), as mlx-lm's models/qwen3_next.py:
// Gated DeltaNet layers (a depthwise causal convolution and the gated delta
// rule, fast::gated_delta, with their state in an ArraysCache) and every
// full_attention_interval-th layer a gated full attention (the q projection
// also gives a sigmoid output gate; partial rotary), q/k norms, and a
// mixture of experts with a gated shared expert.
#include <algorithm>
#include <cmath>
#include <functional>

#include "models/decoder.h"
#include "nuvec/compile.h"
#include "nuvec/fast.h"

namespace nuvec::lm::detail {

namespace {

struct NextSpec {
  int vocab = 0, hidden = 0, layers = 0, intermediate = 0;
  float eps = 1e-6f;
  bool tie = false;
  AttentionSpec attn;  // the full-attention layers (rope over the rotary dims)
  int nk = 0, nv = 0, dk = 0, dv = 0, conv_kernel = 4;
  int experts = 0, top_k = 0, moe_intermediate = 0, shared_intermediate = 0;
  bool norm_topk = false;
  std::vector<bool> linear, moe;  // per layer
  int key_dim() const { return nk * dk; }
  int value_dim() const { return nv * dv; }
  int conv_dim() const { return 2 * key_dim() + value_dim(); }
};

struct DeltaNet {
  Linear qkvz, ba, out;
  Array conv = array(0.0f);  // [conv_dim, K, 1], depthwise
  Array dt_bias = array(0.0f), a_log = array(0.0f), norm = array(0.0f);
};

struct GatedAttention {
  Linear q, k, v, o;
  Array q_norm = array(0.0f), k_norm = array(0.0f);
};

struct Moe {
  Linear router, shared_gate;
  SwitchMlp experts;
  Mlp shared;
};

struct Layer {
  std::optional<DeltaNet> delta;
  std::optional<GatedAttention> attn;
  Array norm1 = array(0.0f), norm2 = array(0.0f);
  std::optional<Mlp> mlp;
  std::optional<Moe> moe;
};

Array silu(const Array& x) { return x * sigmoid(x); }

// The last axis of x cut at `cuts` (mx.split with indices).
std::vector<Array> split_last(const Array& x, const std::vector<int>& cuts) {
  return split(x, cuts, x.ndim() - 1);
}

class Qwen3Next : public Model, public SelfConverting {
 public:
  NextSpec spec;
  Embedding embed;
  std::vector<Layer> layers;
  Array norm = array(0.0f);
  std::optional<Linear> lm_head;

  Array delta_net(const DeltaNet& d, const Array& x, ArraysCache& cache) const {
    const int B = x.shape(0), S = x.shape(1);
    const int nk = spec.nk, nv = spec.nv, dk = spec.dk, dv = spec.dv,
              r = nv / nk;
    // fix_query_key_value_ordering: per key head [q | k | v (r heads) | z].
    Array qkvz = d.qkvz(x).reshape({B, S, nk, -1});
    auto parts = split_last(qkvz, {dk, 2 * dk, 2 * dk + r * dv});
    Array ba = d.ba(x).reshape({B, S, nk, -1});
    auto bas = split_last(ba, {r});
    Array z = parts[3].reshape({B, S, nv, dv});
    Array b = bas[0].reshape({B, S, nv}), a = bas[1].reshape({B, S, nv});

    const int K = spec.conv_kernel;
    Array conv_state = cache.get(0)
                           ? *cache.get(0)
                           : zeros({B, K - 1, spec.conv_dim()}, x.dtype());
    Array mixed =
        concatenate({parts[0].reshape({B, S, -1}), parts[1].reshape({B, S, -1}),
                     parts[2].reshape({B, S, -1})},
                    -1);
    Array conv_in = concatenate({conv_state, mixed}, 1);
    const int T = conv_in.shape(1);
    cache.set(0, contiguous(slice(conv_in, {0, T - (K - 1), 0},
                                  {B, T, spec.conv_dim()})));
    Array conv_out = silu(conv1d(conv_in, d.conv, 1, 0, 1, spec.conv_dim()));
    auto qkv = split_last(conv_out, {spec.key_dim(), 2 * spec.key_dim()});
    Array q = qkv[0].reshape({B, S, nk, dk});
    Array k = qkv[1].reshape({B, S, nk, dk});
    Array v = qkv[2].reshape({B, S, nv, dv});

    // normalize_qk: l2 norms with eps 1e-6 as rms_norm (eps / dk), and the
    // dk^-1/2 readout scale folded into q.
    const double inv = std::pow(static_cast<double>(dk), -0.5);
    const float rms_eps = static_cast<float>(1e-6 * inv * inv);
    q = fast::rms_norm(q, std::nullopt, rms_eps) *
        static_cast<float>(inv * inv);
    k = fast::rms_norm(k, std::nullopt, rms_eps) * static_cast<float>(inv);

    Array beta = sigmoid(b);
    // mlx-lm's compute_g, compiled shapeless as mlx-lm compiles it.
    static auto compute_g = compile(
        [](const Array& a_log, const Array& x, const Array& dt_bias) {
          return exp(negative(exp(a_log.astype(float32))) * logaddexp(x + dt_bias, array(0.0f, x.dtype())));
        },
        true);
    Array g = compute_g(d.a_log, a, d.dt_bias);
    Array state =
        cache.get(1) ? *cache.get(1) : zeros({B, nv, dv, dk}, float32);
    auto [y, next] = fast::gated_delta(q, k, v, g, beta, state);
    cache.set(1, next);
    cache.advance(S);

    // Qwen3NextRMSNormGated: rms_norm(y) * silu(z), in float32.
    Array n = fast::rms_norm(y, d.norm, spec.eps);
    Array out = (silu(z.astype(float32)) * n.astype(float32)).astype(y.dtype());
    return d.out(out.reshape({B, S, -1}));
  }

  Array attention(const GatedAttention& w, const Array& x,
                  LayerCache& cache) const {
    const AttentionSpec& a = spec.attn;
    const int B = x.shape(0), L = x.shape(1), D = a.head_dim;
    auto qg = split(w.q(x).reshape({B, L, a.heads, 2 * D}), 2, -1);
    Array gate = qg[1].reshape({B, L, a.heads * D});
    Array qs =
        fast::rms_norm(qg[0], w.q_norm, a.norm_eps).transpose({0, 2, 1, 3});
    Array ks = fast::rms_norm(w.k(x).reshape({B, L, a.kv_heads, D}), w.k_norm,
                              a.norm_eps)
                   .transpose({0, 2, 1, 3});
    Array vs = w.v(x).reshape({B, L, a.kv_heads, D}).transpose({0, 2, 1, 3});
    auto rope = [&](const Array& t) {
      if (auto rows = cache.row_offsets())
        return fast::rope(t, a.rope_dims, a.rope_traditional, a.rope_base,
                          a.rope_scale, *rows, a.rope_freqs);
      return fast::rope(t, a.rope_dims, a.rope_traditional, a.rope_base,
                        a.rope_scale, cache.offset(), a.rope_freqs);
    };
    Array out = cache.attend(rope(qs), rope(ks), vs, a.scale);
    out = out.transpose({0, 2, 1, 3}).reshape({B, L, a.heads * D});
    return w.o(out * sigmoid(gate));
  }

  Array moe(const Moe& m, const Array& x) const {
    Array gates = softmax(m.router(x), {-1}, true);
    const int E = gates.shape(-1), k = spec.top_k;
    Shape lo(gates.ndim(), 0), hi = gates.shape();
    lo.back() = E - k;
    Array inds = slice(argpartition(gates, E - k, -1), lo, hi);
    Array scores = take_along_axis(gates, inds, -1);
    if (spec.norm_topk) scores = scores / scores.sum({-1}, true);
    Array y = (m.experts(x, inds) * expand_dims(scores, {-1})).sum({-2});
    return y + sigmoid(m.shared_gate(x)) * m.shared(x);
  }

  Array operator()(const Array& tokens, PromptCache& cache) const override {
    if (tokens.ndim() != 2)
      fail(ErrorKind::invalid_shape,
           "model input must be [batch, length] token ids");
    if (cache.size() != layers.size())
      fail(ErrorKind::invalid_argument,
           "the cache has " + std::to_string(cache.size()) +
               " layers, the model " + std::to_string(layers.size()));
    Array h = embed(tokens);
    for (size_t i = 0; i < layers.size(); ++i) {
      const Layer& l = layers[i];
      Array n = fast::rms_norm(h, l.norm1, spec.eps);
      if (l.delta) {
        auto* c = dynamic_cast<ArraysCache*>(cache[i].get());
        if (!c)
          fail(ErrorKind::invalid_argument,
               "layer " + std::to_string(i) +
                   " (Gated DeltaNet) needs an ArraysCache, not a " +
                   cache[i]->kind());
        h = h + delta_net(*l.delta, n, *c);
      } else {
        h = h + attention(*l.attn, n, *cache[i]);
      }
      Array n2 = fast::rms_norm(h, l.norm2, spec.eps);
      h = h + (l.mlp ? (*l.mlp)(n2) : moe(*l.moe, n2));
    }
    h = fast::rms_norm(h, norm, spec.eps);
    return lm_head ? (*lm_head)(h) : embed.as_linear(h);
  }

  PromptCache make_cache(int max_kv_size) const override {
    PromptCache c;
    for (const Layer& l : layers) {
      if (l.delta)
        c.push_back(std::make_unique<ArraysCache>(2));
      else if (max_kv_size > 0)
        c.push_back(std::make_unique<RotatingKVCache>(max_kv_size));
      else
        c.push_back(std::make_unique<KVCache>());
    }
    return c;
  }

  // Every linear layer by its checkpoint prefix; `gate8` marks those that
  // mlx-lm's quant_predicate quantizes with 8 bits, group 64.
  void for_each_linear(
      const std::function<void(const std::string&, Linear&, bool gate8)>& fn) {
    fn("model.embed_tokens", embed.table, false);
    for (size_t i = 0; i < layers.size(); ++i) {
      Layer& l = layers[i];
      const std::string p = "model.layers." + std::to_string(i) + ".";
      if (l.delta) {
        fn(p + "linear_attn.in_proj_qkvz", l.delta->qkvz, false);
        fn(p + "linear_attn.in_proj_ba", l.delta->ba, false);
        fn(p + "linear_attn.out_proj", l.delta->out, false);
      } else {
        fn(p + "self_attn.q_proj", l.attn->q, false);
        fn(p + "self_attn.k_proj", l.attn->k, false);
        fn(p + "self_attn.v_proj", l.attn->v, false);
        fn(p + "self_attn.o_proj", l.attn->o, false);
      }
      if (l.mlp) {
        fn(p + "mlp.gate_proj", l.mlp->gate, false);
        fn(p + "mlp.up_proj", l.mlp->up, false);
        fn(p + "mlp.down_proj", l.mlp->down, false);
      } else {
        fn(p + "mlp.gate", l.moe->router, true);
        fn(p + "mlp.shared_expert_gate", l.moe->shared_gate, true);
        fn(p + "mlp.switch_mlp.gate_proj", l.moe->experts.gate, false);
        fn(p + "mlp.switch_mlp.up_proj", l.moe->experts.up, false);
        fn(p + "mlp.switch_mlp.down_proj", l.moe->experts.down, false);
        fn(p + "mlp.shared_expert.gate_proj", l.moe->shared.gate, false);
        fn(p + "mlp.shared_expert.up_proj", l.moe->shared.up, false);
        fn(p + "mlp.shared_expert.down_proj", l.moe->shared.down, false);
      }
    }
    if (lm_head) fn("lm_head", *lm_head, false);
  }

  // The other arrays (norms, the convolution, the decay parameters) by name.
  void for_each_array(
      const std::function<void(const std::string&, Array&)>& fn) {
    fn("model.norm.weight", norm);
    for (size_t i = 0; i < layers.size(); ++i) {
      Layer& l = layers[i];
      const std::string p = "model.layers." + std::to_string(i) + ".";
      fn(p + "input_layernorm.weight", l.norm1);
      fn(p + "post_attention_layernorm.weight", l.norm2);
      if (l.delta) {
        fn(p + "linear_attn.conv1d.weight", l.delta->conv);
        fn(p + "linear_attn.dt_bias", l.delta->dt_bias);
        fn(p + "linear_attn.A_log", l.delta->a_log);
        fn(p + "linear_attn.norm.weight", l.delta->norm);
      } else {
        fn(p + "self_attn.q_norm.weight", l.attn->q_norm);
        fn(p + "self_attn.k_norm.weight", l.attn->k_norm);
      }
    }
  }

  std::vector<std::pair<std::string, Array>> weights() const override {
    NamedList out;
    auto* self = const_cast<Qwen3Next*>(this);
    self->for_each_array(
        [&](const std::string& n, Array& a) { out.emplace_back(n, a); });
    self->for_each_linear(
        [&](const std::string& n, Linear& l, bool) { l.collect(n, out); });
    return out;
  }

  void convert(std::optional<DType> dtype, bool dequantize_weights,
               std::optional<int> quantize_bits, int group_size,
               std::optional<Device> device) override {
    const DType target = dtype.value_or(norm.dtype());
    for_each_linear([&](const std::string&, Linear& l, bool) {
      convert_linear(l, target, dequantize_weights);
    });
    for_each_array([&](const std::string&, Array& a) {
      if (is_floating(a.dtype()) && a.dtype() != target) a = a.astype(target);
    });
    if (quantize_bits) {
      for_each_linear([&](const std::string&, Linear& l, bool gate8) {
        const int bits = gate8 ? 8 : *quantize_bits,
                  group = gate8 ? 64 : group_size;
        if (l.quantized() || l.weight.shape(-1) % group != 0)
          return;  // as mlx-lm: layers the group does not divide stay
        auto q = quantize(l.weight, group, bits);
        l.weight = q[0];
        l.scales = q[1];
        l.biases = q[2];
        l.bits = bits;
        l.group_size = group;
      });
    }
    std::vector<Array> all;
    auto place = [&](Array& a) {
      if (device) a = copy(a, StreamOrDevice(*device));
      all.push_back(a);
    };
    for_each_linear([&](const std::string&, Linear& l, bool) {
      place(l.weight);
      for (auto* o : {&l.scales, &l.biases, &l.bias})
        if (*o) place(**o);
    });
    for_each_array([&](const std::string&, Array& a) { place(a); });
    eval(all);
    fill_info();
  }

  static void convert_linear(Linear& l, DType dtype, bool dequantize_weights) {
    detail::convert(l, dtype, dequantize_weights);
  }

  void fill_info() {
    info_.model_type = "qwen3_next";
    info_.vocab_size = spec.vocab;
    info_.hidden_size = spec.hidden;
    info_.num_layers = spec.layers;
    info_.num_heads = spec.attn.heads;
    info_.num_kv_heads = spec.attn.kv_heads;
    info_.head_dim = spec.attn.head_dim;
    info_.num_parameters = info_.weight_bytes = 0;
    info_.quant_bits.reset();
    info_.quant_group_size.reset();
    for (auto& [name, a] : weights()) {
      info_.num_parameters += static_cast<size_t>(a.size());
      info_.weight_bytes += static_cast<size_t>(a.nbytes());
    }
    for_each_linear([&](const std::string&, Linear& l, bool gate8) {
      if (l.quantized() && !gate8 && !info_.quant_bits) {
        info_.quant_bits = l.bits;
        info_.quant_group_size = l.group_size;
      }
    });
    info_.dtype = norm.dtype();
  }
};

NextSpec read_spec(const Config& cfg) {
  DecoderSpec base = base_spec(cfg, 1000000.0, false, 1e-6);
  NextSpec s;
  s.vocab = base.vocab;
  s.hidden = base.hidden;
  s.layers = base.layers;
  s.intermediate = base.intermediate;
  s.eps = base.norm_eps;
  s.tie = base.tie_embeddings;
  s.attn = base.attention[0];
  const double partial = cfg.get_double("partial_rotary_factor", 1.0);
  const int rope_dims = static_cast<int>(s.attn.head_dim * partial);
  if (rope_dims <= 0 || rope_dims % 2 != 0 || rope_dims > s.attn.head_dim)
    fail(ErrorKind::invalid_argument,
         cfg.source() + ": partial_rotary_factor gives " +
             std::to_string(rope_dims) + " rotary dims of " +
             std::to_string(s.attn.head_dim));
  read_rope(cfg, s.attn, rope_dims,
            static_cast<float>(cfg.get_double("rope_theta", 1000000.0)));
  s.attn.rope_traditional = false;  // mlx-lm passes traditional=False
  s.nk = cfg.get_int("linear_num_key_heads");
  s.nv = cfg.get_int("linear_num_value_heads");
  s.dk = cfg.get_int("linear_key_head_dim");
  s.dv = cfg.get_int("linear_value_head_dim");
  s.conv_kernel = cfg.get_int("linear_conv_kernel_dim", 4);
  if (s.nk <= 0 || s.nv <= 0 || s.dk <= 0 || s.dv <= 0 || s.nv % s.nk != 0 ||
      s.conv_kernel < 1)
    fail(ErrorKind::invalid_argument,
         cfg.source() +
             ": linear attention sizes must be positive, with "
             "linear_num_value_heads a multiple of linear_num_key_heads");
  s.experts = cfg.get_int("num_experts", 0);
  s.top_k = cfg.get_int("num_experts_per_tok", 0);
  s.moe_intermediate = cfg.get_int("moe_intermediate_size", 0);
  s.shared_intermediate = cfg.get_int("shared_expert_intermediate_size", 0);
  s.norm_topk = cfg.get_bool("norm_topk_prob", false);
  const int interval = cfg.get_int("full_attention_interval", 4);
  const int sparse_step = cfg.get_int("decoder_sparse_step", 1);
  if (interval <= 0 || sparse_step <= 0)
    fail(ErrorKind::invalid_argument,
         cfg.source() +
             ": full_attention_interval and decoder_sparse_step must be "
             "positive");
  std::vector<int> dense_only = cfg.int_list("mlp_only_layers");
  for (int i = 0; i < s.layers; ++i) {
    s.linear.push_back((i + 1) % interval != 0);
    const bool listed =
        std::find(dense_only.begin(), dense_only.end(), i) != dense_only.end();
    s.moe.push_back(!listed && s.experts > 0 && (i + 1) % sparse_step == 0);
  }
  if (std::find(s.moe.begin(), s.moe.end(), true) != s.moe.end() &&
      (s.top_k <= 0 || s.top_k > s.experts))
    fail(ErrorKind::invalid_argument,
         cfg.source() + ": num_experts_per_tok must be in [1, num_experts]");
  return s;
}

// Hugging Face's layout, which mlx-lm's Model.sanitize converts: experts
// as experts.E.* (stacked here), the conv weight [C, 1, K], norms stored as
// w - 1 (the model's, not the gated one), mtp.* tensors (dropped). mlx-lm
// tells it by any layer's experts.0.up_proj.
bool hf_layout(const Weights& w, int layers) {
  for (int i = 0; i < layers; ++i)
    if (w.has("model.layers." + std::to_string(i) +
              ".mlp.experts.0.up_proj.weight"))
      return true;
  return false;
}

// Expert matrices E.{name} [out, in] stacked into one [E, out, in] Linear.
Linear stacked_experts(Weights& w, const std::string& prefix,
                       const std::string& name, int experts, int in, int out) {
  std::vector<Array> parts;
  for (int e = 0; e < experts; ++e)
    parts.push_back(
        w.take(prefix + std::to_string(e) + "." + name + ".weight", {out, in}));
  Linear l;
  l.weight = stack(parts, 0);
  return l;
}

}  // namespace

std::shared_ptr<Model> build_qwen3_next(const Config& cfg, Weights& w) {
  auto m = std::make_shared<Qwen3Next>();
  m->spec = read_spec(cfg);
  const NextSpec& s = m->spec;
  const int H = s.hidden;
  const bool hf = hf_layout(w, s.layers);
  if (hf)
    for (const auto& name : w.names())
      if (name.find("mtp.") != std::string::npos) w.ignore(name);
  auto norm_of = [&](const std::string& name, int dims) {
    Array a = w.take(name, {dims});
    return hf ? a + 1.0f : a;
  };
  m->embed = w.embedding("model.embed_tokens", s.vocab, H);
  for (int i = 0; i < s.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    Layer l;
    l.norm1 = norm_of(p + "input_layernorm.weight", H);
    l.norm2 = norm_of(p + "post_attention_layernorm.weight", H);
    if (s.linear[i]) {
      const std::string q = p + "linear_attn.";
      DeltaNet d;
      d.qkvz = w.linear(q + "in_proj_qkvz", H,
                        2 * s.key_dim() + 2 * s.value_dim(), false);
      d.ba = w.linear(q + "in_proj_ba", H, 2 * s.nv, false);
      d.out = w.linear(q + "out_proj", s.value_dim(), H, false);
      d.conv =
          hf && s.conv_kernel != 1
              ? swapaxes(w.take(q + "conv1d.weight",
                                {s.conv_dim(), 1, s.conv_kernel}),
                         1, 2)
              : w.take(q + "conv1d.weight", {s.conv_dim(), s.conv_kernel, 1});
      d.dt_bias = w.take(q + "dt_bias", {s.nv});
      d.a_log = w.take(q + "A_log", {s.nv});
      d.norm = w.take(q + "norm.weight", {s.dv});
      l.delta = d;
    } else {
      const std::string q = p + "self_attn.";
      const AttentionSpec& a = s.attn;
      const bool bias = cfg.get_bool("attention_bias", false);
      GatedAttention g;
      g.q = w.linear(q + "q_proj", H, 2 * a.heads * a.head_dim, bias);
      g.k = w.linear(q + "k_proj", H, a.kv_heads * a.head_dim, bias);
      g.v = w.linear(q + "v_proj", H, a.kv_heads * a.head_dim, bias);
      g.o = w.linear(q + "o_proj", a.heads * a.head_dim, H, bias);
      g.q_norm = norm_of(q + "q_norm.weight", a.head_dim);
      g.k_norm = norm_of(q + "k_norm.weight", a.head_dim);
      w.ignore(q + "rotary_emb.inv_freq");
      l.attn = g;
    }
    if (s.moe[i]) {
      const std::string q = p + "mlp.";
      Moe e;
      e.router = w.linear(q + "gate", H, s.experts, false);
      if (hf) {
        const std::string x = q + "experts.";
        const int E = s.experts, I = s.moe_intermediate;
        e.experts.gate = stacked_experts(w, x, "gate_proj", E, H, I);
        e.experts.up = stacked_experts(w, x, "up_proj", E, H, I);
        e.experts.down = stacked_experts(w, x, "down_proj", E, I, H);
      } else {
        e.experts.gate = w.stacked(q + "switch_mlp.gate_proj", s.experts, H,
                                   s.moe_intermediate);
        e.experts.up = w.stacked(q + "switch_mlp.up_proj", s.experts, H,
                                 s.moe_intermediate);
        e.experts.down = w.stacked(q + "switch_mlp.down_proj", s.experts,
                                   s.moe_intermediate, H);
      }
      e.shared.gate = w.linear(q + "shared_expert.gate_proj", H,
                               s.shared_intermediate, false);
      e.shared.up = w.linear(q + "shared_expert.up_proj", H,
                             s.shared_intermediate, false);
      e.shared.down = w.linear(q + "shared_expert.down_proj",
                               s.shared_intermediate, H, false);
      e.shared_gate = w.linear(q + "shared_expert_gate", H, 1, false);
      l.moe = e;
    } else {
      Mlp mlp;
      mlp.gate = w.linear(p + "mlp.gate_proj", H, s.intermediate, false);
      mlp.up = w.linear(p + "mlp.up_proj", H, s.intermediate, false);
      mlp.down = w.linear(p + "mlp.down_proj", s.intermediate, H, false);
      l.mlp = mlp;
    }
    m->layers.push_back(std::move(l));
  }
  m->norm = norm_of("model.norm.weight", H);
  if (s.tie)
    w.ignore("lm_head.weight");
  else
    m->lm_head = w.linear("lm_head", H, s.vocab, false);
  w.finish();
  m->fill_info();
  return m;
}

}  // namespace nuvec::lm::detail
