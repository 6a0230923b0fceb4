// Max and average pooling, and Upsample, as mlx.nn's pooling.py and
// upsample.py compute them (the same ops in the same order, so that
// elementwise results are MLX's bits).
#include "nuvec/nn/pooling.h"

#include <cmath>
#include <functional>
#include <limits>

#include "checks.h"
#include "nuvec/core/graph.h"

namespace nuvec::nn {
namespace {

using Fail = std::function<Array(ErrorKind, const std::string&)>;

/// MLX's windows of a padded x: [B, out..., window..., C].
Array sliding_windows(const Array& x, const std::vector<int>& window,
                      const std::vector<int>& step, const Fail& fail) {
  int n = static_cast<int>(window.size());
  const Shape& shape = x.shape();
  bool tiles = true;
  for (int i = 0; i < n; ++i)
    tiles = tiles && window[i] == step[i] && shape[1 + i] % window[i] == 0;
  if (tiles) {
    // Non-overlapping windows: split each axis into (count, window) and
    // move the window axes after the counts.
    Shape split{shape[0]};
    for (int i = 0; i < n; ++i) {
      split.push_back(shape[1 + i] / window[i]);
      split.push_back(window[i]);
    }
    split.push_back(shape.back());
    int last = static_cast<int>(split.size()) - 1;
    std::vector<int> order{0};
    for (int a = 1; a < last; a += 2) order.push_back(a);
    for (int a = 2; a < last; a += 2) order.push_back(a);
    order.push_back(last);
    return ops::transpose(x.reshape(split), order);
  }
  Strides strides(shape.size());
  int64_t acc = 1;
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    strides[i] = acc;
    acc *= shape[i];
  }
  Shape out_shape{shape[0]};
  Strides out_strides{strides[0]};
  for (int i = 0; i < n; ++i) {
    // Python's floor division: a window one longer than the axis gives an
    // empty axis, as MLX; longer ones are an error.
    int64_t span = static_cast<int64_t>(shape[1 + i]) - window[i];
    int64_t count =
        (span >= 0 ? span / step[i] : -((-span + step[i] - 1) / step[i])) + 1;
    if (count < 0)
      return fail(ErrorKind::invalid_shape,
                  "the window " + checks::ints_text(window) +
                      " is larger than the padded input " +
                      checks::shape_text(shape));
    out_shape.push_back(static_cast<int>(count));
    out_strides.push_back(strides[1 + i] * step[i]);
  }
  for (int i = 0; i < n; ++i) {
    out_shape.push_back(window[i]);
    out_strides.push_back(strides[1 + i]);
  }
  out_shape.push_back(shape.back());
  out_strides.push_back(1);
  return ops::as_strided(x, out_shape, out_strides, 0);
}

Fail layer_fail(const ModuleBase& m) {
  return [&m](ErrorKind k, const std::string& msg) {
    return detail::layer_error(m, k, msg);
  };
}

Fail op_fail(const char* op) {
  return [op](ErrorKind k, const std::string& msg) {
    return make_failed(Error(k, std::string("[") + op + "] " + msg, op));
  };
}

// --- Upsample -------------------------------------------------------------

/// [1, ..., M (at `dim`), ..., 1] over `ndims` axes.
Array along(const Array& v, int dim, int ndims) {
  Shape s(ndims, 1);
  s[dim] = -1;
  return v.reshape(s);
}

int out_size(int n, double scale) { return static_cast<int>(scale * n); }

Array scaled_indices(int n, double scale, bool align_corners, int dim,
                     int ndims) {
  int m = out_size(n, scale);
  Array idx = ops::arange(0.0, static_cast<double>(m), 1.0, float32);
  if (align_corners) {
    idx = idx * (static_cast<double>(n - 1) / std::max(m - 1, 1));
  } else {
    double step = 1 / scale;
    double start = ((m - 1) * step - n + 1) / 2;
    idx = idx * step - start;
  }
  return along(idx, dim, ndims);
}

Array nearest_indices(int n, double scale, int dim, int ndims) {
  int m = out_size(n, scale);
  Array idx = ops::arange(0.0, static_cast<double>(m), 1.0, float32);
  double ratio = static_cast<double>(n) / m;
  if (m > n)
    idx = ops::round((idx + 0.5) * ratio - 0.5);
  else
    idx = idx * ratio;
  return along(idx.astype(uint32), dim, ndims);
}

using Taps = std::vector<std::pair<Array, Array>>;  // (indices, weights)
using TapFn = std::function<Taps(int, double, bool, int, int)>;

Taps linear_taps(int n, double scale, bool align_corners, int dim, int ndims) {
  Array idx = ops::clip(scaled_indices(n, scale, align_corners, dim, ndims),
                        Operand(0), Operand(n - 1));
  Array lo = ops::floor(idx);
  Array hi = ops::ceil(idx);
  Array w = ops::expand_dims(idx - lo, {-1});
  return {{lo.astype(uint32), 1 - w}, {hi.astype(uint32), w}};
}

Array cubic_weight(const Array& ind, const Array& grid, bool inner) {
  const double a = -0.75;
  Array x = ops::abs(ind - grid);
  if (inner) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  return (((x - 5) * x + 8) * x - 4) * a;
}

Taps cubic_taps(int n, double scale, bool align_corners, int dim, int ndims) {
  Array idx = scaled_indices(n, scale, align_corners, dim, ndims);
  Array l1 = ops::floor(idx);
  Array r1 = ops::floor(idx + 1);
  Array l2 = l1 - 1;
  Array r2 = r1 + 1;
  auto w = [&](const Array& g, bool inner) {
    return ops::expand_dims(cubic_weight(idx, g, inner), {-1});
  };
  Array wl1 = w(l1, true), wr1 = w(r1, true), wl2 = w(l2, false),
        wr2 = w(r2, false);
  auto c = [&](const Array& i) {
    return ops::clip(i, Operand(0), Operand(n - 1)).astype(uint32);
  };
  return {{c(l1), wl1}, {c(r1), wr1}, {c(l2), wl2}, {c(r2), wr2}};
}

Array triangle_kernel(const Array& x) { return ops::maximum(1.0 - x, 0.0); }

Array keys_kernel(const Array& x) {
  const double a = -0.5;
  Array inner = ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  Array outer = (((x - 5) * x + 8) * x - 4) * a;
  return ops::where(x <= 1.0, inner, ops::where(x <= 2.0, outer, 0.0));
}

/// Antialiased taps: the kernel widened by 1/scale when downscaling, taps
/// outside the input zeroed and the weights renormalized.
Taps aa_taps(int n, double scale, bool align_corners, int dim, int ndims,
             const std::function<Array(const Array&)>& kernel, double radius) {
  Array idx = scaled_indices(n, scale, align_corners, dim, ndims);
  double inv = scale < 1 ? 1.0 / scale : 1.0;
  int taps = static_cast<int>(std::ceil(radius * inv)) + 1;
  std::vector<Array> all_idx, all_w;
  for (int k = -taps + 1; k < taps; ++k) {
    Array i = ops::floor(idx) + k;
    Array w = kernel(ops::abs(idx - i) / inv);
    w = ops::where(ops::logical_and(i >= 0, i < n), w, 0.0);
    all_idx.push_back(i);
    all_w.push_back(w);
  }
  // Python's sum() starts from the integer 0.
  Array total = 0 + all_w[0];
  for (size_t j = 1; j < all_w.size(); ++j) total = total + all_w[j];
  total = ops::where(total > 0, total, 1.0);
  Taps out;
  for (size_t j = 0; j < all_idx.size(); ++j)
    out.emplace_back(
        ops::clip(all_idx[j], Operand(0), Operand(n - 1)).astype(uint32),
        ops::expand_dims(all_w[j] / total, {-1}));
  return out;
}

/// Every combination of the axes' taps at once (MLX's _interpolate).
Array interpolate(const Array& x, const std::vector<double>& scale,
                  const TapFn& fn, bool align_corners) {
  int dims = x.ndim() - 2;
  std::vector<Taps> per_axis;
  for (int i = 0; i < dims; ++i)
    per_axis.push_back(fn(x.shape(1 + i), scale[i], align_corners, i, dims));
  std::vector<size_t> pick(dims, 0);
  std::optional<Array> acc;
  while (true) {
    std::vector<Index> index{IndexSlice{}};
    std::optional<Array> w;
    for (int i = 0; i < dims; ++i) {
      auto& [ix, wx] = per_axis[i][pick[i]];
      index.emplace_back(ix);
      w = w ? *w * wx : wx;
    }
    Array term = *w * ops::index(x, index);
    acc = acc ? *acc + term : 0 + term;
    int d = dims - 1;  // itertools.product: the last axis varies fastest
    while (d >= 0 && ++pick[d] == per_axis[d].size()) pick[d--] = 0;
    if (d < 0) break;
  }
  return *acc;
}

/// One axis at a time (MLX's _interpolate_separable).
Array interpolate_separable(const Array& x, const std::vector<double>& scale,
                            const TapFn& fn, bool align_corners) {
  int dims = x.ndim() - 2;
  Array out = x;
  for (int i = 0; i < dims; ++i) {
    std::optional<Array> acc;
    for (auto& [ix, w] : fn(x.shape(1 + i), scale[i], align_corners, i, dims)) {
      Array sample = ops::take(out, ix.reshape({-1}), i + 1) * w;
      acc = acc ? *acc + sample : 0 + sample;
    }
    out = *acc;
  }
  return out;
}

std::optional<Array> check_upsample(const Array& x,
                                    const std::vector<double>& scale,
                                    const Fail& fail) {
  if (x.ndim() < 3)
    return fail(ErrorKind::invalid_shape,
                "the input should have at least 1 spatial dimension (3 in "
                "all), got shape " +
                    checks::shape_text(x.shape()));
  if (static_cast<int>(scale.size()) != x.ndim() - 2)
    return fail(ErrorKind::invalid_argument,
                "one scale per spatial dimension is required: " +
                    std::to_string(scale.size()) + " scales for " +
                    std::to_string(x.ndim() - 2) + " spatial dimensions");
  return std::nullopt;
}

Array nearest(const Array& x, const std::vector<double>& scale,
              const Fail& fail) {
  if (auto bad = check_upsample(x, scale, fail)) return *bad;
  int dims = x.ndim() - 2;
  bool integral = true;
  for (double s : scale)
    integral = integral && static_cast<double>(static_cast<int64_t>(s)) == s;
  if (integral) {
    // Insert an axis of size 1 after each spatial axis, broadcast it to the
    // scale, and merge the pairs.
    Shape shape = x.shape();
    for (int d = 0; d < dims; ++d) shape.insert(shape.begin() + 2 + 2 * d, 1);
    Array y = x.reshape(shape);
    for (int d = 0; d < dims; ++d)
      shape[2 + 2 * d] = static_cast<int>(scale[d]);
    y = ops::broadcast_to(y, shape);
    for (int d = 0; d < dims; ++d) {
      shape[d + 1] *= shape[d + 2];
      shape.erase(shape.begin() + d + 2);
    }
    return y.reshape(shape);
  }
  std::vector<Index> index{IndexSlice{}};
  for (int i = 0; i < dims; ++i)
    index.emplace_back(nearest_indices(x.shape(1 + i), scale[i], i, dims));
  return ops::index(x, index);
}

std::optional<Array> check_aa(bool align_corners, bool antialias,
                              const Fail& fail) {
  if (antialias && align_corners)
    return fail(ErrorKind::invalid_argument,
                "antialias with align_corners is not supported");
  return std::nullopt;
}

Array linear(const Array& x, const std::vector<double>& scale,
             bool align_corners, bool antialias, const Fail& fail) {
  if (auto bad = check_upsample(x, scale, fail)) return *bad;
  if (auto bad = check_aa(align_corners, antialias, fail)) return *bad;
  if (antialias)
    return interpolate_separable(
        x, scale,
        [](int n, double s, bool ac, int d, int nd) {
          return aa_taps(n, s, ac, d, nd, triangle_kernel, 1.0);
        },
        align_corners);
  if (!align_corners)
    return interpolate_separable(x, scale, linear_taps, align_corners);
  return interpolate(x, scale, linear_taps, align_corners);
}

Array cubic(const Array& x, const std::vector<double>& scale,
            bool align_corners, bool antialias, const Fail& fail) {
  if (auto bad = check_upsample(x, scale, fail)) return *bad;
  if (auto bad = check_aa(align_corners, antialias, fail)) return *bad;
  if (antialias)
    return interpolate_separable(
        x, scale,
        [](int n, double s, bool ac, int d, int nd) {
          return aa_taps(n, s, ac, d, nd, keys_kernel, 2.0);
        },
        align_corners);
  return interpolate(x, scale, cubic_taps, align_corners);
}

}  // namespace

