// mlx-lm's sample_utils in C++: the same filters in the same order, the same
// random draws.
#include "nuvec/lm/sample.h"

#include <cmath>

#include "config.h"

namespace nuvec::lm {

using detail::fail;

namespace {
Array neg_inf(DType dt) { return array(-INFINITY, dt); }
Array index_array(const std::vector<int>& v) { return array(v, Shape{static_cast<int>(v.size())}); }
}  // namespace

Array apply_top_k(const Array& logprobs, int top_k) {
  const int V = logprobs.shape(-1);
  if (!(0 < top_k && top_k < V))
    fail(ErrorKind::invalid_argument,
         "[sampler] top_k has to be an integer in (0, " + std::to_string(V) + "), got " + std::to_string(top_k));
  Array idx = argpartition(negative(logprobs), top_k - 1, -1);
  Shape lo(idx.ndim(), 0), hi = idx.shape();
  lo.back() = top_k;
  Array drop = slice(idx, lo, hi);
  return put_along_axis(logprobs, drop, neg_inf(logprobs.dtype()), -1);
}

Array apply_min_p(const Array& logprobs, float min_p, int min_tokens_to_keep) {
  if (!(0 <= min_p && min_p <= 1))
    fail(ErrorKind::invalid_argument, "[sampler] min_p has to be in [0, 1], got " + std::to_string(min_p));
  if (min_tokens_to_keep < 1)
    fail(ErrorKind::invalid_argument, "[sampler] min_tokens_to_keep has to be positive");
  Array top = max(logprobs, {-1}, true);
  Array scaled = top + static_cast<float>(std::log(static_cast<double>(min_p)));
  Array remove = less(logprobs, scaled);
  if (min_tokens_to_keep > 1) {
    Array idx = argpartition(logprobs, -min_tokens_to_keep, -1);
    Shape lo(idx.ndim(), 0), hi = idx.shape();
    lo.back() = hi.back() - min_tokens_to_keep;
    remove = put_along_axis(remove, slice(idx, lo, hi), array(false), -1);
  }
  return where(remove, neg_inf(logprobs.dtype()), logprobs);
}

Array apply_top_p(const Array& logprobs, float top_p) {
  Array sorted = sort(logprobs, -1);
  Array probs = exp(sorted.astype(float32));
  Array above = cumsum(probs, -1, true, false);
  Shape lo(probs.ndim(), 0), hi = probs.shape();
  hi.back() = 1;
  Array total = slice(above, lo, hi) + slice(probs, lo, hi);
  Array dropped = greater_equal(above, total * top_p).sum({-1}, true);
  Array threshold = take_along_axis(sorted, dropped, -1);
  return where(less(logprobs, threshold), neg_inf(logprobs.dtype()), logprobs);
}

Array apply_xtc(const Array& logits, float probability, float threshold, const std::vector<int>& special) {
  if (!(0 <= threshold && threshold <= 0.5f))
    fail(ErrorKind::invalid_argument, "[sampler] xtc threshold has to be in [0, 0.5]");
  if (!(0 <= probability && probability <= 1))
    fail(ErrorKind::invalid_argument, "[sampler] xtc probability has to be in [0, 1]");
  Array probs = softmax(logits, {-1});
  Array mask = greater(probs, min(where(greater(probs, array(threshold)), probs, array(INFINITY)), {-1}, true));
  if (!special.empty()) {
    Array idx = index_array(special);
    Shape s = mask.shape();
    s.back() = static_cast<int>(special.size());
    mask = put_along_axis(mask, broadcast_to(idx, s), array(false), -1);
  }
  Array coin = random::uniform(0.0f, 1.0f, Shape{});
  return where(greater(coin, array(probability)), logits, where(mask, neg_inf(logits.dtype()), logits));
}

Sampler make_sampler(const SamplerOptions& o) {
  if (o.temp < 0) fail(ErrorKind::invalid_argument, "[sampler] temp must not be negative");
  if (o.top_k < 0) fail(ErrorKind::invalid_argument, "[sampler] top_k must not be negative");
  if (o.temp == 0) return [](const Array& lp) { return argmax(lp, -1); };
  return [o](const Array& lp_in) {
    Array lp = lp_in;
    if (0 < o.top_p && o.top_p < 1) lp = apply_top_p(lp, o.top_p);
    if (o.min_p != 0) lp = apply_min_p(lp, o.min_p, o.min_tokens_to_keep);
    if (o.xtc_probability > 0) lp = apply_xtc(lp, o.xtc_probability, o.xtc_threshold, o.xtc_special_tokens);
    if (o.top_k > 0) lp = apply_top_k(lp, o.top_k);
    return random::categorical(lp * (1.0f / o.temp));
  };
}

std::vector<LogitsProcessor> make_logits_processors(const ProcessorOptions& o) {
  std::vector<LogitsProcessor> out;
  if (!o.logit_bias.empty()) {
    std::vector<int> ids;
    std::vector<float> vals;
    for (auto [k, v] : o.logit_bias) {
      ids.push_back(k);
      vals.push_back(v);
    }
    Array idx = index_array(ids), add = array(vals, Shape{static_cast<int>(vals.size())});
    out.push_back([idx, add](const std::vector<int>&, const Array& logits) {
      return logits.at(Index(ellipsis), Index(idx)).add(add);
    });
  }
  // The last `ctx` tokens, as an index array (empty: none yet).
  auto recent = [](const std::vector<int>& tokens, int ctx) {
    const size_t n = std::min<size_t>(tokens.size(), static_cast<size_t>(std::max(ctx, 0)));
    return std::vector<int>(tokens.end() - static_cast<std::ptrdiff_t>(n), tokens.end());
  };
  if (o.repetition_penalty && *o.repetition_penalty != 0) {
    const float p = *o.repetition_penalty;
    if (p < 0) fail(ErrorKind::invalid_argument, "[sampler] repetition_penalty must not be negative");
    const int ctx = o.repetition_context_size;
    out.push_back([p, ctx, recent](const std::vector<int>& tokens, const Array& logits) {
      auto r = recent(tokens, ctx);
      if (r.empty()) return logits;
      Array idx = index_array(r);
      Array sel = take(logits, idx, -1);
      sel = where(less(sel, array(0.0f)), sel * p, sel / p);
      return logits.at(Index(ellipsis), Index(idx)).set(sel);
    });
  }
  if (o.presence_penalty && *o.presence_penalty != 0) {
    const float p = *o.presence_penalty;
    const int ctx = o.presence_context_size;
    out.push_back([p, ctx, recent](const std::vector<int>& tokens, const Array& logits) {
      auto r = recent(tokens, ctx);
      if (r.empty()) return logits;
      // Each token once, as an indexed -= of repeated indices in MLX
      // (the last write wins, so a repeat subtracts once).
      return logits.at(Index(ellipsis), Index(index_array(r))).set(take(logits, index_array(r), -1) - p);
    });
  }
  if (o.frequency_penalty && *o.frequency_penalty != 0) {
    const float p = *o.frequency_penalty;
    const int ctx = o.frequency_context_size;
    out.push_back([p, ctx, recent](const std::vector<int>& tokens, const Array& logits) {
      auto r = recent(tokens, ctx);
      if (r.empty()) return logits;
      return logits.at(Index(ellipsis), Index(index_array(r))).subtract(array(p));
    });
  }
  return out;
}

}  // namespace nuvec::lm
