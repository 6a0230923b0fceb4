// The cross-backend harness over the primitive registry: one entry per
// PrimitiveId (expanded from the registry's X-macros, so a new primitive
// without an entry here does not compile), each running its op through the
// public API on random inputs of several layouts (dense, transposed,
// broadcast, sliced with a step) and dtypes, once on the CPU stream and
// once on the GPU, and comparing: bit for bit for element-wise, integer,
// data-movement and sorting ops; within a tolerance for floating
// reductions, matmul, convolutions and scans (another order of additions);
// the partition property for Partition/ArgPartition. A missing GPU kernel
// fails its entry. Skipped where no GPU is present (CI). The element-wise,
// copy and view checks are here, the others in support/gpu_ops_cases.cpp.
#include "support/gpu_ops.h"

#include "random/internal.h"

#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <vector>

namespace nuvec::testing::gpu_ops {

// ---- element-wise ----

void unary_cases(const char* op, Array (*f)(const Array&, StreamOrDevice)) {
  for (DType dt : kDtypes) {
    auto xs = layouts(dt, 1);
    xs.push_back({"odd", values(dt, {3, 5}, 5)});
    xs.push_back({"0-d", values(dt, {}, 6)});
    for (const auto& in : xs)
      expect_same([&](StreamOrDevice s) { return f(in.x, s); },
                  std::string(op) + " " + name(dt) + " " + in.layout);
  }
}

void binary_cases(const char* op,
                  Array (*f)(const Array&, const Array&, StreamOrDevice)) {
  for (DType dt : kDtypes) {
    auto xs = layouts(dt, 2), ys = layouts(dt, 12);
    for (size_t i = 0; i < xs.size(); ++i)
      expect_same(
          [&](StreamOrDevice s) {
            return f(xs[i].x, ys[(i + 1) % ys.size()].x, s);
          },
          std::string(op) + " " + name(dt) + " " + xs[i].layout);
    Array odd_a = values(dt, {3, 5}, 7), odd_b = values(dt, {3, 5}, 8),
          scalar = values(dt, {}, 9);
    expect_same([&](StreamOrDevice s) { return f(odd_a, odd_b, s); },
                std::string(op) + " " + name(dt) + " odd");
    expect_same([&](StreamOrDevice s) { return f(xs[0].x, scalar, s); },
                std::string(op) + " " + name(dt) + " 0-d");
  }
}

#define NUVEC_UNARY_ENTRY(Name, expr)                                  \
  void check_##Name() {                                                \
    unary_cases(#Name, [](const Array& x, StreamOrDevice s) -> Array { \
      return expr;                                                     \
    });                                                                \
  }
