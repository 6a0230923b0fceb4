// Keys, the per-thread key sequence, bits and split.
#include <chrono>
#include <string>

#include "nuvec/nuvec.h"
#include "nuvec/primitives/random.h"
#include "ops/builder.h"
#include "random/internal.h"

namespace nuvec::random {

using ops::detail::build1;
using ops::detail::fail;
using ops::detail::make;

Array key(uint64_t seed) {
  std::vector<uint32_t> k{static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(seed)};
  return array<uint32_t>(k, Shape{2});
}

KeySequence::KeySequence(uint64_t seed) : key_(random::key(seed)) {}

void KeySequence::seed(uint64_t seed) { key_ = random::key(seed); }

Array KeySequence::next() {
  auto [first, second] = split_pair(key_, {}, Location::none());
  key_ = first;
  return second;
}

KeySequence& KeySequence::thread_default() {
  // As MLX: one default seed per process (milliseconds since the epoch at
  // first use), so threads that never call seed() draw the same values.
  static const uint64_t default_seed = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
  static thread_local KeySequence sequence(default_seed);
  return sequence;
}

void seed(uint64_t seed) { KeySequence::thread_default().seed(seed); }

namespace {

// The key a draw uses: the explicit one, else the thread's next key.
Array key_or_next(const Key& k) {
  return k ? *k : KeySequence::thread_default().next();
}

Array bits_impl(const Shape& shape, int width, const Key& key, const StreamOrDevice& s,
                const char* op, Location loc, std::optional<UnitUniform> uniform = std::nullopt) {
  if (width != 1 && width != 2 && width != 4)
    return fail(ErrorKind::invalid_argument,
                "bit width must be in {1, 2, 4} but got " + std::to_string(width), op, loc);
  for (int d : shape)
    if (d < 0) return fail(ErrorKind::invalid_shape, "negative dimension in shape", op, loc);
  if (key) {
    if (key->is_failed()) return *key;
    if (key->dtype() != uint32)
      return fail(ErrorKind::unsupported_dtype,
                  "expected key type uint32 but received " +
                      std::string(dtype_name(key->dtype())),
                  op, loc);
    if (key->shape() != Shape{2})
      return fail(ErrorKind::invalid_shape, "expected a key of shape (2)", op, loc);
  }
  return build1(make<RandomBits>(shape, width, uniform), {key_or_next(key)}, s, op, loc);
}

}  // namespace

Array unit_uniform(const Shape& shape, DType dtype, float upper, const Key& key,
                   const StreamOrDevice& s, Location loc) {
  return bits_impl(shape, 4, key, s, "uniform", loc, UnitUniform{dtype, upper});
}

Array bits(const Shape& shape, int width, const Key& key, StreamOrDevice s, Location loc) {
  return bits_impl(shape, width, key, s, "bits", loc);
}

Array split(const Array& key, int num, StreamOrDevice s, Location loc) {
  if (num < 0)
    return fail(ErrorKind::invalid_argument,
                "num must be non-negative, got " + std::to_string(num), "split", loc);
  return bits_impl({num, 2}, 4, key, s, "split", loc);
}

std::pair<Array, Array> split_pair(const Array& key, StreamOrDevice s, Location loc) {
  Array k = split(key, 2, s, loc);
  return {ops::reshape(ops::slice(k, {0, 0}, {1, 2}, {}, s, loc), {2}, s, loc),
          ops::reshape(ops::slice(k, {1, 0}, {2, 2}, {}, s, loc), {2}, s, loc)};
}

}  // namespace nuvec::random