namespace detail {

void check_pool(const std::string& layer, const std::vector<int>& kernel_size,
                const std::vector<int>& stride,
                const std::vector<int>& padding) {
  checks::all_positive(kernel_size, "kernel_size", layer);
  checks::all_positive(stride, "stride", layer);
  checks::all_non_negative(padding, "padding", layer);
}

Array pool(const ModuleBase& m, const Array& x,
           const std::vector<int>& kernel_size, const std::vector<int>& stride,
           const std::vector<int>& padding, bool is_max) {
  int n = static_cast<int>(kernel_size.size());
  if (auto bad = checks::ndim_in(m, x, n + 2, n + 2, " [N, spatial..., C]"))
    return *bad;
  Array y = x;
  bool padded = false;
  for (int p : padding) padded = padded || p > 0;
  if (padded) {
    std::vector<std::pair<int, int>> widths{{0, 0}};
    for (int p : padding) widths.emplace_back(p, p);
    widths.emplace_back(0, 0);
    Array value =
        is_max ? array(-std::numeric_limits<float>::infinity()) : array(0);
    y = ops::pad(y, widths, value);
  }
  y = sliding_windows(y, kernel_size, stride, layer_fail(m));
  std::vector<int> axes;
  for (int a = -n - 1; a < -1; ++a) axes.push_back(a);
  return is_max ? ops::max(y, Axes(axes)) : ops::mean(y, Axes(axes));
}

}  // namespace detail

