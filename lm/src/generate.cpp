// Generation loops: mlx-lm's generate_step (TokenGenerator), stream_generate
// and generate, and the greedy helpers built on them.
#include "nuvec/lm/generate.h"

#include <algorithm>
#include <chrono>

#include "config.h"

namespace nuvec::lm {

using detail::fail;

namespace {
double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}
// Peak memory of the device generation runs on (the host's for the CPU).
size_t peak_bytes() { return default_device() == Device::gpu ? get_peak_memory(Device::gpu) : get_peak_memory(); }
void reset_peak() {
  if (default_device() == Device::gpu) reset_peak_memory(Device::gpu);
  reset_peak_memory();
}
Array row_tokens(const std::vector<int>& ids) {
  return array(ids, Shape{1, static_cast<int>(ids.size())});
}
}  // namespace

TokenGenerator::TokenGenerator(const Model& model, std::vector<int> prompt, PromptCache& cache,
                               const GenerateOptions& options)
    : model_(model), cache_(cache), options_(options), prompt_(std::move(prompt)) {
  if (prompt_.empty()) fail(ErrorKind::invalid_argument, "[generate] the prompt is empty");
  const int vocab = model.info().vocab_size;
  for (int id : prompt_)
    if (id < 0 || id >= vocab)
      fail(ErrorKind::out_of_range, "[generate] prompt token " + std::to_string(id) + " is outside the vocabulary of " +
                                        std::to_string(vocab));
  if (options_.prefill_step_size <= 0) fail(ErrorKind::invalid_argument, "[generate] prefill_step_size must be positive");
  if (cache_.empty()) cache_ = model.make_cache(options_.max_kv_size);
  if (options_.seed) random::seed(*options_.seed);
  sampler_ = make_sampler(options_.sampler);
  processors_ = make_logits_processors(options_.processors);
  prompt_tokens_ = static_cast<int>(prompt_.size());
}

// logprobs[token] as float32 [1]: one fused masked sum over the vocabulary
// (the same value; a gather's index arithmetic is a dozen tiny kernels on
// the GPU), against ids 0 .. V-1 made once.
Array TokenGenerator::chosen_logprob(const Array& logprobs, const Array& token) {
  static auto pick = compile([](const Array& lp, const Array& tok, const Array& ids) {
    return sum(where(equal(ids, tok), lp.astype(float32), array(0.0f)), {-1});
  });
  const int V = logprobs.shape(-1);
  if (!vocab_ids_ || vocab_ids_->size() != V) {
    vocab_ids_ = arange(V, int32).reshape({1, V});
    vocab_ids_->eval();
  }
  return pick(logprobs, token.reshape({1, 1}), *vocab_ids_);
}

TokenGenerator::Pending TokenGenerator::step(const std::vector<int>& input) {
  return step_array(row_tokens(input));
}

TokenGenerator::Pending TokenGenerator::step_array(const Array& input) {
  Array logits = model_(input, cache_);
  Shape lo{0, logits.shape(1) - 1, 0}, hi = logits.shape();
  logits = slice(logits, lo, hi).squeeze({1});
  for (const auto& p : processors_) logits = p(history_, logits);
  if (options_.kv_bits && cache_[0]->offset() > options_.quantized_kv_start)
    quantize_cache(cache_, options_.kv_group_size, *options_.kv_bits);
  Array logprobs = logits - logsumexp(logits, {-1}, true);
  Array token = sampler_(logprobs).astype(int32).reshape({1});
  return {token, chosen_logprob(logprobs, token), logprobs.squeeze({0})};
}

