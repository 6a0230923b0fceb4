// Rule cases of the fast primitives (include/nuvec/primitives/fast.h): their
// dedicated rules (rms_norm, layer_norm, rope, softmax, cross_entropy) and
// those through the composite (add_rms_norm, logsumexp, attention) against
// float64 finite differences, and vmap against a loop.
#include "support/rule_cases.h"

namespace nuvec::rulecases {

namespace {

using Arrays = std::vector<Array>;

template <class F>
FlatFunction flat(F f) {
  return [f](const Arrays& in) { return Arrays{f(in)}; };
}

}  // namespace

RuleCase Case<PrimitiveId::RMSNorm>::make(std::mt19937&) {
  return {{probe("weighted", flat([](const Arrays& a) { return fast::rms_norm(a[0], a[1], 1e-5f); }),
                 {{3, 5}, {5}}),
           probe("no weight", flat([](const Arrays& a) { return fast::rms_norm(a[0], std::nullopt, 1e-5f); }),
                 {{2, 4}})}};
}

RuleCase Case<PrimitiveId::LayerNorm>::make(std::mt19937&) {
  return {{probe("weight and bias",
                 flat([](const Arrays& a) { return fast::layer_norm(a[0], a[1], a[2], 1e-5f); }),
                 {{3, 5}, {5}, {5}}),
           probe("plain", flat([](const Arrays& a) {
                   return fast::layer_norm(a[0], std::nullopt, std::nullopt, 1e-5f);
                 }),
                 {{2, 6}})}};
}

RuleCase Case<PrimitiveId::AddRMSNorm>::make(std::mt19937&) {
  FlatFunction f = [](const Arrays& a) {
    auto [h, y] = fast::add_rms_norm(a[0], a[1], a[2], 1e-5f);
    return Arrays{h, y};
  };
  return {{probe("residual and weight", f, {{2, 4}, {2, 4}, {4}})}};
}

RuleCase Case<PrimitiveId::RoPE>::make(std::mt19937&) {
  return {{probe("halves, all features",
                 flat([](const Arrays& a) { return fast::rope(a[0], 8, false, 10000.0f, 1.0f, 2); }),
                 {{1, 2, 3, 8}}),
           probe("traditional, part of the features",
                 flat([](const Arrays& a) { return fast::rope(a[0], 4, true, 500.0f, 0.5f, 0); }),
                 {{2, 3, 6}}),
           probe("an offset per batch item", flat([](const Arrays& a) {
                   return fast::rope(a[0], 6, false, 10000.0f, 1.0f, array({1, 4}));
                 }),
                 {{2, 1, 2, 6}})}};
}

RuleCase Case<PrimitiveId::Softmax>::make(std::mt19937&) {
  return {{probe("last axis", flat([](const Arrays& a) { return ops::softmax(a[0], -1); }), {{3, 5}}),
           probe("precise, 1-D", flat([](const Arrays& a) { return ops::softmax(a[0], -1, true); }),
                 {{4}})}};
}

RuleCase Case<PrimitiveId::LogSumExp>::make(std::mt19937&) {
  return {{probe("last axis", flat([](const Arrays& a) { return ops::logsumexp(a[0], -1); }), {{3, 5}}),
           probe("kept", flat([](const Arrays& a) { return ops::logsumexp(a[0], -1, true); }),
                 {{2, 2, 3}})}};
}

RuleCase Case<PrimitiveId::CrossEntropy>::make(std::mt19937&) {
  // The loss is float32 (as MLX's): a single-precision path.
  return {{probe("plain", flat([](const Arrays& a) {
                   return fast::cross_entropy(a[0], array({2, 0, 4}));
                 }),
                 {{3, 5}})
               .single_precision(),
           probe("smoothed, an ignored row", flat([](const Arrays& a) {
                   return fast::cross_entropy(a[0], array({1, -1}),
                                              {.label_smoothing = 0.1f, .ignore_index = -1});
                 }),
                 {{2, 4}})
               .single_precision()}};
}

RuleCase Case<PrimitiveId::Attention>::make(std::mt19937&) {
  return {{probe("causal, grouped heads", flat([](const Arrays& a) {
                   return fast::scaled_dot_product_attention(a[0], a[1], a[2], 0.5f, "causal");
                 }),
                 {{1, 2, 3, 4}, {1, 1, 5, 4}, {1, 1, 5, 4}}),
           probe("additive mask and sinks", flat([](const Arrays& a) {
                   Array mask = array({0.0, -1.0, 0.5, 0.0, 0.0, -2.0}, {2, 3});
                   return fast::scaled_dot_product_attention(a[0], a[1], a[2], 0.7f, "", mask,
                                                             a[3]);
                 }),
                 {{1, 2, 2, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}, {2}})}};
}

RuleCase Case<PrimitiveId::CrossEntropyGrad>::make(std::mt19937&) {
  // The gradient of the mean loss: the CrossEntropyGrad node, whose own
  // derivatives (second order) go through its composite.
  FlatFunction f = [](const Arrays& a) {
    Array t = array({2, 0, 4});
    return Arrays{grad([t](const Array& l) { return ops::sum(fast::cross_entropy(l, t)); })(a[0])};
  };
  FlatFunction smoothed = [](const Arrays& a) {
    Array t = array({1, 3});
    return Arrays{grad([t](const Array& l) {
      return ops::sum(fast::cross_entropy(l, t, {.label_smoothing = 0.2f}));
    })(a[0])};
  };
  return {{probe("plain", f, {{3, 5}}).single_precision(),
           probe("smoothed", smoothed, {{2, 4}}).single_precision()}};
}

RuleCase Case<PrimitiveId::AttentionGrad>::make(std::mt19937& rng) {
  // The vjp of attention at a fixed cotangent: the AttentionGrad node.
  Array g = draw(dom::real, {1, 2, 3, 4}, rng);
  FlatFunction f = [g](const Arrays& a) {
    auto sdpa = [](const Arrays& qkv) {
      return Arrays{fast::scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], 0.5f, "causal")};
    };
    return vjp(sdpa, a, {g}).second;
  };
  return {{probe("causal, grouped heads", f, {{1, 2, 3, 4}, {1, 1, 5, 4}, {1, 1, 5, 4}})}};
}

}  // namespace nuvec::rulecases
