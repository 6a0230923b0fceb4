// pad, diag, diagonal, trace, meshgrid, kron, tensordot: compositions of
// slices, joins, broadcasts and matmul.
#include "nuvec/ops/misc.h"

#include <algorithm>
#include <numeric>

#include "nuvec/ops/creation.h"
#include "nuvec/ops/elementwise.h"
#include "nuvec/ops/indexing.h"
#include "nuvec/ops/join.h"
#include "nuvec/ops/linalg.h"
#include "nuvec/ops/reduce.h"
#include "nuvec/ops/shape.h"
#include "ops/axis_slice.h"
#include "ops/builder.h"

namespace nuvec::inline ops {

using impl::fail;

namespace {

Shape with_dim(Shape s, int axis, int v) {
  s[static_cast<size_t>(axis)] = v;
  return s;
}

}  // namespace

namespace {

// The source positions of a padded axis of length n: positions -lo .. n +
// hi - 1 mapped into 0 .. n - 1 by the mode.
std::vector<int32_t> pad_positions(int n, int lo, int hi, const std::string& mode) {
  std::vector<int32_t> out;
  out.reserve(static_cast<size_t>(n) + lo + hi);
  int64_t period = mode == "reflect" ? 2 * int64_t(n - 1) : 2 * int64_t(n);
  for (int64_t j = -lo; j < int64_t(n) + hi; ++j) {
    int64_t i;
    if (mode == "edge") {
      i = std::clamp<int64_t>(j, 0, n - 1);
    } else if (period == 0) {
      i = 0;
    } else {
      int64_t m = ((j % period) + period) % period;
      i = m < n ? m : (mode == "reflect" ? period - m : period - 1 - m);
    }
    out.push_back(static_cast<int32_t>(i));
  }
  return out;
}

}  // namespace

Array pad(const Array& x, const std::vector<int>& axes, const Shape& low_pad_size,
          const Shape& high_pad_size, const Array& pad_value, const std::string& mode,
          StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  if (pad_value.is_failed()) return pad_value;
  if (axes.size() != low_pad_size.size() || axes.size() != high_pad_size.size())
    return fail(ErrorKind::invalid_argument,
                "axes, low_pad_size and high_pad_size must have one entry each per axis",
                "pad", loc);
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "symmetric")
    return fail(ErrorKind::invalid_argument,
                "invalid mode \"" + mode +
                    "\" (\"constant\", \"edge\", \"reflect\" or \"symmetric\")",
                "pad", loc);
  std::vector<std::pair<int, int>> pw(static_cast<size_t>(x.ndim()), {0, 0});
  for (size_t i = 0; i < axes.size(); ++i) {
    auto a = impl::normalize_axis(axes[i], x.ndim());
    if (!a)
      return fail(ErrorKind::invalid_axis,
                  "axis " + std::to_string(axes[i]) + " is out of range for an array with " +
                      std::to_string(x.ndim()) + " dimensions",
                  "pad", loc);
    int lo = low_pad_size[i], hi = high_pad_size[i];
    if (lo < 0 || hi < 0)
      return fail(ErrorKind::invalid_argument,
                  "invalid padding size (" + std::to_string(lo) + ", " + std::to_string(hi) +
                      "): padding sizes must be non-negative",
                  "pad", loc);
    if (int64_t(x.shape(*a)) + lo + hi > 2147483647)
      return fail(ErrorKind::overflow,
                  "padded length " + std::to_string(int64_t(x.shape(*a)) + lo + hi) +
                      " exceeds the int range",
                  "pad", loc);
    pw[static_cast<size_t>(*a)] = {lo, hi};
  }
  if (mode == "constant" && pad_value.size() != 1)
    return fail(ErrorKind::invalid_argument, "the pad value must be a scalar", "pad", loc);
  Array y = x;
  for (int a = 0; a < x.ndim(); ++a) {
    // A step that failed (an output past the size rule) ends the loop: the
    // failed array has no shape to pad further.
    if (y.is_failed()) return y;
    auto [lo, hi] = pw[static_cast<size_t>(a)];
    if (lo == 0 && hi == 0) continue;
    int n = y.shape(a);
    if (mode != "constant") {
      if (n == 0)
        return fail(ErrorKind::invalid_argument,
                    "cannot " + mode + "-pad axis " + std::to_string(a) + " of size 0", "pad",
                    loc);
      auto pos = pad_positions(n, lo, hi, mode);
      Array idx = array(pos.data(), {static_cast<int>(pos.size())});
      y = ops::take(y, idx, a, s, loc);
      continue;
    }
    std::vector<Array> parts;
    auto block = [&](int width) {
      return ops::full(with_dim(y.shape(), a, width), ops::reshape(pad_value, {}, s, loc),
                       x.dtype(), s, loc);
    };
    if (lo > 0) parts.push_back(block(lo));
    parts.push_back(y);
    if (hi > 0) parts.push_back(block(hi));
    y = ops::concatenate(parts, a, s, loc);
  }
  return y;
}

