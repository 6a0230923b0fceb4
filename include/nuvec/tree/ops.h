// Operations on any tree: flatten, rebuild, map, visit, evaluate.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "nuvec/core/eval.h"
#include "nuvec/tree/treedef.h"

namespace nuvec {

namespace tree_detail {

/// Collects (path, array) of every leaf, or the arrays alone.
class Collect final : public Visitor {
 public:
  explicit Collect(bool with_paths) : with_paths_(with_paths) {}
  void leaf(std::string_view path, const Array& a, LeafKind, bool) override;
  std::vector<std::pair<std::string, Array>> pairs;
  std::vector<Array> arrays;

 private:
  bool with_paths_;
};

/// Assigns new leaves in order; with `check_shapes`, a leaf whose shape
/// differs from the one it replaces is recorded as a problem.
class Replace final : public VisitorMut {
 public:
  Replace(const std::vector<Array>& leaves, bool check_shapes)
      : leaves_(leaves), check_shapes_(check_shapes) {}
  void leaf(std::string_view path, Array& a, LeafKind, bool) override;
  /// Throws nuvec::Error listing every shape mismatch, if any.
  void finish(const char* what) const;

 private:
  const std::vector<Array>& leaves_;
  bool check_shapes_;
  size_t next_ = 0;
  std::vector<std::string> problems_;
};

/// Throws nuvec::Error (invalid_argument) when the counts differ.
void check_leaf_count(const char* what, size_t expected, size_t given);
/// Throws nuvec::Error naming the first path where two trees differ.
void check_same_paths(const char* what, const std::vector<std::pair<std::string, Array>>& a,
                      const std::vector<std::pair<std::string, Array>>& b);

template <class F>
class VisitFn final : public Visitor {
 public:
  explicit VisitFn(F& f) : f_(f) {}
  void leaf(std::string_view path, const Array& a, LeafKind kind, bool trainable) override {
    f_(path, a, kind, trainable);
  }

 private:
  F& f_;
};

template <class F>
class VisitMutFn final : public VisitorMut {
 public:
  explicit VisitMutFn(F& f) : f_(f) {}
  void leaf(std::string_view path, Array& a, LeafKind kind, bool trainable) override {
    if constexpr (std::is_invocable_v<F&, std::string_view, Array&, LeafKind, bool>) {
      f_(path, a, kind, trainable);
    } else {
      f_(path, a);
    }
  }

 private:
  F& f_;
};

}  // namespace tree_detail

/// The (path, array) of every leaf in order, as MLX's tree_flatten.
template <Tree T>
std::vector<std::pair<std::string, Array>> tree_flatten(const T& tree) {
  tree_detail::Collect c(true);
  tree_detail::Path p;
  tree_detail::visit(tree, p, c);
  return std::move(c.pairs);
}

/// The leaves in order, without paths.
template <Tree T>
std::vector<Array> tree_leaves(const T& tree) {
  tree_detail::Collect c(false);
  tree_detail::Path p;
  tree_detail::visit(tree, p, c);
  return std::move(c.arrays);
}

/// Calls f(path, array, kind, trainable) for every leaf, in order.
template <Tree T, class F>
void tree_visit(const T& tree, F&& f) {
  tree_detail::VisitFn<std::remove_reference_t<F>> v(f);
  tree_detail::Path p;
  tree_detail::visit(tree, p, v);
}

/// Calls f(path, array&) (or f(path, array&, kind, trainable)) for every
/// leaf in order; f may assign the array in place.
template <Tree T, class F>
void tree_visit_mut(T& tree, F&& f) {
  tree_detail::VisitMutFn<std::remove_reference_t<F>> v(f);
  tree_detail::Path p;
  tree_detail::visit_mut(tree, p, v);
}

namespace tree_detail {
/// A copy of `like` with its leaves replaced in order; `what` names the
/// caller in errors, and with `check_shapes` a changed shape is one.
template <Tree T>
T replaced(const T& like, const std::vector<Array>& leaves, bool check_shapes, const char* what) {
  check_leaf_count(what, tree_leaves(like).size(), leaves.size());
  T out = like;
  Replace r(leaves, check_shapes);
  Path p;
  visit_mut(out, p, r);
  r.finish(what);
  return out;
}
}  // namespace tree_detail

/// A copy of `like` with its leaves replaced, in order, by `leaves`. Each
/// new leaf must have the shape of the one it replaces (dtypes may differ);
/// a wrong count or shape throws nuvec::Error naming the path.
template <Tree T>
T tree_unflatten(const T& like, const std::vector<Array>& leaves) {
  return tree_detail::replaced(like, leaves, true, "tree_unflatten");
}

/// As tree_unflatten, but the new leaves may have any shape (transforms use
/// it to rebuild batched or differentiated trees).
template <Tree T>
T tree_replace_leaves(const T& like, const std::vector<Array>& leaves) {
  return tree_detail::replaced(like, leaves, false, "tree_replace_leaves");
}

/// A tree of the same structure with every leaf mapped by f(const Array&).
template <Tree T, class F>
T tree_map(const T& tree, F&& f) {
  T out = tree;
  tree_visit_mut(out, [&](std::string_view, Array& a) { a = f(std::as_const(a)); });
  return out;
}

/// Maps leaves of two trees with the same paths by f(a_leaf, b_leaf); the
/// result has a's structure. Different paths throw nuvec::Error naming the
/// first difference.
template <Tree T, Tree U, class F>
T tree_map(const T& a, const U& b, F&& f) {
  auto fa = tree_flatten(a);
  auto fb = tree_flatten(b);
  tree_detail::check_same_paths("tree_map", fa, fb);
  std::vector<Array> out;
  out.reserve(fa.size());
  for (size_t i = 0; i < fa.size(); ++i) out.push_back(f(fa[i].second, fb[i].second));
  return tree_replace_leaves(a, out);
}

/// Evaluates every leaf of `tree` (any tree, also borrowed:
/// eval(std::tie(loss, grads))) and waits for them.
template <Tree T>
void eval(const T& tree) {
  eval(tree_leaves(tree));
}

/// Starts evaluating every leaf of `tree` and returns at once.
template <Tree T>
void async_eval(const T& tree) {
  async_eval(tree_leaves(tree));
}

}  // namespace nuvec
