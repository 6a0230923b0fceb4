// Random numbers, bit for bit as MLX: Threefry-2x32 keys, MLX's counter
// layout and MLX's formulas for every distribution. Each draw takes an
// explicit key (a uint32 array of shape (2)) or, without one, the next key of
// the calling thread's key sequence. Invalid arguments give failed arrays.
// See docs/random.md.
#pragma once

#include <cstdint>
#include <optional>

#include "nuvec/core/array.h"
#include "nuvec/core/device.h"
#include "nuvec/core/error.h"

namespace nuvec::random {

using Key = std::optional<Array>;

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
  /// The calling thread's sequence.
  static KeySequence& thread_default();

 private:
  Array key_;
};

/// Random bits of `shape`: uint32, uint16 or uint8 for width 4, 2 or 1.
Array bits(const Shape& shape, int width = 4, const Key& key = std::nullopt,
           StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// `num` new keys from `key`: a uint32 array of shape (num, 2).
Array split(const Array& key, int num = 2, StreamOrDevice s = {},
            Location loc = NUVEC_LOC);
/// The two keys of split(key, 2), each of shape (2).
std::pair<Array, Array> split_pair(const Array& key, StreamOrDevice s = {},
                                   Location loc = NUVEC_LOC);

/// Uniform in [low, high) of a floating `dtype` (float32, float16, bfloat16);
/// low and high broadcast to `shape`. Scalars give float32 0-d arrays first,
/// then take `dtype` (as MLX).
Array uniform(const Operand& low, const Operand& high, const Shape& shape,
              DType dtype = float32, const Key& key = std::nullopt,
              StreamOrDevice s = {}, Location loc = NUVEC_LOC);
/// Uniform in [0, 1).
Array uniform(const Shape& shape, DType dtype = float32,
              const Key& key = std::nullopt, StreamOrDevice s = {},
              Location loc = NUVEC_LOC);

/// Normal with mean `mean` and standard deviation `scale` (either omitted:
/// 0 and 1): sqrt(2) * erfinv(u), u uniform in (-1, 1) (float32), then
/// converted to `dtype` (any floating dtype, float64 included).
Array normal(const Shape& shape, DType dtype = float32,
             const std::optional<Operand>& mean = std::nullopt,
             const std::optional<Operand>& scale = std::nullopt,
             const Key& key = std::nullopt, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);
Array normal(const Shape& shape, const Key& key, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);

/// Normal truncated to [lower, upper] (broadcast to `shape`).
Array truncated_normal(const Operand& lower, const Operand& upper,
                       const Shape& shape, DType dtype = float32,
                       const Key& key = std::nullopt, StreamOrDevice s = {},
                       Location loc = NUVEC_LOC);
/// The same with the broadcast shape of lower and upper.
Array truncated_normal(const Operand& lower, const Operand& upper,
                       DType dtype = float32, const Key& key = std::nullopt,
                       StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// bool array, true with probability p (a floating array or scalar; p
/// broadcasts to `shape`, or gives the shape).
Array bernoulli(const Operand& p, const Shape& shape,
                const Key& key = std::nullopt, StreamOrDevice s = {},
                Location loc = NUVEC_LOC);
Array bernoulli(const Operand& p = 0.5, const Key& key = std::nullopt,
                StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// Integers in [low, high) of an integer or bool `dtype`: the floor of a
/// float32 uniform draw, clipped to [low, high - 1] in `dtype` (as MLX 0.32).
Array randint(const Operand& low, const Operand& high, const Shape& shape,
              DType dtype = int32, const Key& key = std::nullopt,
              StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// Indices drawn from the unnormalised log-probabilities `logits` along
/// `axis` (Gumbel-max): one per position of the other axes, `num_samples`
/// of them (a new last axis), or of a `shape` that the other axes broadcast
/// to. uint32 indices.
Array categorical(const Array& logits, int axis = -1,
                  const Key& key = std::nullopt, StreamOrDevice s = {},
                  Location loc = NUVEC_LOC);
Array categorical(const Array& logits, int axis, int num_samples,
                  const Key& key = std::nullopt, StreamOrDevice s = {},
                  Location loc = NUVEC_LOC);
Array categorical(const Array& logits, int axis, const Shape& shape,
                  const Key& key = std::nullopt, StreamOrDevice s = {},
                  Location loc = NUVEC_LOC);

/// Standard Gumbel: -log(-log(u)), u uniform in [0, 1) of `dtype`.
Array gumbel(const Shape& shape, DType dtype = float32,
             const Key& key = std::nullopt, StreamOrDevice s = {},
             Location loc = NUVEC_LOC);

/// Laplace with location `mean` and scale `scale` (applied only when not 0
/// and 1, as MLX): sign(u) * log1p(-|u|), u uniform in (-1, 1) (float32).
Array laplace(const Shape& shape, DType dtype = float32, double mean = 0.0,
              double scale = 1.0, const Key& key = std::nullopt,
              StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// A random order of 0..n-1 (uint32): the stable argsort of n random words,
/// as MLX.
Array permutation(int n, const Key& key = std::nullopt, StreamOrDevice s = {},
                  Location loc = NUVEC_LOC);
/// `x` shuffled along `axis` (one random order for the whole axis).
Array permutation(const Array& x, int axis = 0, const Key& key = std::nullopt,
                  StreamOrDevice s = {}, Location loc = NUVEC_LOC);

/// Jointly normal samples with `mean` [..., n] and covariance `cov`
/// [..., n, n] (positive semi-definite; otherwise the result is undefined),
/// as MLX: mean + z @ (U diag(sqrt(S)) Vt) from the SVD of cov, z standard
/// normal of the broadcast of the batch shapes and `shape`, with n last.
/// float32 only.
Array multivariate_normal(const Array& mean, const Array& cov, const Shape& shape = {},
                          DType dtype = float32, const Key& key = std::nullopt,
                          StreamOrDevice s = {}, Location loc = NUVEC_LOC);

}  // namespace nuvec::random
