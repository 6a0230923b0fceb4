// The registry-wide conformance cases of the transform rules (issue 5): for
// every primitive of the registry, how to exercise it through public ops.
// tests/transforms_rules_test.cpp builds its table by expanding the registry
// lists into Case<PrimitiveId::Name>::make, so a primitive added to the
// registry without a case below fails the build of the tests: the harness
// cannot be skipped.
#pragma once

#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nuvec/compile.h>
#include <nuvec/nuvec.h>

namespace nuvec::rulecases {

/// How the float64 values of one input are drawn: away from the points
/// where the function is not differentiable (or not defined) by much more
/// than the finite-difference step.
struct Domain {
  enum class Kind {
    real,        // uniform in [-2, 2]
    nonzero,     // |x| in [0.3, 2], either sign: kinks of abs, divisors
    positive,    // [0.3, 2]: log, sqrt, power's base
    with_zero,   // nonzero, except element 0 which is exactly 0: products
    unit,        // [-0.8, 0.8]: arcsin, arctanh, erfinv
    above_one,   // [1.3, 3]: arccosh
    fractional,  // k + f, k in [-3, 2], f in [0.2, 0.8]: floor's jumps
    distinct,    // all distinct-domain values of a draw >= 0.15 apart: max, sort
    matrix,      // per trailing matrix: diagonal 1.5 * (n - i) plus noise
                 // of at most 0.1: well-conditioned, distinct singular
                 // values, positive definite with distinct eigenvalues
                 // once symmetrised
    index,       // integers k in [-bound, bound) stored as k +- 0.5, so
                 // that a cast to int32 gives k on both sides of a
                 // finite-difference step
    key,         // integers in [0, 2^32) stored as k + 0.5: random keys
  };
  Kind kind = Kind::real;
  int bound = 0;  // index only
};

namespace dom {
inline const Domain real{Domain::Kind::real};
inline const Domain nonzero{Domain::Kind::nonzero};
inline const Domain positive{Domain::Kind::positive};
inline const Domain with_zero{Domain::Kind::with_zero};
inline const Domain unit{Domain::Kind::unit};
inline const Domain above_one{Domain::Kind::above_one};
inline const Domain fractional{Domain::Kind::fractional};
inline const Domain distinct{Domain::Kind::distinct};
inline const Domain matrix{Domain::Kind::matrix};
inline const Domain key{Domain::Kind::key};
inline Domain index(int bound) { return {Domain::Kind::index, bound}; }
}  // namespace dom

/// What the derivative check expects of a probe.
enum class Grad {
  // vjp and jvp agree with central differences and with each other.
  finite_difference,
  // Not differentiable (integer or bool outputs, piecewise constant,
  // stop_gradient): vjp and jvp give exact zeros of the right shapes.
  zero,
};

/// One way of exercising a primitive: a function of float64 inputs that
/// builds it (the harness checks that it does), the inputs' shapes and
/// domains, and what to expect of it.
struct Probe {
  std::string label;            // names the probe in failure messages
  FlatFunction f;
  std::vector<Shape> shapes;    // one per input
  std::vector<Domain> domains;  // one per input, or one for all
  Grad grad = Grad::finite_difference;
  bool vmap = true;             // vmap against a loop over the batch
  std::string note;             // why the derivative is zero, or what the
                                // probe cannot reach (printed on failure)
  double step = 1e-6;           // central-difference step
  double tol = 1e-6;            // allowed |jvp - fd| / (1 + max |fd|)
  double dot_tol = 1e-9;        // the dot-product identity's, relative to
                                // the sums of the absolute terms

