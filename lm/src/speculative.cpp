// Greedy speculative decoding with a draft model (the serial rule makes the
// verified tokens the target's own greedy tokens).
#include <algorithm>

#include "config.h"
#include "nuvec/lm/generate.h"

namespace nuvec::lm {

using detail::fail;

namespace {
Array row(const std::vector<int>& ids) { return array(ids, Shape{1, static_cast<int>(ids.size())}); }

// Feeds `ids` to `model` in chunks of `step` (the last chunk's logits out).
Array feed(const Model& model, PromptCache& cache, const std::vector<int>& ids, int step) {
  std::optional<Array> logits;
  for (size_t done = 0; done < ids.size();) {
    size_t n = std::min(ids.size() - done, static_cast<size_t>(step));
    logits = model(row(std::vector<int>(ids.begin() + static_cast<std::ptrdiff_t>(done),
                                        ids.begin() + static_cast<std::ptrdiff_t>(done + n))),
                   cache);
    eval_cache(cache);
    done += n;
  }
  return *logits;
}

std::vector<int> argmax_rows(const Array& logits) {
  auto v = argmax(logits, -1).astype(int32).reshape({-1}).to_vector<int32_t>();
  return std::vector<int>(v.begin(), v.end());
}
}  // namespace

std::vector<int> speculative_generate_tokens(const Model& model, const Model& draft, const std::vector<int>& prompt,
                                             const GenerateOptions& options, int num_draft) {
  if (num_draft < 1 || num_draft > 7)
    fail(ErrorKind::invalid_argument, "[speculative] num_draft must be in [1, 7] (verification of at most 8 rows)");
  if (options.sampler.temp != 0)
    fail(ErrorKind::invalid_argument, "[speculative] only greedy sampling is supported");
  if (model.info().vocab_size != draft.info().vocab_size)
    fail(ErrorKind::invalid_argument, "[speculative] the draft's vocabulary differs from the model's");
  if (prompt.empty()) fail(ErrorKind::invalid_argument, "[speculative] the prompt is empty");
  const int step = options.prefill_step_size;
  PromptCache tc = model.make_cache(options.max_kv_size), dc = draft.make_cache(options.max_kv_size);
  // The target's cache holds the prompt but its last token, prefilled in
  // generate_tokens' chunks, so every later call matches that run.
  std::vector<int> head(prompt.begin(), prompt.end() - 1);
  if (!head.empty()) feed(model, tc, head, step);
  std::vector<int> pending_draft = prompt;  // tokens the draft has not seen
  int y = prompt.back();
  std::vector<int> out;
  const auto& eos = options.eos_token_ids;
  auto done = [&] { return options.max_tokens >= 0 && static_cast<int>(out.size()) >= options.max_tokens; };
  while (!done()) {
    // Draft proposals.
    std::vector<int> proposals;
    for (int i = 0; i < num_draft; ++i) {
      Array logits = feed(draft, dc, pending_draft, step);
      auto ids = argmax_rows(slice(logits, {0, logits.shape(1) - 1, 0}, logits.shape()));
      proposals.push_back(ids[0]);
      pending_draft = {ids[0]};
    }
    // Verification: y and the proposals in one call.
    std::vector<int> input{y};
    input.insert(input.end(), proposals.begin(), proposals.end());
    auto verified = argmax_rows(model(row(input), tc));
    int accepted = 0;
    while (accepted < num_draft && verified[accepted] == proposals[accepted]) ++accepted;
    // Emit the target's tokens for the accepted prefix and the one after.
    bool stop = false;
    for (int i = 0; i <= accepted && !done() && !stop; ++i) {
      out.push_back(verified[i]);
      stop = std::find(eos.begin(), eos.end(), verified[i]) != eos.end();
    }
    if (stop) break;
    for (auto& c : tc)
      if (!c->trim(num_draft - accepted)) fail(ErrorKind::invalid_argument, "[speculative] a cache cannot be trimmed");
    // The draft saw y and proposals[0 .. num_draft - 2]; keep what was accepted.
    const int draft_extra = std::max(0, (num_draft - 1) - accepted);
    for (auto& c : dc)
      if (!c->trim(draft_extra)) fail(ErrorKind::invalid_argument, "[speculative] a draft cache cannot be trimmed");
    pending_draft.clear();
    if (accepted == num_draft) pending_draft.push_back(proposals.back());
    y = verified[accepted];
    pending_draft.push_back(y);
  }
  return out;
}

}  // namespace nuvec::lm
