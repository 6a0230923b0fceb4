#include "models/decoder.h"

#include <cmath>
#include <functional>

#include "nuvec/fast.h"

namespace nuvec::lm::detail {

void read_rope(const Config& cfg, AttentionSpec& spec, int dims, float base) {
  spec.rope_dims = dims;
  spec.rope_traditional = cfg.get_bool("rope_traditional", false);
  spec.rope_base = base;
  spec.rope_scale = 1.0f;
  Config scaling = cfg.object("rope_scaling");
  std::string type = scaling.get_string("type", scaling.get_string("rope_type", "default"));
  if (!cfg.has("rope_scaling") || type == "default") return;
  if (type == "linear") {
    spec.rope_scale = static_cast<float>(1.0 / scaling.get_double("factor", 1.0));
    return;
  }
  if (type == "llama3") {
    // mlx-lm's Llama3RoPE: periods base^(2i/d), stretched by `factor` for
    // long wavelengths and blended in between.
    const float factor = static_cast<float>(scaling.get_double("factor", 1.0));
    const float low = static_cast<float>(scaling.get_double("low_freq_factor", 1.0));
    const float high = static_cast<float>(scaling.get_double("high_freq_factor", 4.0));
    const float old_len = static_cast<float>(scaling.get_double("original_max_position_embeddings", 8192));
    const float low_wavelen = old_len / low, high_wavelen = old_len / high;
    Array freqs = power(array(base), arange(0, dims, 2, float32) / static_cast<float>(dims));
    Array wavelens = freqs * static_cast<float>(2 * M_PI);
    freqs = where(greater(wavelens, array(low_wavelen)), freqs * factor, freqs);
    Array medium = logical_and(greater(wavelens, array(high_wavelen)), less(wavelens, array(low_wavelen)));
    Array smooth = (old_len / wavelens - low) / (high - low);
    Array smooth_freqs = freqs / ((1.0f - smooth) / factor + smooth);
    spec.rope_freqs = where(medium, smooth_freqs, freqs);
    spec.rope_base = std::nullopt;
    eval(*spec.rope_freqs);
    return;
  }
  fail(ErrorKind::invalid_argument, cfg.source() + ": rope_scaling type \"" + type + "\" is not supported");
}

DecoderSpec base_spec(const Config& cfg, double default_theta, bool default_tie, double default_eps) {
  DecoderSpec s;
  s.model_type = cfg.get_string("model_type", "");
  s.vocab = cfg.get_int("vocab_size");
  s.hidden = cfg.get_int("hidden_size");
  s.layers = cfg.get_int("num_hidden_layers");
  s.intermediate = cfg.get_int("intermediate_size", 0);
  s.norm_eps = static_cast<float>(cfg.get_double("rms_norm_eps", default_eps));
  s.tie_embeddings = cfg.get_bool("tie_word_embeddings", default_tie);
  const int heads = cfg.get_int("num_attention_heads");
  const int kv = cfg.get_int("num_key_value_heads", heads);
  if (s.vocab <= 0 || s.hidden <= 0 || s.layers <= 0 || heads <= 0 || kv <= 0 || heads % kv != 0)
    fail(ErrorKind::invalid_argument, cfg.source() + ": inconsistent sizes (vocab_size, hidden_size, "
                                                     "num_hidden_layers, attention heads)");
  int head_dim = cfg.get_int("head_dim", 0);
  if (head_dim <= 0) head_dim = s.hidden / heads;
  AttentionSpec a;
  a.heads = heads;
  a.kv_heads = kv;
  a.head_dim = head_dim;
  a.scale = static_cast<float>(std::pow(static_cast<double>(head_dim), -0.5));
  a.norm_eps = s.norm_eps;
  read_rope(cfg, a, head_dim, static_cast<float>(cfg.get_double("rope_theta", default_theta)));
  s.attention.assign(static_cast<size_t>(s.layers), a);
  s.window.assign(static_cast<size_t>(s.layers), 0);
  return s;
}

namespace {

struct Layer {
  Attention attn;
  Array norm1 = array(0.0f), norm2 = array(0.0f);  // llama: input, post-attention
  std::optional<Array> post_attn_norm, post_ff_norm;  // gemma's extra norms
  std::optional<Mlp> mlp;
  std::optional<Linear> router;
  std::optional<SwitchMlp> experts;
};

Array residual(const Array& x, const Array& y) {
  if (x.dtype() != float16) return x + y;
  // Gemma's clip_residual: float16 sums saturate at the largest finite value.
  const float bound = 65504.0f;
  return clip(x.astype(float32) + y.astype(float32), array(-bound), array(bound)).astype(float16);
}

class Decoder : public Model {
 public:
  DecoderSpec spec;
  Embedding embed;
  std::vector<Layer> layers;
  Array norm = array(0.0f);
  std::optional<Linear> lm_head;
  float embed_scale = 0;

