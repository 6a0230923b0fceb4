// Declaring user structs as trees, once, next to the struct (the C++ form of
// the spec's #[derive(Tree)] and #[derive(Static)]; docs/trees.md):
//
//   struct Linear { Array weight; std::optional<Array> bias; int dims; bool training; };
//   NUVEC_TREE(Linear, weight, bias, NUVEC_STATIC(dims), NUVEC_MODE(training))
//
// Plain names are child trees (arrays, Params, containers, other NUVEC_TREE
// structs); NUVEC_STATIC(f) is a static field hashed into the structure (a
// changed value is a different structure: compile retraces); NUVEC_MODE(f) is
// a bool mode flag (train/eval) recorded in the structure; NUVEC_UNCHECKED(f)
// is a field deliberately left out (neither visited nor hashed, the spec's
// #[tree(skip, static_unchecked)]). Fields not listed are ignored as well.
// Use the macros at namespace scope, in the struct's namespace, with public
// fields.
#pragma once

#include <concepts>
#include <type_traits>

#include "nuvec/tree/adapter.h"

// Preprocessor plumbing: a FOR_EACH over up to 256 arguments (C++20
// __VA_OPT__), and a test for whether an argument is parenthesised.
#define NUVEC_PP_PARENS ()
#define NUVEC_PP_EXPAND(...) NUVEC_PP_EXPAND3(NUVEC_PP_EXPAND3(NUVEC_PP_EXPAND3(NUVEC_PP_EXPAND3(__VA_ARGS__))))
#define NUVEC_PP_EXPAND3(...) NUVEC_PP_EXPAND2(NUVEC_PP_EXPAND2(NUVEC_PP_EXPAND2(NUVEC_PP_EXPAND2(__VA_ARGS__))))
#define NUVEC_PP_EXPAND2(...) NUVEC_PP_EXPAND1(NUVEC_PP_EXPAND1(NUVEC_PP_EXPAND1(NUVEC_PP_EXPAND1(__VA_ARGS__))))
#define NUVEC_PP_EXPAND1(...) __VA_ARGS__
#define NUVEC_PP_FOR_EACH(m, ...) __VA_OPT__(NUVEC_PP_EXPAND(NUVEC_PP_FOR_EACH_H(m, __VA_ARGS__)))
#define NUVEC_PP_FOR_EACH_H(m, a, ...) m(a) __VA_OPT__(NUVEC_PP_FOR_EACH_AGAIN NUVEC_PP_PARENS(m, __VA_ARGS__))
#define NUVEC_PP_FOR_EACH_AGAIN() NUVEC_PP_FOR_EACH_H
#define NUVEC_PP_CAT(a, b) NUVEC_PP_CAT_I(a, b)
#define NUVEC_PP_CAT_I(a, b) a##b
#define NUVEC_PP_SECOND(a, b, ...) b
#define NUVEC_PP_PROBE_PAREN(...) ~, 1
#define NUVEC_PP_IS_PAREN(x) NUVEC_PP_IS_PAREN_I(NUVEC_PP_PROBE_PAREN x)
#define NUVEC_PP_IS_PAREN_I(...) NUVEC_PP_SECOND(__VA_ARGS__, 0, )

// Field roles: wrappers expand to (role, name); plain names are child trees.
#define NUVEC_STATIC(f) (static_field, f)
#define NUVEC_MODE(f) (mode, f)
#define NUVEC_UNCHECKED(f) (unchecked, f)

#define NUVEC_TREE_ITEM(x) NUVEC_PP_CAT(NUVEC_TREE_ITEM_, NUVEC_PP_IS_PAREN(x))(x)
#define NUVEC_TREE_ITEM_0(f) nuvec_v.field(#f, nuvec_self.f);
#define NUVEC_TREE_ITEM_1(x) NUVEC_TREE_ROLE x
#define NUVEC_TREE_ROLE(role, f) nuvec_v.role(#f, nuvec_self.f);

/// Declares `Type` a tree with the listed fields, in order.
#define NUVEC_TREE(Type, ...)                                                   \
  template <class NuvecSelf, class NuvecV>                                      \
    requires std::same_as<std::remove_const_t<NuvecSelf>, Type>                 \
  void nuvec_tree_fields(NuvecSelf& nuvec_self, NuvecV& nuvec_v) {              \
    (void)nuvec_self;                                                           \
    (void)nuvec_v;                                                              \
    NUVEC_PP_FOR_EACH(NUVEC_TREE_ITEM, __VA_ARGS__)                             \
  }

#define NUVEC_STATIC_ITEM(f) ::nuvec::hash_static(nuvec_h, nuvec_self.f);
/// Declares `Type` a static value hashed field by field (the spec's
/// #[derive(Static)]): it may then be a NUVEC_STATIC field of a tree.
#define NUVEC_STATIC_STRUCT(Type, ...)                                          \
  inline void nuvec_static_hash(::nuvec::StaticHasher& nuvec_h, const Type& nuvec_self) { \
    (void)nuvec_self;                                                           \
    NUVEC_PP_FOR_EACH(NUVEC_STATIC_ITEM, __VA_ARGS__)                           \
  }
