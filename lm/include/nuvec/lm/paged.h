// A paged key/value cache (docs/lm-batch.md): the keys and values of many
// sequences in fixed-size blocks of one pool per layer, a block allocator
// shared by the layers, and per-layer views that models call like any other
// cache (fast::paged_write and fast::paged_attention underneath).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nuvec/lm/cache.h"

namespace nuvec::lm {

/// The caches of every layer for a set of sequences, in blocks of
/// `block_size` positions. Sequences are added and removed at any time;
/// each holds a list of pool blocks (the same block ids in every layer) and
/// its length per layer. The pools grow when the allocator runs out (the
/// pool arrays are then extended by zero blocks). Not thread-safe.
class PagedKVCache {
 public:
  /// `num_layers` > 0 layers, `block_size` > 0 positions per block, pools
  /// of `initial_blocks` >= 0 blocks to start with. Throws nuvec::Error
  /// (invalid_argument) otherwise.
  explicit PagedKVCache(int num_layers, int block_size = 16,
                        int initial_blocks = 0);

  /// A new empty sequence; its id (never reused).
  int add_sequence();
  /// Frees the blocks of sequence `id` (an unknown id throws nuvec::Error).
  void remove_sequence(int id);
  bool has_sequence(int id) const;
  /// The tokens cached for `id` (layer 0's count; between model calls every
  /// layer holds the same).
  int length(int id) const;
  /// The live sequences' ids, ascending.
  std::vector<int> sequences() const;

  int num_layers() const;
  int block_size() const;
  /// Blocks the pools hold, and blocks given to live sequences.
  int num_blocks() const;
  int used_blocks() const;
  /// The pool blocks of sequence `id`, in logical order.
  std::vector<int> blocks(int id) const;

  /// A prompt cache (one LayerCache per layer) serving the sequences `ids`
  /// (distinct, live) as the rows of a model call: tokens [ids.size(), L]
  /// append L tokens to each, at each row's own position (row_offsets()).
  /// The view shares this cache's state: it must not outlive it.
  PromptCache view(const std::vector<int>& ids);

  /// The pools of `layer`: {k_pool, v_pool} [num_blocks, Hkv, block_size,
  /// D], or nothing before the first write.
  std::vector<Array> state(int layer) const;
  /// Evaluates every layer's pools.
  void eval() const;

  struct Shared;  // the pools, the allocator and the sequences
                  // (paged_cache.cpp)

 private:
  std::shared_ptr<Shared> shared_;
};

/// One layer of a PagedKVCache for fixed rows (what PagedKVCache::view
/// returns). attend() writes the new keys with fast::paged_write, allocating
/// blocks as the rows grow, and returns fast::paged_attention over each
/// row's positions (causal), so every row gets the bits of its own
/// contiguous-cache attention. row_offsets() gives each row's length before
/// the call (the RoPE offsets); offset() is row 0's.
class PagedLayerCache : public LayerCache {
 public:
  PagedLayerCache(std::shared_ptr<PagedKVCache::Shared> shared, int layer,
                  std::vector<int> rows);
  /// Not meaningful (a row's keys are not one contiguous array): throws
  /// nuvec::Error (invalid_argument). Models call attend().
  std::pair<Array, Array> update_and_fetch(const Array& keys,
                                           const Array& values) override;
  /// keys/values [rows, Hkv, L, D], q [rows, Hq, L, D]: appends and attends.
  /// Throws nuvec::Error when the batch is not the view's rows.
  Array attend(const Array& q, const Array& keys, const Array& values,
               float scale) override;
  /// int32 [rows]: each row's length in this layer.
  std::optional<Array> row_offsets() const override;
  /// This layer's pools.
  std::vector<Array> state() const override;
  std::string kind() const override { return "PagedKVCache"; }
  /// Throws nuvec::Error: a paged cache is restored by its owner, not per
  /// layer.
  void set_state(std::vector<Array> state, int offset) override;
  /// Drops the last `n` tokens of every row in this layer (blocks stay
  /// allocated); false when a row holds fewer than n.
  bool trim(int n) override;
  /// Throws nuvec::Error: a view shares its pools by design.
  std::unique_ptr<LayerCache> clone() const override;

 private:
  std::shared_ptr<PagedKVCache::Shared> shared_;
  int layer_;
  std::vector<int> rows_;
};

}  // namespace nuvec::lm