  Array moe(const Layer& l, const Array& x) const {
    Array gates = (*l.router)(x);
    const int k = spec.top_k;
    Array inds = array(0), scores = array(0.0f);
    if (spec.router == Router::topk_softmax) {
      inds = slice_last(argpartition(negative(gates), k - 1, -1), 0, k);
      scores = softmax(take_along_axis(gates, inds, -1), {-1}, true);
    } else {
      gates = softmax(gates, {-1}, true);
      const int E = gates.shape(-1);
      inds = slice_last(argpartition(gates, E - k, -1), E - k, E);
      scores = take_along_axis(gates, inds, -1);
      if (spec.norm_topk) scores = scores / scores.sum({-1}, true);
    }
    Array y = (*l.experts)(x, inds);
    return (y * expand_dims(scores, {-1})).sum({-2});
  }

  static Array slice_last(const Array& a, int start, int stop) {
    Shape lo(a.ndim(), 0), hi = a.shape();
    lo.back() = start;
    hi.back() = stop;
    return slice(a, lo, hi);
  }

  Array operator()(const Array& tokens, PromptCache& cache) const override {
    if (tokens.ndim() != 2)
      fail(ErrorKind::invalid_shape, "model input must be [batch, length] token ids");
    if (cache.size() != layers.size())
      fail(ErrorKind::invalid_argument, "the cache has " + std::to_string(cache.size()) +
                                            " layers, the model " + std::to_string(layers.size()));
    Array h = embed(tokens);
    if (spec.gemma) h = h * array(embed_scale, h.dtype());
    // The MLP's output not yet added to h: the sum and the next norm are one
    // pass (fast::add_rms_norm: the bits of the add followed by the norm).
    std::optional<Array> pending;
    auto norm_in = [&](const Array& w) {
      if (!pending) return fast::rms_norm(h, w, spec.norm_eps);
      auto [sum, n] = fast::add_rms_norm(h, *pending, w, spec.norm_eps);
      h = sum;
      pending.reset();
      return n;
    };
    for (size_t i = 0; i < layers.size(); ++i) {
      const Layer& l = layers[i];
      Array r = l.attn(spec.attention[i], norm_in(l.norm1), *cache[i]);
      if (spec.gemma) {
        h = residual(h, fast::rms_norm(r, *l.post_attn_norm, spec.norm_eps));
        r = l.mlp ? (*l.mlp)(fast::rms_norm(h, l.norm2, spec.norm_eps)) : array(0.0f);
        h = residual(h, fast::rms_norm(r, *l.post_ff_norm, spec.norm_eps));
        continue;
      }
      // The residual sum and the MLP's norm in one pass (the same bits).
      auto [h2, n] = fast::add_rms_norm(h, r, l.norm2, spec.norm_eps);
      h = h2;
      pending = l.mlp ? (*l.mlp)(n) : moe(l, n);
    }
    h = norm_in(norm);
    return lm_head ? (*lm_head)(h) : embed.as_linear(h);
  }

  PromptCache make_cache(int max_kv_size) const override {
    PromptCache c;
    for (size_t i = 0; i < layers.size(); ++i) {
      int w = spec.window[i];
      if (max_kv_size > 0 && (w == 0 || max_kv_size < w)) w = max_kv_size;
      if (w > 0)
        c.push_back(std::make_unique<RotatingKVCache>(w));
      else
        c.push_back(std::make_unique<KVCache>());
    }
    return c;
  }

