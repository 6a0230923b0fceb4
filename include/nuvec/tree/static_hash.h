// Hashing of static fields (the C++ form of the spec's #[derive(Static)]):
// a deterministic 64-bit hash, equal in every process, of configuration
// values that are part of a tree's structure (docs/trees.md).
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
#include <array>

namespace nuvec {

/// A multiply-xorshift over 8-byte words (FNV-1a over a tail of fewer
/// bytes) with a final avalanche: stable across runs and
/// machines of the same endianness (never std::hash, which may differ).
class StaticHasher {
 public:
  void bytes(const void* p, size_t n) {
    auto* b = static_cast<const unsigned char*>(p);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, b + i, 8);
      u64(w);
    }
    for (; i < n; ++i) h_ = (h_ ^ b[i]) * 0x100000001b3ull;
  }
  // A word at a time (compiled calls hash their key on every call).
  void u64(uint64_t v) {
    h_ = (h_ ^ v) * 0x9e3779b97f4a7c15ull;
    h_ ^= h_ >> 29;
  }
  uint64_t digest() const {
    uint64_t z = h_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
};

template <class T>
void hash_static(StaticHasher& h, const T& v);

namespace tree_detail {
template <class T>
concept HasStaticHash = requires(StaticHasher& h, const T& v) { nuvec_static_hash(h, v); };
template <class T>
struct IsStdVector : std::false_type {};
template <class T, class A>
struct IsStdVector<std::vector<T, A>> : std::true_type {};
template <class T>
struct IsStdArray : std::false_type {};
template <class T, size_t N>
struct IsStdArray<std::array<T, N>> : std::true_type {};
template <class T>
struct IsStdMap : std::false_type {};
template <class K, class V, class C, class A>
struct IsStdMap<std::map<K, V, C, A>> : std::true_type {};
template <class T>
struct IsTupleLike : std::false_type {};
template <class... Ts>
struct IsTupleLike<std::tuple<Ts...>> : std::true_type {};
template <class A, class B>
struct IsTupleLike<std::pair<A, B>> : std::true_type {};
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
}  // namespace tree_detail

/// Whether values of T can be static fields: numbers, bools, enums, strings,
/// and std containers of them, or a user struct declared with
/// NUVEC_STATIC_STRUCT. Floats hash by bits (so -0.0 and 0.0 differ, and a
/// NaN equals itself), as compile must tell any two constants apart.
template <class T>
void hash_static(StaticHasher& h, const T& v) {
  using namespace tree_detail;
  if constexpr (std::is_same_v<T, bool>) {
    h.u64(v ? 1 : 0);
  } else if constexpr (std::is_integral_v<T>) {
    h.u64(static_cast<uint64_t>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (sizeof(T) == 4) h.u64(std::bit_cast<uint32_t>(v));
    else h.u64(std::bit_cast<uint64_t>(static_cast<double>(v)));
  } else if constexpr (std::is_enum_v<T>) {
    h.u64(static_cast<uint64_t>(static_cast<std::underlying_type_t<T>>(v)));
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    std::string_view s = v;
    h.u64(s.size());
    h.bytes(s.data(), s.size());
  } else if constexpr (IsStdVector<T>::value || IsStdArray<T>::value) {
    h.u64(v.size());
    for (const auto& e : v) hash_static(h, e);
  } else if constexpr (IsStdMap<T>::value) {
    h.u64(v.size());
    for (const auto& [k, e] : v) {
      hash_static(h, k);
      hash_static(h, e);
    }
  } else if constexpr (IsTupleLike<T>::value) {
    std::apply([&](const auto&... e) { (hash_static(h, e), ...); }, v);
  } else if constexpr (IsOptional<T>::value) {
    h.u64(v.has_value());
    if (v) hash_static(h, *v);
  } else if constexpr (HasStaticHash<T>) {
    nuvec_static_hash(h, v);
  } else {
    static_assert(sizeof(T) == 0,
                  "not a static value: declare the type with NUVEC_STATIC_STRUCT");
  }
}

template <class T>
uint64_t static_hash(const T& v) {
  StaticHasher h;
  hash_static(h, v);
  return h.digest();
}

}  // namespace nuvec