std::optional<TokenStep> TokenGenerator::next() {
  if (options_.max_tokens >= 0 && produced_ >= options_.max_tokens) return std::nullopt;
  if (!current_) {
    const double t0 = now();
    // Prefill: every prompt token but the last in chunks, each chunk's cache
    // evaluated before the next is built (mlx-lm's plan).
    size_t done = 0;
    while (prompt_.size() - done > 1) {
      const size_t n = std::min<size_t>(static_cast<size_t>(options_.prefill_step_size), prompt_.size() - done - 1);
      std::vector<int> chunk(prompt_.begin() + static_cast<std::ptrdiff_t>(done),
                             prompt_.begin() + static_cast<std::ptrdiff_t>(done + n));
      model_(row_tokens(chunk), cache_);
      if (options_.kv_bits && cache_[0]->offset() > options_.quantized_kv_start)
        quantize_cache(cache_, options_.kv_group_size, *options_.kv_bits);
      eval_cache(cache_);
      if (!processors_.empty()) history_.insert(history_.end(), chunk.begin(), chunk.end());
      done += n;
    }
    std::vector<int> rest(prompt_.begin() + static_cast<std::ptrdiff_t>(done), prompt_.end());
    if (!processors_.empty()) history_.insert(history_.end(), rest.begin(), rest.end());
    current_ = step(rest);
    eval({current_->token, current_->chosen, current_->logprobs});
    prompt_seconds_ = now() - t0;
  }
  Pending cur = *current_;
  ++produced_;
  const bool more = options_.max_tokens < 0 || produced_ < options_.max_tokens;
  // The next step's graph is built on this token while the async worker
  // still enqueues this one's kernels (mlx-lm's overlap of host work with
  // the device), then this token is read (waiting for its kernels only),
  // then the next step starts: started before the read, the read would
  // wait for the worker to enqueue it too. Logits processors need the
  // token in the history before the next step is built.
  if (more && processors_.empty()) current_ = step_array(cur.token.reshape({1, 1}));
  const int token = cur.token.to_vector<int32_t>().at(0);
  if (more && !processors_.empty()) {
    history_.push_back(token);
    current_ = step_array(cur.token.reshape({1, 1}));
  }
  if (more) async_eval({current_->token, current_->chosen, current_->logprobs});
  TokenStep out;
  out.token = token;
  out.logprob = cur.chosen.to_vector<float>().at(0);
  if (options_.top_logprobs > 0) {
    auto lp = cur.logprobs.astype(float32).to_vector<float>();
    std::vector<int> ids(lp.size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
    const size_t k = std::min<size_t>(static_cast<size_t>(options_.top_logprobs), ids.size());
    std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                      [&](int a, int b) { return lp[a] > lp[b] || (lp[a] == lp[b] && a < b); });
    for (size_t i = 0; i < k; ++i) out.top.emplace_back(ids[i], lp[ids[i]]);
  }
  return out;
}

GenerationResponse stream_generate(const Model& model, const Tokenizer& tokenizer, const std::vector<int>& prompt,
                                   const GenerateOptions& options_in,
                                   const std::function<bool(const GenerationResponse&)>& on_token, PromptCache* cache) {
  GenerateOptions options = options_in;
  std::vector<int> eos = options.eos_token_ids.empty() ? tokenizer.eos_token_ids() : options.eos_token_ids;
  PromptCache local;
  PromptCache& c = cache ? *cache : local;
  reset_peak();
  TokenGenerator gen(model, prompt, c, options);
  StreamingDetokenizer detok(tokenizer);
  GenerationResponse r;
  r.prompt_tokens = static_cast<int>(prompt.size());
  double t_gen = 0;
  while (auto step = gen.next()) {
    if (r.generation_tokens == 0) {
      r.prompt_tps = r.prompt_tokens / std::max(gen.prompt_seconds(), 1e-9);
      t_gen = now();
    }
    r.generation_tokens++;
    r.step = *step;
    const bool stop = std::find(eos.begin(), eos.end(), step->token) != eos.end();
    r.text = stop ? detok.finalize() : detok.add(step->token);
    r.generation_tps = (r.generation_tokens - 1) / std::max(now() - t_gen, 1e-9);
    r.peak_memory_gb = static_cast<double>(peak_bytes()) / 1e9;
    r.finish_reason = stop ? "stop" : (options.max_tokens >= 0 && r.generation_tokens >= options.max_tokens ? "length" : "");
    if (r.finish_reason == "length") r.text += detok.finalize();
    if (!on_token(r) || stop) break;
  }
  if (r.generation_tokens > 1) r.generation_tps = (r.generation_tokens - 1) / std::max(now() - t_gen, 1e-9);
  return r;
}

std::string generate(const Model& model, const Tokenizer& tokenizer, const std::vector<int>& prompt,
                     const GenerateOptions& options) {
  std::string text;
  stream_generate(model, tokenizer, prompt, options, [&](const GenerationResponse& r) {
    text += r.text;
    return true;
  });
  return text;
}

std::vector<int> generate_tokens(const Model& model, const std::vector<int>& prompt, const GenerateOptions& options,
                                 PromptCache* cache) {
  PromptCache local;
  TokenGenerator gen(model, prompt, cache ? *cache : local, options);
  std::vector<int> out;
  const auto& eos = options.eos_token_ids;
  while (auto s = gen.next()) {
    out.push_back(s->token);
    if (std::find(eos.begin(), eos.end(), s->token) != eos.end()) break;
  }
  return out;
}

}  // namespace nuvec::lm
