// The paged key/value cache of nuvec/lm/paged.h: a block allocator shared
// by the layers, one pool pair per layer, and per-layer views for a model
// call (docs/lm-batch.md).
#include <algorithm>
#include <map>
#include <set>

#include "config.h"
#include "nuvec/fast.h"
#include "nuvec/lm/paged.h"

namespace nuvec::lm {

using detail::fail;

struct PagedKVCache::Shared {
  struct Sequence {
    std::vector<int> blocks;  // pool blocks, in logical order (every layer)
    std::vector<int> length;  // cached tokens, per layer
  };
  int layers = 0, block_size = 0, capacity = 0;
  std::set<int> free;  // the lowest free block is handed out first
  std::map<int, Sequence> seqs;
  int next_id = 0;
  std::vector<std::optional<Array>> k, v;  // per layer, [capacity', Hkv, bs, D]

  Sequence& seq(int id) {
    auto it = seqs.find(id);
    if (it == seqs.end())
      fail(ErrorKind::invalid_argument,
           "[PagedKVCache] no sequence " + std::to_string(id));
    return it->second;
  }
  int allocate() {
    if (free.empty()) {
      // Double the pool (at least 16 blocks); the arrays grow on next write.
      const int grown = std::max(16, capacity * 2);
      for (int b = capacity; b < grown; ++b) free.insert(b);
      capacity = grown;
    }
    const int b = *free.begin();
    free.erase(free.begin());
    return b;
  }
  // The layer's pool with `capacity` blocks, made or extended by zeros.
  Array pool(std::optional<Array>& p, const Array& like) {
    Shape s{capacity, like.shape(1), block_size, like.shape(3)};
    if (!p) return zeros(s, like.dtype());
    if (p->shape(0) == capacity) return *p;
    s[0] = capacity - p->shape(0);
    return concatenate({*p, zeros(s, p->dtype())}, 0);
  }
};

PagedKVCache::PagedKVCache(int num_layers, int block_size, int initial_blocks)
    : shared_(std::make_shared<Shared>()) {
  if (num_layers <= 0 || block_size <= 0 || initial_blocks < 0)
    fail(ErrorKind::invalid_argument,
         "[PagedKVCache] num_layers and block_size must be positive and "
         "initial_blocks non-negative");
  shared_->layers = num_layers;
  shared_->block_size = block_size;
  shared_->capacity = initial_blocks;
  for (int b = 0; b < initial_blocks; ++b) shared_->free.insert(b);
  shared_->k.resize(static_cast<size_t>(num_layers));
  shared_->v.resize(static_cast<size_t>(num_layers));
}

int PagedKVCache::add_sequence() {
  const int id = shared_->next_id++;
  shared_->seqs[id].length.assign(static_cast<size_t>(shared_->layers), 0);
  return id;
}

void PagedKVCache::remove_sequence(int id) {
  auto& s = shared_->seq(id);
  for (int b : s.blocks) shared_->free.insert(b);
  shared_->seqs.erase(id);
}

bool PagedKVCache::has_sequence(int id) const {
  return shared_->seqs.count(id) > 0;
}
int PagedKVCache::length(int id) const { return shared_->seq(id).length[0]; }
std::vector<int> PagedKVCache::blocks(int id) const {
  return shared_->seq(id).blocks;
}

std::vector<int> PagedKVCache::sequences() const {
  std::vector<int> ids;
  for (const auto& [id, s] : shared_->seqs) ids.push_back(id);
  return ids;
}

int PagedKVCache::num_layers() const { return shared_->layers; }
int PagedKVCache::block_size() const { return shared_->block_size; }
int PagedKVCache::num_blocks() const { return shared_->capacity; }
int PagedKVCache::used_blocks() const {
  return shared_->capacity - static_cast<int>(shared_->free.size());
}

PromptCache PagedKVCache::view(const std::vector<int>& ids) {
  std::set<int> seen;
  for (int id : ids) {
    shared_->seq(id);
    if (!seen.insert(id).second)
      fail(ErrorKind::invalid_argument, "[PagedKVCache] sequence " +
                                            std::to_string(id) +
                                            " is twice in a view");
  }
  PromptCache c;
  for (int l = 0; l < shared_->layers; ++l)
    c.push_back(std::make_unique<PagedLayerCache>(shared_, l, ids));
  return c;
}

std::vector<Array> PagedKVCache::state(int layer) const {
  if (layer < 0 || layer >= shared_->layers)
    fail(ErrorKind::out_of_range,
         "[PagedKVCache] no layer " + std::to_string(layer));
  const auto l = static_cast<size_t>(layer);
  if (!shared_->k[l]) return {};
  return {*shared_->k[l], *shared_->v[l]};
}

void PagedKVCache::eval() const {
  std::vector<Array> all;
  for (int l = 0; l < shared_->layers; ++l)
    for (auto& a : state(l)) all.push_back(a);
  nuvec::eval(all);
}

PagedLayerCache::PagedLayerCache(std::shared_ptr<PagedKVCache::Shared> shared,
                                 int layer, std::vector<int> rows)
    : shared_(std::move(shared)), layer_(layer), rows_(std::move(rows)) {
  offset_ = rows_.empty()
                ? 0
                : shared_->seq(rows_[0]).length[static_cast<size_t>(layer_)];
}

std::pair<Array, Array> PagedLayerCache::update_and_fetch(const Array&,
                                                          const Array&) {
  fail(ErrorKind::invalid_argument,
       "[PagedKVCache] update_and_fetch is not meaningful for a paged cache "
       "(rows are not contiguous); "
       "models call attend()");
}

Array PagedLayerCache::attend(const Array& q, const Array& keys,
                              const Array& values, float scale) {
  auto& sh = *shared_;
  const auto li = static_cast<size_t>(layer_);
  if (keys.ndim() != 4 || keys.shape(0) != static_cast<int>(rows_.size()))
    fail(ErrorKind::shape_mismatch,
         "[PagedKVCache] keys must be [B, Hkv, L, D] with B = " +
             std::to_string(rows_.size()) + " (the view's rows)");
  const int B = keys.shape(0), L = keys.shape(2), bs = sh.block_size;
  // Blocks for the new tokens (the first layer to need one allocates it;
  // every layer uses the same ids).
  std::vector<int32_t> pos, len;
  size_t width = 1;
  for (int id : rows_) {
    auto& s = sh.seq(id);
    const int at = s.length[li];
    while (static_cast<int>(s.blocks.size()) * bs < at + L)
      s.blocks.push_back(sh.allocate());
    pos.push_back(at);
    len.push_back(at + L);
    width = std::max(width, s.blocks.size());
  }
  std::vector<int32_t> table(static_cast<size_t>(B) * width, 0);
  for (size_t r = 0; r < rows_.size(); ++r) {
    const auto& blocks = sh.seq(rows_[r]).blocks;
    std::copy(blocks.begin(), blocks.end(),
              table.begin() + static_cast<std::ptrdiff_t>(r * width));
  }
  Array t = array(table, Shape{B, static_cast<int>(width)});
  Array kp = sh.pool(sh.k[li], keys), vp = sh.pool(sh.v[li], values);
  auto [k2, v2] =
      fast::paged_write(kp, vp, keys, values, t, array(pos, Shape{B}));
  sh.k[li] = k2;
  sh.v[li] = v2;
  for (int id : rows_) sh.seq(id).length[li] += L;
  offset_ += L;
  return fast::paged_attention(q, k2, v2, t, array(len, Shape{B}), scale,
                               "causal");
}

std::optional<Array> PagedLayerCache::row_offsets() const {
  std::vector<int32_t> at;
  for (int id : rows_)
    at.push_back(shared_->seq(id).length[static_cast<size_t>(layer_)]);
  return array(at, Shape{static_cast<int>(at.size())});
}

std::vector<Array> PagedLayerCache::state() const {
  const auto li = static_cast<size_t>(layer_);
  if (!shared_->k[li]) return {};
  return {*shared_->k[li], *shared_->v[li]};
}

void PagedLayerCache::set_state(std::vector<Array>, int) {
  fail(ErrorKind::invalid_argument,
       "[PagedKVCache] a paged layer's state is set through its PagedKVCache");
}

bool PagedLayerCache::trim(int n) {
  const auto li = static_cast<size_t>(layer_);
  for (int id : rows_)
    if (n < 0 || n > shared_->seq(id).length[li]) return false;
  for (int id : rows_) shared_->seq(id).length[li] -= n;
  offset_ -= n;
  return true;
}

std::unique_ptr<LayerCache> PagedLayerCache::clone() const {
  fail(ErrorKind::invalid_argument,
       "[PagedKVCache] a paged view shares its pools and cannot be cloned");
}

}  // namespace nuvec::lm
