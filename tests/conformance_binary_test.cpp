// Conformance: element-wise binary operations and type promotion replayed
// from tests/refs/binary.ref and promotion.ref (recorded from MLX).
// Arithmetic, comparisons, logical/bitwise ops, shifts, min/max and integer
// division/power compare bit for bit; arctan2, logaddexp, float power and
// complex multiply/divide within a few ULP (float32/float64 4 ULP,
// float16/bfloat16 1 ULP, complex64 componentwise 4 eps relative to |z|).
#include <gtest/gtest.h>

#include <functional>
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
      auto [q, r] = ops::divmod(a, b);
      return std::vector<Array>{q, r};
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

// Cases outside tolerance in math functions owned elsewhere (reported).
const cf::ExpectedFailures kExpectedFailures = {};

cf::Tolerance tolerance_for(const refs::Case& c) {
  bool complex_io = false;
  for (const auto& t : c.inputs) complex_io |= t.dtype == "complex64";
  if (kMathOps.count(c.op)) return cf::Tolerance::ulps(4, 4, 1);
  if (complex_io && kComplexInexact.count(c.op)) return cf::Tolerance::ulps(4, 4, 1);
  return cf::Tolerance::exact();
}

TEST(ConformanceBinary, MatchesMlx) {
  auto cases = cf::load_cases("binary.ref");
  ASSERT_FALSE(cases.empty());
  cf::Tally tally;
  tally.file = "binary.ref";
  for (const auto& c : cases) {
    auto build = [&]() -> std::vector<Array> {
      auto it = binary_table().find(c.op);
      if (it == binary_table().end()) throw std::runtime_error("no op " + c.op);
      auto in = cf::make_inputs(c);
      if (c.has("scalar")) {
        Operand s = cf::weak_scalar(c, "scalar", "scalar_type");
        if (c.param("scalar_side") == "right") return it->second(in.at(0), s, c);
        return it->second(s, in.at(0), c);
      }
      return it->second(in.at(0), in.at(1), c);
    };
    cf::run_case(c, build, tolerance_for(c), tally, kExpectedFailures);
  }
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
