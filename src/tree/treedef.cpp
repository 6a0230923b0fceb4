// TreeDef: building, comparing, hashing and describing tree structures.
#include <sstream>

#include "nuvec/tree/treedef.h"

namespace nuvec {

const char* leaf_kind_name(LeafKind k) {
  switch (k) {
    case LeafKind::array: return "array";
    case LeafKind::param: return "param";
    case LeafKind::buffer: return "buffer";
  }
  return "?";
}

namespace tree_detail {

void TreeDefBuilder::leaf(std::string_view path, const Array& a, LeafKind kind, bool trainable) {
  def_.leaves.push_back({std::string(path), kind, trainable});
  if (leaves_) leaves_->push_back(a);
}
void TreeDefBuilder::variant(std::string_view path, int index) {
  def_.variants.emplace_back(std::string(path), index);
}
void TreeDefBuilder::mode(std::string_view path, bool value) {
  def_.modes.emplace_back(std::string(path), value);
}
void TreeDefBuilder::static_value(std::string_view path, uint64_t hash) {
  // The path is hashed too, so that equal values in different fields (or
  // lengths of different containers) cannot cancel out.
  hasher_.u64(path.size());
  hasher_.bytes(path.data(), path.size());
  hasher_.u64(hash);
}
TreeDef TreeDefBuilder::take() {
  def_.static_hash = hasher_.digest();
  return std::move(def_);
}

}  // namespace tree_detail

namespace {
void hash_string(StaticHasher& h, const std::string& s) {
  h.u64(s.size());
  h.bytes(s.data(), s.size());
}
}  // namespace

uint64_t TreeDef::hash() const {
  StaticHasher h;
  hash_string(h, root_type);
  h.u64(leaves.size());
  for (const auto& l : leaves) {
    hash_string(h, l.path);
    h.u64(static_cast<uint64_t>(l.kind) * 2 + (l.trainable ? 1 : 0));
  }
  h.u64(variants.size());
  for (const auto& [p, i] : variants) {
    hash_string(h, p);
    h.u64(static_cast<uint64_t>(i));
  }
  h.u64(modes.size());
  for (const auto& [p, m] : modes) {
    hash_string(h, p);
    h.u64(m);
  }
  h.u64(static_hash);
  return h.digest();
}

namespace {
std::string quoted(const std::string& path) { return "'" + path + "'"; }
}  // namespace

std::string TreeDef::difference(const TreeDef& o) const {
  if (root_type != o.root_type) return "root type " + root_type + " vs " + o.root_type;
  size_t n = std::min(leaves.size(), o.leaves.size());
  for (size_t i = 0; i < n; ++i) {
    const auto& a = leaves[i];
    const auto& b = o.leaves[i];
    if (a.path != b.path) return "leaf " + std::to_string(i) + " is " + quoted(a.path) + " vs " + quoted(b.path);
    if (a.kind != b.kind)
      return "leaf " + quoted(a.path) + " is a " + leaf_kind_name(a.kind) + " vs a " + leaf_kind_name(b.kind);
    if (a.trainable != b.trainable)
      return "leaf " + quoted(a.path) + (a.trainable ? " is trainable vs frozen" : " is frozen vs trainable");
  }
  if (leaves.size() != o.leaves.size())
    return std::to_string(leaves.size()) + " leaves vs " + std::to_string(o.leaves.size());
  if (variants != o.variants) {
    for (size_t i = 0; i < std::min(variants.size(), o.variants.size()); ++i)
      if (variants[i] != o.variants[i])
        return "variant at " + quoted(variants[i].first) + " is alternative " +
               std::to_string(variants[i].second) + " vs " + std::to_string(o.variants[i].second);
    return "the active variants differ";
  }
  if (modes != o.modes) {
    for (size_t i = 0; i < std::min(modes.size(), o.modes.size()); ++i)
      if (modes[i] != o.modes[i])
        return "mode " + quoted(modes[i].first) + " is " + (modes[i].second ? "on" : "off") + " vs " +
               (o.modes[i].second ? "on" : "off");
    return "the mode flags differ";
  }
  if (static_hash != o.static_hash) return "static fields or container lengths differ";
  return "";
}

std::string TreeDef::to_string() const {
  std::ostringstream os;
  os << "TreeDef(" << root_type << ", " << leaves.size() << " leaves";
  for (const auto& l : leaves) {
    os << ", " << quoted(l.path);
    if (l.kind != LeafKind::array) os << ':' << leaf_kind_name(l.kind);
    if (!l.trainable && l.kind == LeafKind::param) os << "(frozen)";
  }
  os << ')';
  return os.str();
}

}  // namespace nuvec
