// Conformance: creation functions and matrix products replayed from
// tests/refs/creation.ref and matmul.ref (recorded from MLX). Creation
// compares bit for bit; products within a summation-order tolerance.
#include <gtest/gtest.h>

#include <cmath>

#include "support/conformance.h"

namespace nuvec {
namespace {

namespace cf = conformance;

std::optional<DType> dtype_param(const refs::Case& c) {
  if (c.param("dtype") == "none") return std::nullopt;
  return cf::dtype_from_name(c.param("dtype"));
}

// A value written by Python: int, float or bool, as its own 0-d array.
Array python_value(const refs::Case& c) {
  const std::string& t = c.param("value_type");
  if (t == "bool") return array(c.param_bool("value"));
  if (t == "int") return array(static_cast<int>(c.param_int("value")));
  return array(c.param_double("value"));
}

bool is_integral_text(const std::string& s) {
  return s.find_first_of(".eEn") == std::string::npos;
}

std::vector<Array> build_creation(const refs::Case& c) {
  const std::string& op = c.op;
  auto d = dtype_param(c);
  if (op == "arange") {
    double start = c.param_double("start"), stop = c.param_double("stop"),
           step = c.param_double("step");
    bool ints = is_integral_text(c.param("start")) && is_integral_text(c.param("stop")) &&
                is_integral_text(c.param("step"));
    return {ops::arange(start, stop, step, d.value_or(ints ? int32 : float32))};
  }
  if (op == "linspace")
    return {ops::linspace(c.param_double("start"), c.param_double("stop"),
                          static_cast<int>(c.param_int("num")), d.value_or(float32))};
  if (op == "eye") {
    int n = static_cast<int>(c.param_int("n"));
    int m = c.param("m") == "none" ? n : static_cast<int>(c.param_int("m"));
    return {ops::eye(n, m, static_cast<int>(c.param_int("k")), d.value_or(float32))};
  }
  if (op == "identity")
    return {ops::identity(static_cast<int>(c.param_int("n")), d.value_or(float32))};
  if (op == "zeros") return {ops::zeros(c.param_ints("shape"), d.value_or(float32))};
  if (op == "ones") return {ops::ones(c.param_ints("shape"), d.value_or(float32))};
  if (op == "full") {
    Array v = python_value(c);
    return {d ? ops::full(c.param_ints("shape"), v, *d) : ops::full(c.param_ints("shape"), v)};
  }
  throw std::runtime_error("no op " + op);
}

std::vector<Array> build_matmul(const refs::Case& c) {
  auto in = cf::make_inputs(c);
  if (c.op == "matmul") return {ops::matmul(in.at(0), in.at(1))};
  if (c.op == "inner") return {ops::inner(in.at(0), in.at(1))};
  if (c.op == "outer") return {ops::outer(in.at(0), in.at(1))};
  if (c.op == "addmm")
    return {ops::addmm(in.at(0), in.at(1), in.at(2), static_cast<float>(c.param_double("alpha")),
                       static_cast<float>(c.param_double("beta")))};
  throw std::runtime_error("no op " + c.op);
}

cf::Tolerance matmul_tolerance(const refs::Case& c) {
  if (c.inputs.size() < 2) return cf::Tolerance::exact();
  const auto& a = c.inputs[c.op == "addmm" ? 1 : 0];
  std::vector<int> s = a.view_shape();
  double k = s.empty() ? 1 : s.back();
  double m = 0;
  for (const auto& t : c.inputs) m = std::max(m, cf::max_abs(t));
  return cf::Tolerance::reduction(2 * k + 4, k * m * m + m);
}

// mx.full in Python first makes an array of the Python value with the
// requested dtype by weak promotion (full(shape, 2.5, dtype=int32) is
// float32; -1 with uint8 raises); nuvec's C++ full converts the value to the
// dtype, as MLX's C++ full does. These recorded cases show the binding's rule.
cf::ExpectedFailures python_full_binding() {
  cf::ExpectedFailures x;
  for (const char* id : {
    "full_bool_2",
    "full_bool_2p5",
    "full_bool_300",
    "full_bool_m1",
    "full_bool_nan",
    "full_complex64_2p5",
    "full_complex64_nan",
    "full_int16_2p5",
    "full_int16_nan",
    "full_int32_2p5",
    "full_int32_nan",
    "full_int64_2p5",
    "full_int64_nan",
    "full_int8_2p5",
    "full_int8_300",
    "full_int8_nan",
    "full_uint16_2p5",
    "full_uint16_m1",
    "full_uint16_nan",
    "full_uint32_2p5",
    "full_uint32_m1",
    "full_uint32_nan",
    "full_uint64_2p5",
    "full_uint64_nan",
    "full_uint8_2p5",
    "full_uint8_300",
    "full_uint8_m1",
    "full_uint8_nan"
})
    x[id] = "mx.full's Python binding promotes the scalar with the dtype";
  return x;
}

TEST(ConformanceCreation, MatchesMlx) {
  cf::FileHooks hooks;
  hooks.xfail = python_full_binding();
  cf::run_file("creation.ref", build_creation, hooks);
}

TEST(ConformanceMatmul, MatchesMlx) {
  cf::FileHooks hooks;
  hooks.tolerance = matmul_tolerance;
  cf::run_file("matmul.ref", build_matmul, hooks);
}

}  // namespace
}  // namespace nuvec