NUVEC_UNARY_ENTRY(Abs, ops::abs(x, s))
NUVEC_UNARY_ENTRY(Negative, ops::negative(x, s))
NUVEC_UNARY_ENTRY(Sign, ops::sign(x, s))
NUVEC_UNARY_ENTRY(Exp, ops::exp(x, s))
NUVEC_UNARY_ENTRY(Expm1, ops::expm1(x, s))
NUVEC_UNARY_ENTRY(Log, ops::log(x, s))
NUVEC_UNARY_ENTRY(Log1p, ops::log1p(x, s))
NUVEC_UNARY_ENTRY(Log2, ops::log2(x, s))
NUVEC_UNARY_ENTRY(Log10, ops::log10(x, s))
NUVEC_UNARY_ENTRY(Sqrt, ops::sqrt(x, s))
NUVEC_UNARY_ENTRY(Rsqrt, ops::rsqrt(x, s))
NUVEC_UNARY_ENTRY(Square, ops::square(x, s))
NUVEC_UNARY_ENTRY(Reciprocal, ops::reciprocal(x, s))
NUVEC_UNARY_ENTRY(Sin, ops::sin(x, s))
NUVEC_UNARY_ENTRY(Cos, ops::cos(x, s))
NUVEC_UNARY_ENTRY(Tan, ops::tan(x, s))
NUVEC_UNARY_ENTRY(ArcSin, ops::arcsin(x, s))
NUVEC_UNARY_ENTRY(ArcCos, ops::arccos(x, s))
NUVEC_UNARY_ENTRY(ArcTan, ops::arctan(x, s))
NUVEC_UNARY_ENTRY(Sinh, ops::sinh(x, s))
NUVEC_UNARY_ENTRY(Cosh, ops::cosh(x, s))
NUVEC_UNARY_ENTRY(Tanh, ops::tanh(x, s))
NUVEC_UNARY_ENTRY(ArcSinh, ops::arcsinh(x, s))
NUVEC_UNARY_ENTRY(ArcCosh, ops::arccosh(x, s))
NUVEC_UNARY_ENTRY(ArcTanh, ops::arctanh(x, s))
NUVEC_UNARY_ENTRY(Sigmoid, ops::sigmoid(x, s))
NUVEC_UNARY_ENTRY(Erf, ops::erf(x, s))
NUVEC_UNARY_ENTRY(ErfInv, ops::erfinv(x, s))
NUVEC_UNARY_ENTRY(Floor, ops::floor(x, s))
NUVEC_UNARY_ENTRY(Ceil, ops::ceil(x, s))
NUVEC_UNARY_ENTRY(Round, ops::round(x, 0, s))
NUVEC_UNARY_ENTRY(LogicalNot, ops::logical_not(x, s))
NUVEC_UNARY_ENTRY(BitwiseInvert, ops::bitwise_invert(x, s))
NUVEC_UNARY_ENTRY(IsNan, ops::isnan(x, s))
NUVEC_UNARY_ENTRY(IsInf, ops::isinf(x, s))
NUVEC_UNARY_ENTRY(IsPosInf, ops::isposinf(x, s))
NUVEC_UNARY_ENTRY(IsNegInf, ops::isneginf(x, s))
NUVEC_UNARY_ENTRY(IsFinite, ops::isfinite(x, s))
NUVEC_UNARY_ENTRY(Conjugate, ops::conjugate(x, s))
NUVEC_UNARY_ENTRY(Real, ops::real(x, s))
NUVEC_UNARY_ENTRY(Imag, ops::imag(x, s))
NUVEC_UNARY_ENTRY(MlxExp, random::detail::mlx_exp(x, s, NUVEC_LOC))
NUVEC_UNARY_ENTRY(MlxErf, random::detail::mlx_erf(x, s, NUVEC_LOC))
NUVEC_UNARY_ENTRY(MlxErfInv, random::detail::mlx_erfinv(x, s, NUVEC_LOC))
#undef NUVEC_UNARY_ENTRY

#define NUVEC_BINARY_ENTRY(Name, op)                                           \
  void check_##Name() {                                                        \
    binary_cases(#Name, [](const Array& a, const Array& b, StreamOrDevice s) { \
      return ops::op(a, b, s);                                                 \
    });                                                                        \
  }
NUVEC_BINARY_ENTRY(Add, add)
NUVEC_BINARY_ENTRY(Subtract, subtract)
NUVEC_BINARY_ENTRY(Multiply, multiply)
NUVEC_BINARY_ENTRY(Divide, divide)
NUVEC_BINARY_ENTRY(FloorDivide, floor_divide)
NUVEC_BINARY_ENTRY(Remainder, remainder)
NUVEC_BINARY_ENTRY(Power, power)
NUVEC_BINARY_ENTRY(Maximum, maximum)
NUVEC_BINARY_ENTRY(Minimum, minimum)
NUVEC_BINARY_ENTRY(Equal, equal)
NUVEC_BINARY_ENTRY(NotEqual, not_equal)
NUVEC_BINARY_ENTRY(Less, less)
NUVEC_BINARY_ENTRY(LessEqual, less_equal)
NUVEC_BINARY_ENTRY(Greater, greater)
NUVEC_BINARY_ENTRY(GreaterEqual, greater_equal)
NUVEC_BINARY_ENTRY(LogicalAnd, logical_and)
NUVEC_BINARY_ENTRY(LogicalOr, logical_or)
NUVEC_BINARY_ENTRY(BitwiseAnd, bitwise_and)
NUVEC_BINARY_ENTRY(BitwiseOr, bitwise_or)
NUVEC_BINARY_ENTRY(BitwiseXor, bitwise_xor)
NUVEC_BINARY_ENTRY(LeftShift, left_shift)
NUVEC_BINARY_ENTRY(RightShift, right_shift)
NUVEC_BINARY_ENTRY(ArcTan2, arctan2)
NUVEC_BINARY_ENTRY(LogAddExp, logaddexp)
#undef NUVEC_BINARY_ENTRY

