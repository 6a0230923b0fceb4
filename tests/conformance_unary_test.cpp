// Conformance: element-wise unary operations replayed from tests/refs/unary.ref
// (recorded from MLX). Exactly rounded operations compare bit for bit; math
// functions within a few ULP (float32/float64 4 ULP, float16/bfloat16 1 ULP
// of their own format, complex64 componentwise 4 eps relative to |z|).
#include <gtest/gtest.h>

#include <functional>
#include <map>
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

// Math functions outside tolerance (owned by kernels/math_*.h, reported).
const cf::ExpectedFailures kExpectedFailures = {};

cf::Tolerance tolerance_for(const refs::Case& c) {
  bool complex_in = !c.inputs.empty() && c.inputs[0].dtype == "complex64";
  const auto& exact = complex_in ? kExactComplex : kExactReal;
  if (exact.count(c.op)) return cf::Tolerance::exact();
  return cf::Tolerance::ulps(4, 4, 1);
}

TEST(ConformanceUnary, MatchesMlx) {
  auto cases = cf::load_cases("unary.ref");
  ASSERT_FALSE(cases.empty());
  cf::Tally tally;
  tally.file = "unary.ref";
  for (const auto& c : cases) {
    auto build = [&]() -> std::vector<Array> {
      Array x = cf::make_input(c.inputs.at(0));
      if (c.op == "round") {
        return {ops::round(x, static_cast<int>(c.param_int("decimals")))};
      }
      auto it = unary_table().find(c.op);
      if (it == unary_table().end()) throw std::runtime_error("no op " + c.op);
      return {it->second(x)};
    };
    cf::run_case(c, build, tolerance_for(c), tally, kExpectedFailures);
  }
}

}  // namespace
}  // namespace nuvec
