// Helpers of the non-element-wise transform rules (see grad_util.h).
#include "primitives/grad_util.h"

#include <algorithm>

#include "nuvec/ops/ops.h"

namespace nuvec::rules {

namespace {

std::vector<std::pair<int, int>> no_pad(int ndim) {
  return std::vector<std::pair<int, int>>(static_cast<size_t>(ndim), {0, 0});
}

}  // namespace

Array take_range(const Array& x, int axis, int start, int size, int step) {
  std::vector<int> lo(static_cast<size_t>(axis + 1), 0), hi,
      st(static_cast<size_t>(axis + 1), 1);
  for (int d = 0; d <= axis; ++d) hi.push_back(x.shape(d));
  lo[axis] = start;
  hi[axis] = size == 0 ? start : start + (size - 1) * step + 1;
  st[axis] = step;
  return ops::slice(x, lo, hi, st);
}

Array shift(const Array& x, int axis, bool forward, int by, double fill) {
  int n = x.shape(axis);
  if (n == 0) return x;
  by = std::min(by, n);
  auto pads = no_pad(x.ndim());
  pads[axis] = forward ? std::pair{by, 0} : std::pair{0, by};
  Array kept = take_range(x, axis, forward ? 0 : by, n - by);
  return ops::pad(kept, pads, array(fill, float64));
}

Array linear_recurrence(Array a, Array b, int axis, bool reverse) {
  // After the round with offset d, s_i = b_i + a_i s_{i-2d} (forwards).
  int n = b.shape(axis);
  for (int d = 1; d < n; d *= 2) {
    b = b + a * shift(b, axis, !reverse, d);
    if (2 * d < n) a = a * shift(a, axis, !reverse, d);
  }
  return b;
}

Array positions(const Shape& shape, int axis) {
  Shape line(shape.size(), 1);
  line[axis] = shape[axis];
  Array iota = ops::arange(0.0, double(shape[axis]), 1.0, int32);
  return ops::broadcast_to(ops::reshape(iota, line), shape);
}

Array mT(const Array& x) { return ops::swapaxes(x, -1, -2); }

Array sum_to_shape(const Array& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  int extra = g.ndim() - static_cast<int>(shape.size());
  std::vector<int> axes;
  for (int a = 0; a < g.ndim(); ++a)
    if (a < extra || (shape[a - extra] == 1 && g.shape(a) != 1))
      axes.push_back(a);
  Array r = axes.empty() ? g : ops::sum(g, Axes(axes), true);
  return ops::reshape(r, shape);
}

Array unslice(const Array& g, const Shape& shape, const std::vector<int>& start,
              const std::vector<int>& size, const std::vector<int>& step) {
  if (shape_size(shape) == 0 || g.size() == 0)
    return ops::zeros(shape, g.dtype());
  Array y = g;
  auto pads = no_pad(static_cast<int>(shape.size()));
  for (int a = 0; a < static_cast<int>(shape.size()); ++a) {
    int n = size[a], lo = start[a], st = step[a];
    if (st < 0) {  // walk forwards from the lowest selected index instead
      y = ops::flip(y, a);
      lo = start[a] + (n - 1) * st;
      st = -st;
    }
    if (st > 1) {  // put st - 1 zeros after each element, then drop the tail
      Shape merged = y.shape();
      merged[a] = n * st;
      auto inner = no_pad(y.ndim() + 1);
      inner[a + 1] = {0, st - 1};
      y = ops::reshape(ops::pad(ops::expand_dims(y, a + 1), inner), merged);
      y = take_range(y, a, 0, (n - 1) * st + 1);
    }
    int len = (n - 1) * st + 1;
    pads[a] = {lo, shape[a] - lo - len};
  }
  return ops::pad(y, pads);
}

}  // namespace nuvec::rules
