#include "nuvec/primitives/shape_ops.h"
#include "core/checked.h"

#include "nuvec/core/graph.h"
#include "nuvec/ops/shape.h"

#include <algorithm>
#include <sstream>

namespace nuvec {

namespace {

OutputSpec view_spec(Shape shape, DType dtype, Strides strides, int64_t offset) {
  OutputSpec s;
  s.shape = std::move(shape);
  s.dtype = dtype;
  s.is_view = true;
  s.strides = std::move(strides);
  s.offset = offset;
  return s;
}

OutputSpec dense_spec(Shape shape, DType dtype) {
  OutputSpec s;
  s.shape = std::move(shape);
  s.dtype = dtype;
  return s;
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

}  // namespace

std::optional<Strides> reshape_strides(const Shape& shape, const Strides& strides,
                                       const Shape& new_shape) {
  if (shape_size(new_shape) == 0) return row_major_strides(new_shape);
  // Drop size-1 dims of the input; they constrain nothing.
  Shape os;
  Strides ost;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1) {
      os.push_back(shape[i]);
      ost.push_back(strides[i]);
    }
  Strides out(new_shape.size(), 0);
  size_t oi = 0, ni = 0;
  while (ni < new_shape.size()) {
    if (new_shape[ni] == 1) {
      out[ni] = oi < ost.size() ? ost[oi] * os[oi] : 1;
      ++ni;
      continue;
    }
    // Grow a group of old dims and new dims with equal products.
    size_t o0 = oi, n0 = ni;
    int64_t po = os[oi++], pn = new_shape[ni++];
    while (po != pn) {
      if (po < pn) po *= os[oi++];
      else pn *= new_shape[ni++];
    }
    for (size_t k = o0; k + 1 < oi; ++k)
      if (ost[k] != ost[k + 1] * os[k + 1]) return std::nullopt;
    int64_t st = ost[oi - 1];
    for (size_t k = ni; k-- > n0;) {
      out[k] = st;
      st *= new_shape[k];
    }
  }
  return out;
}

Expected<std::vector<OutputSpec>> Reshape::output_specs(
    const std::vector<Array>& inputs) const {
  const Array& x = inputs.at(0);
  for (int d : shape_)
    if (d < 0)
      return op_error(ErrorKind::invalid_shape, "negative dimension in " + shape_str(shape_));
  if (wide_size(shape_) != x.size())
    return op_error(ErrorKind::invalid_shape,
                    "cannot reshape an array of size " + std::to_string(x.size()) +
                        " into shape " + shape_str(shape_));
  // Before the strides are computed: they are products of the dimensions,
  // which must fit (an empty shape's nonzero ones too).
  if (auto n = checked_size(shape_, x.dtype().size(), "output"); !n)
    return op_error(n.error().kind(), n.error().message());
  if (auto st = reshape_strides(x.shape(), x.strides(), shape_))
    return std::vector<OutputSpec>{view_spec(shape_, x.dtype(), *st, x.desc()->offset)};
  return std::vector<OutputSpec>{dense_spec(shape_, x.dtype())};
}

Expected<std::vector<OutputSpec>> Transpose::output_specs(
    const std::vector<Array>& inputs) const {
  const Array& x = inputs.at(0);
  int n = x.ndim();
  std::vector<bool> used(static_cast<size_t>(n), false);
  if (static_cast<int>(perm_.size()) != n)
    return op_error(ErrorKind::invalid_axis,
                    "transpose needs " + std::to_string(n) + " axes, got " +
                        std::to_string(perm_.size()));
  Shape shape;
  Strides strides;
  for (int a : perm_) {
    if (a < 0 || a >= n || used[a])
      return op_error(ErrorKind::invalid_axis, "transpose axes are not a permutation");
    used[a] = true;
    shape.push_back(x.shape()[a]);
    strides.push_back(x.strides()[a]);
  }
  return std::vector<OutputSpec>{view_spec(shape, x.dtype(), strides, x.desc()->offset)};
}

Expected<std::vector<OutputSpec>> Broadcast::output_specs(
    const std::vector<Array>& inputs) const {
  const Array& x = inputs.at(0);
  Shape target = shape_;
  if (relative_) {
    target = x.shape();
    for (size_t i = 1; i < inputs.size(); ++i) {
      auto b = ops::try_broadcast_shapes(target, inputs[i].shape());
      if (!b) return b.error();
      target = *b;
    }
  }
  const Shape& shape_ = target;  // the relative target, or the literal one
  int n = static_cast<int>(shape_.size()), m = x.ndim();
  auto bad = [&] {
    return op_error(ErrorKind::shape_mismatch, "cannot broadcast an array of shape " +
                                                    shape_str(x.shape()) + " to shape " +
                                                    shape_str(shape_));
  };
  if (n < m) return bad();
  Strides strides(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    if (shape_[i] < 0)
      return op_error(ErrorKind::invalid_shape, "negative dimension in " + shape_str(shape_));
    int j = i - (n - m);
    if (j < 0) continue;
    int d = x.shape()[j];
    if (d == shape_[i]) strides[i] = d == 1 ? 0 : x.strides()[j];
    else if (d != 1) return bad();
  }
  return std::vector<OutputSpec>{view_spec(shape_, x.dtype(), strides, x.desc()->offset)};
}

Expected<std::vector<OutputSpec>> Slice::output_specs(
    const std::vector<Array>& inputs) const {
  const Array& x = inputs.at(0);
  int n = x.ndim();
  if (static_cast<int>(start_.size()) != n || size_.size() != start_.size() ||
      step_.size() != start_.size())
    return op_error(ErrorKind::internal, "slice parameters do not match the rank");
  Strides strides(static_cast<size_t>(n));
  int64_t offset = x.desc()->offset;
  for (int i = 0; i < n; ++i) {
    int64_t last = start_[i] + int64_t(size_[i] - 1) * step_[i];
    if (step_[i] == 0 || size_[i] < 0 ||
        (size_[i] > 0 && (start_[i] < 0 || start_[i] >= x.shape()[i] || last < 0 ||
                          last >= x.shape()[i])))
      return op_error(ErrorKind::out_of_range, "slice out of range on axis " + std::to_string(i));
    strides[i] = x.strides()[i] * step_[i];
    if (size_[i] > 0) offset += start_[i] * x.strides()[i];
  }
  return std::vector<OutputSpec>{view_spec(size_, x.dtype(), strides, offset)};
}

Expected<std::vector<OutputSpec>> StopGradient::output_specs(
    const std::vector<Array>& inputs) const {
  const Array& x = inputs.at(0);
  return std::vector<OutputSpec>{view_spec(x.shape(), x.dtype(), x.strides(), x.desc()->offset)};
}

Expected<std::vector<OutputSpec>> Copy::output_specs(
    const std::vector<Array>& inputs) const {
  return std::vector<OutputSpec>{dense_spec(inputs.at(0).shape(), inputs.at(0).dtype())};
}

Expected<std::vector<OutputSpec>> BitCast::output_specs(
    const std::vector<Array>& inputs) const {
  const Array& x = inputs.at(0);
  int from = x.itemsize(), to = dtype_.size();
  Shape shape = x.shape();
  if (from != to) {
    if (shape.empty())
      return op_error(ErrorKind::invalid_shape,
                      "cannot view a 0-d array as a dtype of another size");
    // The new last length in int64: it may grow past int (checked) and the
    // bytes of the old one may too (a float16 axis of 2^30 is 2^31 bytes).
    int64_t bytes = int64_t(shape.back()) * from;
    if (bytes % to != 0)
      return op_error(ErrorKind::invalid_shape,
                      "the last axis (" + std::to_string(shape.back()) + " x " +
                          std::to_string(from) +
                          " bytes) is not a multiple of the new item size " +
                          std::to_string(to));
    auto last = checked_dim(bytes / to, "the last axis's new length");
    if (!last) return last.error();
    shape.back() = *last;
  }
  return std::vector<OutputSpec>{dense_spec(shape, dtype_)};
}

Expected<std::vector<OutputSpec>> Depends::output_specs(
    const std::vector<Array>& inputs) const {
  const Array& x = inputs.at(0);
  return std::vector<OutputSpec>{view_spec(x.shape(), x.dtype(), x.strides(), x.desc()->offset)};
}

}  // namespace nuvec
