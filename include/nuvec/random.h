// Random numbers, bit for bit as MLX: Threefry-2x32 keys, MLX's counter
// layout and MLX's formulas for every distribution. The functions are MLX's
// C++ overloads (names, argument orders, defaults), each with a trailing
// `Location`. Each draw takes an explicit key (a uint32 array of shape (2))
// or, without one, the next key of the calling thread's key sequence.
// Invalid arguments give failed arrays. See docs/random.md.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <utility>

#include "nuvec/core/array.h"
#include "nuvec/core/device.h"
#include "nuvec/core/error.h"
#include "nuvec/ops/creation.h"

namespace nuvec::random {

using Key = std::optional<Array>;

namespace detail {
/// What MLX's `array(value)` takes for a bound or a probability given as a
/// value: a number of an element type, or an array.
template <class T>
concept ArrayOrValue = std::same_as<T, Array> || nuvec::detail::is_element_v<T>;
template <class T>
Array as_array(const T& v) {
  if constexpr (std::same_as<T, Array>) {
    return v;
  } else {
    return array(v);
  }
}
/// A DType argument that a bare `{}` does not produce: MLX's Dtype has no
/// default constructor, so in `normal(shape, {})`, `normal(shape, {}, {},
/// {})` or `truncated_normal(lo, hi, {})` the `{}` is the key, a float or
/// the shape there (nuvec's DType has one: these overloads are templates).
template <class D>
concept DTypeArg = std::same_as<D, DType>;

Array uniform_unit(const Shape& shape, DType dtype, const Key& key,
                   StreamOrDevice s, Location loc);
Array normal_dtype(const Shape& shape, DType dtype, const Key& key,
                   StreamOrDevice s, Location loc);
Array normal_floats(const Shape& shape, DType dtype, float mean, float scale,
                    const Key& key, StreamOrDevice s, Location loc);
Array truncated_normal_dtype(const Array& lower, const Array& upper,
                             DType dtype, const Key& key, StreamOrDevice s,
                             Location loc);
Array laplace_floats(const Shape& shape, DType dtype, float mean, float scale,
                     const Key& key, StreamOrDevice s, Location loc);
}  // namespace detail

/// A key from a seed: the uint32 pair (seed >> 32, seed & 0xffffffff).
Array key(uint64_t seed);
/// Reseeds the calling thread's key sequence (other threads are untouched).
void seed(uint64_t seed);

/// The calling thread's key sequence, as MLX's KeySequence: every thread's
/// sequence starts from one process-wide default seed (the time at first
/// use) until the thread calls seed(). next() splits the current key in two,
/// keeps the first half and returns the second.
class KeySequence {
 public:
  explicit KeySequence(uint64_t seed);
  void seed(uint64_t seed);
  Array next();
  /// The current key (compile swaps it for a placeholder while tracing).
  Array& state() { return key_; }
  /// The calling thread's sequence (MLX's name).
  static KeySequence& default_() { return thread_default(); }
  /// The calling thread's sequence.
  static KeySequence& thread_default();