  void for_each_linear(const std::function<void(const std::string&, Linear&)>& fn) {
    fn("model.embed_tokens", embed.table);
    for (size_t i = 0; i < layers.size(); ++i) {
      Layer& l = layers[i];
      const std::string p = "model.layers." + std::to_string(i) + ".";
      fn(p + "self_attn.q_proj", l.attn.q);
      fn(p + "self_attn.k_proj", l.attn.k);
      fn(p + "self_attn.v_proj", l.attn.v);
      fn(p + "self_attn.o_proj", l.attn.o);
      if (l.mlp) {
        fn(p + "mlp.gate_proj", l.mlp->gate);
        fn(p + "mlp.up_proj", l.mlp->up);
        fn(p + "mlp.down_proj", l.mlp->down);
      }
      if (l.router) fn(p + spec.moe_prefix + "." + spec.router_name, *l.router);
      if (l.experts) {
        const std::string e = p + spec.moe_prefix + "." + spec.experts_name + ".";
        fn(e + "gate_proj", l.experts->gate);
        fn(e + "up_proj", l.experts->up);
        fn(e + "down_proj", l.experts->down);
      }
    }
    if (lm_head) fn("lm_head", *lm_head);
  }

  /// q/k/v and gate/up of every layer as one product each (docs/lm.md,
  /// "Fused projections"); unfuse() drops the fused layers before the
  /// separate ones change (conversion, sharding).
  void fuse_projections() {
    for (auto& l : layers) {
      l.attn.fuse();
      if (l.mlp) l.mlp->fuse();
    }
  }
  void unfuse() {
    for (auto& l : layers) {
      l.attn.qkv.reset();
      if (l.mlp) l.mlp->gate_up.reset();
    }
  }

  void for_each_norm(const std::function<void(Array&)>& fn) {
    fn(norm);
    for (auto& l : layers) {
      fn(l.norm1);
      fn(l.norm2);
      for (auto* a : {&l.post_attn_norm, &l.post_ff_norm, &l.attn.q_norm, &l.attn.k_norm})
        if (*a) fn(**a);
    }
  }

  std::vector<std::pair<std::string, Array>> weights() const override {
    NamedList out;
    // Gemma's norms are held as 1 + w; the checkpoint stores w.
    auto norm_w = [&](const Array& a) { return spec.gemma ? a - 1.0f : a; };
    out.emplace_back("model.norm.weight", norm_w(norm));
    auto* self = const_cast<Decoder*>(this);
    self->for_each_linear([&](const std::string& name, Linear& l) { l.collect(name, out); });
    for (size_t i = 0; i < layers.size(); ++i) {
      const Layer& l = layers[i];
      const std::string p = "model.layers." + std::to_string(i) + ".";
      out.emplace_back(p + "input_layernorm.weight", norm_w(l.norm1));
      out.emplace_back(p + (spec.gemma ? "pre_feedforward_layernorm.weight" : "post_attention_layernorm.weight"),
                       norm_w(l.norm2));
      if (l.post_attn_norm) out.emplace_back(p + "post_attention_layernorm.weight", norm_w(*l.post_attn_norm));
      if (l.post_ff_norm) out.emplace_back(p + "post_feedforward_layernorm.weight", norm_w(*l.post_ff_norm));
      if (l.attn.q_norm) out.emplace_back(p + "self_attn.q_norm.weight", norm_w(*l.attn.q_norm));
      if (l.attn.k_norm) out.emplace_back(p + "self_attn.k_norm.weight", norm_w(*l.attn.k_norm));
    }
    return out;
  }

