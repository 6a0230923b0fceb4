// fast::norm_rope: rms_norm, rope and the cache write as one call (a
// composite; docs/fast.md, "norm_rope").
#include "nuvec/fast_norm_rope.h"
#include "nuvec/ops/ops.h"
#include "ops/builder.h"

namespace nuvec::fast {

using ops::impl::fail;

Array norm_rope(const Array& x, const std::optional<Array>& weight, float eps, int dims, bool traditional,
                std::optional<float> base, float scale, int offset, const std::optional<Array>& freqs,
                StreamOrDevice s, Location loc) {
  return rope(rms_norm(x, weight, eps, s, loc), dims, traditional, base, scale, offset, freqs, s, loc);
}

Array norm_rope(const Array& x, const std::optional<Array>& weight, float eps, int dims, bool traditional,
                std::optional<float> base, float scale, const Array& offset, const std::optional<Array>& freqs,
                StreamOrDevice s, Location loc) {
  return rope(rms_norm(x, weight, eps, s, loc), dims, traditional, base, scale, offset, freqs, s, loc);
}

std::pair<Array, Array> norm_rope(const Array& x, const std::optional<Array>& weight, float eps, int dims,
                                  bool traditional, std::optional<float> base, float scale, int offset,
                                  const Array& cache, const std::optional<Array>& freqs, StreamOrDevice s,
                                  Location loc) {
  Array r = norm_rope(x, weight, eps, dims, traditional, base, scale, offset, freqs, s, loc);
  if (r.is_failed()) return {r, r};
  if (cache.is_failed()) return {cache, cache};
  const bool shapes_fit = cache.ndim() == 4 && r.ndim() == 4 && cache.shape(0) == r.shape(0) &&
                          cache.shape(1) == r.shape(1) && cache.shape(3) == r.shape(3);
  if (!shapes_fit) {
    Array f = fail(ErrorKind::shape_mismatch, "the cache must be [B, H, C, D] of x's B, H and D", "norm_rope", loc);
    return {f, f};
  }
  if (offset < 0 || offset + r.shape(2) > cache.shape(2)) {
    Array f = fail(ErrorKind::out_of_range,
                   "positions [" + std::to_string(offset) + ", " + std::to_string(offset + r.shape(2)) +
                       ") do not fit a cache of " + std::to_string(cache.shape(2)),
                   "norm_rope", loc);
    return {f, f};
  }
  Shape lo{0, 0, offset, 0}, hi = cache.shape();
  hi[2] = offset + r.shape(2);
  return {r, slice_update(cache, r, lo, hi, s, loc)};
}

}  // namespace nuvec::fast
