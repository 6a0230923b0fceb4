// fast::rope (docs/fast.md): MLX's checks, then the RoPE primitive or its
// composite.
#include <sstream>

#include "fast/composite.h"
#include "fast/route.h"
#include "nuvec/fast.h"
#include "nuvec/ops/ops.h"
#include "nuvec/primitives/fast.h"
#include "ops/builder.h"

namespace nuvec::fast {

using ops::impl::fail;

Array rope(const Array& x, int dims, bool traditional, std::optional<float> base, float scale,
           int offset, const std::optional<Array>& freqs, StreamOrDevice s, Location loc) {
  return rope(x, dims, traditional, base, scale, nuvec::array(offset, int32), freqs, s, loc);
}

Array rope(const Array& x, int dims, bool traditional, std::optional<float> base, float scale,
           const Array& offset, const std::optional<Array>& freqs, StreamOrDevice s,
           Location loc) {
  const char* op = "rope";
  for (const Array* a : {&x, &offset})
    if (a->is_failed()) return *a;
  if (freqs && freqs->is_failed()) return *freqs;
  auto shape_of = [](const Array& a) {
    std::ostringstream os;
    os << a.shape();
    return os.str();
  };
  if (x.ndim() < 3)
    return fail(ErrorKind::invalid_shape,
                "x must have at least 3 dimensions ([B, ..., T, D]) but has shape " + shape_of(x),
                op, loc);
  if (!is_floating(x.dtype()))
    return fail(ErrorKind::unsupported_dtype,
                "x must be of a floating dtype, not " + std::string(dtype_name(x.dtype())), op,
                loc);
  if (offset.ndim() > 1 || (offset.size() != 1 && offset.size() != x.shape(0)))
    return fail(ErrorKind::shape_mismatch,
                "offset must be a scalar or a vector of " + std::to_string(x.shape(0)) +
                    " elements (one per batch item) but has shape " + shape_of(offset),
                op, loc);
  if (!is_integer(offset.dtype()))
    return fail(ErrorKind::unsupported_dtype,
                "offset must be an integer, not " + std::string(dtype_name(offset.dtype())), op,
                loc);
  if (dims <= 0 || dims % 2 != 0)
    return fail(ErrorKind::invalid_argument,
                "dims must be positive and even but is " + std::to_string(dims), op, loc);
  if (dims > x.shape(-1))
    return fail(ErrorKind::invalid_argument,
                "dims (" + std::to_string(dims) + ") must not exceed x's last dimension (" +
                    std::to_string(x.shape(-1)) + ")",
                op, loc);
  if (freqs && base)
    return fail(ErrorKind::invalid_argument, "give one of base and freqs, not both", op, loc);
  if (!freqs && !base)
    return fail(ErrorKind::invalid_argument, "give one of base and freqs (neither has a value)",
                op, loc);
  if (freqs && (freqs->ndim() != 1 || freqs->shape(0) != dims / 2))
    return fail(ErrorKind::shape_mismatch,
                "freqs must have shape [" + std::to_string(dims / 2) + "] (dims / 2) but has shape " +
                    shape_of(*freqs),
                op, loc);
  // One offset for all rows is 0-d, whatever the batch size.
  Array off = ops::astype(ops::reshape(offset, offset.size() == 1 ? Shape{} : offset.shape(), s, loc),
                          int32, s, loc);
  std::optional<Array> f;
  if (freqs) f = ops::astype(*freqs, float32, s, loc);
  const float b = base ? *base : 1.0f;
  if (!detail::has_kernel(PrimitiveId::RoPE, s, x.dtype()))
    return composite::rope(x, off, f, dims, traditional, b, scale, true, s);
  std::vector<Array> in{x, off};
  if (f) in.push_back(*f);
  return ops::impl::build1(
      ops::impl::make<RoPE>(dims, traditional, b, scale, true, f.has_value()), std::move(in), s, op,
      loc);
}

}  // namespace nuvec::fast
