// linalg::norm, composed from existing ops with MLX's formulas (the order of
// operations matters for bitwise agreement): vector norms over one axis,
// matrix norms over two, the 2 / -2 / nuclear norms through the SVD. The
// overloads (MLX's set, plus brace lists) all land in norm_of.
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "nuvec/linalg.h"
#include "nuvec/ops/ops.h"
#include "ops/builder.h"

namespace nuvec::linalg {

using ops::impl::fail;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Array l2(const Array& a, const std::vector<int>& ax, bool kd, StreamOrDevice s, Location loc) {
  if (is_complex(a.dtype())) {
    Array m = ops::abs(a, s, loc);
    return ops::sqrt(ops::sum(ops::multiply(m, m, s, loc), Axes(ax), kd, s, loc), s, loc);
  }
  Array sq = a.dtype() == bool_ ? ops::astype(a, float32, s, loc) : ops::square(a, s, loc);
  return ops::sqrt(ops::sum(sq, Axes(ax), kd, s, loc), s, loc);
}

Array vector_norm(const Array& a, double ord, const std::vector<int>& ax, bool kd,
                  StreamOrDevice s, Location loc) {
  DType d = at_least_float(a.dtype());
  Axes axes(ax);
  if (ord == 0.0)
    return ops::astype(ops::sum(ops::not_equal(a, 0, s, loc), axes, kd, s, loc), d, s, loc);
  if (ord == 1.0) return ops::astype(ops::sum(ops::abs(a, s, loc), axes, kd, s, loc), d, s, loc);
  if (ord == 2.0) return l2(a, ax, kd, s, loc);
  if (ord == kInf) return ops::astype(ops::max(ops::abs(a, s, loc), axes, kd, s, loc), d, s, loc);
  if (ord == -kInf)
    return ops::astype(ops::min(ops::abs(a, s, loc), axes, kd, s, loc), d, s, loc);
  Array p = ops::full({}, ord, d, s, loc), q = ops::full({}, 1.0 / ord, d, s, loc);
  return ops::power(ops::sum(ops::power(ops::abs(a, s, loc), p, s, loc), axes, kd, s, loc), q,
                    s, loc);
}

// S of the matrices spanned by (row, col), with the other axes in front.
Array singular_values(const Array& a, int row, int col, StreamOrDevice s, Location loc) {
  std::vector<int> perm;
  for (int i = 0; i < a.ndim(); ++i)
    if (i != row && i != col) perm.push_back(i);
  perm.push_back(row);
  perm.push_back(col);
  return linalg::svd(ops::transpose(a, perm, s, loc), false, s, loc)[0];
}

// The reduced result over (row, col) with keepdims restored.
Array restore(Array r, int row, int col, bool kd, StreamOrDevice s, Location loc) {
  if (!kd) return r;
  return ops::expand_dims(r, Axes({std::min(row, col), std::max(row, col)}), s, loc);
}

Array matrix_norm(const Array& a, double ord, int row, int col, bool kd, StreamOrDevice s,
                  Location loc, const char* name) {
  DType d = at_least_float(a.dtype());
  Array m = ops::abs(a, s, loc);
  if (ord == 1.0 || ord == -1.0) {
    int c = (!kd && col > row) ? col - 1 : col;
    Array r = ops::sum(m, Axes(row), kd, s, loc);
    r = ord == 1.0 ? ops::max(r, Axes(c), kd, s, loc) : ops::min(r, Axes(c), kd, s, loc);
    return ops::astype(r, d, s, loc);
  }
  if (ord == kInf || ord == -kInf) {
    int rw = (!kd && row > col) ? row - 1 : row;
    Array r = ops::sum(m, Axes(col), kd, s, loc);
    r = ord == kInf ? ops::max(r, Axes(rw), kd, s, loc) : ops::min(r, Axes(rw), kd, s, loc);
    return ops::astype(r, d, s, loc);
  }
  if (ord == 2.0 || ord == -2.0) {
    Array sv = singular_values(a, row, col, s, loc);
    Array r = ord == 2.0 ? ops::max(sv, Axes(-1), false, s, loc)
                         : ops::min(sv, Axes(-1), false, s, loc);
    return ops::astype(restore(r, row, col, kd, s, loc), d, s, loc);
  }
  std::ostringstream os;
  os << "invalid ord " << ord << " for a matrix norm";
  return fail(ErrorKind::invalid_argument, os.str(), name, loc);
}

// No ord (monostate), a number or a name.
using Ord = std::variant<std::monostate, double, std::string>;

// MLX's three norm entry points, with the axes as given (nullopt: none).
Array norm_of(const Array& x, const Ord& ord,
              const std::optional<std::vector<int>>& axes, bool keepdims,
              StreamOrDevice s, Location loc) {
  const char* name = "norm";
  if (x.is_failed()) return x;
  bool no_ord = std::holds_alternative<std::monostate>(ord);
  if (no_ord && !axes) {
    Array r = l2(ops::flatten(x, 0, -1, s, loc), {0}, false, s, loc);
    if (keepdims) r = ops::reshape(r, Shape(x.ndim(), 1), s, loc);
    return r;
  }
  std::vector<int> ax;
  if (axes) {
    auto n = ops::impl::normalize_axes(*axes, x.ndim());
    if (!n) return fail(n.error().kind(), n.error().message(), name, loc);
    ax = *axes;
    for (int& a : ax) a = a < 0 ? a + x.ndim() : a;  // keep the given order
  } else {
    for (int i = 0; i < x.ndim(); ++i) ax.push_back(i);
  }
  if (no_ord) {  // 0 axes too: |x| (a sum over no axis)
    if (ax.size() > 2)
      return fail(ErrorKind::invalid_argument,
                  "a norm is taken over at most 2 axes, got " +
                      std::to_string(ax.size()),
                  name, loc);
    return l2(x, ax, keepdims, s, loc);
  }
  if (auto* p = std::get_if<double>(&ord)) {
    if (ax.size() == 1) return vector_norm(x, *p, ax, keepdims, s, loc);
    if (ax.size() == 2)
      return matrix_norm(x, *p, ax[0], ax[1], keepdims, s, loc, name);
    return fail(ErrorKind::invalid_argument,
                "a norm with an ord is taken over 1 or 2 axes, got " +
                    std::to_string(ax.size()),
                name, loc);
  }
  const std::string& o = std::get<std::string>(ord);
  if (ax.size() != 2)
    return fail(ErrorKind::invalid_argument,
                "norm '" + o + "' is only defined for matrices, got " +
                    std::to_string(ax.size()) + " axis",
                name, loc);
  if (o == "f" || o == "fro") return l2(x, ax, keepdims, s, loc);
  if (o == "nuc") {
    Array sv = singular_values(x, ax[0], ax[1], s, loc);
    Array r = ops::sum(sv, Axes(-1), false, s, loc);
    return ops::astype(restore(r, ax[0], ax[1], keepdims, s, loc),
                       at_least_float(x.dtype()), s, loc);
  }
  return fail(ErrorKind::invalid_argument,
              "invalid ord '" + o + "' for a matrix norm", name, loc);
}

}  // namespace

