// Flat hash tables keyed by pointers (array ids, nodes) for the transforms'
// engines. std::unordered_map and std::unordered_set allocate a node per
// entry; on a 1,000-node graph of small arrays those allocations cost about
// as much as building the graph itself (docs/performance.md, Transforms).
// These keep every entry in one array (open addressing, linear probing), so
// a tape walk allocates a handful of times instead of once per node.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace nuvec::transforms {

/// A map from non-null pointers to ints. Values are usually indices into a
/// dense vector the caller owns (a slot per tape output), which keeps the
/// values themselves out of the table. No erase: the engines reset the
/// dense slot instead.
class PtrIndex {
 public:
  PtrIndex() = default;
  explicit PtrIndex(size_t expected) { reserve(expected); }

  /// The value of `key`, or -1.
  int find(const void* key) const {
    if (slots_.empty()) return -1;
    for (size_t i = bucket(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return s.value;
      if (!s.key) return -1;
    }
  }
  bool contains(const void* key) const { return find(key) >= 0; }

  /// Inserts key -> value unless key is present; returns the stored value
  /// and whether it was inserted.
  std::pair<int, bool> insert(const void* key, int value) {
    if ((size_ + 1) * 2 > slots_.size()) grow((size_ + 1) * 2);
    for (size_t i = bucket(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == key) return {s.value, false};
      if (!s.key) {
        s = {key, value};
        ++size_;
        return {value, true};
      }
    }
  }
  /// Sets key -> value, inserting or overwriting.
  void set(const void* key, int value) {
    if ((size_ + 1) * 2 > slots_.size()) grow((size_ + 1) * 2);
    for (size_t i = bucket(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.key) ++size_;
      if (!s.key || s.key == key) {
        s = {key, value};
        return;
      }
    }
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// Empties the table. It keeps its storage for the next use (tables kept
  /// per thread), unless that storage is large and was mostly unused.
  void clear() {
    if (slots_.size() > (size_t{1} << 16) && size_ * 8 < slots_.size()) {
      slots_ = std::vector<Slot>();
      mask_ = 0;
      shift_ = 64;
    } else {
      std::fill(slots_.begin(), slots_.end(), Slot{});
    }
    size_ = 0;
  }
  /// Room for `n` keys without rehashing (the table stays at most half full).
  void reserve(size_t n) {
    if (n * 2 > slots_.size()) grow(n * 2);
  }

 private:
  struct Slot {
    const void* key = nullptr;
    int value = 0;
  };

  size_t bucket(const void* key) const {
    // Fibonacci hashing of the address: its low bits are alignment zeros.
    auto h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h >> shift_);
  }

  void grow(size_t min_slots) {
    size_t n = 16;
    int bits = 4;
    while (n < min_slots) {
      n *= 2;
      ++bits;
    }
    if (n <= slots_.size()) return;
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    shift_ = 64 - bits;
    size_ = 0;
    for (const Slot& s : old)
      if (s.key) insert(s.key, s.value);
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;
};

/// A set of non-null pointers (array ids), on the same table.
class PtrSet {
 public:
  /// Inserts `key`; false when it was already present.
  bool insert(const void* key) { return index_.insert(key, 0).second; }
  bool contains(const void* key) const { return index_.contains(key); }
  /// 1 or 0, as std::unordered_set::count.
  size_t count(const void* key) const { return contains(key) ? 1 : 0; }
  size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }
  void reserve(size_t n) { index_.reserve(n); }

 private:
  PtrIndex index_;
};

}  // namespace nuvec::transforms
