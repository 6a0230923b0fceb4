// Generation (docs/lm.md, "Generation"), as mlx-lm's generate_step,
// stream_generate and generate: prefill in chunks, then one token per step,
// the next step's graph built and started (async_eval) before the current
// token is handed out.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nuvec/lm/model.h"
#include "nuvec/lm/sample.h"

namespace nuvec::lm {

struct GenerateOptions {
  int max_tokens = 256;  ///< -1: until an end-of-sequence token
  SamplerOptions sampler;
  ProcessorOptions processors;
  int prefill_step_size = 2048;
  int max_kv_size = 0;  ///< > 0: rotating caches of that size
  std::optional<int> kv_bits;
  int kv_group_size = 64;
  int quantized_kv_start = 5000;
  /// Seeds the thread's key sequence (random::seed) before the first step.
  std::optional<uint64_t> seed;
  /// How many of the most likely tokens to report with each step.
  int top_logprobs = 0;
  /// Stop at these ids (besides max_tokens); empty: the model's EOS ids.
  std::vector<int> eos_token_ids;
};

/// One generated token.
struct TokenStep {
  int token = 0;
  float logprob = 0;                          ///< of the chosen token
  std::vector<std::pair<int, float>> top;     ///< (id, logprob), most likely first
};

/// mlx-lm's generate_step: yields tokens one at a time from a prompt and a
/// cache (created when `cache` is empty; else continued, so a prompt cache
/// from an earlier turn or file resumes where it stopped).
class TokenGenerator {
 public:
  TokenGenerator(const Model& model, std::vector<int> prompt, PromptCache& cache,
                 const GenerateOptions& options = {});
  /// The next token, or nothing after max_tokens.
  std::optional<TokenStep> next();
  /// Seconds spent in the prompt (prefill up to the first token) so far.
  double prompt_seconds() const { return prompt_seconds_; }
  int prompt_tokens() const { return prompt_tokens_; }

 private:
  struct Pending {
    Array token, chosen, logprobs;  // int32 [1], its log-probability [1], [V]
  };
  Pending step(const std::vector<int>& input);
  Pending step_array(const Array& input);
  Array chosen_logprob(const Array& logprobs, const Array& token);
  std::optional<Array> vocab_ids_;
  const Model& model_;
  PromptCache& cache_;
  GenerateOptions options_;
  Sampler sampler_;
  std::vector<LogitsProcessor> processors_;
  std::vector<int> history_;
  std::vector<int> prompt_;
  std::optional<Pending> current_;
  int produced_ = 0;
  int prompt_tokens_ = 0;
  double prompt_seconds_ = 0;
};

/// What stream_generate hands to its callback for every token.
struct GenerationResponse {
  std::string text;  ///< the new text (whole characters) this token completes
  TokenStep step;
  int prompt_tokens = 0;
  double prompt_tps = 0;
  int generation_tokens = 0;
  double generation_tps = 0;
  double peak_memory_gb = 0;
  /// "stop" (an EOS token), "length" (max_tokens), or empty mid-stream.
  std::string finish_reason;
};

/// Generates from `prompt` (ids), calling `on_token` for every token (return
/// false to stop). The EOS token ends generation and is not streamed as text.
/// Returns the last response (its statistics).
GenerationResponse stream_generate(const Model& model, const Tokenizer& tokenizer,
                                   const std::vector<int>& prompt, const GenerateOptions& options,
                                   const std::function<bool(const GenerationResponse&)>& on_token,
                                   PromptCache* cache = nullptr);

/// The generated text of `prompt`.
std::string generate(const Model& model, const Tokenizer& tokenizer, const std::vector<int>& prompt,
                     const GenerateOptions& options = {});

/// Greedy or sampled ids only, without a tokenizer (max_tokens of them,
/// stopping early only at `options.eos_token_ids`).
std::vector<int> generate_tokens(const Model& model, const std::vector<int>& prompt,
                                 const GenerateOptions& options = {}, PromptCache* cache = nullptr);

/// Greedy speculative decoding: `draft` proposes `num_draft` tokens (1 to
/// 7), `model` verifies them and the token after in one call. By the serial
/// rule (attention over 2 to 8 query rows gives each row its one-query bits)
/// and row independence of the products, the output equals `model`'s own
/// greedy generate_tokens token for token. The models must share a
/// vocabulary; options.sampler must be greedy.
std::vector<int> speculative_generate_tokens(const Model& model, const Model& draft,
                                             const std::vector<int>& prompt,
                                             const GenerateOptions& options = {},
                                             int num_draft = 3);

}  // namespace nuvec::lm
