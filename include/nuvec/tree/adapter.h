// How each kind of tree is visited: arrays, Param, Buffer, std containers,
// references and user structs declared with NUVEC_TREE (docs/trees.md).
// Paths follow MLX's tree_flatten: fields by name, sequences by index, maps
// by key (in sorted order), joined with '.'.
#pragma once

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "nuvec/tree/leaf.h"
#include "nuvec/tree/static_hash.h"

namespace nuvec {

/// Specialised for every tree type; `defined` tells a tree from a non-tree.
template <class T, class Enable = void>
struct TreeAdapter {
  static constexpr bool defined = false;
};

/// A type whose array leaves can be visited (owned trees, and tuples of
/// references such as std::tie(loss, grads) for read-only visits).
template <class T>
concept Tree = TreeAdapter<std::remove_cvref_t<T>>::defined;

namespace tree_detail {

template <class T>
void visit(const T& t, Path& p, Visitor& v) {
  TreeAdapter<std::remove_cvref_t<T>>::visit(t, p, v);
}
template <class T>
void visit_mut(T& t, Path& p, VisitorMut& v) {
  TreeAdapter<std::remove_cvref_t<T>>::visit_mut(t, p, v);
}

template <class K>
std::string key_string(const K& k) {
  return std::string(k);
}

/// Map entries in sorted key order (unordered maps have no order of their own).
template <class M>
auto sorted_entries(M& m) {
  using Ptr = std::conditional_t<std::is_const_v<M>, const typename M::value_type*,
                                 typename M::value_type*>;
  std::vector<Ptr> out;
  out.reserve(m.size());
  for (auto& e : m) out.push_back(&e);
  std::sort(out.begin(), out.end(), [](Ptr a, Ptr b) { return a->first < b->first; });
  return out;
}

/// Sequences: elements by index; the length is part of the structure.
template <class S>
struct SequenceAdapter {
  static constexpr bool defined = true;
  static void visit(const S& s, Path& p, Visitor& v) {
    v.static_value(p.view(), s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      size_t m = p.push(i);
      tree_detail::visit(s[i], p, v);
      p.pop(m);
    }
  }
  static void visit_mut(S& s, Path& p, VisitorMut& v) {
    for (size_t i = 0; i < s.size(); ++i) {
      size_t m = p.push(i);
      tree_detail::visit_mut(s[i], p, v);
      p.pop(m);
    }
  }
};

/// Maps with string keys: values by key, in sorted key order.
template <class M>
struct MapAdapter {
  static constexpr bool defined = true;
  static void visit(const M& m, Path& p, Visitor& v) {
    v.static_value(p.view(), m.size());
    for (const auto* e : sorted_entries(m)) {
      size_t mark = p.push(std::string_view(e->first));
      tree_detail::visit(e->second, p, v);
      p.pop(mark);
    }
  }
  static void visit_mut(M& m, Path& p, VisitorMut& v) {
    for (auto* e : sorted_entries(m)) {
      size_t mark = p.push(std::string_view(e->first));
      tree_detail::visit_mut(e->second, p, v);
      p.pop(mark);
    }
  }
};

/// Tuples and pairs: elements by index (elements may be references).
template <class T>
struct TupleAdapter {
  static constexpr bool defined = true;
  static void visit(const T& t, Path& p, Visitor& v) {
    each(t, [&](const auto& e, size_t i) {
      size_t m = p.push(i);
      tree_detail::visit(e, p, v);
      p.pop(m);
    });
  }
  static void visit_mut(T& t, Path& p, VisitorMut& v) {
    each(t, [&](auto& e, size_t i) {
      size_t m = p.push(i);
      tree_detail::visit_mut(e, p, v);
      p.pop(m);
    });
  }

