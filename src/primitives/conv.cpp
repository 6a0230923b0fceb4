#include "nuvec/primitives/conv.h"

#include "core/checked.h"

#include <sstream>

namespace nuvec {

namespace {

std::string tuple_str(const std::vector<int>& v) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  os << ")";
  return os.str();
}

std::string shape_str(const Shape& s) {
  return tuple_str(std::vector<int>(s.begin(), s.end()));
}

}  // namespace

Expected<std::vector<OutputSpec>> Im2Col::output_specs(const std::vector<Array>& inputs) const {
  const Array& x = inputs.at(0);
  const Array& w = inputs.at(1);
  auto bad = [](ErrorKind k, const std::string& m) { return op_error(k, m); };
  if (x.ndim() < 3 || x.ndim() > 5)
    return bad(ErrorKind::invalid_shape,
               "Only works for inputs with 1-3 spatial dimensions. The inputs must be in the "
               "format [N, ..., C_in], got shape " + shape_str(x.shape()));
  if (w.ndim() != x.ndim())
    return bad(ErrorKind::shape_mismatch,
               "Invalid weight array with " + std::to_string(w.ndim()) + " dimensions for " +
                   std::to_string(x.ndim() - 2) + "D convolution (input " +
                   shape_str(x.shape()) + ", weight " + shape_str(w.shape()) + ")");
  if (!is_floating(x.dtype()) || !is_floating(w.dtype()))
    return bad(ErrorKind::unsupported_dtype,
               std::string("Invalid input array with type ") +
                   std::string(dtype_name(is_floating(x.dtype()) ? w.dtype() : x.dtype())) +
                   ". Convolution currently only supports floating point types");
  if (x.dtype() != w.dtype())
    return bad(ErrorKind::unsupported_dtype, "input and weight dtypes differ");
  size_t d = static_cast<size_t>(x.ndim() - 2);
  struct Named {
    const char* name;
    const std::vector<int>* v;
    bool positive;
  } lists[] = {{"strides", &stride_, true},
               {"padding low", &lo_, false},
               {"padding high", &hi_, false},
               {"kernel dilation", &kdil_, true},
               {"input dilation", &idil_, true}};
  for (const auto& l : lists) {
    if (l.v->size() != d)
      return bad(ErrorKind::invalid_argument, std::string("Invalid ") + l.name + " " +
                                                  tuple_str(*l.v) + " for " +
                                                  std::to_string(d) + "D convolution.");
    for (int v : *l.v)
      if (l.positive && v <= 0)
        return bad(ErrorKind::invalid_argument, std::string(l.name) +
                                                    " sizes must be positive. Got " +
                                                    tuple_str(*l.v) + ".");
  }
  int cin = x.shape(-1), cout = w.shape(0);
  if (groups_ <= 0)
    return bad(ErrorKind::invalid_argument,
               "groups must be positive, got " + std::to_string(groups_));
  if (groups_ != 1 && d == 3)  // as MLX 0.32
    return bad(ErrorKind::invalid_argument,
               "Can only handle groups != 1 in 1D or 2D convolutions.");
  if (cin % groups_ != 0)
    return bad(ErrorKind::invalid_argument,
               "The input channels must be divisible by the number of groups. Got input with "
               "shape " + shape_str(x.shape()) + " and " + std::to_string(groups_) +
                   " groups.");
  if (groups_ > 1 && cout % groups_ != 0)
    return bad(ErrorKind::invalid_argument,
               "If groups > 1, the output channels must be divisible by the number of groups. "
               "Got " + std::to_string(cout) + " output channels and " +
                   std::to_string(groups_) + " groups.");
  if (int64_t(w.shape(-1)) * groups_ != cin)
    return bad(ErrorKind::shape_mismatch,
               "Expect the input channels in the input and weight array to match but got "
               "shapes - input: " + shape_str(x.shape()) + " and weight: " +
                   shape_str(w.shape()));
  OutputSpec s;
  s.dtype = x.dtype();
  s.shape.push_back(x.shape(0));
  Shape taps;
  for (size_t i = 0; i < d; ++i) {
    int64_t in = x.shape(int(i) + 1), k = w.shape(int(i) + 1);
    int64_t dilated_in = in == 0 ? 0 : (in - 1) * idil_[i] + 1;
    int64_t padded = dilated_in + lo_[i] + hi_[i];
    int64_t span = k == 0 ? 0 : (k - 1) * int64_t(kdil_[i]) + 1;
    if (padded < span || padded < 0) {
      std::ostringstream os;
      os << "Spatial dimensions of input after padding cannot be smaller than weight spatial "
            "dimensions. Got error at axis "
         << i + 1 << " for input with shape " << shape_str(x.shape()) << ", padding low "
         << tuple_str(lo_) << ", padding high " << tuple_str(hi_) << ", and weight of shape "
         << shape_str(w.shape()) << ".";
      return bad(ErrorKind::invalid_shape, os.str());
    }
    auto len = checked_dim((padded - span) / stride_[i] + 1, "output length");
    if (!len) return bad(len.error().kind(), len.error().message());
    s.shape.push_back(*len);
    taps.push_back(static_cast<int>(k));
  }
  s.shape.insert(s.shape.end(), taps.begin(), taps.end());
  s.shape.push_back(cin);
  return std::vector<OutputSpec>{s};
}

}  // namespace nuvec