Array pad(const Array& x, const std::vector<std::pair<int, int>>& pad_width,
          const Array& pad_value, const std::string& mode, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  std::vector<std::pair<int, int>> pw = pad_width;
  if (pw.size() == 1) pw.assign(static_cast<size_t>(x.ndim()), pad_width[0]);
  if (static_cast<int>(pw.size()) != x.ndim())
    return fail(ErrorKind::invalid_argument,
                std::to_string(pad_width.size()) + " padding pairs given for an array with " +
                    std::to_string(x.ndim()) + " dimensions",
                "pad", loc);
  std::vector<int> axes;
  Shape lo, hi;
  for (int a = 0; a < x.ndim(); ++a) {
    axes.push_back(a);
    lo.push_back(pw[static_cast<size_t>(a)].first);
    hi.push_back(pw[static_cast<size_t>(a)].second);
  }
  return ops::pad(x, axes, lo, hi, pad_value, mode, s, loc);
}

Array pad(const Array& x, const std::pair<int, int>& pad_width, const Array& pad_value,
          const std::string& mode, StreamOrDevice s, Location loc) {
  return ops::pad(x, std::vector<std::pair<int, int>>{pad_width}, pad_value, mode, s, loc);
}

Array pad(const Array& x, int pad_width, const Array& pad_value, const std::string& mode,
          StreamOrDevice s, Location loc) {
  return ops::pad(x, std::pair<int, int>{pad_width, pad_width}, pad_value, mode, s, loc);
}

Array diagonal(const Array& x, int offset, int axis1, int axis2, StreamOrDevice s,
               Location loc) {
  if (x.is_failed()) return x;
  if (x.ndim() < 2)
    return fail(ErrorKind::invalid_shape,
                "Array must have at least two dimensions, got " + std::to_string(x.ndim()),
                "diagonal", loc);
  auto a1 = impl::normalize_axis(axis1, x.ndim()), a2 = impl::normalize_axis(axis2, x.ndim());
  if (!a1 || !a2)
    return fail(ErrorKind::invalid_axis,
                "axis1 " + std::to_string(axis1) + " or axis2 " + std::to_string(axis2) +
                    " is out of range for an array with " + std::to_string(x.ndim()) +
                    " dimensions",
                "diagonal", loc);
  if (*a1 == *a2)
    return fail(ErrorKind::invalid_axis, "axis1 and axis2 cannot be the same axis",
                "diagonal", loc);
  std::vector<int> perm;
  Shape rest;
  for (int a = 0; a < x.ndim(); ++a)
    if (a != *a1 && a != *a2) perm.push_back(a), rest.push_back(x.shape(a));
  perm.push_back(*a1);
  perm.push_back(*a2);
  int R = x.shape(*a1), C = x.shape(*a2);
  int64_t len = offset >= 0 ? std::min<int64_t>(R, int64_t(C) - offset)
                            : std::min<int64_t>(int64_t(R) + offset, C);
  len = std::max<int64_t>(len, 0);
  // The diagonal is every (C + 1)-th element of the flattened last two
  // axes; that axis (and the positions in it) must fit int.
  auto rc = checked_dim(int64_t(R) * C, "flattened length of the two axes");
  if (!rc) return fail(rc.error().kind(), rc.error().message(), "diagonal", loc);
  Shape flat = rest;
  flat.push_back(*rc);
  Array y = ops::reshape(ops::transpose(x, perm, s, loc), flat, s, loc);
  int64_t start = len == 0 ? 0 : (offset >= 0 ? offset : -int64_t(offset) * C);
  int64_t step = int64_t(C) + 1;
  int64_t stop = len == 0 ? 0 : start + (len - 1) * step + 1;
  auto step_i = checked_dim(step, "diagonal step");
  if (!step_i) return fail(step_i.error().kind(), step_i.error().message(), "diagonal", loc);
  std::vector<int> lo(flat.size(), 0), hi(flat.begin(), flat.end()), st(flat.size(), 1);
  // start and stop are within 0 .. R * C (len is clamped to the matrix).
  lo.back() = static_cast<int>(start);
  hi.back() = static_cast<int>(stop);
  st.back() = *step_i;
  return ops::slice(y, lo, hi, st, s, loc);
}