 private:
  template <class U, class F>
  static void each(U& t, F&& f) {
    [&]<size_t... I>(std::index_sequence<I...>) {
      (f(std::get<I>(t), I), ...);
    }(std::make_index_sequence<std::tuple_size_v<std::remove_const_t<U>>>{});
  }
};

/// The field visitors a NUVEC_TREE struct's generated function calls.
struct FieldVisit {
  Path& p;
  Visitor& v;
  template <class F>
  void field(const char* name, const F& f) {
    size_t m = p.push(name);
    tree_detail::visit(f, p, v);
    p.pop(m);
  }
  template <class F>
  void static_field(const char* name, const F& f) {
    size_t m = p.push(name);
    v.static_value(p.view(), static_hash(f));
    p.pop(m);
  }
  void mode(const char* name, const bool& f) {
    size_t m = p.push(name);
    v.mode(p.view(), f);
    p.pop(m);
  }
  template <class F>
  void unchecked(const char*, const F&) {}
};

struct FieldVisitMut {
  Path& p;
  VisitorMut& v;
  template <class F>
  void field(const char* name, F& f) {
    size_t m = p.push(name);
    tree_detail::visit_mut(f, p, v);
    p.pop(m);
  }
  template <class F>
  void static_field(const char*, const F&) {}
  void mode(const char*, const bool&) {}
  template <class F>
  void unchecked(const char*, const F&) {}
};

template <class T>
concept UserTree = requires(T& t, const T& ct, FieldVisit& fv, FieldVisitMut& fm) {
  nuvec_tree_fields(ct, fv);
  nuvec_tree_fields(t, fm);
};

}  // namespace tree_detail

template <>
struct TreeAdapter<Array> {
  static constexpr bool defined = true;
  static void visit(const Array& a, tree_detail::Path& p, Visitor& v) {
    v.leaf(p.view(), a, LeafKind::array, true);
  }
  static void visit_mut(Array& a, tree_detail::Path& p, VisitorMut& v) {
    v.leaf(p.view(), a, LeafKind::array, true);
  }
};

template <>
struct TreeAdapter<Param> {
  static constexpr bool defined = true;
  static void visit(const Param& a, tree_detail::Path& p, Visitor& v) {
    v.leaf(p.view(), a.value, LeafKind::param, !a.frozen);
  }
  static void visit_mut(Param& a, tree_detail::Path& p, VisitorMut& v) {
    v.leaf(p.view(), a.value, LeafKind::param, !a.frozen);
  }
};

template <>
struct TreeAdapter<Buffer> {
  static constexpr bool defined = true;
  static void visit(const Buffer& a, tree_detail::Path& p, Visitor& v) {
    v.leaf(p.view(), a.value, LeafKind::buffer, false);
  }
  static void visit_mut(Buffer& a, tree_detail::Path& p, VisitorMut& v) {
    v.leaf(p.view(), a.value, LeafKind::buffer, false);
  }
};

/// An empty tree (also the empty alternative of a std::variant).
template <>
struct TreeAdapter<std::monostate> {
  static constexpr bool defined = true;
  static void visit(const std::monostate&, tree_detail::Path&, Visitor&) {}
  static void visit_mut(std::monostate&, tree_detail::Path&, VisitorMut&) {}
};

template <Tree T, class A>
struct TreeAdapter<std::vector<T, A>> : tree_detail::SequenceAdapter<std::vector<T, A>> {};
template <Tree T, size_t N>
struct TreeAdapter<std::array<T, N>> : tree_detail::SequenceAdapter<std::array<T, N>> {};
template <Tree T, class C, class A>
struct TreeAdapter<std::map<std::string, T, C, A>>
    : tree_detail::MapAdapter<std::map<std::string, T, C, A>> {};
template <Tree T, class H, class E, class A>
struct TreeAdapter<std::unordered_map<std::string, T, H, E, A>>
    : tree_detail::MapAdapter<std::unordered_map<std::string, T, H, E, A>> {};
template <Tree... Ts>
struct TreeAdapter<std::tuple<Ts...>> : tree_detail::TupleAdapter<std::tuple<Ts...>> {};
template <Tree A, Tree B>
struct TreeAdapter<std::pair<A, B>> : tree_detail::TupleAdapter<std::pair<A, B>> {};

/// A present value is visited at the same path; presence is structure.
template <Tree T>
struct TreeAdapter<std::optional<T>> {
  static constexpr bool defined = true;
  static void visit(const std::optional<T>& o, tree_detail::Path& p, Visitor& v) {
    v.variant(p.view(), o.has_value() ? 1 : 0);
    if (o) tree_detail::visit(*o, p, v);
  }
  static void visit_mut(std::optional<T>& o, tree_detail::Path& p, VisitorMut& v) {
    if (o) tree_detail::visit_mut(*o, p, v);
  }
};

/// The active alternative is visited at the same path; its index is structure.
template <Tree... Ts>
struct TreeAdapter<std::variant<Ts...>> {
  static constexpr bool defined = true;
  static void visit(const std::variant<Ts...>& x, tree_detail::Path& p, Visitor& v) {
    v.variant(p.view(), static_cast<int>(x.index()));
    std::visit([&](const auto& e) { tree_detail::visit(e, p, v); }, x);
  }
  static void visit_mut(std::variant<Ts...>& x, tree_detail::Path& p, VisitorMut& v) {
    std::visit([&](auto& e) { tree_detail::visit_mut(e, p, v); }, x);
  }
};

template <Tree T>
struct TreeAdapter<std::reference_wrapper<T>> {
  static constexpr bool defined = true;
  static void visit(const std::reference_wrapper<T>& r, tree_detail::Path& p, Visitor& v) {
    tree_detail::visit(r.get(), p, v);
  }
  static void visit_mut(std::reference_wrapper<T>& r, tree_detail::Path& p, VisitorMut& v) {
    tree_detail::visit_mut(r.get(), p, v);
  }
};

/// User structs declared with NUVEC_TREE (found by argument-dependent lookup).
template <class T>
struct TreeAdapter<T, std::enable_if_t<tree_detail::UserTree<T>>> {
  static constexpr bool defined = true;
  static void visit(const T& t, tree_detail::Path& p, Visitor& v) {
    tree_detail::FieldVisit fv{p, v};
    nuvec_tree_fields(t, fv);
  }
  static void visit_mut(T& t, tree_detail::Path& p, VisitorMut& v) {
    tree_detail::FieldVisitMut fv{p, v};
    nuvec_tree_fields(t, fv);
  }
};

}  // namespace nuvec
