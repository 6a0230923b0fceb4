// Rule cases of the element-wise primitives: the unary and binary families,
// Select, AsType and DivMod (see rule_cases.h).
#include "support/rule_cases.h"

#include <utility>

#include "random/internal.h"

namespace nuvec::rulecases {

namespace {

using Fn1 = std::function<Array(const Array&)>;
using Fn2 = std::function<Array(const Array&, const Array&)>;

FlatFunction one(Fn1 op) {
  return [op = std::move(op)](const std::vector<Array>& in) {
    return std::vector<Array>{op(in[0])};
  };
}
FlatFunction two(Fn2 op) {
  return [op = std::move(op)](const std::vector<Array>& in) {
    return std::vector<Array>{op(in[0], in[1])};
  };
}

// A 0-d, a 1-D and a 2-D operand (the harness adds transposed and strided
// views of the 1-D and 2-D ones).
RuleCase unary(const Fn1& op, Domain d) {
  return {{probe("0-d", one(op), {{}}, {d}), probe("1-D", one(op), {{5}}, {d}),
           probe("2-D", one(op), {{2, 3}}, {d})}};
}

RuleCase unary_zero(const Fn1& op, Domain d, const std::string& why) {
  RuleCase c = unary(op, d);
  for (auto& p : c.probes) p.zero_grad(why);
  return c;
}

// Equal shapes, both operands broadcast, an array with a 0-d operand, and
// one operand a constant of the trace (the rule then sees only argnum 1).
RuleCase binary(const Fn2& op, Domain a, Domain b, std::mt19937& rng) {
  Array c = draw(a, {2, 3}, rng);
  return {{probe("same shape", two(op), {{2, 3}, {2, 3}}, {a, b}),
           probe("broadcast (3,1) with (1,4)", two(op), {{3, 1}, {1, 4}}, {a, b}),
           probe("with a 0-d operand", two(op), {{4}, {}}, {a, b}),
           probe("constant first operand",
                 one([op, c](const Array& y) { return op(c, y); }), {{2, 3}}, {b})}};
}

RuleCase binary_zero(const Fn2& op, Domain a, Domain b, const std::string& why,
                     std::mt19937& rng) {
  RuleCase c = binary(op, a, b, rng);
  for (auto& p : c.probes) p.zero_grad(why);
  return c;
}

const char* const kPiecewiseConstant = "piecewise constant: the derivative is zero";
const char* const kBoolOut = "bool output: not differentiable";
// Integer-only primitives have no float path: the probe casts its float64
// inputs to int32, and the casts cut the chain, so these primitives' own
// vjp and jvp are never reached (nothing inexact flows into them). What is
// checked: the whole function's zero gradient, and their vmap rules.
const char* const kIntegerOnly =
    "integer-only: the casts to int32 cut the chain before the primitive "
    "(its vjp/jvp cannot be reached); checks the zero gradient and vmap";

Array ints(const Array& x) { return x.astype(int32); }

// z = x + i y in complex64, from two float64 inputs.
Array complex_of(const Array& x, const Array& y) {
  return x.astype(complex64) + y.astype(complex64) * array(complex64_t(0.0f, 1.0f));
}

}  // namespace

// The unary family: one line per primitive, its op and its domain.
#define UNARY(Name, op, domain)                                    \
  RuleCase Case<PrimitiveId::Name>::make(std::mt19937&) {          \
    return unary([](const Array& x) { return ops::op(x); }, domain); \
  }
UNARY(Abs, abs, dom::nonzero)
UNARY(Negative, negative, dom::real)
UNARY(Exp, exp, dom::real)
UNARY(Expm1, expm1, dom::real)
UNARY(Log, log, dom::positive)
UNARY(Log1p, log1p, dom::positive)
UNARY(Log2, log2, dom::positive)
UNARY(Log10, log10, dom::positive)
UNARY(Sqrt, sqrt, dom::positive)
UNARY(Rsqrt, rsqrt, dom::positive)
UNARY(Square, square, dom::real)
UNARY(Reciprocal, reciprocal, dom::nonzero)
UNARY(Sin, sin, dom::real)
UNARY(Cos, cos, dom::real)
UNARY(Tan, tan, dom::unit)
UNARY(ArcSin, arcsin, dom::unit)
UNARY(ArcCos, arccos, dom::unit)
UNARY(ArcTan, arctan, dom::real)
UNARY(Sinh, sinh, dom::real)
UNARY(Cosh, cosh, dom::real)
UNARY(Tanh, tanh, dom::real)
UNARY(ArcSinh, arcsinh, dom::real)
UNARY(ArcCosh, arccosh, dom::above_one)
UNARY(ArcTanh, arctanh, dom::unit)
UNARY(Sigmoid, sigmoid, dom::real)
UNARY(Erf, erf, dom::real)
UNARY(ErfInv, erfinv, dom::unit)
#undef UNARY

// MLX's float32 formulas that only the random distributions use
// (src/random/internal.h); float64 inputs compute in float32.
#define MLX_UNARY(Name, fn, domain)                                           \
  RuleCase Case<PrimitiveId::Name>::make(std::mt19937&) {                     \
    RuleCase c = unary(                                                       \
        [](const Array& x) { return random::detail::fn(x, {}, NUVEC_LOC); }, \
        domain);                                                              \
    for (auto& p : c.probes) p.single_precision();                            \
    return c;                                                                 \
  }
MLX_UNARY(MlxExp, mlx_exp, dom::real)
MLX_UNARY(MlxErf, mlx_erf, dom::real)
MLX_UNARY(MlxErfInv, mlx_erfinv, dom::unit)
#undef MLX_UNARY

#define UNARY_ZERO(Name, op, domain, why)                                    \
  RuleCase Case<PrimitiveId::Name>::make(std::mt19937&) {                    \
    return unary_zero([](const Array& x) { return ops::op(x); }, domain, why); \
  }
UNARY_ZERO(Sign, sign, dom::nonzero, kPiecewiseConstant)
UNARY_ZERO(Floor, floor, dom::fractional, kPiecewiseConstant)
UNARY_ZERO(Ceil, ceil, dom::fractional, kPiecewiseConstant)
UNARY_ZERO(LogicalNot, logical_not, dom::fractional, kBoolOut)
UNARY_ZERO(IsNan, isnan, dom::real, kBoolOut)
UNARY_ZERO(IsInf, isinf, dom::real, kBoolOut)
UNARY_ZERO(IsPosInf, isposinf, dom::real, kBoolOut)
UNARY_ZERO(IsNegInf, isneginf, dom::real, kBoolOut)
UNARY_ZERO(IsFinite, isfinite, dom::real, kBoolOut)
#undef UNARY_ZERO

RuleCase Case<PrimitiveId::Round>::make(std::mt19937&) {
  RuleCase c = unary_zero([](const Array& x) { return ops::round(x); }, dom::fractional,
                          kPiecewiseConstant);
  c.probes.push_back(probe("2 decimals", one([](const Array& x) { return ops::round(x, 2); }),
                           {{2, 3}}, {dom::fractional})
                         .zero_grad(kPiecewiseConstant));
  return c;
}

RuleCase Case<PrimitiveId::BitwiseInvert>::make(std::mt19937&) {
  return unary_zero([](const Array& x) { return ops::bitwise_invert(ints(x)); }, dom::fractional,
                    kIntegerOnly);
}

RuleCase Case<PrimitiveId::Conjugate>::make(std::mt19937&) {
  // Real operands build Conjugate too (MLX's conjugate keeps real dtypes);
  // the complex probe goes through a function that is not holomorphic.
  RuleCase c = unary([](const Array& x) { return ops::conjugate(x); }, dom::real);
  c.probes.push_back(
      probe("complex: real(conj(z) * (2 + i))",
            two([](const Array& x, const Array& y) {
              Array w = ops::conjugate(complex_of(x, y)) * array(complex64_t(2.0f, 1.0f));
              return ops::real(w).astype(float64);
            }),
            {{2, 3}, {2, 3}})
          .single_precision());
  return c;
}

// Real and Imag have no float64 path (complex64 in, float32 out): the probes
// build z = x + i y from float64 inputs and compare in single precision.
RuleCase Case<PrimitiveId::Real>::make(std::mt19937&) {
  return {{probe("real(z)", two([](const Array& x, const Array& y) {
                   return ops::real(complex_of(x, y)).astype(float64);
                 }),
                 {{2, 3}, {2, 3}})
               .single_precision(),
           probe("real(z * z)", two([](const Array& x, const Array& y) {
                   Array z = complex_of(x, y);
                   return ops::real(z * z).astype(float64);
                 }),
                 {{4}, {4}})
               .single_precision()}};
}

RuleCase Case<PrimitiveId::Imag>::make(std::mt19937&) {
  return {{probe("imag(z)", two([](const Array& x, const Array& y) {
                   return ops::imag(complex_of(x, y)).astype(float64);
                 }),
                 {{2, 3}, {2, 3}})
               .single_precision(),
           probe("imag(z * z)", two([](const Array& x, const Array& y) {
                   Array z = complex_of(x, y);
                   return ops::imag(z * z).astype(float64);
                 }),
                 {{4}, {4}})
               .single_precision()}};
}

// The binary family: one line per primitive, its op and its domains.
#define BINARY(Name, op, da, db)                                                        \
  RuleCase Case<PrimitiveId::Name>::make(std::mt19937& rng) {                           \
    return binary([](const Array& a, const Array& b) { return ops::op(a, b); }, da, db, rng); \
  }
BINARY(Add, add, dom::real, dom::real)
BINARY(Subtract, subtract, dom::real, dom::real)
BINARY(Multiply, multiply, dom::real, dom::real)
BINARY(Divide, divide, dom::real, dom::nonzero)
BINARY(Remainder, remainder, dom::real, dom::positive)
BINARY(Power, power, dom::positive, dom::real)
BINARY(Maximum, maximum, dom::distinct, dom::distinct)
BINARY(Minimum, minimum, dom::distinct, dom::distinct)
BINARY(ArcTan2, arctan2, dom::nonzero, dom::nonzero)
BINARY(LogAddExp, logaddexp, dom::real, dom::real)
#undef BINARY

#define BINARY_ZERO(Name, op, da, db, why)                                                   \
  RuleCase Case<PrimitiveId::Name>::make(std::mt19937& rng) {                                \
    return binary_zero([](const Array& a, const Array& b) { return ops::op(a, b); }, da, db, \
                       why, rng);                                                            \
  }
BINARY_ZERO(FloorDivide, floor_divide, dom::real, dom::positive, kPiecewiseConstant)
BINARY_ZERO(Equal, equal, dom::fractional, dom::fractional, kBoolOut)
BINARY_ZERO(NotEqual, not_equal, dom::fractional, dom::fractional, kBoolOut)
BINARY_ZERO(Less, less, dom::real, dom::real, kBoolOut)
BINARY_ZERO(LessEqual, less_equal, dom::real, dom::real, kBoolOut)
BINARY_ZERO(Greater, greater, dom::real, dom::real, kBoolOut)
BINARY_ZERO(GreaterEqual, greater_equal, dom::real, dom::real, kBoolOut)
BINARY_ZERO(LogicalAnd, logical_and, dom::fractional, dom::fractional, kBoolOut)
BINARY_ZERO(LogicalOr, logical_or, dom::fractional, dom::fractional, kBoolOut)
#undef BINARY_ZERO

#define BINARY_INT(Name, op, db)                                                        \
  RuleCase Case<PrimitiveId::Name>::make(std::mt19937& rng) {                           \
    return binary_zero([](const Array& a, const Array& b) { return ops::op(ints(a), ints(b)); }, \
                       dom::fractional, db, kIntegerOnly, rng);                         \
  }
BINARY_INT(BitwiseAnd, bitwise_and, dom::fractional)
BINARY_INT(BitwiseOr, bitwise_or, dom::fractional)
BINARY_INT(BitwiseXor, bitwise_xor, dom::fractional)
// Shift counts in [-8, 8): negative counts are defined (they give 0 or -1).
BINARY_INT(LeftShift, left_shift, dom::index(8))
BINARY_INT(RightShift, right_shift, dom::index(8))
#undef BINARY_INT

RuleCase Case<PrimitiveId::Select>::make(std::mt19937& rng) {
  // The condition comes from a float input through a comparison (whose
  // zero derivative the finite differences see too), or is a constant.
  auto select = [](const std::vector<Array>& in) {
    return std::vector<Array>{ops::where(in[0] > 0.0, in[1], in[2])};
  };
  Array cond = draw(dom::real, {2, 3}, rng) > 0.0;
  return {{probe("same shape", select, {{2, 3}, {2, 3}, {2, 3}},
                 {dom::nonzero, dom::real, dom::real}),
           probe("broadcast (3,1), (1,4), 0-d", select, {{3, 1}, {1, 4}, {}},
                 {dom::nonzero, dom::real, dom::real}),
           probe("constant condition",
                 two([cond](const Array& x, const Array& y) { return ops::where(cond, x, y); }),
                 {{2, 3}, {2, 3}})}};
}

RuleCase Case<PrimitiveId::AsType>::make(std::mt19937&) {
  return {{probe("to float32", one([](const Array& x) { return x.astype(float32); }), {{2, 3}})
               .single_precision(),
           probe("to complex64 and back", one([](const Array& x) {
                   return x.astype(complex64).astype(float64);
                 }),
                 {{4}})
               .single_precision(),
           probe("to int32", one(ints), {{2, 3}}, {dom::fractional})
               .zero_grad("integer output: not differentiable"),
           probe("to bool", one([](const Array& x) { return x.astype(bool_); }), {{5}},
                 {dom::fractional})
               .zero_grad(kBoolOut)}};
}

RuleCase Case<PrimitiveId::DivMod>::make(std::mt19937&) {
  // The quotient is piecewise constant (its finite difference is zero);
  // the remainder is differentiable.
  auto divmod = [](const std::vector<Array>& in) {
    return ops::divmod(in[0], in[1]);
  };
  return {{probe("same shape", divmod, {{2, 3}, {2, 3}}, {dom::real, dom::positive}),
           probe("broadcast (3,1) with (1,4)", divmod, {{3, 1}, {1, 4}},
                 {dom::real, dom::positive})}};
}

}  // namespace nuvec::rulecases
