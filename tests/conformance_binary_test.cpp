// Conformance: element-wise binary operations and type promotion replayed
// from tests/refs/binary.ref and promotion.ref (recorded from MLX).
// Arithmetic, comparisons, logical/bitwise ops, shifts, min/max and integer
// division/power compare bit for bit; arctan2, logaddexp, float power and
// complex multiply/divide within a few ULP (float32/float64 4 ULP,
// float16/bfloat16 1 ULP, complex64 componentwise 4 eps relative to |z|).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <map>
#include <set>
#include <string>

#include "support/conformance.h"

namespace nuvec {
namespace {

namespace cf = conformance;

using BinaryFn = std::function<std::vector<Array>(const Operand&, const Operand&,
                                                  const refs::Case&)>;

const std::map<std::string, BinaryFn>& binary_table() {
  static const std::map<std::string, BinaryFn> table = [] {
    std::map<std::string, BinaryFn> t = {
#define NUVEC_BINARY_ENTRY(name)                                          \
  {#name, [](const Operand& a, const Operand& b, const refs::Case&) {     \
     return std::vector<Array>{ops::name(a, b)};                          \
   }},
        NUVEC_BINARY_OPS(NUVEC_BINARY_ENTRY)
#undef NUVEC_BINARY_ENTRY
    };
    t["divmod"] = [](const Operand& a, const Operand& b, const refs::Case&) {
      return ops::divmod(a, b);
    };
    t["isclose"] = [](const Operand& a, const Operand& b, const refs::Case& c) {
      return std::vector<Array>{
          ops::isclose(a, b, c.param_double("rtol"), c.param_double("atol"),
                       c.param_bool("equal_nan"))};
    };
    t["allclose"] = [](const Operand& a, const Operand& b, const refs::Case& c) {
      return std::vector<Array>{
          ops::allclose(a, b, c.param_double("rtol"), c.param_double("atol"),
                        c.param_bool("equal_nan"))};
    };
    t["array_equal"] = [](const Operand& a, const Operand& b,
                          const refs::Case& c) {
      return std::vector<Array>{
          ops::array_equal(a, b, c.param_bool("equal_nan"))};
    };
    return t;
  }();
  return table;
}

// Float results of these are computed with libm-like math: ULP tolerance.
const std::set<std::string> kMathOps = {"arctan2", "logaddexp", "power"};
// Complex results of these involve several roundings (MLX's formulas).
const std::set<std::string> kComplexInexact = {"multiply", "divide", "power",
                                               "logaddexp"};

cf::Tolerance tolerance_for(const refs::Case& c) {
  bool complex_io = false;
  for (const auto& t : c.inputs) complex_io |= t.dtype == "complex64";
  if (kMathOps.count(c.op)) return cf::Tolerance::ulps(4, 4, 1);
  if (complex_io && kComplexInexact.count(c.op)) return cf::Tolerance::ulps(4, 4, 1);
  return cf::Tolerance::exact();
}

// Float64 references for the math functions (MLX computes float64 power and
// logaddexp at float32 accuracy).
double libm_binary(const std::string& op, double a, double b) {
  if (op == "arctan2") return std::atan2(a, b);
  if (op == "power") return std::pow(a, b);
  if (op == "logaddexp") {
    double hi = std::max(a, b), lo = std::min(a, b);
    if (std::isnan(a) || std::isnan(b)) return a + b;
    if (std::isinf(hi)) return hi;
    return hi + std::log1p(std::exp(lo - hi));
  }
  return NAN;
}

// Shift counts that are negative or at least the width of the (promoted)
// C++ int are undefined behaviour in MLX's kernels (x86 masks the count);
// nuvec defines them (docs/mlx-differences.md), so those values are skipped.
cf::SkipElement shift_skip(const refs::Case& c, std::vector<double> counts) {
  int width = std::max(32, 8 * cf::dtype_from_name(c.outputs.at(0).dtype).size());
  auto shared = std::make_shared<std::vector<double>>(std::move(counts));
  return [shared, width](size_t, size_t i) -> const char* {
    if (i >= shared->size()) return nullptr;
    double y = (*shared)[i];
    return (y < 0 || y >= width)
               ? "value: shift count negative or >= width (UB in MLX)"
               : nullptr;
  };
}

// Integer division by zero is undefined behaviour in MLX's kernels; its
// divmod then disagrees with its own floor_divide and remainder (bool 1 // 0
// gives 1 in divmod, 0 in floor_divide). nuvec's divmod equals its
// floor_divide and remainder, so those values are skipped.
cf::SkipElement divmod_skip(const refs::Case& c, std::vector<double> divisors) {
  DType d = cf::dtype_from_name(c.outputs.at(0).dtype);
  if (is_inexact(d)) return {};
  auto shared = std::make_shared<std::vector<double>>(std::move(divisors));
  return [shared](size_t, size_t i) -> const char* {
    return i < shared->size() && (*shared)[i] == 0 ? "value: integer divmod by zero (UB in MLX)" : nullptr;
  };
}

std::vector<Array> build_binary(const refs::Case& c) {
  auto it = binary_table().find(c.op);
  if (it == binary_table().end()) throw std::runtime_error("no op " + c.op);
  auto in = cf::make_inputs(c);
  if (c.has("scalar")) {
    Operand s = cf::weak_scalar(c, "scalar", "scalar_type");
    if (c.param("scalar_side") == "right") return it->second(in.at(0), s, c);
    return it->second(s, in.at(0), c);
  }
  return it->second(in.at(0), in.at(1), c);
}

// The operands' values as the op sees them (a weak scalar repeated).
std::pair<std::vector<double>, std::vector<double>> operand_values(const refs::Case& c) {
  const auto& shape = c.outputs[0].shape;
  std::vector<double> a = cf::op_values(c.inputs.at(0), shape), b;
  if (c.has("scalar")) {
    double sv = c.param("scalar_type") == "bool" ? double(c.param_bool("scalar"))
                                                 : c.param_double("scalar");
    b.assign(a.size(), sv);
    if (c.param("scalar_side") == "left") std::swap(a, b);
  } else {
    b = cf::op_values(c.inputs.at(1), shape);
  }
  if (a.size() != b.size()) b.assign(a.size(), NAN);
  return {a, b};
}

cf::SkipElement binary_skip(const refs::Case& c) {
  if (c.op == "left_shift" || c.op == "right_shift") return shift_skip(c, operand_values(c).second);
  if (c.op == "divmod") return divmod_skip(c, operand_values(c).second);
  return {};
}

cf::LibmValue binary_libm(const refs::Case& c) {
  if (!kMathOps.count(c.op) || c.outputs[0].dtype == "complex64") return {};
  auto ab = std::make_shared<std::pair<std::vector<double>, std::vector<double>>>(
      operand_values(c));
  return [ab, op = c.op](size_t i) {
    if (i >= ab->first.size()) return double(NAN);
    return libm_binary(op, ab->first[i], ab->second[i]);
  };
}

TEST(ConformanceBinary, MatchesMlx) {
  cf::FileHooks hooks;
  hooks.tolerance = tolerance_for;
  hooks.skip = binary_skip;
  hooks.libm = binary_libm;
  cf::run_file("binary.ref", build_binary, hooks);
}

TEST(ConformancePromotion, MatchesMlx) {
  auto p = refs::load_promotion(refs::ref_path("promotion.ref"));
  ASSERT_FALSE(p.promote.empty());
  int checked = 0, matched = 0;
  for (const auto& [a, b, r] : p.promote) {
    ++checked;
    DType da = cf::dtype_from_name(a), db = cf::dtype_from_name(b);
    DType dr = cf::dtype_from_name(r);
    Array sum = ops::add(ops::zeros({1}, da), ops::zeros({1}, db));
    bool ok = promote_types(da, db) == dr && !sum.is_failed() && sum.dtype() == dr;
    EXPECT_TRUE(ok) << "promote " << a << " " << b << ": want " << r << " got "
                    << promote_types(da, db) << " / add gives "
                    << (sum.is_failed() ? "a failed array" : std::string(dtype_name(sum.dtype())));
    matched += ok;
  }
  for (const auto& [a, kind, r] : p.weak) {
    ++checked;
    DType da = cf::dtype_from_name(a), dr = cf::dtype_from_name(r);
    Array x = ops::zeros({1}, da);
    Operand s = kind == "int" ? Operand(2) : kind == "float" ? Operand(2.5)
                                                             : Operand(true);
    Array r1 = ops::add(x, s), r2 = ops::add(s, x);
    bool ok = !r1.is_failed() && !r2.is_failed() && r1.dtype() == dr &&
              r2.dtype() == dr;
    EXPECT_TRUE(ok) << "weak " << a << " " << kind << ": want " << r << " got "
                    << (r1.is_failed() ? "failed" : std::string(dtype_name(r1.dtype())))
                    << " / "
                    << (r2.is_failed() ? "failed" : std::string(dtype_name(r2.dtype())));
    matched += ok;
  }
  std::printf("[conformance] promotion.ref: %d records, %d matched\n", checked,
              matched);
}

}  // namespace
}  // namespace nuvec
