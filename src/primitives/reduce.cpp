#include "nuvec/primitives/reduce.h"

#include "nuvec/primitives/linalg.h"

namespace nuvec {

namespace {

const char* reduce_name(Reduce::Type t) {
  static constexpr const char* names[] = {"sum", "prod", "max", "min", "all", "any"};
  return names[static_cast<int>(t)];
}

}  // namespace

void Reduce::print_params(std::ostream& os) const { os << reduce_name(type_); }

Expected<std::vector<OutputSpec>> Reduce::output_specs(
    const std::vector<Array>& inputs) const {
  const Array& x = inputs.at(0);
  Shape shape = x.shape();
  for (int a : axes_) {
    if (a < 0 || a >= x.ndim()) return op_error(ErrorKind::invalid_axis, "reduce axis out of range");
    if (shape[a] == 0 && (type_ == Type::max || type_ == Type::min))
      return op_error(ErrorKind::invalid_shape,
                      std::string("cannot ") + reduce_name(type_) +
                          "-reduce over an axis of size 0");
    shape[a] = 1;
  }
  OutputSpec s;
  s.shape = shape;
  s.dtype = reduce_output_dtype(type_, x.dtype());
  return std::vector<OutputSpec>{s};
}

Expected<std::vector<OutputSpec>> ArgReduce::output_specs(
    const std::vector<Array>& inputs) const {
  const Array& x = inputs.at(0);
  if (axis_ < 0 || axis_ >= x.ndim()) return op_error(ErrorKind::invalid_axis, "axis out of range");
  if (x.size() == 0)
    return op_error(ErrorKind::invalid_shape, "cannot arg-reduce an array of size 0");
  OutputSpec s;
  s.shape = x.shape();
  s.shape[axis_] = 1;
  s.dtype = uint32;
  return std::vector<OutputSpec>{s};
}

Expected<std::vector<OutputSpec>> NumberOf::output_specs(
    const std::vector<Array>& inputs) const {
  for (int a : axes_)
    if (a < 0 || a >= inputs.at(0).ndim()) return op_error(ErrorKind::invalid_axis, "axis out of range");
  OutputSpec s;
  s.dtype = dtype_;
  return std::vector<OutputSpec>{s};
}

Expected<std::vector<OutputSpec>> Matmul::output_specs(
    const std::vector<Array>& inputs) const {
  const Array& a = inputs.at(0);
  const Array& b = inputs.at(1);
  if (a.dtype() != b.dtype()) return op_error(ErrorKind::internal, "matmul operands differ in dtype");
  if (!is_inexact(a.dtype()))
    return op_error(ErrorKind::unsupported_dtype,
                    "only floating point and complex types are supported, got " +
                        std::string(dtype_name(a.dtype())));
  if (a.ndim() < 2 || a.ndim() != b.ndim())
    return op_error(ErrorKind::internal, "matmul expects operands of one rank >= 2");
  int n = a.ndim();
  for (int i = 0; i < n - 2; ++i)
    if (a.shape()[i] != b.shape()[i])
      return op_error(ErrorKind::shape_mismatch, "matmul batch shapes differ");
  if (a.shape()[n - 1] != b.shape()[n - 2])
    return op_error(ErrorKind::shape_mismatch,
                    "inner dimensions differ: " + std::to_string(a.shape()[n - 1]) +
                        " and " + std::to_string(b.shape()[n - 2]));
  OutputSpec s;
  s.shape = a.shape();
  s.shape[n - 1] = b.shape()[n - 1];
  s.dtype = a.dtype();
  return std::vector<OutputSpec>{s};
}

Expected<std::vector<OutputSpec>> Arange::output_specs(const std::vector<Array>&) const {
  if (size_ < 0) return op_error(ErrorKind::invalid_shape, "negative arange size");
  OutputSpec s;
  s.shape = {size_};
  s.dtype = dtype_;
  return std::vector<OutputSpec>{s};
}

}  // namespace nuvec
