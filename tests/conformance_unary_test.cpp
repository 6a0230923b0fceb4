// Conformance: element-wise unary operations replayed from tests/refs/unary.ref
// (recorded from MLX). Exactly rounded operations compare bit for bit; math
// functions within a few ULP (float32/float64 4 ULP, float16/bfloat16 1 ULP
// of their own format, complex64 componentwise 4 eps relative to |z|).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "support/conformance.h"

namespace nuvec {
namespace {

namespace cf = conformance;

using UnaryFn = std::function<Array(const Array&)>;

const std::map<std::string, UnaryFn>& unary_table() {
  static const std::map<std::string, UnaryFn> table = {
#define NUVEC_UNARY_ENTRY(name) {#name, [](const Array& x) { return ops::name(x); }},
      NUVEC_UNARY_OPS(NUVEC_UNARY_ENTRY)
#undef NUVEC_UNARY_ENTRY
  };
  return table;
}

// Exactly rounded for real inputs (and exact data movement for complex).
const std::set<std::string> kExactReal = {
    "abs",      "negative",  "sign",     "floor",    "ceil",
    "round",    "sqrt",      "square",   "logical_not", "bitwise_invert",
    "isnan",    "isinf",     "isposinf", "isneginf", "isfinite",
    "conjugate", "real",     "imag",     "stop_gradient"};
// Exact for complex inputs too (no arithmetic on the values).
const std::set<std::string> kExactComplex = {
    "negative", "isnan",    "isinf", "isposinf",      "isneginf", "isfinite",
    "conjugate", "real",    "imag",  "stop_gradient", "logical_not",
    "floor",    "ceil",     "round"};

// round with decimals converts through float32 back to the integer dtype:
// values whose float32 image is outside the int64 range make that cast
// undefined in MLX (nuvec saturates; docs/mlx-differences.md).
cf::SkipElement round_skip(const refs::Case& c) {
  DType d = cf::dtype_from_name(c.inputs.at(0).dtype);
  if (c.op != "round" || c.param_int("decimals") == 0 || !is_integer(d)) return {};
  auto xs = std::make_shared<std::vector<double>>(
      cf::op_values(c.inputs[0], c.outputs.at(0).shape));
  return [xs](size_t, size_t i) -> const char* {
    double v = i < xs->size() ? std::fabs(double(float((*xs)[i]))) : 0;
    return v >= 9223372036854775808.0 ? "value: float-to-int cast outside int64 (UB in MLX)"
                                      : nullptr;
  };
}

// erfinv in long double by Newton's method on erfl (libm has no erfinv).
double erfinv_reference(double y) {
  if (std::isnan(y) || std::fabs(y) > 1) return NAN;
  if (std::fabs(y) == 1) return std::copysign(INFINITY, y);
  long double x = 0;
  for (int i = 0; i < 200; ++i) {
    long double step = (std::erf(x) - y) / (2 / std::sqrt(3.14159265358979323846264338327950288L) *
                                            std::exp(-x * x));
    x -= step;
    if (std::fabs(step) <= 1e-19L * std::fabs(x)) break;
  }
  return static_cast<double>(x);
}

// Float64 references for math functions (MLX computes some float64 functions
// at float32 accuracy, and flushes or approximates tiny results).
const std::map<std::string, double (*)(double)>& libm_table() {
  static const std::map<std::string, double (*)(double)> t = {
      {"exp", [](double x) { return std::exp(x); }},
      {"expm1", [](double x) { return std::expm1(x); }},
      {"log", [](double x) { return std::log(x); }},
      {"log1p", [](double x) { return std::log1p(x); }},
      {"log2", [](double x) { return std::log2(x); }},
      {"log10", [](double x) { return std::log10(x); }},
      {"rsqrt", [](double x) { return 1 / std::sqrt(x); }},
      {"reciprocal", [](double x) { return 1 / x; }},
      {"sin", [](double x) { return std::sin(x); }},
      {"cos", [](double x) { return std::cos(x); }},
      {"tan", [](double x) { return std::tan(x); }},
      {"arcsin", [](double x) { return std::asin(x); }},
      {"arccos", [](double x) { return std::acos(x); }},
      {"arctan", [](double x) { return std::atan(x); }},
      {"sinh", [](double x) { return std::sinh(x); }},
      {"cosh", [](double x) { return std::cosh(x); }},
      {"tanh", [](double x) { return std::tanh(x); }},
      {"arcsinh", [](double x) { return std::asinh(x); }},
      {"arccosh", [](double x) { return std::acosh(x); }},
      {"arctanh", [](double x) { return std::atanh(x); }},
      {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"erf", [](double x) { return std::erf(x); }},
      {"erfinv", erfinv_reference},
      {"degrees", [](double x) { return x * (180 / M_PI); }},
      {"radians", [](double x) { return x * (M_PI / 180); }},
  };
  return t;
}

cf::Tolerance tolerance_for(const refs::Case& c) {
  bool complex_in = !c.inputs.empty() && c.inputs[0].dtype == "complex64";
  const auto& exact = complex_in ? kExactComplex : kExactReal;
  if (exact.count(c.op)) return cf::Tolerance::exact();
  return cf::Tolerance::ulps(4, 4, 1);
}

std::vector<Array> build_unary(const refs::Case& c) {
  Array x = cf::make_input(c.inputs.at(0));
  if (c.op == "round") return {ops::round(x, static_cast<int>(c.param_int("decimals")))};
  auto it = unary_table().find(c.op);
  if (it == unary_table().end()) throw std::runtime_error("no op " + c.op);
  return {it->second(x)};
}

cf::LibmValue unary_libm(const refs::Case& c) {
  auto f = libm_table().find(c.op);
  if (f == libm_table().end() || c.inputs.at(0).dtype == "complex64") return {};
  auto xs = std::make_shared<std::vector<double>>(cf::op_values(c.inputs[0], c.outputs[0].shape));
  return [xs, fn = f->second](size_t i) { return fn((*xs)[i]); };
}

TEST(ConformanceUnary, MatchesMlx) {
  cf::FileHooks hooks;
  hooks.tolerance = tolerance_for;
  hooks.skip = round_skip;
  hooks.libm = unary_libm;
  cf::run_file("unary.ref", build_unary, hooks);
}

}  // namespace
}  // namespace nuvec
