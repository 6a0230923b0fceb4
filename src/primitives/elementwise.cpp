#include "nuvec/primitives/elementwise.h"

#include <sstream>

namespace nuvec {

namespace {

Error unsupported(DType d, const char* what) {
  std::ostringstream os;
  os << "unsupported dtype " << d << ": " << what;
  return op_error(ErrorKind::unsupported_dtype, os.str());
}

}  // namespace

Expected<DType> unary_output_dtype(UnaryRule rule, DType in) {
  switch (rule) {
    case UnaryRule::abs:
      return is_complex(in) ? float32 : in;
    case UnaryRule::signed_numeric:
      if (in == bool_) return unsupported(in, "not defined for bool (use logical_not)");
      return in;
    case UnaryRule::numeric:
      return in;
    case UnaryRule::inexact:
      if (!is_inexact(in)) return unsupported(in, "expects a floating or complex input");
      return in;
    case UnaryRule::floating:
      if (!is_floating(in)) return unsupported(in, "expects a floating input");
      return in;
    case UnaryRule::real_numeric:
      if (is_complex(in)) return unsupported(in, "not defined for complex");
      return in;
    case UnaryRule::to_bool:
      return bool_;
    case UnaryRule::integer:
      if (!is_integer(in) && in != bool_)
        return unsupported(in, "expects an integer or bool input");
      return in;
    case UnaryRule::complex_part:
      if (!is_complex(in)) return unsupported(in, "expects a complex input");
      return float32;
  }
  return op_error(ErrorKind::internal, "unknown unary rule");
}

Expected<DType> binary_output_dtype(BinaryRule rule, DType in) {
  switch (rule) {
    case BinaryRule::any:
      return in;
    case BinaryRule::numeric:
      if (in == bool_) return unsupported(in, "not defined for bool");
      return in;
    case BinaryRule::inexact:
      if (!is_inexact(in)) return unsupported(in, "expects floating or complex operands");
      return in;
    case BinaryRule::real_numeric:
      if (is_complex(in)) return unsupported(in, "not defined for complex");
      return in;
    case BinaryRule::compare:
    case BinaryRule::logical:
      return bool_;
    case BinaryRule::integer:
      if (!is_integer(in) && in != bool_)
        return unsupported(in, "expects integer or bool operands");
      return in;
    case BinaryRule::floating:
      if (!is_floating(in)) return unsupported(in, "expects floating operands");
      return in;
  }
  return op_error(ErrorKind::internal, "unknown binary rule");
}

Expected<std::vector<OutputSpec>> elementwise_specs(const std::vector<Array>& inputs,
                                                    size_t n, DType out, int outputs) {
  if (inputs.size() != n) return op_error(ErrorKind::internal, "wrong input count");
  for (const auto& in : inputs) {
    if (in.shape() != inputs[0].shape()) {
      std::ostringstream os;
      os << "shapes " << inputs[0].shape() << " and " << in.shape() << " differ";
      return op_error(ErrorKind::shape_mismatch, os.str());
    }
  }
  std::vector<OutputSpec> specs(static_cast<size_t>(outputs));
  for (auto& s : specs) {
    s.shape = inputs[0].shape();
    s.dtype = out;
  }
  return specs;
}

Expected<std::vector<OutputSpec>> Select::output_specs(
    const std::vector<Array>& inputs) const {
  if (inputs.size() != 3 || inputs[0].dtype() != bool_ ||
      inputs[1].dtype() != inputs[2].dtype())
    return op_error(ErrorKind::internal, "select expects (bool, T, T)");
  return elementwise_specs(inputs, 3, inputs[1].dtype());
}

Expected<std::vector<OutputSpec>> AsType::output_specs(
    const std::vector<Array>& inputs) const {
  return elementwise_specs(inputs, 1, dtype_);
}

Expected<std::vector<OutputSpec>> DivMod::output_specs(
    const std::vector<Array>& inputs) const {
  if (inputs.size() != 2 || inputs[0].dtype() != inputs[1].dtype())
    return op_error(ErrorKind::internal, "divmod expects two inputs of one dtype");
  if (is_complex(inputs[0].dtype()))
    return unsupported(inputs[0].dtype(), "divmod is not defined for complex");
  return elementwise_specs(inputs, 2, inputs[0].dtype(), 2);
}

std::ostream& operator<<(std::ostream& os, const Primitive& p) {
  os << p.name();
  return os;
}

}  // namespace nuvec
