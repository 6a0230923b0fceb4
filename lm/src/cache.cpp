// The caches of nuvec/lm/cache.h, following mlx-lm's models/cache.py.
#include "nuvec/lm/cache.h"

#include "config.h"
#include "nuvec/fast.h"

namespace nuvec::lm {

using detail::fail;

namespace {
Array seq_slice(const Array& a, int start, int stop) {
  Shape lo{0, 0, start, 0}, hi = a.shape();
  hi[2] = stop;
  return slice(a, lo, hi);
}
Array write_at(const Array& buf, const Array& x, int at) {
  Shape lo{0, 0, at, 0}, hi = buf.shape();
  hi[2] = at + x.shape(2);
  return slice_update(buf, x, lo, hi);
}
void check_kv(const Array& k, const Array& v) {
  if (k.ndim() != 4 || v.ndim() != 4 || k.shape(0) != v.shape(0) || k.shape(1) != v.shape(1) ||
      k.shape(2) != v.shape(2))
    fail(ErrorKind::shape_mismatch, "[cache] keys and values must be [B, H, L, D] of one B, H and L");
}
// Grows `buf` (or makes it) by whole steps for the positions of `like`
// (mlx-lm's KVCache), keeping its first `prev`.
Array grow(const std::optional<Array>& buf, const Array& like, int prev, int step) {
  const int n_steps = (step + like.shape(2) - 1) / step;
  Shape s = like.shape();
  s[2] = n_steps * step;
  Array fresh = zeros(s, like.dtype());
  if (!buf) return fresh;
  Array kept = prev % step != 0 ? seq_slice(*buf, 0, prev) : *buf;
  return concatenate({kept, fresh}, 2);
}
}  // namespace

namespace {

// The mask of `L` queries against `T` keys whose last one is at position
// `offset_after - 1` (keys are the last T positions), with a window (0:
// none): no mask, "causal" when that is all it is, else a bool array.
struct Mask {
  std::string mode;
  std::optional<Array> array;
};

Mask attention_mask(int L, int T, int offset_after, int window) {
  // Query i sits at position offset_after - L + i, key t at offset_after - T + t.
  const bool window_binds = window > 0 && T > window;
  if (L == 1 && !window_binds) return {"", std::nullopt};
  if (!window_binds) return {"causal", std::nullopt};
  Array qpos = arange(offset_after - L, offset_after, int32).reshape({L, 1});
  Array kpos = arange(offset_after - T, offset_after, int32).reshape({1, T});
  Array keep = logical_and(less_equal(kpos, qpos), greater(kpos, qpos - window));
  return {"array", keep};
}

}  // namespace

Array LayerCache::attend(const Array& q, const Array& keys, const Array& values, float scale) {
  const int L = q.shape(2);
  auto [k, v] = update_and_fetch(keys, values);
  Mask m = attention_mask(L, k.shape(2), offset(), window());
  return fast::scaled_dot_product_attention(q, k, v, scale, m.mode, m.array);
}

std::pair<Array, Array> KVCache::update_and_fetch(const Array& k, const Array& v) {
  check_kv(k, v);
  const int prev = offset_, L = k.shape(2);
  if (!keys_ || prev + L > keys_->shape(2)) {
    keys_ = grow(keys_, k, prev, step_);
    values_ = grow(values_, v, prev, step_);
  }
  offset_ += L;
  keys_ = write_at(*keys_, k, prev);
  values_ = write_at(*values_, v, prev);
  return {seq_slice(*keys_, 0, offset_), seq_slice(*values_, 0, offset_)};
}

std::vector<Array> KVCache::state() const {
  if (!keys_) return {};
  return {seq_slice(*keys_, 0, offset_), seq_slice(*values_, 0, offset_)};
}

void KVCache::set_state(std::vector<Array> s, int offset) {
  if (s.empty() && offset == 0) {
    keys_.reset();
    values_.reset();
    offset_ = 0;
    return;
  }
  if (s.size() != 2 || s[0].ndim() != 4 || s[0].shape(2) != offset || s[1].ndim() != 4 ||
      s[1].shape(2) != offset)
    fail(ErrorKind::invalid_argument, "[KVCache] a state is keys and values [B, H, offset, D]");
  keys_ = s[0];
  values_ = s[1];
  offset_ = offset;
}

bool KVCache::trim(int n) {
  if (n < 0 || n > offset_) return false;
  offset_ -= n;
  return true;
}

Array RotatingKVCache::ordered(const Array& buf) const {
  if (buf.shape(2) < max_size_ || idx_ == 0) return buf;
  return concatenate({seq_slice(buf, idx_, max_size_), seq_slice(buf, 0, idx_)}, 2);
}

std::pair<Array, Array> RotatingKVCache::update_and_fetch(const Array& k, const Array& v) {
  check_kv(k, v);
  const int L = k.shape(2);
  if (L == 1 && keys_ && keys_->shape(2) == max_size_) {
    // Full: overwrite the oldest position.
    keys_ = write_at(*keys_, k, idx_);
    values_ = write_at(*values_, v, idx_);
    idx_ = (idx_ + 1) % max_size_;
    offset_ += 1;
    return {*keys_, *values_};
  }
  // The window of every new token: the max_size - 1 positions before them
  // and the new ones, in order.
  auto join = [&](const std::optional<Array>& buf, const Array& x) {
    if (!buf) return x;
    Array o = ordered(*buf);
    const int keep = std::min(o.shape(2), max_size_ - 1);
    Array kept = seq_slice(o, o.shape(2) - keep, o.shape(2));
    return keep > 0 ? concatenate({kept, x}, 2) : x;
  };
  Array kt = join(keys_, k), vt = join(values_, v);
  const int T = kt.shape(2), n = std::min(T, max_size_);
  keys_ = seq_slice(kt, T - n, T);
  values_ = seq_slice(vt, T - n, T);
  idx_ = 0;
  offset_ += L;
  return {kt, vt};
}

std::vector<Array> RotatingKVCache::state() const {
  if (!keys_) return {};
  return {ordered(*keys_), ordered(*values_)};
}

void RotatingKVCache::set_state(std::vector<Array> s, int offset) {
  if (s.empty() && offset == 0) {
    keys_.reset();
    values_.reset();
    offset_ = idx_ = 0;
    return;
  }
  if (s.size() != 2 || s[0].ndim() != 4 || s[1].ndim() != 4 || s[0].shape(2) != s[1].shape(2) ||
      s[0].shape(2) > max_size_ || s[0].shape(2) > offset)
    fail(ErrorKind::invalid_argument, "[RotatingKVCache] a state is keys and values [B, H, T, D], T <= max_size");
  keys_ = s[0];
  values_ = s[1];
  offset_ = offset;
  idx_ = 0;
}

bool RotatingKVCache::trim(int n) {
  // Only while nothing has been dropped (the buffer holds every position).
  if (n < 0 || n > offset_ || !keys_ || keys_->shape(2) != offset_) return n == 0;
  offset_ -= n;
  keys_ = seq_slice(*keys_, 0, offset_);
  values_ = seq_slice(*values_, 0, offset_);
  return true;
}

std::pair<Array, Array> QuantizedKVCache::update_and_fetch(const Array& k, const Array& v) {
  check_kv(k, v);
  const int prev = offset_, L = k.shape(2);
  auto qk = quantize(k, group_size_, bits_), qv = quantize(v, group_size_, bits_);
  if (k_.empty() || prev + L > k_[0].shape(2)) {
    const bool fresh = k_.empty();
    std::vector<Array> nk, nv;
    for (size_t i = 0; i < 3; ++i) {
      nk.push_back(grow(fresh ? std::nullopt : std::optional<Array>(k_[i]), qk[i], prev, step_));
      nv.push_back(grow(fresh ? std::nullopt : std::optional<Array>(v_[i]), qv[i], prev, step_));
    }
    k_ = std::move(nk);
    v_ = std::move(nv);
  }
  offset_ += L;
  for (size_t i = 0; i < 3; ++i) {
    k_[i] = write_at(k_[i], qk[i], prev);
    v_[i] = write_at(v_[i], qv[i], prev);
  }
  auto fetch = [&](const std::vector<Array>& q, DType dt) {
    return dequantize(seq_slice(q[0], 0, offset_), seq_slice(q[1], 0, offset_), seq_slice(q[2], 0, offset_),
                      group_size_, bits_, "affine", std::nullopt, dt);
  };
  return {fetch(k_, k.dtype()), fetch(v_, v.dtype())};
}

std::vector<Array> QuantizedKVCache::state() const {
  std::vector<Array> out;
  for (const auto* q : {&k_, &v_})
    for (const auto& a : *q) out.push_back(seq_slice(a, 0, offset_));
  return out;
}

void QuantizedKVCache::set_state(std::vector<Array> s, int offset) {
  if (s.empty() && offset == 0) {
    k_.clear();
    v_.clear();
    offset_ = 0;
    return;
  }
  if (s.size() != 6)
    fail(ErrorKind::invalid_argument, "[QuantizedKVCache] a state is 6 arrays (keys and values, quantized)");
  for (const auto& a : s)
    if (a.ndim() != 4 || a.shape(2) != offset)
      fail(ErrorKind::invalid_argument, "[QuantizedKVCache] state arrays must be [B, H, offset, W]");
  k_.assign(s.begin(), s.begin() + 3);
  v_.assign(s.begin() + 3, s.end());
  offset_ = offset;
}

bool QuantizedKVCache::trim(int n) {
  if (n < 0 || n > offset_) return false;
  offset_ -= n;
  return true;
}

PromptCache clone_cache(const PromptCache& cache) {
  PromptCache out;
  for (const auto& c : cache) out.push_back(c->clone());
  return out;
}

void eval_cache(const PromptCache& cache) {
  std::vector<Array> all;
  for (const auto& c : cache)
    for (auto& a : c->state()) all.push_back(a);
  eval(all);
}

void quantize_cache(PromptCache& cache, int group_size, int bits) {
  for (auto& c : cache) {
    if (c->kind() != "KVCache") continue;
    auto q = std::make_unique<QuantizedKVCache>(group_size, bits);
    auto s = c->state();
    if (!s.empty()) q->update_and_fetch(s[0], s[1]);
    c = std::move(q);
  }
}

}  // namespace nuvec::lm
