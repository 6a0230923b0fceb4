// Key/value caches of attention layers (docs/lm.md, "Caches"), as mlx-lm's:
// contiguous with growth in steps, rotating (a sliding window), quantized.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nuvec/nuvec.h"

namespace nuvec::lm {

/// One layer's cache.
class LayerCache {
 public:
  virtual ~LayerCache() = default;
  /// Appends keys/values [B, H, L, D] and returns what attention reads:
  /// every cached position in order (or a window of them), [B, H, T, D].
  virtual std::pair<Array, Array> update_and_fetch(const Array& keys, const Array& values) = 0;
  /// Appends keys/values and returns softmax(scale q k^T + mask) v over
  /// the cached positions, q [B, Hq, L, D] (causal, and windowed for
  /// window() > 0). The default is update_and_fetch and
  /// fast::scaled_dot_product_attention; a paged cache reads its blocks.
  virtual Array attend(const Array& q, const Array& keys, const Array& values, float scale);
  /// The RoPE offsets of the rows of the next call: nothing when every row
  /// is at offset(), else one per batch row (int32 [B]).
  virtual std::optional<Array> row_offsets() const { return std::nullopt; }
  /// Tokens seen so far (the RoPE offset of the next token).
  int offset() const { return offset_; }
  /// The attention window, 0 for all positions.
  virtual int window() const { return 0; }
  /// Whether update_and_fetch returns quantized keys/values (see
  /// QuantizedKVCache::fetch_quantized).
  virtual bool quantized() const { return false; }
  /// The arrays that hold the state (for eval and saving), and a name for
  /// the kind ("KVCache", "RotatingKVCache", "QuantizedKVCache").
  virtual std::vector<Array> state() const = 0;
  virtual std::string kind() const = 0;
  /// Restores from state() of a cache of this kind and `offset`.
  virtual void set_state(std::vector<Array> state, int offset) = 0;
  /// Drops the last `n` tokens (0 <= n <= offset); false when the kind
  /// cannot (a rotating cache that wrapped).
  virtual bool trim(int n) = 0;
  /// A copy that shares nothing mutable with this one.
  virtual std::unique_ptr<LayerCache> clone() const = 0;

 protected:
  int offset_ = 0;
};

/// mlx-lm's KVCache: buffers grown `step` positions at a time.
class KVCache : public LayerCache {
 public:
  explicit KVCache(int step = 256) : step_(step) {}
  std::pair<Array, Array> update_and_fetch(const Array& keys, const Array& values) override;
  std::vector<Array> state() const override;
  std::string kind() const override { return "KVCache"; }
  void set_state(std::vector<Array> state, int offset) override;
  bool trim(int n) override;
  std::unique_ptr<LayerCache> clone() const override { return std::make_unique<KVCache>(*this); }

 private:
  int step_;
  std::optional<Array> keys_, values_;
};

/// mlx-lm's RotatingKVCache (with keep = 0): the last `max_size` positions,
/// a sliding window of attention. A multi-token update returns the window
/// of every new token in order (the max_size - 1 positions before them and
/// the new ones); a one-token update returns the buffer, in rotated order
/// once full (attention of one query does not depend on key order).
class RotatingKVCache : public LayerCache {
 public:
  explicit RotatingKVCache(int max_size) : max_size_(max_size) {}
  std::pair<Array, Array> update_and_fetch(const Array& keys, const Array& values) override;
  int window() const override { return max_size_; }
  std::vector<Array> state() const override;
  std::string kind() const override { return "RotatingKVCache"; }
  void set_state(std::vector<Array> state, int offset) override;
  bool trim(int n) override;
  std::unique_ptr<LayerCache> clone() const override { return std::make_unique<RotatingKVCache>(*this); }

 private:
  Array ordered(const Array& buf) const;
  int max_size_;
  int idx_ = 0;  // the next write position once the buffer is full
  std::optional<Array> keys_, values_;
};

/// mlx-lm's QuantizedKVCache (kv_bits, kv_group_size): keys and values
/// stored affine-quantized; update_and_fetch returns them dequantized.
class QuantizedKVCache : public LayerCache {
 public:
  explicit QuantizedKVCache(int group_size = 64, int bits = 8, int step = 256)
      : group_size_(group_size), bits_(bits), step_(step) {}
  std::pair<Array, Array> update_and_fetch(const Array& keys, const Array& values) override;
  std::vector<Array> state() const override;
  std::string kind() const override { return "QuantizedKVCache"; }
  void set_state(std::vector<Array> state, int offset) override;
  bool trim(int n) override;
  std::unique_ptr<LayerCache> clone() const override { return std::make_unique<QuantizedKVCache>(*this); }
  int group_size() const { return group_size_; }
  int bits() const { return bits_; }

 private:
  int group_size_, bits_, step_;
  std::vector<Array> k_, v_;  // {w_q, scales, biases} each
};

/// mlx-lm's ArraysCache (MambaCache): a fixed number of state slots of a
/// recurrent layer (Qwen3-Next's Gated DeltaNet: slot 0 the convolution's
/// last inputs, slot 1 the recurrent state), each empty until first set.
/// offset() counts the tokens the layer has seen (advance()); it holds no
/// keys or values, so update_and_fetch and attend throw, and it cannot be
/// trimmed (trim(n) is false for n > 0). state() is the set slots from the
/// first up to the first empty one; set_state fills slots from the first.
class ArraysCache : public LayerCache {
 public:
  explicit ArraysCache(int size) : slots_(static_cast<size_t>(size > 0 ? size : 0)) {}
  std::pair<Array, Array> update_and_fetch(const Array& keys, const Array& values) override;
  Array attend(const Array& q, const Array& keys, const Array& values, float scale) override;
  /// The number of slots.
  int size() const { return static_cast<int>(slots_.size()); }
  /// Slot i (nothing while unset); i outside [0, size()) throws.
  const std::optional<Array>& get(int i) const;
  /// Sets slot i; i outside [0, size()) throws.
  void set(int i, Array a);
  /// Counts `n` more tokens seen.
  void advance(int n) { offset_ += n; }
  std::vector<Array> state() const override;
  std::string kind() const override { return "ArraysCache"; }
  /// Fills the first state.size() slots (at most size(), else throws) and
  /// empties the others.
  void set_state(std::vector<Array> state, int offset) override;
  bool trim(int n) override { return n == 0; }
  std::unique_ptr<LayerCache> clone() const override { return std::make_unique<ArraysCache>(*this); }

 private:
  std::vector<std::optional<Array>> slots_;
};

/// A model's caches, one per layer.
using PromptCache = std::vector<std::unique_ptr<LayerCache>>;

/// A deep copy of a prompt cache.
PromptCache clone_cache(const PromptCache& cache);
/// Evaluates every cache's state.
void eval_cache(const PromptCache& cache);
/// Saves a prompt cache as safetensors (mlx-lm's save_prompt_cache layout:
/// arrays "i.j", metadata with each layer's kind and offset, plus `metadata`).
void save_prompt_cache(const std::string& file, const PromptCache& cache,
                       const std::unordered_map<std::string, std::string>& metadata = {});
/// Loads what save_prompt_cache wrote; the file is checked, not trusted.
PromptCache load_prompt_cache(const std::string& file,
                              std::unordered_map<std::string, std::string>* metadata = nullptr);
/// Replaces every KVCache of `cache` by a QuantizedKVCache holding the same
/// tokens (mlx-lm's maybe_quantize_kv_cache).
void quantize_cache(PromptCache& cache, int group_size, int bits);

}  // namespace nuvec::lm
