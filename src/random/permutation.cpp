// permutation: the stable argsort of one random 32-bit word per position.
#include "nuvec/nuvec.h"
#include "ops/builder.h"

namespace nuvec::random {

Array permutation(int n, const Key& key, StreamOrDevice s, Location loc) {
  if (n < 0)
    return ops::impl::fail(
        ErrorKind::invalid_shape,
        "permutation needs a non-negative size, got " + std::to_string(n),
        "permutation", loc);
  return ops::argsort(bits({n}, 4, key, s, loc), -1, s, loc);
}

Array permutation(const Array& x, int axis, const Key& key, StreamOrDevice s,
                  Location loc) {
  if (x.is_failed()) return x;
  auto a = ops::impl::normalize_axis(axis, x.ndim());
  if (!a)
    return ops::impl::fail(ErrorKind::invalid_axis,
                           "axis " + std::to_string(axis) +
                               " is out of range for an array with " +
                               std::to_string(x.ndim()) + " dimensions",
                           "permutation", loc);
  return ops::take(x, permutation(x.shape(*a), key, s, loc), *a, s, loc);
}

}  // namespace nuvec::random
