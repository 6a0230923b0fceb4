// A mutating walk over a module tree that sees what the core's visitors do
// not need: Params (their frozen flags), mode flags, and the submodules
// themselves with their paths. It follows the tree declarations of the core
// (NUVEC_TREE's field lists, the standard containers), so paths are exactly
// the core's tree_flatten paths (docs/trees.md).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "nuvec/tree.h"

namespace nuvec::nn {

class ModuleBase;

/// What a walk reports, each with its full path; every method defaults to
/// doing nothing. Modules are entered before their fields and left after.
class Walk {
 public:
  virtual ~Walk() = default;
  virtual void param(const std::string&, Param&) {}
  virtual void array(const std::string&, Array&) {}
  virtual void buffer(const std::string&, Buffer&) {}
  virtual void mode(const std::string&, bool&) {}
  virtual void enter_module(const std::string&, ModuleBase&) {}
  virtual void leave_module(const std::string&, ModuleBase&) {}
};

namespace walk_detail {

inline std::string join(const std::string& path, const std::string& component) {
  return path.empty() ? component : path + "." + component;
}

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsVariant : std::false_type {};
template <class... T>
struct IsVariant<std::variant<T...>> : std::true_type {};
template <class T>
struct IsSequence : std::false_type {};
template <class T, class A>
struct IsSequence<std::vector<T, A>> : std::true_type {};
template <class T, size_t N>
struct IsSequence<std::array<T, N>> : std::true_type {};
template <class T>
struct IsMap : std::false_type {};
template <class T, class C, class A>
struct IsMap<std::map<std::string, T, C, A>> : std::true_type {};
template <class T, class H, class E, class A>
struct IsMap<std::unordered_map<std::string, T, H, E, A>> : std::true_type {};
template <class T>
struct IsTuple : std::false_type {};
template <class... T>
struct IsTuple<std::tuple<T...>> : std::true_type {};
template <class A, class B>
struct IsTuple<std::pair<A, B>> : std::true_type {};

struct FieldWalk;

template <class T>
concept HasFields = requires(T& t, FieldWalk& w) { nuvec_tree_fields(t, w); };

}  // namespace walk_detail

/// Walks `t` (whose own path is `path`), reporting to `w`.
template <class T>
void walk(T& t, const std::string& path, Walk& w);

namespace walk_detail {

/// The field visitor a NUVEC_TREE struct's generated function calls.
struct FieldWalk {
  const std::string& path;
  Walk& w;
  template <class F>
  void field(const char* name, F& f) {
    walk(f, join(path, name), w);
  }
  template <class F>
  void static_field(const char*, F&) {}
  void mode(const char* name, bool& f) { w.mode(join(path, name), f); }
  template <class F>
  void unchecked(const char*, F&) {}
};

}  // namespace walk_detail

template <class T>
void walk(T& t, const std::string& path, Walk& w) {
  using namespace walk_detail;
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, Array>) {
    w.array(path, t);
  } else if constexpr (std::is_same_v<U, Param>) {
    w.param(path, t);
  } else if constexpr (std::is_same_v<U, Buffer>) {
    w.buffer(path, t);
  } else if constexpr (IsOptional<U>::value) {
    if (t) walk(*t, path, w);
  } else if constexpr (IsVariant<U>::value) {
    std::visit([&](auto& e) { walk(e, path, w); }, t);
  } else if constexpr (IsSequence<U>::value) {
    for (size_t i = 0; i < t.size(); ++i) walk(t[i], join(path, std::to_string(i)), w);
  } else if constexpr (IsMap<U>::value) {
    for (auto& [k, v] : t) walk(v, join(path, k), w);
  } else if constexpr (IsTuple<U>::value) {
    [&]<size_t... I>(std::index_sequence<I...>) {
      (walk(std::get<I>(t), join(path, std::to_string(I)), w), ...);
    }(std::make_index_sequence<std::tuple_size_v<U>>{});
  } else if constexpr (HasFields<U>) {
    constexpr bool is_module = std::is_base_of_v<ModuleBase, U>;
    if constexpr (is_module) w.enter_module(path, t);
    FieldWalk fw{path, w};
    nuvec_tree_fields(t, fw);
    if constexpr (is_module) w.leave_module(path, t);
  }
}

}  // namespace nuvec::nn
