// Samplers and logits processors, as mlx-lm's make_sampler and
// make_logits_processors (docs/lm.md, "Sampling"). A sampler takes
// log-probabilities [B, V] and returns token ids [B] (uint32, as
// argmax / random::categorical give them); draws advance the thread's key
// sequence as mlx-lm's do, so a seed gives mlx-lm's tokens.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "nuvec/nuvec.h"

namespace nuvec::lm {

using Sampler = std::function<Array(const Array& logprobs)>;
/// (tokens so far, logits [B, V]) -> logits.
using LogitsProcessor = std::function<Array(const std::vector<int>& tokens, const Array& logits)>;

struct SamplerOptions {
  float temp = 0.0f;  ///< 0: greedy (argmax)
  float top_p = 0.0f;  ///< applied when 0 < top_p < 1
  float min_p = 0.0f;
  int min_tokens_to_keep = 1;
  int top_k = 0;
  float xtc_probability = 0.0f;
  float xtc_threshold = 0.1f;
  std::vector<int> xtc_special_tokens;
};

/// mlx-lm's make_sampler: the filters top-p, min-p, XTC, top-k in that
/// order, then categorical sampling of logprobs / temp. Invalid options
/// (top_k < 0, min_p outside [0, 1], ...) throw nuvec::Error.
Sampler make_sampler(const SamplerOptions& options = {});

struct ProcessorOptions {
  std::map<int, float> logit_bias;
  std::optional<float> repetition_penalty;
  int repetition_context_size = 20;
  std::optional<float> presence_penalty;
  int presence_context_size = 20;
  std::optional<float> frequency_penalty;
  int frequency_context_size = 20;
};

/// mlx-lm's make_logits_processors.
std::vector<LogitsProcessor> make_logits_processors(const ProcessorOptions& options = {});

/// The filters alone (log-probabilities in, filtered log-probabilities out).
Array apply_top_k(const Array& logprobs, int top_k);
Array apply_top_p(const Array& logprobs, float top_p);
Array apply_min_p(const Array& logprobs, float min_p, int min_tokens_to_keep = 1);
Array apply_xtc(const Array& logits, float probability, float threshold,
                const std::vector<int>& special_tokens);

}  // namespace nuvec::lm
