#include "nuvec/primitives/random.h"

#include <string>

namespace nuvec {

Expected<std::vector<OutputSpec>> RandomBits::output_specs(
    const std::vector<Array>& inputs) const {
  if (inputs.size() != 1) return op_error(ErrorKind::internal, "expected one key input");
  const Array& key = inputs[0];
  if (key.dtype() != uint32)
    return op_error(ErrorKind::unsupported_dtype,
                    std::string("expected key type uint32 but received ") +
                        std::string(dtype_name(key.dtype())));
  if (key.ndim() < 1 || key.shape().back() != 2)
    return op_error(ErrorKind::invalid_shape, "expected a key of shape (..., 2)");
  DType d = width_ == 4 ? uint32 : width_ == 2 ? uint16 : width_ == 1 ? uint8 : bool_;
  if (d == bool_)
    return op_error(ErrorKind::invalid_argument,
                    "bit width must be in {1, 2, 4} but got " + std::to_string(width_));
  OutputSpec s;
  s.shape.assign(key.shape().begin(), key.shape().end() - 1);
  for (int n : shape_) {
    if (n < 0) return op_error(ErrorKind::invalid_shape, "negative dimension in shape");
    s.shape.push_back(n);
  }
  s.dtype = d;
  if (uniform_) {
    if (width_ != 4 || !is_floating(uniform_->dtype) || uniform_->dtype == float64)
      return op_error(ErrorKind::internal, "a unit-uniform draw needs width 4 and a float dtype");
    s.dtype = uniform_->dtype;
  }
  return std::vector<OutputSpec>{s};
}

}  // namespace nuvec
