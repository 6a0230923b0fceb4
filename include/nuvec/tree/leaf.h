// Tree leaves and visitors: the type-erased interface through which
// transforms, compile and I/O see any tree (docs/trees.md).
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "nuvec/core/array.h"

namespace nuvec {

/// What a leaf is: a plain array (trainable), a Param (trainable unless
/// frozen) or a Buffer (saved and loaded, never trained).
enum class LeafKind : uint8_t { array, param, buffer };

const char* leaf_kind_name(LeafKind k);

/// A module parameter: an array and a frozen flag (trainable unless frozen).
struct Param {
  Array value;
  bool frozen = false;
  Param() = default;
  Param(Array v, bool is_frozen = false) : value(std::move(v)), frozen(is_frozen) {}
  bool trainable() const { return !frozen; }
};

/// State that is saved and loaded with a tree but never trained (running
/// statistics, a step counter, an RNG key).
struct Buffer {
  Array value;
  Buffer() = default;
  Buffer(Array v) : value(std::move(v)) {}
};

/// Receives what a read-only visit reports, with full paths. Every method
/// but leaf has an empty default.
class Visitor {
 public:
  virtual ~Visitor() = default;
  virtual void leaf(std::string_view path, const Array& a, LeafKind kind, bool trainable) = 0;
  /// The active alternative of a std::variant, or whether a std::optional
  /// holds a value (1) or not (0).
  virtual void variant(std::string_view, int) {}
  /// A mode flag (train/eval) of a user struct.
  virtual void mode(std::string_view, bool) {}
  /// A static field's value hash, or a container's length.
  virtual void static_value(std::string_view, uint64_t) {}
};

/// Receives what a mutating visit reports: the leaves, assignable in place.
class VisitorMut {
 public:
  virtual ~VisitorMut() = default;
  virtual void leaf(std::string_view path, Array& a, LeafKind kind, bool trainable) = 0;
};

namespace tree_detail {

/// The path being built: components joined with '.', as MLX's tree_flatten.
class Path {
 public:
  size_t push(std::string_view component) {
    size_t mark = s_.size();
    if (!s_.empty()) s_ += '.';
    s_ += component;
    return mark;
  }
  size_t push(size_t index) {
    char digits[24];
    auto end = std::to_chars(digits, digits + sizeof digits, index).ptr;
    return push(std::string_view(digits, static_cast<size_t>(end - digits)));
  }
  void pop(size_t mark) { s_.resize(mark); }
  std::string_view view() const { return s_; }

 private:
  std::string s_;
};

}  // namespace tree_detail
}  // namespace nuvec