Upsample::Upsample(double scale, std::string mode_, bool align_corners_,
                   bool antialias_)
    : Upsample(std::vector<double>{scale}, std::move(mode_), align_corners_,
               antialias_) {
  one_for_all = true;
}

Upsample::Upsample(std::vector<double> scale, std::string mode_,
                   bool align_corners_, bool antialias_)
    : scale_factor(std::move(scale)),
      one_for_all(false),
      mode(std::move(mode_)),
      align_corners(align_corners_),
      antialias(antialias_) {
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    checks::fail("Upsample", "unsupported upsampling algorithm: " + mode);
  if (antialias && mode == "nearest")
    checks::fail(
        "Upsample",
        "antialiasing is not supported for nearest neighbor upsampling");
  if (antialias && align_corners)
    checks::fail("Upsample", "antialias with align_corners is not supported");
  if (scale_factor.empty()) checks::fail("Upsample", "no scale factor given");
  for (double s : scale_factor)
    if (!(s > 0) || !std::isfinite(s))
      checks::fail("Upsample",
                   "scale factors must be positive and finite, got " +
                       std::to_string(s));
}

Array Upsample::operator()(const Array& x) const {
  std::vector<double> scale = scale_factor;
  if (one_for_all) scale.assign(std::max(x.ndim() - 2, 0), scale_factor[0]);
  Fail fail = layer_fail(*this);
  if (mode == "nearest") return nearest(x, scale, fail);
  if (mode == "linear") return linear(x, scale, align_corners, antialias, fail);
  return cubic(x, scale, align_corners, antialias, fail);
}

Array upsample_nearest(const Array& x,
                       const std::vector<double>& scale_factor) {
  return nearest(x, scale_factor, op_fail("upsample_nearest"));
}

Array upsample_linear(const Array& x, const std::vector<double>& scale_factor,
                      bool align_corners, bool antialias) {
  return linear(x, scale_factor, align_corners, antialias,
                op_fail("upsample_linear"));
}

Array upsample_cubic(const Array& x, const std::vector<double>& scale_factor,
                     bool align_corners, bool antialias) {
  return cubic(x, scale_factor, align_corners, antialias,
               op_fail("upsample_cubic"));
}

}  // namespace nuvec::nn
