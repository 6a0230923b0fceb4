#include "nn/support/nn_refs.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <stdexcept>

namespace nuvec::nn_test {
namespace {

DType dtype_named(const std::string& name) {
  static const std::map<std::string, DType> table = {
      {"bool", bool_},       {"uint8", uint8},       {"uint16", uint16},   {"uint32", uint32},
      {"uint64", uint64},    {"int8", int8},         {"int16", int16},     {"int32", int32},
      {"int64", int64},      {"float16", float16},   {"bfloat16", bfloat16}, {"float32", float32},
      {"float64", float64},  {"complex64", complex64}};
  auto it = table.find(name);
  if (it == table.end()) throw std::runtime_error("unknown dtype " + name);
  return it->second;
}

}  // namespace

Array ref_array(const refs::Tensor& t) {
  if (t.view != "c") throw std::runtime_error("ref_array: view " + t.view + " is not supported");
  Shape shape(t.shape.begin(), t.shape.end());
  return detail::array_from_bytes(t.bytes.data(), shape, dtype_named(t.dtype));
}

std::map<std::string, refs::Case> ref_cases(const std::string& file) {
  std::map<std::string, refs::Case> out;
  for (auto& c : refs::load(refs::ref_path(file))) out.emplace(c.id, c);
  return out;
}

::testing::AssertionResult same_bits(const Array& a, const Array& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype())
    return ::testing::AssertionFailure() << "shape or dtype differs";
  auto ca = ops::view(ops::contiguous(a).reshape({-1}), uint8).to_vector<uint8_t>();
  auto cb = ops::view(ops::contiguous(b).reshape({-1}), uint8).to_vector<uint8_t>();
  if (ca != cb)
    return ::testing::AssertionFailure() << "bits differ: max |a - b| = "
                                         << ops::max(ops::abs(a.astype(float64) - b.astype(float64))).item<double>();
  return ::testing::AssertionSuccess();
}

}  // namespace nuvec::nn_test