Array norm(const Array& a, double ord,
           const std::optional<std::vector<int>>& axis, bool keepdims,
           StreamOrDevice s, Location loc) {
  return norm_of(a, ord, axis, keepdims, s, loc);
}
Array norm(const Array& a, double ord, int axis, bool keepdims,
           StreamOrDevice s, Location loc) {
  return norm_of(a, ord, std::vector<int>{axis}, keepdims, s, loc);
}
Array norm(const Array& a, const std::string& ord,
           const std::optional<std::vector<int>>& axis, bool keepdims,
           StreamOrDevice s, Location loc) {
  return norm_of(a, ord, axis, keepdims, s, loc);
}
Array norm(const Array& a, const std::string& ord, int axis, bool keepdims,
           StreamOrDevice s, Location loc) {
  return norm_of(a, ord, std::vector<int>{axis}, keepdims, s, loc);
}
Array norm(const Array& a, const std::optional<std::vector<int>>& axis,
           bool keepdims, StreamOrDevice s, Location loc) {
  return norm_of(a, std::monostate{}, axis, keepdims, s, loc);
}
Array norm(const Array& a, int axis, bool keepdims, StreamOrDevice s,
           Location loc) {
  return norm_of(a, std::monostate{}, std::vector<int>{axis}, keepdims, s, loc);
}

}  // namespace nuvec::linalg