void check_Select() {
  for (DType dt : kDtypes) {
    auto c = layouts(bool_, 20), xs = layouts(dt, 21), ys = layouts(dt, 22);
    for (size_t i = 0; i < xs.size(); ++i)
      expect_same(
          [&](StreamOrDevice s) {
            return ops::where(c[(i + 2) % 4].x, xs[i].x, ys[(i + 1) % 4].x, s);
          },
          "where " + name(dt) + " " + xs[i].layout);
  }
}

void check_AsType() {
  for (DType from : kDtypes) {
    auto xs = layouts(from, 23);
    for (DType to : kDtypes)
      for (const auto& in : {xs[0], xs[1], xs[3]})
        expect_same(
            [&](StreamOrDevice s) { return ops::astype(in.x, to, s); },
            "astype " + name(from) + " -> " + name(to) + " " + in.layout);
  }
}

void check_DivMod() {
  for (DType dt : kDtypes) {
    auto xs = layouts(dt, 24), ys = layouts(dt, 25);
    for (size_t i = 0; i < xs.size(); ++i) {
      const Array &a = xs[i].x, &b = ys[(i + 1) % 4].x;
      std::string w = "divmod " + name(dt) + " " + xs[i].layout;
      expect_same([&](StreamOrDevice s) { return ops::divmod(a, b, s)[0]; },
                  w + " quotient");
      expect_same([&](StreamOrDevice s) { return ops::divmod(a, b, s)[1]; },
                  w + " remainder");
    }
  }
}

// ---- copies and views ----

void check_BitCast() {
  for (DType from : kDtypes)
    for (const auto& in : layouts(from, 26))
      for (DType to :
           {uint8, float16, int16, float32, uint32, float64, int64, complex64})
        expect_same([&](StreamOrDevice s) { return ops::view(in.x, to, s); },
                    "view " + name(from) + " -> " + name(to) + " " + in.layout);
}

void check_Copy() {
  for (DType dt : kDtypes)
    for (const auto& in : layouts(dt, 27))
      expect_same([&](StreamOrDevice s) { return ops::copy(in.x, s); },
                  "copy " + name(dt) + " " + in.layout);
}

void check_StopGradient() {
  for (DType dt : {float32, int8, complex64})
    for (const auto& in : layouts(dt, 28))
      expect_same([&](StreamOrDevice s) { return ops::stop_gradient(in.x, s); },
                  "stop_gradient " + name(dt) + " " + in.layout);
}

void check_Reshape() {
  for (DType dt : {float32, uint8, float16, float64})
    for (const auto& in : layouts(dt, 29)) {
      expect_same(
          [&](StreamOrDevice s) {
            return ops::reshape(in.x, {32, 6}, s);
          },
          "reshape " + name(dt) + " " + in.layout);
      expect_same([&](StreamOrDevice s) { return ops::reshape(in.x, {-1}, s); },
                  "flatten " + name(dt) + " " + in.layout);
    }
}

void check_Transpose() {
  for (DType dt : {float32, int16, bool_})
    for (const auto& in : layouts(dt, 30)) {
      expect_same([&](StreamOrDevice s) { return ops::transpose(in.x, s); },
                  "transpose " + name(dt) + " " + in.layout);
      expect_same(
          [&](StreamOrDevice s) {
            return ops::copy(ops::transpose(in.x, s), s);
          },
          "copy of transpose " + name(dt) + " " + in.layout);
    }
}

void check_Broadcast() {
  for (DType dt : {float32, int64, bfloat16})
    for (const auto& in : layouts(dt, 31))
      expect_same(
          [&](StreamOrDevice s) {
            return ops::copy(ops::broadcast_to(in.x, {3, 6, 32}, s), s);
          },
          "broadcast_to " + name(dt) + " " + in.layout);
}