  void fill_info() {
    info_.model_type = spec.model_type;
    info_.vocab_size = spec.vocab;
    info_.hidden_size = spec.hidden;
    info_.num_layers = spec.layers;
    info_.num_heads = spec.attention.empty() ? 0 : spec.attention[0].heads;
    info_.num_kv_heads = spec.attention.empty() ? 0 : spec.attention[0].kv_heads;
    info_.head_dim = spec.attention.empty() ? 0 : spec.attention[0].head_dim;
    info_.num_parameters = info_.weight_bytes = 0;
    info_.quant_bits.reset();
    info_.quant_group_size.reset();
    DType compute = norm.dtype();
    for (auto& [name, a] : weights()) {
      info_.num_parameters += static_cast<size_t>(a.size());
      info_.weight_bytes += static_cast<size_t>(a.nbytes());
    }
    for_each_linear([&](const std::string&, Linear& l) {
      if (l.quantized() && !info_.quant_bits) {
        info_.quant_bits = l.bits;
        info_.quant_group_size = l.group_size;
      }
    });
    info_.dtype = compute;
  }
};

}  // namespace

std::shared_ptr<Model> build_decoder(DecoderSpec spec, Weights& w) {
  auto m = std::make_shared<Decoder>();
  const int H = spec.hidden;
  m->embed = w.embedding("model.embed_tokens", spec.vocab, H);
  auto norm_of = [&](const std::string& name, int dims) {
    Array a = w.take(name, {dims});
    return spec.gemma ? a + 1.0f : a;
  };
  for (int i = 0; i < spec.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    const AttentionSpec& a = spec.attention[i];
    Layer l;
    const bool ab = spec.attention_bias;
    l.attn.q = w.linear(p + "self_attn.q_proj", H, a.heads * a.head_dim, ab);
    l.attn.k = w.linear(p + "self_attn.k_proj", H, a.kv_heads * a.head_dim, ab);
    l.attn.v = w.linear(p + "self_attn.v_proj", H, a.kv_heads * a.head_dim, ab);
    l.attn.o = w.linear(p + "self_attn.o_proj", a.heads * a.head_dim, H,
                        ab && spec.model_type != "qwen2");
    if (spec.qk_norm) {
      l.attn.q_norm = norm_of(p + "self_attn.q_norm.weight", a.head_dim);
      l.attn.k_norm = norm_of(p + "self_attn.k_norm.weight", a.head_dim);
    }
    w.ignore(p + "self_attn.rotary_emb.inv_freq");
    l.norm1 = norm_of(p + "input_layernorm.weight", H);
    if (spec.gemma) {
      l.norm2 = norm_of(p + "pre_feedforward_layernorm.weight", H);
      l.post_attn_norm = norm_of(p + "post_attention_layernorm.weight", H);
      l.post_ff_norm = norm_of(p + "post_feedforward_layernorm.weight", H);
    } else {
      l.norm2 = norm_of(p + "post_attention_layernorm.weight", H);
    }
    const bool is_moe = spec.router != Router::none && (spec.moe_layer.empty() || spec.moe_layer[i]);
    if (!is_moe) {
      Mlp mlp;
      mlp.gate = w.linear(p + "mlp.gate_proj", H, spec.intermediate, spec.mlp_bias);
      mlp.up = w.linear(p + "mlp.up_proj", H, spec.intermediate, spec.mlp_bias);
      mlp.down = w.linear(p + "mlp.down_proj", spec.intermediate, H, spec.mlp_bias);
      mlp.gelu = spec.gemma;
      l.mlp = mlp;
    } else {
      const std::string mp = p + spec.moe_prefix + ".";
      l.router = w.linear(mp + spec.router_name, H, spec.experts, false);
      SwitchMlp e;
      const std::string ep = mp + spec.experts_name + ".";
      e.gate = w.stacked(ep + "gate_proj", spec.experts, H, spec.moe_intermediate);
      e.up = w.stacked(ep + "up_proj", spec.experts, H, spec.moe_intermediate);
      e.down = w.stacked(ep + "down_proj", spec.experts, spec.moe_intermediate, H);
      l.experts = e;
    }
    m->layers.push_back(std::move(l));
  }
  m->norm = norm_of("model.norm.weight", H);
  if (spec.tie_embeddings)
    w.ignore("lm_head.weight");
  else
    m->lm_head = w.linear("lm_head", H, spec.vocab, false);
  // Gemma scales embeddings by sqrt(hidden) rounded to bfloat16 (mlx-lm).
  m->embed_scale = array(std::sqrt(static_cast<float>(H))).astype(bfloat16).astype(float32).item<float>();
  m->spec = std::move(spec);
  w.finish();
  m->fill_info();
  return m;
}

void convert_model(Model& model, std::optional<DType> dtype, bool dequantize_weights,
                   std::optional<int> quantize_bits, int group_size, std::optional<Device> device) {
  if (auto* own = dynamic_cast<SelfConverting*>(&model))
    return own->convert(dtype, dequantize_weights, quantize_bits, group_size, device);
  auto& m = dynamic_cast<Decoder&>(model);
  m.unfuse();
  const DType target = dtype.value_or(m.norm.dtype());
  m.for_each_linear([&](const std::string&, Linear& l) { convert(l, target, dequantize_weights); });
  m.for_each_norm([&](Array& a) {
    if (a.dtype() != target) a = a.astype(target);
  });
  for (auto& a : m.spec.attention)
    if (a.rope_freqs) a.rope_freqs = a.rope_freqs->astype(float32);
  if (quantize_bits) {
    m.for_each_linear([&](const std::string& name, Linear& l) {
      if (l.quantized()) return;
      const int in = l.weight.shape(-1);
      if (in % group_size != 0) return;  // as mlx-lm: layers the group does not divide stay
      (void)name;
      auto q = quantize(l.weight, group_size, *quantize_bits);
      l.weight = q[0];
      l.scales = q[1];
      l.biases = q[2];
      l.bits = *quantize_bits;
      l.group_size = group_size;
    });
  }
  // Every array evaluated where it will live (GGUF conversions and
  // quantization done once here, not in every call).
  std::vector<Array> all;
  auto place = [&](Array& a) {
    if (device) a = copy(a, StreamOrDevice(*device));
    all.push_back(a);
  };
  m.for_each_linear([&](const std::string&, Linear& l) {
    for (Array* a : {&l.weight})
      place(*a);
    for (auto* o : {&l.scales, &l.biases, &l.bias})
      if (*o) place(**o);
  });
  m.for_each_norm(place);
  eval(all);
  m.fuse_projections();
  m.fill_info();
}

}  // namespace nuvec::lm::detail

