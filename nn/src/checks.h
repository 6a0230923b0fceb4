// Checks shared by the convolution, pooling, recurrent and normalization
// layers (private to nuvec_nn): constructor arguments throw nuvec::Error,
// call arguments give failed arrays naming the layer.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nuvec/nn/module.h"

namespace nuvec::nn::checks {

/// "(2, 3, 4)" ("(5,)" for one axis), as MLX prints shapes.
inline std::string shape_text(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

/// "(1, 2)" for a list of ints.
inline std::string ints_text(const std::vector<int>& v) {
  Shape s(v.begin(), v.end());
  return shape_text(s);
}

[[noreturn]] inline void fail(const std::string& layer,
                              const std::string& message) {
  Error(ErrorKind::invalid_argument, layer + ": " + message).raise();
}

inline void positive(int n, const char* what, const std::string& layer) {
  if (n <= 0)
    fail(layer,
         std::string(what) + " must be positive, got " + std::to_string(n));
}

inline void all_positive(const std::vector<int>& v, const char* what,
                         const std::string& layer) {
  for (int x : v)
    if (x <= 0)
      fail(layer, std::string(what) + " must be positive, got " + ints_text(v));
}

inline void all_non_negative(const std::vector<int>& v, const char* what,
                             const std::string& layer) {
  for (int x : v)
    if (x < 0)
      fail(layer,
           std::string(what) + " must be non-negative, got " + ints_text(v));
}

inline void eps_positive(double eps, const std::string& layer) {
  if (!(eps > 0))
    fail(layer, "eps must be positive, got " + std::to_string(eps));
}

/// A failed array unless x is floating.
inline std::optional<Array> floating(const ModuleBase& m, const Array& x) {
  if (!is_floating(x.dtype()))
    return detail::layer_error(
        m, ErrorKind::unsupported_dtype,
        "expected a floating input, got " + std::string(dtype_name(x.dtype())));
  return std::nullopt;
}

/// A failed array unless x has `lo` to `hi` dimensions.
inline std::optional<Array> ndim_in(const ModuleBase& m, const Array& x, int lo,
                                    int hi, const std::string& what = "") {
  if (x.ndim() >= lo && x.ndim() <= hi) return std::nullopt;
  std::string want = lo == hi
                         ? std::to_string(lo)
                         : std::to_string(lo) + " to " + std::to_string(hi);
  if (hi > 64) want = "at least " + std::to_string(lo);
  return detail::layer_error(m, ErrorKind::invalid_shape,
                             "expected an input with " + want + " dimensions" +
                                 what + ", got shape " + shape_text(x.shape()));
}

/// A failed array unless the last axis of x (at least 1-d) is `n`.
inline std::optional<Array> last_axis(const ModuleBase& m, const Array& x,
                                      int64_t n, const char* what) {
  if (x.ndim() > 0 && x.shape(-1) == n) return std::nullopt;
  return detail::layer_error(m, ErrorKind::shape_mismatch,
                             "expected " + std::string(what) + " " +
                                 std::to_string(n) + ", got " +
                                 (x.ndim() == 0 ? std::string("a scalar")
                                                : std::to_string(x.shape(-1))));
}

}  // namespace nuvec::nn::checks