void check_Slice() {
  for (DType dt : {float32, uint16, complex64})
    for (const auto& in : layouts(dt, 32)) {
      expect_same(
          [&](StreamOrDevice s) {
            return ops::slice(in.x, {5, 30}, {0, 0}, {-2, -3}, s);
          },
          "slice backwards " + name(dt) + " " + in.layout);
      expect_same(
          [&](StreamOrDevice s) {
            return ops::copy(ops::slice(in.x, {1, 2}, {6, 31}, {2, 5}, s), s);
          },
          "copy of slice " + name(dt) + " " + in.layout);
    }
}

void check_Depends() {
  for (DType dt : {float32, int32})
    for (const auto& in : layouts(dt, 33)) {
      Array other = values(dt, {4}, 34);
      expect_same(
          [&](StreamOrDevice s) {
            return on(s, [&] { return ops::depends({in.x}, {other})[0]; });
          },
          "depends " + name(dt) + " " + in.layout);
      expect_same(
          [&](StreamOrDevice s) {
            return on(s, [&] {
              return ops::depends({ops::exp(in.x)}, {other * 2})[0];
            });
          },
          "depends on computed " + name(dt) + " " + in.layout);
    }
}

void check_Concatenate() {
  for (DType dt : kDtypes) {
    auto xs = layouts(dt, 35);
    Array empty = ops::slice(xs[0].x, {0, 0}, {0, 32});
    for (int axis : {0, 1, -1})
      expect_same(
          [&](StreamOrDevice s) {
            return ops::concatenate({xs[0].x, xs[1].x, empty, xs[2].x, xs[3].x},
                                    axis, s);
          },
          "concatenate " + name(dt) + " axis " + std::to_string(axis));
    expect_same(
        [&](StreamOrDevice s) {
          return ops::concatenate({xs[1].x, values(dt, {2, 32}, 36)}, 0, s);
        },
        "concatenate ragged " + name(dt));
    expect_same(
        [&](StreamOrDevice s) {
          return ops::stack({xs[3].x, xs[1].x}, 1, s);
        },
        "stack " + name(dt));
  }
}

void check_Custom() {
  auto f = custom_function([](const Array& x) { return ops::exp(x) * 2.0f; });
  auto g = checkpoint([](const Array& x) { return ops::sin(x) + x; });
  for (const auto& in : layouts(float32, 37)) {
    expect_same(
        [&](StreamOrDevice s) { return on(s, [&] { return f(in.x); }); },
        "custom_function " + in.layout);
    expect_same(
        [&](StreamOrDevice s) { return on(s, [&] { return g(in.x); }); },
        "checkpoint " + in.layout);
  }
}

}  // namespace nuvec::testing::gpu_ops

using namespace nuvec;
using namespace nuvec::testing;
using namespace nuvec::testing::gpu_ops;

namespace {

struct Entry {
  PrimitiveId id;
  const char* name;
  void (*check)();
};

// One entry per primitive, in registry order: a primitive added to the
// registry without a check_<Name> here is a compile error.
#define NUVEC_ENTRY(Name, trait) Entry{PrimitiveId::Name, #Name, &check_##Name},
const Entry kEntries[] = {NUVEC_UNARY_PRIMITIVES(NUVEC_ENTRY)
                              NUVEC_BINARY_PRIMITIVES(NUVEC_ENTRY)
                                  NUVEC_OTHER_PRIMITIVES(NUVEC_ENTRY)};
#undef NUVEC_ENTRY
static_assert(std::size(kEntries) == primitive_count,
              "one harness entry per primitive");

class GpuOps : public ::testing::TestWithParam<int> {};

}  // namespace

TEST(GpuOpsRegistry, EntriesFollowTheRegistry) {
  for (int i = 0; i < primitive_count; ++i) {
    EXPECT_EQ(static_cast<int>(kEntries[i].id), i);
    EXPECT_STREQ(kEntries[i].name, primitive_name(kEntries[i].id));
  }
}

TEST_P(GpuOps, MatchesTheCpu) {
  NUVEC_GPU_REQUIRED();
  int before = cases_checked();
  kEntries[GetParam()].check();
  int n = cases_checked() - before;
  RecordProperty("cases", n);
  EXPECT_GT(n, 0) << "no case of " << kEntries[GetParam()].name
                  << " ran (the CPU refused them all)";
}

INSTANTIATE_TEST_SUITE_P(GpuRegistry, GpuOps,
                         ::testing::Range(0, primitive_count),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(kEntries[info.param].name);
                         });
