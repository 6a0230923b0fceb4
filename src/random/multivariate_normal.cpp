// random::multivariate_normal with MLX's formula: the square root of the
// covariance from its SVD, U diag(sqrt(S)) Vt (unique for distinct singular
// values whatever the signs LAPACK picks), applied to standard normal draws
// of the broadcast batch shape, plus the mean.
#include "nuvec/linalg.h"
#include "nuvec/ops/ops.h"
#include "nuvec/random.h"
#include "ops/builder.h"

namespace nuvec::random {

using ops::impl::fail;

Array multivariate_normal(const Array& mean, const Array& cov,
                          const Shape& shape, DType dtype, const Key& key,
                          StreamOrDevice s, Location loc) {
  const char* name = "multivariate_normal";
  if (mean.is_failed()) return mean;
  if (cov.is_failed()) return cov;
  if (dtype != float32)
    return fail(ErrorKind::unsupported_dtype, "dtype must be float32", name,
                loc);
  if (mean.ndim() < 1)
    return fail(ErrorKind::invalid_shape,
                "mean must have at least one dimension", name, loc);
  if (cov.ndim() < 2)
    return fail(ErrorKind::invalid_shape,
                "cov must have at least two dimensions", name, loc);
  int n = mean.shape(-1);
  if (cov.shape(-1) != cov.shape(-2))
    return fail(ErrorKind::invalid_shape,
                "the last two dimensions of cov must be equal", name, loc);
  if (cov.shape(-1) != n)
    return fail(ErrorKind::shape_mismatch,
                "mean and cov must have compatible shapes", name, loc);
  Shape mb(mean.shape().begin(), mean.shape().end() - 1);
  Shape cb(cov.shape().begin(), cov.shape().end() - 2);
  auto out = ops::try_broadcast_shapes(cb, mb);
  if (out) out = ops::try_broadcast_shapes(*out, shape);
  if (!out)
    return fail(ErrorKind::shape_mismatch, out.error().message(), name, loc);
  Shape out_shape = *out;
  out_shape.push_back(n);
  auto usv = linalg::svd(ops::astype(cov, float32, s, loc), true, s, loc);
  if (usv[0].is_failed()) return usv[0];
  Array sq = ops::expand_dims(ops::sqrt(usv[1], s, loc), -2, s, loc);
  Array std_ = ops::astype(
      ops::matmul(ops::multiply(usv[0], sq, s, loc), usv[2], s, loc), dtype, s,
      loc);
  Array z = normal(out_shape, dtype, 0.0f, 1.0f, key, s, loc);
  Array scaled =
      ops::squeeze(ops::matmul(ops::expand_dims(z, -2, s, loc), std_, s, loc),
                   Axes(-2), s, loc);
  return ops::add(mean, scaled, s, loc);
}

}  // namespace nuvec::random
