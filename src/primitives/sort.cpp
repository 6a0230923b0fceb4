#include "nuvec/primitives/sort.h"

#include <sstream>
#include <string>

namespace nuvec {

namespace {

std::string axis_message(int axis, int ndim) {
  return "axis " + std::to_string(axis) + " is out of bounds for an array with " +
         std::to_string(ndim) + " dimensions";
}

std::string shape_text(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

}  // namespace

template <PrimitiveId Id>
Expected<std::vector<OutputSpec>> SortPrimitive<Id>::output_specs(
    const std::vector<Array>& inputs) const {
  const Array& x = inputs.at(0);
  if (axis_ < 0 || axis_ >= x.ndim()) return op_error(ErrorKind::invalid_axis, axis_message(axis_, x.ndim()));
  if constexpr (is_partition) {
    int n = x.shape()[axis_];
    if (kth_ < 0 || kth_ >= n)
      return op_error(ErrorKind::out_of_range,
                      "kth " + std::to_string(kth_) + " is out of range for axis " +
                          std::to_string(axis_) + " of size " + std::to_string(n));
  }
  OutputSpec s;
  s.shape = x.shape();
  s.dtype = is_arg ? uint32 : x.dtype();
  return std::vector<OutputSpec>{s};
}

template class SortPrimitive<PrimitiveId::Sort>;
template class SortPrimitive<PrimitiveId::ArgSort>;
template class SortPrimitive<PrimitiveId::Partition>;
template class SortPrimitive<PrimitiveId::ArgPartition>;

void Scan::print_params(std::ostream& os) const {
  static constexpr const char* names[] = {"sum", "prod", "max", "min", "logaddexp"};
  os << names[static_cast<int>(type_)] << " axis " << axis_ << (reverse_ ? " reverse" : "")
     << (inclusive_ ? "" : " exclusive");
}

Expected<std::vector<OutputSpec>> Scan::output_specs(const std::vector<Array>& inputs) const {
  const Array& x = inputs.at(0);
  if (axis_ < 0 || axis_ >= x.ndim()) return op_error(ErrorKind::invalid_axis, axis_message(axis_, x.ndim()));
  OutputSpec s;
  s.shape = x.shape();
  s.dtype = scan_output_dtype(type_, x.dtype());
  return std::vector<OutputSpec>{s};
}

Expected<std::vector<OutputSpec>> Concatenate::output_specs(
    const std::vector<Array>& inputs) const {
  if (inputs.empty()) return op_error(ErrorKind::invalid_argument, "no arrays to concatenate");
  const Array& first = inputs[0];
  int nd = first.ndim();
  if (axis_ < 0 || axis_ >= nd) return op_error(ErrorKind::invalid_axis, axis_message(axis_, nd));
  Shape shape = first.shape();
  int64_t total = 0;
  for (const Array& a : inputs) {
    if (a.dtype() != first.dtype())
      return op_error(ErrorKind::internal, "concatenate operands differ in dtype");
    if (a.ndim() != nd)
      return op_error(ErrorKind::shape_mismatch,
                      "all arrays must have the same number of dimensions, got " +
                          std::to_string(nd) + " and " + std::to_string(a.ndim()));
    for (int d = 0; d < nd; ++d)
      if (d != axis_ && a.shape()[d] != shape[d])
        return op_error(ErrorKind::shape_mismatch,
                        "shapes " + shape_text(first.shape()) + " and " + shape_text(a.shape()) +
                            " differ outside the concatenation axis " + std::to_string(axis_));
    total += a.shape()[axis_];
  }
  if (total > INT32_MAX)
    return op_error(ErrorKind::overflow, "concatenated axis of size " + std::to_string(total) +
                                             " exceeds the int range");
  shape[axis_] = static_cast<int>(total);
  OutputSpec s;
  s.shape = shape;
  s.dtype = first.dtype();
  return std::vector<OutputSpec>{s};
}

}  // namespace nuvec
