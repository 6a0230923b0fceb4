#include "nuvec/primitives/indexing.h"

namespace nuvec {

Expected<std::vector<OutputSpec>> Take::output_specs(const std::vector<Array>& inputs) const {
  const Array& x = inputs.at(0);
  const Array& idx = inputs.at(1);
  if (!is_integer(idx.dtype()))
    return op_error(ErrorKind::unsupported_dtype,
                    "indices must be integers, got " + std::string(dtype_name(idx.dtype())));
  if (axis_ < 0 || axis_ >= x.ndim())
    return op_error(ErrorKind::invalid_axis, "axis " + std::to_string(axis_) +
                                                 " is out of range for an array with " +
                                                 std::to_string(x.ndim()) + " dimensions");
  if (x.shape()[axis_] == 0 && idx.size() > 0)
    return op_error(ErrorKind::out_of_range, "cannot take from an axis of size 0");
  OutputSpec s;
  s.shape.assign(x.shape().begin(), x.shape().begin() + axis_);
  s.shape.insert(s.shape.end(), idx.shape().begin(), idx.shape().end());
  s.shape.insert(s.shape.end(), x.shape().begin() + axis_ + 1, x.shape().end());
  s.dtype = x.dtype();
  return std::vector<OutputSpec>{s};
}

Expected<std::vector<OutputSpec>> Scatter::output_specs(
    const std::vector<Array>& inputs) const {
  const Array& x = inputs.at(0);
  const Array& pos = inputs.at(1);
  const Array& upd = inputs.at(2);
  if (x.ndim() != 1 || !is_integer(pos.dtype()) || upd.shape() != pos.shape() ||
      upd.dtype() != x.dtype())
    return op_error(ErrorKind::internal, "scatter expects (flat x, integer positions, updates)");
  if (x.size() == 0 && pos.size() > 0)
    return op_error(ErrorKind::out_of_range, "cannot update an empty array");
  OutputSpec s;
  s.shape = x.shape();
  s.dtype = x.dtype();
  return std::vector<OutputSpec>{s};
}

}  // namespace nuvec