 private:
  Array key_;
};

/// Random bits of `shape`: uint32, uint16 or uint8 for width 4, 2 or 1.
/// A negative dimension, another width or a key that is not uint32 of
/// shape (2) fails.
Array bits(const Shape& shape, int width, const Key& key = std::nullopt,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Random uint32 bits of `shape` (width 4).
Array bits(const Shape& shape, const Key& key = std::nullopt,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// The two keys of split(key, 2), each of shape (2).
std::pair<Array, Array> split(const Array& key, StreamOrDevice s = {},
                              Location loc = NUVEC_LOC);
/// `num` new keys from `key`: a uint32 array of shape (num, 2).
Array split(const Array& key, int num, StreamOrDevice s = {},
            Location loc = NUVEC_LOC);
/// split(key) under another name (what nuvec called it before).
std::pair<Array, Array> split_pair(const Array& key, StreamOrDevice s = {},
                                   Location loc = NUVEC_LOC);

/// Uniform in [low, high) of the real floating `dtype` (float32, float16,
/// bfloat16; float64 fails, as MLX): low and high are converted to `dtype`
/// and broadcast into `shape` (their broadcast shape must not be larger).
Array uniform(const Array& low, const Array& high, const Shape& shape,
              DType dtype = float32, const Key& key = std::nullopt,
              StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The same with bounds given as values: each becomes `array(value)` first
/// (a float or double float32, an int int32), as MLX.
template <detail::ArrayOrValue T, detail::ArrayOrValue U>
Array uniform(T low, U high, const Shape& shape, DType dtype = float32,
              const Key& key = std::nullopt, StreamOrDevice s = {},
              Location loc = NUVEC_LOC) {
  return uniform(detail::as_array(low), detail::as_array(high), shape, dtype,
                 key, s, loc);
}
/// Uniform in [0, 1) of `dtype`.
template <detail::DTypeArg D>
Array uniform(const Shape& shape, D dtype, const Key& key = std::nullopt,
              StreamOrDevice s = {}, Location loc = NUVEC_LOC) {
  return detail::uniform_unit(shape, dtype, key, s, loc);
}
/// Uniform float32 in [0, 1).
Array uniform(const Shape& shape, const Key& key = std::nullopt,
              StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// Normal of `dtype` (any floating dtype, or complex64) with mean `mean`
/// and standard deviation `scale` (absent: 0 and 1): sqrt(2) * erfinv(u)
/// with u uniform in (-1, 1) in float32 and MLX's erfinv, converted to
/// `dtype`; mean and scale are converted to `dtype` and broadcast with
/// `shape` (the result takes the broadcast shape, as MLX). complex64:
/// erfinv of uniform pairs as real and imaginary parts (no sqrt(2)),
/// times scale plus mean.
Array normal(const Shape& shape, DType dtype, const std::optional<Array>& mean,
             const std::optional<Array>& scale, const Key& key,
             StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The same with float mean and scale (0 and 1 are left out, as MLX).
template <detail::DTypeArg D>
Array normal(const Shape& shape, D dtype, float mean, float scale,
             const Key& key = std::nullopt, StreamOrDevice s = {},
             Location loc = NUVEC_LOC) {
  return detail::normal_floats(shape, dtype, mean, scale, key, s, loc);
}
/// float32 normal with float mean and scale.
Array normal(const Shape& shape, float mean, float scale,
             const Key& key = std::nullopt, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
/// Standard normal of `dtype`.
template <detail::DTypeArg D>
Array normal(const Shape& shape, D dtype, const Key& key = std::nullopt,
             StreamOrDevice s = {}, Location loc = NUVEC_LOC) {
  return detail::normal_dtype(shape, dtype, key, s, loc);
}
/// Standard float32 normal.
Array normal(const Shape& shape, const Key& key = std::nullopt,
             StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// Jointly normal samples with `mean` [..., n] and covariance `cov`
/// [..., n, n] (positive semi-definite; otherwise the result is undefined),
/// as MLX: mean + z @ (U diag(sqrt(S)) Vt) from the SVD of cov, z standard
/// normal of the broadcast of the batch shapes and `shape`, with n last.
/// float32 only.
Array multivariate_normal(const Array& mean, const Array& cov,
                          const Shape& shape, DType dtype,
                          const Key& key = std::nullopt, StreamOrDevice s = {},
                          Location loc = NUVEC_LOC);

/// Integers in [low, high) of an integer or bool `dtype`: the floor of a
/// float32 uniform draw between the bounds, converted to `dtype` and
/// clipped to [low, high - 1] there (MLX 0.32's method: beyond 2^24 not
/// every integer can come out).
Array randint(const Array& low, const Array& high, const Shape& shape,
              DType dtype = int32, const Key& key = std::nullopt,
              StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// The same with bounds given as values (`array(value)` first).
template <detail::ArrayOrValue T, detail::ArrayOrValue U>
Array randint(T low, U high, const Shape& shape, DType dtype = int32,
              const Key& key = std::nullopt, StreamOrDevice s = {},
              Location loc = NUVEC_LOC) {
  return randint(detail::as_array(low), detail::as_array(high), shape, dtype,
                 key, s, loc);
}

/// bool array of `shape`, true with probability p (a floating array that
/// broadcasts into `shape`): bits < p * (the float32 above 2^32 - 1), so
/// p <= 0 gives false and p >= 1 true.
Array bernoulli(const Array& p, const Shape& shape,
                const Key& key = std::nullopt, StreamOrDevice s = {},
                Location loc = NUVEC_LOC);
/// The same with the shape of p. As in MLX, `bernoulli(k)` for an array k
/// takes k as p (and fails: p must be floating); the key-only form is
/// bernoulli(Key(k)).
Array bernoulli(const Array& p, const Key& key = std::nullopt,
                StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// p given as a value (`array(p)`: a float or double is float32; an int
/// fails, as MLX).
template <detail::ArrayOrValue T>
Array bernoulli(T p, const Key& key = std::nullopt, StreamOrDevice s = {},
                Location loc = NUVEC_LOC) {
  return bernoulli(detail::as_array(p), key, s, loc);
}
template <detail::ArrayOrValue T>
Array bernoulli(T p, const Shape& shape, const Key& key = std::nullopt,
                StreamOrDevice s = {}, Location loc = NUVEC_LOC) {
  return bernoulli(detail::as_array(p), shape, key, s, loc);
}
/// A 0-d bool, true with probability 0.5.
Array bernoulli(const Key& key = std::nullopt, StreamOrDevice s = {},
                Location loc = NUVEC_LOC);

/// Normal truncated to [lower, upper] (converted to `dtype`, broadcast into
/// `shape`): sqrt(2) * erfinv(u), u uniform between erf(lower / sqrt(2))
/// and erf(upper / sqrt(2)) (MLX's erf and erfinv), clipped to the bounds.
/// float32, float16, bfloat16 (float64 fails, as MLX).
Array truncated_normal(const Array& lower, const Array& upper,
                       const Shape& shape, DType dtype = float32,
                       const Key& key = std::nullopt, StreamOrDevice s = {},
                       Location loc = NUVEC_LOC);
/// The same with the broadcast shape of lower and upper.
template <detail::DTypeArg D = DType>
Array truncated_normal(const Array& lower, const Array& upper,
                       D dtype = float32, const Key& key = std::nullopt,
                       StreamOrDevice s = {}, Location loc = NUVEC_LOC) {
  return detail::truncated_normal_dtype(lower, upper, dtype, key, s, loc);
}

/// Standard Gumbel: -log(-log(u)), u uniform in [0, 1) of `dtype`
/// (float32, float16, bfloat16), each log the C library's float log as
/// closely as nuvec computes it (docs/random.md).
Array gumbel(const Shape& shape, DType dtype = float32,
             const Key& key = std::nullopt, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);

/// Indices (uint32) drawn from the unnormalised log-probabilities `logits`
/// along `axis`, one for each position of `shape`, which the other axes of
/// logits must broadcast into. As MLX 0.32: logits holding one distribution
/// (all other axes of size 1) and a non-empty `shape` sample by inverse
/// CDF (weights exp(x - max), or the positions of the maximum where it is
/// infinite; one float32 uniform draw per sample); all else takes the
/// argmax of logits plus Gumbel noise.
Array categorical(const Array& logits, int axis, const Shape& shape,
                  const Key& key = std::nullopt, StreamOrDevice s = {},
                  Location loc = NUVEC_LOC);
/// `num_samples` draws for each position of the other axes (a new last
/// axis).
Array categorical(const Array& logits, int axis, int num_samples,
                  const Key& key = std::nullopt, StreamOrDevice s = {},
                  Location loc = NUVEC_LOC);
/// One draw for each position of the other axes.
Array categorical(const Array& logits, int axis = -1,
                  const Key& key = std::nullopt, StreamOrDevice s = {},
                  Location loc = NUVEC_LOC);

/// Laplace of a real floating `dtype` with location `mean` and scale
/// `scale` (applied only when not 0 and 1, as MLX): sign(u) * log1p(-|u|),
/// u uniform in (-1, 1) in float32 (log1p in float64 for float64).
template <detail::DTypeArg D>
Array laplace(const Shape& shape, D dtype, float mean, float scale,
              const Key& key = std::nullopt, StreamOrDevice s = {},
              Location loc = NUVEC_LOC) {
  return detail::laplace_floats(shape, dtype, mean, scale, key, s, loc);
}
/// float32 Laplace with location and scale.
Array laplace(const Shape& shape, float mean, float scale,
              const Key& key = std::nullopt, StreamOrDevice s = {},
              Location loc = NUVEC_LOC);
/// Standard Laplace of `dtype`.
template <detail::DTypeArg D>
Array laplace(const Shape& shape, D dtype, const Key& key = std::nullopt,
              StreamOrDevice s = {}, Location loc = NUVEC_LOC) {
  return detail::laplace_floats(shape, dtype, 0.0f, 1.0f, key, s, loc);
}
/// Standard float32 Laplace.
Array laplace(const Shape& shape, const Key& key = std::nullopt,
              StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// `x` shuffled along `axis` (one random order for the whole axis).
Array permutation(const Array& x, int axis = 0, const Key& key = std::nullopt,
                  StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// A random order of 0..x-1 (uint32): the stable argsort of x random words,
/// as MLX.
Array permutation(int x, const Key& key = std::nullopt, StreamOrDevice s = {},
                  Location loc = NUVEC_LOC);

}  // namespace nuvec::random
