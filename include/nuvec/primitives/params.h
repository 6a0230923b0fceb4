// Helpers for primitive parameters: equality and hashing of vectors and
// floats (bitwise, so 0.0 and -0.0 differ and NaN equals itself).
#pragma once

#include <cstddef>
#include <cstring>
#include <functional>
#include <vector>

namespace nuvec::params {

inline size_t combine(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}
template <class T>
size_t hash_vector(const std::vector<T>& v) {
  size_t h = v.size();
  for (const auto& x : v) h = combine(h, std::hash<T>{}(x));
  return h;
}
inline size_t hash_double(double d) {
  unsigned long long b;
  std::memcpy(&b, &d, sizeof b);
  return std::hash<unsigned long long>{}(b);
}
inline bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}
inline bool same_float_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace nuvec::params