Array trace(const Array& x, int offset, int axis1, int axis2, std::optional<DType> dtype,
            StreamOrDevice s, Location loc) {
  Array d = ops::diagonal(x, offset, axis1, axis2, s, loc);
  if (dtype) d = ops::astype(d, *dtype, s, loc);
  return ops::sum(d, Axes{-1}, false, s, loc);
}

Array diag(const Array& x, int k, StreamOrDevice s, Location loc) {
  if (x.is_failed()) return x;
  if (x.ndim() == 2) return ops::diagonal(x, k, 0, 1, s, loc);
  if (x.ndim() != 1)
    return fail(ErrorKind::invalid_shape,
                "input must be 1- or 2-dimensional, got " + std::to_string(x.ndim()) +
                    " dimensions",
                "diag", loc);
  // |k| in int64 (k may be INT_MIN); the side of the square must fit int.
  int64_t ak64 = k < 0 ? -int64_t(k) : int64_t(k);
  auto side = checked_dim(x.shape(0) + ak64, "output side");
  if (!side) return fail(side.error().kind(), side.error().message(), "diag", loc);
  int n = *side, ak = static_cast<int>(ak64);
  Array v = ops::pad(x, {{0, ak}}, array(0), "constant", s, loc);
  v = ops::reshape(v, k >= 0 ? Shape{n, 1} : Shape{1, n}, s, loc);
  Array mask = ops::eye(n, n, k, bool_, s, loc);
  return ops::where(mask, v, ops::zeros({}, x.dtype(), s, loc), s, loc);
}

std::vector<Array> meshgrid(const std::vector<Array>& arrays, bool sparse,
                            const std::string& indexing, StreamOrDevice s, Location loc) {
  if (auto* f = impl::first_failed(arrays)) return {*f};
  if (indexing != "xy" && indexing != "ij")
    return {fail(ErrorKind::invalid_argument,
                 "Invalid indexing value '" + indexing + "'. Valid values are 'xy' and 'ij'.",
                 "meshgrid", loc)};
  int n = static_cast<int>(arrays.size());
  Shape sizes;
  for (const auto& a : arrays) {
    auto n = checked_dim(a.size(), "input size");
    if (!n) return {fail(n.error().kind(), n.error().message(), "meshgrid", loc)};
    sizes.push_back(*n);
  }
  bool swap = indexing == "xy" && n >= 2;
  Shape full_shape = sizes;
  if (swap) std::swap(full_shape[0], full_shape[1]);
  std::vector<Array> out;
  for (int i = 0; i < n; ++i) {
    int pos = swap && i < 2 ? 1 - i : i;
    Shape sh(static_cast<size_t>(n), 1);
    sh[static_cast<size_t>(pos)] = sizes[static_cast<size_t>(i)];
    Array y = ops::reshape(arrays[static_cast<size_t>(i)], sh, s, loc);
    out.push_back(sparse ? y : ops::broadcast_to(y, full_shape, s, loc));
  }
  return out;
}