namespace nuvec::lm {

void shard_model(Model& model, const distributed::Group& group) {
  auto* m = dynamic_cast<detail::Decoder*>(&model);
  if (!m)
    (Error(ErrorKind::invalid_argument, "shard_model: this architecture (" + model.info().model_type +
                                            ") has no tensor-parallel form yet")).raise();
  const int n = group.size(), r = group.rank();
  if (n == 1) return;
  for (size_t i = 0; i < m->layers.size(); ++i) {
    auto& l = m->layers[i];
    auto& a = m->spec.attention[i];
    const std::string p = "layer " + std::to_string(i);
    if (!l.mlp)
      (Error(ErrorKind::invalid_argument, "shard_model: " + p + " is a mixture of experts (not sharded yet)")).raise();
    if (a.heads % n != 0 || a.kv_heads % n != 0)
      (Error(ErrorKind::invalid_argument, "shard_model: " + std::to_string(a.heads) + " query and " +
                                              std::to_string(a.kv_heads) + " key/value heads do not split over " +
                                              std::to_string(n) + " ranks")).raise();
  }
  // Sharded copies (handles) replace the layers only when all succeeded,
  // so that a model that cannot be sharded stays whole.
  auto layers = m->layers;
  auto attention = m->spec.attention;
  for (size_t i = 0; i < layers.size(); ++i) {
    auto& l = layers[i];
    auto& a = attention[i];
    const std::string p = "model.layers." + std::to_string(i) + ".";
    l.attn.qkv.reset();  // fused again below, from the shards
    l.mlp->gate_up.reset();
    detail::shard_rows(l.attn.q, n, r, p + "self_attn.q_proj");
    detail::shard_rows(l.attn.k, n, r, p + "self_attn.k_proj");
    detail::shard_rows(l.attn.v, n, r, p + "self_attn.v_proj");
    detail::shard_columns(l.attn.o, group, p + "self_attn.o_proj");
    detail::shard_rows(l.mlp->gate, n, r, p + "mlp.gate_proj");
    detail::shard_rows(l.mlp->up, n, r, p + "mlp.up_proj");
    detail::shard_columns(l.mlp->down, group, p + "mlp.down_proj");
    a.heads /= n;
    a.kv_heads /= n;
  }
  m->layers = std::move(layers);
  m->spec.attention = std::move(attention);
  std::vector<Array> all;
  m->for_each_linear([&](const std::string&, detail::Linear& l) { all.push_back(l.weight); });
  eval(all);
  m->fuse_projections();
}

}  // namespace nuvec::lm