  /// Marks the probe non-differentiable, saying why.
  Probe& zero_grad(std::string why) {
    grad = Grad::zero;
    note = std::move(why);
    return *this;
  }
  /// Paths through float32 or complex64 (casts, real/imag): a coarser
  /// step and tolerance.
  Probe& single_precision() {
    step = 1e-3;
    tol = 2e-3;
    dot_tol = 1e-5;
    return *this;
  }
  Probe& with_note(std::string n) {
    note = std::move(n);
    return *this;
  }
};

Probe probe(std::string label, FlatFunction f, std::vector<Shape> shapes,
            std::vector<Domain> domains = {dom::real});

/// A contiguous float64 array of `shape` drawn from `d` (for constants of
/// a probe; the harness draws the inputs).
Array draw(const Domain& d, const Shape& shape, std::mt19937& rng);

/// The probes of one primitive; make() may draw parameters (axes, kth)
/// from the generator.
struct RuleCase {
  RuleCase(std::vector<Probe> p, std::string why_unreachable = {})
      : probes(std::move(p)), unreachable(std::move(why_unreachable)) {}
  std::vector<Probe> probes;
  /// Set for a primitive that no graph a transform sees can hold (it only
  /// exists inside another mechanism): why. Its probes then exercise the
  /// functions around it, and must not build it.
  std::string unreachable;
  /// Set for a primitive without transform rules (as MLX's custom
  /// kernels): text that the error of each transform must contain (the
  /// name it gives). The harness then checks that vjp, jvp and vmap of its
  /// probes throw a transform error with it, and evaluates nothing (the
  /// primitive may need a device the machine lacks).
  std::string no_rules;
};

/// Deliberately never defined: every primitive has its own specialization,
/// and the table names Case<Id>::make for every Id of the registry.
template <PrimitiveId Id>
struct Case;

#define NUVEC_RULE_CASE(Name)                 \
  template <>                                 \
  struct Case<PrimitiveId::Name> {            \
    static RuleCase make(std::mt19937& rng);  \
  };

// The harness's own list. It is checked against the registry by the build
// (an entry missing here is an incomplete type in the table; one declared
// here and not defined is an undefined symbol). Definitions:
// rule_cases_elementwise.cpp, rule_cases_structural.cpp and
// rule_cases_fast.cpp.
NUVEC_RULE_CASE(Abs)
NUVEC_RULE_CASE(Negative)
NUVEC_RULE_CASE(Sign)
NUVEC_RULE_CASE(Exp)
NUVEC_RULE_CASE(Expm1)
NUVEC_RULE_CASE(Log)
NUVEC_RULE_CASE(Log1p)
NUVEC_RULE_CASE(Log2)
NUVEC_RULE_CASE(Log10)
NUVEC_RULE_CASE(Sqrt)
NUVEC_RULE_CASE(Rsqrt)
NUVEC_RULE_CASE(Square)
NUVEC_RULE_CASE(Reciprocal)
NUVEC_RULE_CASE(Sin)
NUVEC_RULE_CASE(Cos)
NUVEC_RULE_CASE(Tan)
NUVEC_RULE_CASE(ArcSin)
NUVEC_RULE_CASE(ArcCos)
NUVEC_RULE_CASE(ArcTan)
NUVEC_RULE_CASE(Sinh)
NUVEC_RULE_CASE(Cosh)
NUVEC_RULE_CASE(Tanh)
NUVEC_RULE_CASE(ArcSinh)
NUVEC_RULE_CASE(ArcCosh)
NUVEC_RULE_CASE(ArcTanh)
NUVEC_RULE_CASE(Sigmoid)
NUVEC_RULE_CASE(Erf)
NUVEC_RULE_CASE(ErfInv)
NUVEC_RULE_CASE(Floor)
NUVEC_RULE_CASE(Ceil)
NUVEC_RULE_CASE(Round)
NUVEC_RULE_CASE(LogicalNot)
NUVEC_RULE_CASE(BitwiseInvert)
NUVEC_RULE_CASE(IsNan)
NUVEC_RULE_CASE(IsInf)
NUVEC_RULE_CASE(IsPosInf)
NUVEC_RULE_CASE(IsNegInf)
NUVEC_RULE_CASE(IsFinite)
NUVEC_RULE_CASE(Conjugate)
NUVEC_RULE_CASE(Real)
NUVEC_RULE_CASE(Imag)
NUVEC_RULE_CASE(MlxExp)
NUVEC_RULE_CASE(MlxErf)
NUVEC_RULE_CASE(MlxErfInv)
NUVEC_RULE_CASE(Add)
NUVEC_RULE_CASE(Subtract)
NUVEC_RULE_CASE(Multiply)
NUVEC_RULE_CASE(Divide)
NUVEC_RULE_CASE(FloorDivide)
NUVEC_RULE_CASE(Remainder)
NUVEC_RULE_CASE(Power)
NUVEC_RULE_CASE(Maximum)
NUVEC_RULE_CASE(Minimum)
NUVEC_RULE_CASE(Equal)
NUVEC_RULE_CASE(NotEqual)
NUVEC_RULE_CASE(Less)
NUVEC_RULE_CASE(LessEqual)
NUVEC_RULE_CASE(Greater)
NUVEC_RULE_CASE(GreaterEqual)
NUVEC_RULE_CASE(LogicalAnd)
NUVEC_RULE_CASE(LogicalOr)
NUVEC_RULE_CASE(BitwiseAnd)
NUVEC_RULE_CASE(BitwiseOr)
NUVEC_RULE_CASE(BitwiseXor)
NUVEC_RULE_CASE(LeftShift)
NUVEC_RULE_CASE(RightShift)
NUVEC_RULE_CASE(ArcTan2)
NUVEC_RULE_CASE(LogAddExp)
NUVEC_RULE_CASE(Select)
NUVEC_RULE_CASE(AsType)
NUVEC_RULE_CASE(DivMod)
NUVEC_RULE_CASE(BitCast)
NUVEC_RULE_CASE(Copy)
NUVEC_RULE_CASE(StopGradient)
NUVEC_RULE_CASE(Reshape)
NUVEC_RULE_CASE(Transpose)
NUVEC_RULE_CASE(Broadcast)
NUVEC_RULE_CASE(Slice)
NUVEC_RULE_CASE(Reduce)
NUVEC_RULE_CASE(ArgReduce)
NUVEC_RULE_CASE(NumberOf)
NUVEC_RULE_CASE(Matmul)
NUVEC_RULE_CASE(AddMM)
NUVEC_RULE_CASE(Arange)
NUVEC_RULE_CASE(Take)
NUVEC_RULE_CASE(Scatter)
NUVEC_RULE_CASE(Linalg)
NUVEC_RULE_CASE(RandomBits)
NUVEC_RULE_CASE(Depends)
NUVEC_RULE_CASE(Sort)
NUVEC_RULE_CASE(ArgSort)
NUVEC_RULE_CASE(Partition)
NUVEC_RULE_CASE(ArgPartition)
NUVEC_RULE_CASE(Scan)
NUVEC_RULE_CASE(Concatenate)
NUVEC_RULE_CASE(Im2Col)
NUVEC_RULE_CASE(Custom)
NUVEC_RULE_CASE(CudaKernel)
NUVEC_RULE_CASE(RMSNorm)
NUVEC_RULE_CASE(LayerNorm)
NUVEC_RULE_CASE(AddRMSNorm)
NUVEC_RULE_CASE(RoPE)
NUVEC_RULE_CASE(Softmax)
NUVEC_RULE_CASE(LogSumExp)
NUVEC_RULE_CASE(CrossEntropy)
NUVEC_RULE_CASE(Attention)
NUVEC_RULE_CASE(CrossEntropyGrad)
NUVEC_RULE_CASE(AttentionGrad)
NUVEC_RULE_CASE(Placeholder)
NUVEC_RULE_CASE(Fused)
NUVEC_RULE_CASE(FusedReduce)
NUVEC_RULE_CASE(Quantize)
NUVEC_RULE_CASE(Dequantize)
NUVEC_RULE_CASE(QuantizedMatmul)
NUVEC_RULE_CASE(GatherMM)
NUVEC_RULE_CASE(GatherQMM)
NUVEC_RULE_CASE(Collective)
#undef NUVEC_RULE_CASE

}  // namespace nuvec::rulecases