Array kron(const Array& a, const Array& b, StreamOrDevice s, Location loc) {
  if (a.is_failed()) return a;
  if (b.is_failed()) return b;
  int nd = std::max(a.ndim(), b.ndim());
  Shape sa(static_cast<size_t>(nd - a.ndim()), 1), sb(static_cast<size_t>(nd - b.ndim()), 1);
  sa.insert(sa.end(), a.shape().begin(), a.shape().end());
  sb.insert(sb.end(), b.shape().begin(), b.shape().end());
  Shape ia, ib, out;
  for (int d = 0; d < nd; ++d) {
    ia.push_back(sa[d]), ia.push_back(1);
    ib.push_back(1), ib.push_back(sb[d]);
    auto len = checked_dim(int64_t(sa[d]) * sb[d], "output length");
    if (!len) return fail(len.error().kind(), len.error().message(), "kron", loc);
    out.push_back(*len);
  }
  Array p = ops::multiply(ops::reshape(a, ia, s, loc), ops::reshape(b, ib, s, loc), s, loc);
  return ops::reshape(p, out, s, loc);
}

Array tensordot(const Array& a, const Array& b, const std::vector<int>& axes_a,
                const std::vector<int>& axes_b, StreamOrDevice s, Location loc) {
  const char* op = "tensordot";
  if (a.is_failed()) return a;
  if (b.is_failed()) return b;
  if (axes_a.size() != axes_b.size())
    return fail(ErrorKind::invalid_argument, "axes must have the same length on both operands",
                op, loc);
  std::vector<int> xa, xb;
  for (size_t i = 0; i < axes_a.size(); ++i) {
    auto p = impl::normalize_axis(axes_a[i], a.ndim());
    auto q = impl::normalize_axis(axes_b[i], b.ndim());
    if (!p || !q)
      return fail(ErrorKind::invalid_axis, "contraction axis out of range", op, loc);
    if (a.shape(*p) != b.shape(*q))
      return fail(ErrorKind::shape_mismatch,
                  "contracted axes have sizes " + std::to_string(a.shape(*p)) + " and " +
                      std::to_string(b.shape(*q)),
                  op, loc);
    xa.push_back(*p), xb.push_back(*q);
  }
  std::vector<int> pa, pb;
  Shape out;
  int64_t fa = 1, fb = 1, k = 1;
  for (int d = 0; d < a.ndim(); ++d)
    if (std::find(xa.begin(), xa.end(), d) == xa.end())
      pa.push_back(d), out.push_back(a.shape(d)), fa *= a.shape(d);
  for (int d : xa) k *= a.shape(d);
  pa.insert(pa.end(), xa.begin(), xa.end());
  pb = xb;
  for (int d = 0; d < b.ndim(); ++d)
    if (std::find(xb.begin(), xb.end(), d) == xb.end())
      pb.push_back(d), out.push_back(b.shape(d)), fb *= b.shape(d);
  if (pa.size() != size_t(a.ndim()) || pb.size() != size_t(b.ndim()))
    return fail(ErrorKind::invalid_axis, "repeated contraction axis", op, loc);
  // The products are within int64 (each is part of an array's size); as
  // matrix sides they must fit int.
  auto m = checked_dim(fa, "free length of the first operand");
  auto kk = checked_dim(k, "contracted length");
  auto n = checked_dim(fb, "free length of the second operand");
  for (const auto* e : {&m, &kk, &n})
    if (!*e) return fail(e->error().kind(), e->error().message(), op, loc);
  Array x = ops::reshape(ops::transpose(a, pa, s, loc), {*m, *kk}, s, loc);
  Array y = ops::reshape(ops::transpose(b, pb, s, loc), {*kk, *n}, s, loc);
  return ops::reshape(ops::matmul(x, y, s, loc), out, s, loc);
}

Array tensordot(const Array& a, const Array& b, int axes, StreamOrDevice s, Location loc) {
  if (a.is_failed()) return a;
  if (b.is_failed()) return b;
  if (axes < 0 || axes > a.ndim() || axes > b.ndim())
    return fail(ErrorKind::invalid_argument,
                "axes " + std::to_string(axes) + " must be in [0, min(ndim)]", "tensordot", loc);
  std::vector<int> xa, xb;
  for (int i = 0; i < axes; ++i) xa.push_back(a.ndim() - axes + i), xb.push_back(i);
  return tensordot(a, b, xa, xb, s, loc);
}

}  // namespace nuvec::ops
