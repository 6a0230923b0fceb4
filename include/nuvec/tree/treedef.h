// TreeDef: the structure of a tree, as compile keys its traces on it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nuvec/tree/adapter.h"

namespace nuvec {

/// One leaf of a structure: its path, kind and whether it is trained.
struct LeafInfo {
  std::string path;
  LeafKind kind = LeafKind::array;
  bool trainable = true;
  bool operator==(const LeafInfo&) const = default;
};

/// The structure of a tree: its root type, the ordered (path, kind,
/// trainable) of every leaf, the active variants (and which optionals hold a
/// value), the mode flags, and a hash of the static fields and container
/// lengths. Equal structures compare and hash equal; leaf values, shapes and
/// dtypes are not part of it.
struct TreeDef {
  std::string root_type;
  std::vector<LeafInfo> leaves;
  std::vector<std::pair<std::string, int>> variants;
  std::vector<std::pair<std::string, bool>> modes;
  uint64_t static_hash = 0;

  bool operator==(const TreeDef&) const = default;
  /// A deterministic hash of everything above.
  uint64_t hash() const;
  /// The first difference from `other`, in words ("" when equal).
  std::string difference(const TreeDef& other) const;
  /// A one-line summary: root type, leaf count and paths.
  std::string to_string() const;
};

namespace tree_detail {

/// The type's name inside a __PRETTY_FUNCTION__ of a template on T.
inline std::string_view name_in_signature(std::string_view p) {
  size_t start = p.find("T = ");
  if (start == std::string_view::npos) return p;
  start += 4;
  size_t end = p.find_first_of(";]", start);
  return p.substr(start, end - start);
}

/// The readable name of T as the compiler spells it ("Affine",
/// "std::vector<nuvec::Array>"), found once per type (compiled calls ask
/// for it on every call).
template <class T>
std::string_view type_name() {
  static const std::string_view name = name_in_signature(__PRETTY_FUNCTION__);
  return name;
}

/// Builds a TreeDef from what a visit reports (and, given `leaves`, collects
/// the leaves in the same visit).
class TreeDefBuilder final : public Visitor {
 public:
  explicit TreeDefBuilder(std::string_view root, std::vector<Array>* leaves = nullptr) : leaves_(leaves) {
    def_.root_type = root;
  }
  void leaf(std::string_view path, const Array&, LeafKind kind, bool trainable) override;
  void variant(std::string_view path, int index) override;
  void mode(std::string_view path, bool value) override;
  void static_value(std::string_view path, uint64_t hash) override;
  TreeDef take();

 private:
  TreeDef def_;
  StaticHasher hasher_;
  std::vector<Array>* leaves_;
};

}  // namespace tree_detail

/// The structure of `tree`.
template <Tree T>
TreeDef tree_def(const T& tree) {
  tree_detail::TreeDefBuilder b(tree_detail::type_name<std::remove_cvref_t<T>>());
  tree_detail::Path p;
  tree_detail::visit(tree, p, b);
  return b.take();
}

/// The structure of `tree`, its leaves appended to `leaves` in the same
/// visit (tree_leaves' order).
template <Tree T>
TreeDef tree_def(const T& tree, std::vector<Array>& leaves) {
  tree_detail::TreeDefBuilder b(tree_detail::type_name<std::remove_cvref_t<T>>(), &leaves);
  tree_detail::Path p;
  tree_detail::visit(tree, p, b);
  return b.take();
}

}  // namespace nuvec

template <>
struct std::hash<nuvec::TreeDef> {
  size_t operator()(const nuvec::TreeDef& d) const { return static_cast<size_t>(d.hash()); }
};
