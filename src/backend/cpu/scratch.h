// Kernel scratch from the CPU buffer allocator: a kernel's temporary arrays
// proportional to its data (gathered indices, row offsets, sort buffers,
// partial sums) count against the memory limit like its output, and a
// refused request is an out_of_memory error of the op, not a silent excess
// over the limit or a bad_alloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "nuvec/core/error.h"
#include "nuvec/core/graph.h"

namespace nuvec::cpu {

/// `n` values of the trivially copyable type T (bool included) in one
/// allocator buffer, freed (to the allocator's cache) when destroyed;
/// uninitialised unless T has a default constructor that does something.
template <class T>
class Scratch {
  static_assert(std::is_trivially_copyable_v<T> &&
                std::is_trivially_destructible_v<T>);

 public:
  Scratch() = default;
  explicit Scratch(int64_t n) { reset(n); }

  /// Replaces the buffer by one of `n` values; throws Error(out_of_memory)
  /// when the allocator refuses it or its byte size overflows.
  void reset(int64_t n) {
    buf_.reset();
    size_ = 0;
    if (n <= 0) return;
    auto count = static_cast<uint64_t>(n);
    if (count > SIZE_MAX / sizeof(T))
      (Error(ErrorKind::out_of_memory, "kernel scratch of " +
                                           std::to_string(n) + " elements of " +
                                           std::to_string(sizeof(T)) +
                                           " bytes overflows the address "
                                           "space"))
          .raise();
    buf_ = allocate_data(static_cast<size_t>(count) * sizeof(T));
    size_ = n;
    if constexpr (!std::is_trivially_default_constructible_v<T>)
      std::uninitialized_default_construct_n(data(), static_cast<size_t>(n));
  }

  T* data() { return buf_ ? static_cast<T*>(buf_->ptr) : nullptr; }
  const T* data() const { return buf_ ? static_cast<T*>(buf_->ptr) : nullptr; }
  int64_t size() const { return size_; }
  T& operator[](int64_t i) { return data()[i]; }
  const T& operator[](int64_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }

 private:
  std::shared_ptr<Data> buf_;
  int64_t size_ = 0;
};

}  // namespace nuvec::cpu
