// batch_generate_tokens (nuvec/lm/batch.h): solo prefills into a paged
// cache, then decode steps of the live rows in groups that keep every
// product row independent.
#include "nuvec/lm/batch.h"

#include <algorithm>

#include "config.h"

namespace nuvec::lm {

using detail::fail;

namespace {

struct Row {
  size_t prompt = 0;         // index into the prompts (and the results)
  int seq = 0;               // its sequence in the paged cache
  int last = 0;              // the token to feed next
  std::vector<int> history;  // prompt and generated ids (for processors)
};

// Logits [B, V] -> the sampled tokens [B] and nothing else: processors per
// row on that row's history, then the log-probabilities and the sampler, as
// TokenGenerator::step.
Array choose(const Array& logits, const std::vector<const Row*>& rows,
             const std::vector<LogitsProcessor>& processors,
             const Sampler& sampler) {
  Array l = logits;
  if (!processors.empty()) {
    std::vector<Array> per_row;
    for (size_t r = 0; r < rows.size(); ++r) {
      const int i = static_cast<int>(r);
      Array x = slice(l, Shape{i, 0}, Shape{i + 1, l.shape(1)});
      for (const auto& p : processors) x = p(rows[r]->history, x);
      per_row.push_back(x);
    }
    l = per_row.size() == 1 ? per_row[0] : concatenate(per_row, 0);
  }
  Array logprobs = l - logsumexp(l, {-1}, true);
  return sampler(logprobs).astype(int32).reshape({-1});
}

Array last_position(const Array& logits) {
  Shape lo{0, logits.shape(1) - 1, 0}, hi = logits.shape();
  return slice(logits, lo, hi).squeeze({1});
}

void check_options(const Model& model,
                   const std::vector<std::vector<int>>& prompts,
                   const GenerateOptions& o, int block_size) {
  if (o.max_kv_size > 0 || o.kv_bits)
    fail(ErrorKind::invalid_argument,
         "[batch_generate] max_kv_size and kv_bits are not served by a paged "
         "cache");
  if (o.prefill_step_size <= 0)
    fail(ErrorKind::invalid_argument,
         "[batch_generate] prefill_step_size must be positive");
  if (block_size <= 0)
    fail(ErrorKind::invalid_argument,
         "[batch_generate] block_size must be positive");
  for (const auto& c : model.make_cache())
    if (c->window() > 0 || c->kind() != "KVCache")
      fail(ErrorKind::invalid_argument,
           "[batch_generate] the model has " + c->kind() +
               " layers (sliding windows), which a paged cache does not serve");
  const int vocab = model.info().vocab_size;
  for (size_t i = 0; i < prompts.size(); ++i) {
    if (prompts[i].empty())
      fail(ErrorKind::invalid_argument,
           "[batch_generate] prompt " + std::to_string(i) + " is empty");
    for (int id : prompts[i])
      if (id < 0 || id >= vocab)
        fail(ErrorKind::out_of_range,
             "[batch_generate] token " + std::to_string(id) + " of prompt " +
                 std::to_string(i) + " is outside the vocabulary of " +
                 std::to_string(vocab));
  }
}

}  // namespace

std::vector<std::vector<int>> batch_generate_tokens(
    const Model& model, const std::vector<std::vector<int>>& prompts,
    const GenerateOptions& options, int block_size) {
  check_options(model, prompts, options, block_size);
  std::vector<std::vector<int>> out(prompts.size());
  if (options.max_tokens == 0 || prompts.empty()) return out;
  if (options.seed) random::seed(*options.seed);
  const Sampler sampler = make_sampler(options.sampler);
  const std::vector<LogitsProcessor> processors =
      make_logits_processors(options.processors);
  const auto& eos = options.eos_token_ids;
  PagedKVCache paged(model.info().num_layers, block_size);
  std::vector<Row> live;

  // Records a row's new token; false when the row is finished (and freed).
  auto accept = [&](Row& row, int token) {
    out[row.prompt].push_back(token);
    row.last = token;
    if (!processors.empty()) row.history.push_back(token);
    const bool stop =
        std::find(eos.begin(), eos.end(), token) != eos.end() ||
        (options.max_tokens >= 0 &&
         static_cast<int>(out[row.prompt].size()) >= options.max_tokens);
    if (stop) paged.remove_sequence(row.seq);
    return !stop;
  };

  // Prefill: each prompt alone, in TokenGenerator's chunks (every token but
  // the last, each chunk's cache evaluated), then its last token gives its
  // first generated token.
  for (size_t i = 0; i < prompts.size(); ++i) {
    const auto& p = prompts[i];
    Row row;
    row.prompt = i;
    row.seq = paged.add_sequence();
    PromptCache view = paged.view({row.seq});
    const size_t step = static_cast<size_t>(options.prefill_step_size);
    size_t done = 0;
    while (p.size() - done > 1) {
      const size_t n = std::min(step, p.size() - done - 1);
      std::vector<int> chunk(p.begin() + static_cast<std::ptrdiff_t>(done),
                             p.begin() + static_cast<std::ptrdiff_t>(done + n));
      model(array(chunk, Shape{1, static_cast<int>(n)}), view);
      paged.eval();
      done += n;
    }
    if (!processors.empty()) row.history = p;
    Array logits = last_position(
        model(array(std::vector<int>{p.back()}, Shape{1, 1}), view));
    Array token = choose(logits, {&row}, processors, sampler);
    eval(token);
    if (accept(row, token.to_vector<int32_t>().at(0)))
      live.push_back(std::move(row));
  }

  // Decode: every live row one token per step, in groups of at most
  // ROW_INDEPENDENT_ROWS rows (each group one model call).
  while (!live.empty()) {
    std::vector<Array> tokens;
    for (size_t g = 0; g < live.size(); g += ROW_INDEPENDENT_ROWS) {
      const size_t end = std::min(live.size(), g + ROW_INDEPENDENT_ROWS);
      std::vector<int> ids, last;
      std::vector<const Row*> rows;
      for (size_t r = g; r < end; ++r) {
        ids.push_back(live[r].seq);
        last.push_back(live[r].last);
        rows.push_back(&live[r]);
      }
      PromptCache view = paged.view(ids);
      Array logits = last_position(
          model(array(last, Shape{static_cast<int>(last.size()), 1}), view));
      tokens.push_back(choose(logits, rows, processors, sampler));
    }
    std::vector<Array> all = tokens;
    for (int l = 0; l < paged.num_layers(); ++l)
      for (auto& a : paged.state(l)) all.push_back(a);
    eval(all);
    std::vector<Row> still;
    size_t r = 0;
    for (const Array& t : tokens)
      for (int token : t.to_vector<int32_t>())
        if (accept(live[r++], token)) still.push_back(std::move(live[r - 1]));
    live = std::move(still);
  }
  return out;
}

}  // namespace nuvec::lm
