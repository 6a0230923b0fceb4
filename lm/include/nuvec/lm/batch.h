// Batch generation over a paged cache (docs/lm-batch.md): every prompt
// prefilled alone, then decode steps of all live sequences together, with
// each prompt's tokens independent of the rest of the batch.
#pragma once

#include <vector>

#include "nuvec/lm/generate.h"
#include "nuvec/lm/model.h"
#include "nuvec/lm/paged.h"

namespace nuvec::lm {

/// The generated ids of each prompt (in order), as generate_tokens would
/// give it alone: each prompt is prefilled by itself in the chunks of
/// `options.prefill_step_size` (its solo arithmetic) into a PagedKVCache of
/// `block_size`-position blocks, then the live sequences decode together
/// one token per step, in groups of at most ROW_INDEPENDENT_ROWS rows (so
/// the products keep each row's bits), each row stopping at one of
/// `options.eos_token_ids` (included, as generate_tokens) or after
/// max_tokens. With greedy sampling the result equals each prompt's
/// generate_tokens bit for bit; sampled rows draw from the thread's key
/// sequence (seeded by options.seed) in the batch's order, so they are
/// reproducible but not the solo draws. Logits processors see each row's own
/// history. Throws nuvec::Error for an empty prompt, an id outside the
/// vocabulary, a non-positive prefill_step_size or block_size, and for the
/// options a paged cache does not serve: max_kv_size, kv_bits, and models
/// with sliding-window (rotating) layers.
std::vector<std::vector<int>> batch_generate_tokens(
    const Model& model, const std::vector<std::vector<int>>& prompts,
    const GenerateOptions& options = {}, int block_size = 16);

}  // namespace nuvec::lm
