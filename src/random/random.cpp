// Keys, the per-thread key sequence, bits and split; the ops of MLX's
// float32 formulas (internal.h).
#include "nuvec/primitives/random.h"

#include <chrono>
#include <string>

#include "nuvec/nuvec.h"
#include "nuvec/primitives/elementwise.h"
#include "ops/builder.h"
#include "random/internal.h"

namespace nuvec::random {

using ops::impl::build1;
using ops::impl::fail;
using ops::impl::make;

Array key(uint64_t seed) {
  std::vector<uint32_t> k{static_cast<uint32_t>(seed >> 32),
                          static_cast<uint32_t>(seed)};
  return array<uint32_t>(k, Shape{2});
}

KeySequence::KeySequence(uint64_t seed) : key_(random::key(seed)) {}

void KeySequence::seed(uint64_t seed) { key_ = random::key(seed); }

Array KeySequence::next() {
  auto [first, second] = split(key_, {}, Location::none());
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

Array bits_impl(const Shape& shape, int width, const Key& key,
                const StreamOrDevice& s, const char* op, Location loc,
                std::optional<UnitUniform> uniform = std::nullopt) {
  if (width != 1 && width != 2 && width != 4)
    return fail(
        ErrorKind::invalid_argument,
        "bit width must be in {1, 2, 4} but got " + std::to_string(width), op,
        loc);
  for (int d : shape)
    if (d < 0)
      return fail(ErrorKind::invalid_shape, "negative dimension in shape", op,
                  loc);
  if (key) {
    if (key->is_failed()) return *key;
    if (key->dtype() != uint32)
      return fail(ErrorKind::unsupported_dtype,
                  "expected key type uint32 but received " +
                      std::string(dtype_name(key->dtype())),
                  op, loc);
    if (key->shape() != Shape{2})
      return fail(ErrorKind::invalid_shape, "expected a key of shape (2)", op,
                  loc);
  }
  return build1(make<RandomBits>(shape, width, uniform), {key_or_next(key)}, s,
                op, loc);
}

// One of the MLX-formula primitives on x (integers and bool converted to
// float32 first, as the public unary ops do).
template <class P>
Array mlx_unary(const Array& x, const StreamOrDevice& s, const char* op,
                Location loc) {
  if (x.is_failed()) return x;
  if (is_complex(x.dtype()))
    return fail(ErrorKind::unsupported_dtype, "complex input is not supported",
                op, loc);
  Array f = is_inexact(x.dtype()) ? x : ops::astype(x, float32, s, loc);
  return build1(make<P>(), {f}, s, op, loc);
}

// float32 and the 16-bit floats: fn in float64, rounded to float32 and then
// to x's dtype (MLX calls the C library's float function, then rounds).
template <class F>
Array via_float64(const Array& x, F fn, const StreamOrDevice& s, Location loc) {
  if (x.is_failed()) return x;
  if (x.dtype() == float64 || !is_inexact(x.dtype()) || is_complex(x.dtype()))
    return fn(x, s, loc);
  Array y =
      ops::astype(fn(ops::astype(x, float64, s, loc), s, loc), float32, s, loc);
  return x.dtype() == float32 ? y : ops::astype(y, x.dtype(), s, loc);
}

}  // namespace

Array unit_uniform(const Shape& shape, DType dtype, float upper, const Key& key,
                   const StreamOrDevice& s, Location loc) {
  return bits_impl(shape, 4, key, s, "uniform", loc, UnitUniform{dtype, upper});
}

Array bits(const Shape& shape, int width, const Key& key, StreamOrDevice s,
           Location loc) {
  return bits_impl(shape, width, key, s, "bits", loc);
}

Array bits(const Shape& shape, const Key& key, StreamOrDevice s, Location loc) {
  return bits_impl(shape, 4, key, s, "bits", loc);
}

Array split(const Array& key, int num, StreamOrDevice s, Location loc) {
  if (num < 0)
    return fail(ErrorKind::invalid_argument,
                "num must be non-negative, got " + std::to_string(num), "split",
                loc);
  return bits_impl({num, 2}, 4, key, s, "split", loc);
}

std::pair<Array, Array> split(const Array& key, StreamOrDevice s,
                              Location loc) {
  Array k = split(key, 2, s, loc);
  return {ops::reshape(ops::slice(k, {0, 0}, {1, 2}, {}, s, loc), {2}, s, loc),
          ops::reshape(ops::slice(k, {1, 0}, {2, 2}, {}, s, loc), {2}, s, loc)};
}

std::pair<Array, Array> split_pair(const Array& key, StreamOrDevice s,
                                   Location loc) {
  return split(key, s, loc);
}

namespace detail {

Array mlx_exp(const Array& x, const StreamOrDevice& s, Location loc) {
  return mlx_unary<MlxExp>(x, s, "exp", loc);
}

Array mlx_erf(const Array& x, const StreamOrDevice& s, Location loc) {
  return mlx_unary<MlxErf>(x, s, "erf", loc);
}

Array mlx_erfinv(const Array& x, const StreamOrDevice& s, Location loc) {
  return mlx_unary<MlxErfInv>(x, s, "erfinv", loc);
}

Array libm_log(const Array& x, const StreamOrDevice& s, Location loc) {
  return via_float64(
      x,
      [](const Array& v, const StreamOrDevice& st, Location l) {
        return ops::log(v, st, l);
      },
      s, loc);
}

Array libm_log1p(const Array& x, const StreamOrDevice& s, Location loc) {
  return via_float64(
      x,
      [](const Array& v, const StreamOrDevice& st, Location l) {
        return ops::log1p(v, st, l);
      },
      s, loc);
}

}  // namespace detail

}  // namespace nuvec::random
