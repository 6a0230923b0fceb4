// What the distributions share, and the ops of the primitives that exist
// for them only (MlxExp, MlxErf, MlxErfInv: MLX's own float32 formulas,
// kernels/mlx_math.h). These ops are internal: random numbers use them so
// that draws equal MLX's; nuvec's public exp, erf and erfinv stay the
// accurate ones.
#pragma once

#include "nuvec/random.h"

namespace nuvec::random {

/// uniform's values in [0, 1) (at most `upper`) in `dtype` (float32,
/// float16 or bfloat16): bits, divided by 2^32 - 1, clamped and converted,
/// as one RandomBits node with its unit-uniform epilogue.
Array unit_uniform(const Shape& shape, DType dtype, float upper, const Key& key,
                   const StreamOrDevice& s, Location loc);

namespace detail {

/// MLX's CPU exp of a floating array (computed in float32, rounded to x's
/// dtype; float64 too).
Array mlx_exp(const Array& x, const StreamOrDevice& s, Location loc);
/// MLX's CPU erf of a floating array (as mlx_exp).
Array mlx_erf(const Array& x, const StreamOrDevice& s, Location loc);
/// MLX's CPU erfinv of a floating array (as mlx_exp); its log is nuvec's
/// float64 log rounded to float (glibc's logf in MLX: docs/random.md).
Array mlx_erfinv(const Array& x, const StreamOrDevice& s, Location loc);
/// The C library's float log (what MLX calls) as nuvec approximates it:
/// float32, float16 and bfloat16 take log in float64, rounded to float32,
/// then to their own dtype; float64 is nuvec's log.
Array libm_log(const Array& x, const StreamOrDevice& s, Location loc);
/// The same for log1p.
Array libm_log1p(const Array& x, const StreamOrDevice& s, Location loc);

}  // namespace detail

}  // namespace nuvec::random
