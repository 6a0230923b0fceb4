// Sizes past int and int64 (issue 26): every reproduction gives a failed
// array with the right kind and a message naming the true size, never a
// crash, a wrapped size or a wrong shape. Huge arrays here are broadcasts
// of a scalar (no memory); the fixture's memory limit stops any evaluation
// that would allocate. The expected sizes are hand-derived powers of two.
#include <gtest/gtest.h>
#include <nuvec/nuvec.h>

#include <climits>
#include <ranges>
#include <string>

#include "core/checked.h"

using namespace nuvec;

namespace {

constexpr int G = 1 << 30;  // 2^30

// A failed array of `kind` whose message contains `fragment` (and names
// `op` when given), and whose eval throws that error.
void expect_fails(const Array& a, ErrorKind kind, const std::string& fragment,
                  const char* op = nullptr) {
  ASSERT_TRUE(a.is_failed()) << "not failed; shape " << a.shape();
  EXPECT_EQ(a.error()->kind(), kind) << a.error()->what();
  EXPECT_NE(a.error()->message().find(fragment), std::string::npos)
      << a.error()->what();
  if (op) EXPECT_EQ(a.error()->op_name().value_or(""), op) << a.error()->what();
  try {
    a.eval();
    ADD_FAILURE() << "eval did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind);
  }
}

class Sizes : public ::testing::Test {
 protected:
  void SetUp() override { old_ = set_memory_limit(size_t(256) << 20); }
  void TearDown() override { set_memory_limit(old_); }
  size_t old_ = 0;
};

}  // namespace

TEST_F(Sizes, CheckedSizeRule) {
  // 2^64 = 18446744073709551616; 2^90 = 1237940039285380274899124224.
  EXPECT_EQ(shape_size_text({65536, 65536, 65536, 65536}),
            "18446744073709551616");
  EXPECT_EQ(shape_size_text({0, G, G, G}, true),
            "1237940039285380274899124224");
  EXPECT_EQ(shape_size_text({}), "1");
  EXPECT_EQ(wide_text(-(static_cast<__int128>(1) << 100)),
            "-1267650600228229401496703205376");
  EXPECT_EQ(wide_size({INT_MAX, INT_MAX, INT_MAX, INT_MAX, INT_MAX}),
            static_cast<__int128>(1) << 126);
  EXPECT_EQ(*checked_size({G, 2, 4}, 8, "output"), int64_t(1) << 33);
  EXPECT_EQ(*checked_size({0, G, G}, 4, "output"), 0);  // 2^60 * 4 fits
  EXPECT_FALSE(checked_size({0, G, G}, 8, "output"));   // 2^63 does not
  EXPECT_EQ(*checked_size({}, 4, "output"), 1);
  auto neg = checked_size({2, -1}, 4, "output");
  ASSERT_FALSE(neg);
  EXPECT_EQ(neg.error().kind(), ErrorKind::invalid_shape);
  auto wrap = checked_size({65536, 65536, 65536, 65536}, 1, "output");
  ASSERT_FALSE(wrap);
  EXPECT_EQ(wrap.error().kind(), ErrorKind::overflow);
  EXPECT_NE(wrap.error().message().find("18446744073709551616 elements"),
            std::string::npos);
  // 2^61 elements fit int64, their 8-byte items (2^64 bytes) do not.
  auto bytes = checked_size({G, G, 2}, 8, "output");
  ASSERT_FALSE(bytes);
  EXPECT_NE(bytes.error().message().find("18446744073709551616 bytes"),
            std::string::npos);
  // INT64_MAX bytes exactly is allowed; one more item size is not.
  EXPECT_TRUE(
      checked_size({INT_MAX, INT_MAX, 2}, 1, "output"));  // 2^63 - 2^33 + 2
  EXPECT_FALSE(checked_size({G, G, 8}, 1, "output"));     // 2^63
  EXPECT_EQ(*checked_dim(INT_MAX, "x"), INT_MAX);
  EXPECT_NE(checked_dim(int64_t(1) << 32, "output length")
                .error()
                .message()
                .find("output length 4294967296 exceeds the int range"),
            std::string::npos);
}

TEST_F(Sizes, BroadcastBinaryByteSizeWraps) {
  // (2^30, 2^30, 4) float32: 2^62 elements, 2^64 bytes (was a 0-byte buffer).
  Array a = ops::ones({G, 1, 4}), b = ops::ones({1, G, 1});
  expect_fails(a + b, ErrorKind::overflow, "18446744073709551616 bytes", "add");
}

TEST_F(Sizes, BroadcastCopyExpConcatenateFlatten) {
  expect_fails(ops::broadcast_to(ops::ones({1, 1, 4}), {G, G, 4}).copy(),
               ErrorKind::overflow, "18446744073709551616 bytes");
  expect_fails(ops::exp(ops::broadcast_to(array(1.0, float64), {G, G, 2})),
               ErrorKind::overflow, "18446744073709551616 bytes");
  // Each operand 2^62 bytes (valid); together 2^63 bytes.
  Array h = ops::broadcast_to(array(1.0f), {G, G, 1});
  ASSERT_FALSE(h.is_failed());
  expect_fails(ops::concatenate({h, h}, 2), ErrorKind::overflow,
               "9223372036854775808 bytes", "concatenate");
  // (2^30, 2, 2^30) uint64 is 2^64 bytes; the uint8 one flattens to 2^61.
  expect_fails(ops::broadcast_to(array(uint64_t(1)), {G, 2, G}),
               ErrorKind::overflow, "18446744073709551616 bytes");
  Array u8 = ops::broadcast_to(array(uint8_t(1)), {G, 2, G});
  expect_fails(ops::flatten(u8).copy(), ErrorKind::overflow,
               "flattened length 2305843009213693952 exceeds the int range",
               "flatten");
}

TEST_F(Sizes, ElementCountPastInt64) {
  expect_fails(
      ops::broadcast_to(array(1.0f), {65536, 65536, 65536, 65536}).sum(),
      ErrorKind::overflow, "18446744073709551616 elements", "broadcast_to");
  expect_fails(array(std::vector<float>{}, {65536, 65536, 65536, 65536}),
               ErrorKind::overflow, "18446744073709551616 elements");
  expect_fails(array(std::vector<float>{}, {0, G, G, G}), ErrorKind::overflow,
               "1237940039285380274899124224");
  expect_fails(ops::zeros({0, G, G, G}), ErrorKind::overflow,
               "1237940039285380274899124224", "full");
  // A zero next to dimensions whose product fits is an empty array.
  Array e = ops::zeros({0, G, G}, float32);
  ASSERT_FALSE(e.is_failed());
  EXPECT_EQ(e.size(), 0);
  EXPECT_TRUE(e.to_vector<float>().empty());
}

TEST_F(Sizes, KronTake) {
  expect_fails(ops::kron(ops::ones({65536, 65536}), ops::ones({65536, 65536})),
               ErrorKind::overflow,
               "output length 4294967296 exceeds the int range", "kron");
  // (4, 2^30) taken along 0 with (2^30, 2^30) indices: (2^30, 2^30, 2^30).
  Array idx = ops::broadcast_to(array(int32_t(1)), {G, G});
  expect_fails(ops::take(ops::ones({4, G}), idx, 0), ErrorKind::overflow,
               "1237940039285380274899124224 elements", "take");
}

TEST_F(Sizes, PadStopsAtTheFirstFailedAxis) {
  expect_fails(ops::pad(ops::ones({2, 2}), {{INT_MAX - 1, 0}}),
               ErrorKind::overflow,
               "padded length 2147483648 exceeds the int range", "pad");
  // Each axis fits int, but axis 1 makes (2^31 - 1)^2 * 8 elements; the
  // loop must stop there rather than pad axis 2 of the failed array.
  Array p = ops::pad(ops::ones({1, 1, 8}), {0, 1, 2},
                     {INT_MAX - 1, INT_MAX - 1, 0}, {0, 0, 1}, array(0.0f));
  ASSERT_TRUE(p.is_failed());
  EXPECT_EQ(p.error()->kind(), ErrorKind::overflow) << p.error()->what();
  // The low block of axis 1, (2^31 - 1, 2^31 - 2, 8), is the first output
  // past the rule: (2^31 - 1) * (2^31 - 2) * 8 elements.
  EXPECT_NE(p.error()->message().find("36893488095879495696 elements"),
            std::string::npos)
      << p.error()->what();
}

TEST_F(Sizes, RepeatTileDiag) {
  expect_fails(ops::repeat(ops::ones({65536}), 65536, 0), ErrorKind::overflow,
               "output length 4294967296 exceeds the int range", "repeat");
  expect_fails(ops::tile(ops::ones({65536}), {65536}), ErrorKind::overflow,
               "output length 4294967296", "tile");
  expect_fails(ops::tile(ops::ones({3}), {G}), ErrorKind::overflow,
               "output length 3221225472", "tile");
  expect_fails(ops::diag(ops::ones({2}), INT_MIN), ErrorKind::overflow,
               "output side 2147483650 exceeds the int range", "diag");
  // A large offset that fits still gives the right (empty) diagonal.
  Array d = ops::diag(ops::ones({2, 3}), INT_MAX);
  ASSERT_FALSE(d.is_failed());
  EXPECT_EQ(d.shape(), Shape{0});
}

TEST_F(Sizes, ViewLengthsInInt64) {
  // 2^29 float64 are 2^32 bytes: as uint8 the length 2^32 exceeds int.
  expect_fails(ops::view(ops::zeros({1 << 29}, float64), uint8),
               ErrorKind::overflow, "4294967296 exceeds the int range", "view");
  // 2^30 float16 are 2^31 bytes (past int) but 2^29 float32: fine.
  Array v = ops::view(ops::zeros({G}, float16), float32);
  ASSERT_FALSE(v.is_failed()) << v.error()->what();
  EXPECT_EQ(v.shape(), Shape{1 << 29});
}

TEST_F(Sizes, ConvolutionLengths) {
  Array x = ops::ones({1, 4, 1}), w = ops::ones({1, 1, 1});
  expect_fails(ops::conv_transpose1d(x, w, 1, INT_MIN), ErrorKind::overflow,
               "padding 2147483648", "conv_transpose");
  // (65537 - 1) * 65536 + 1 = 4294967297.
  expect_fails(ops::conv_transpose1d(ops::ones({1, 65537, 1}), w, 65536),
               ErrorKind::overflow,
               "output length 4294967297 exceeds the int range");
}

TEST_F(Sizes, ReshapeAndDataShapes) {
  expect_fails(
      ops::arange(6).reshape({G, G, G}), ErrorKind::invalid_shape,
      "cannot reshape an array of size 6 into shape (1073741824, 1073741824, "
      "1073741824)",
      "reshape");
  float small[4] = {1, 2, 3, 4};
  expect_fails(array<float>(small, {G, G, 4}), ErrorKind::overflow,
               "18446744073709551616 bytes");
  // Converted to float64: 2^62 values of 8 bytes, 2^65 bytes.
  expect_fails(array(small, {G, G, 4}, float64), ErrorKind::overflow,
               "36893488147419103232 bytes");
  // 2^32 elements: -1, flatten and take without an axis name the true size.
  Array big = ops::broadcast_to(array(1.0f), {65536, 65536});
  expect_fails(big.reshape({-1}), ErrorKind::overflow,
               "inferred dimension 4294967296 exceeds the int range",
               "reshape");
  expect_fails(ops::flatten(big), ErrorKind::overflow,
               "flattened length 4294967296 exceeds the int range", "flatten");
  expect_fails(ops::take(big, array({0, 1})), ErrorKind::overflow,
               "4294967296 exceeds the int range");
}

TEST_F(Sizes, OtherShapeProducts) {
  // tensordot's matrix sides: (2^16 * 2^16) free elements past int.
  Array a = ops::broadcast_to(array(1.0f), {65536, 65536, 2});
  expect_fails(ops::tensordot(a, ops::ones({2, 3}), 1), ErrorKind::overflow,
               "4294967296 exceeds the int range", "tensordot");
  // meshgrid of an input of 2^32 elements.
  expect_fails(
      ops::meshgrid({ops::broadcast_to(array(1.0f), {65536, 65536})})[0],
      ErrorKind::overflow, "input size 4294967296", "meshgrid");
  // diagonal of a 2^16 x 2^16 matrix flattens its axes past int.
  expect_fails(ops::diagonal(ops::ones({65536, 65536})), ErrorKind::overflow,
               "4294967296 exceeds the int range", "diagonal");
  // tri at offsets whose column bounds leave int: exact masks.
  Array none = ops::tri(2, 2, INT_MIN, int32);
  ASSERT_FALSE(none.is_failed()) << none.error()->what();
  EXPECT_EQ(none.to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 0}));
  Array all = ops::tri(2, 3, INT_MAX, int32);
  EXPECT_EQ(all.to_vector<int32_t>(), (std::vector<int32_t>{1, 1, 1, 1, 1, 1}));
  Array wide = ops::tri(2, 2, INT_MIN + 1, int32);
  EXPECT_EQ(wide.to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 0}));
}

TEST_F(Sizes, ViewToBoolNormalises) {
  Array b = ops::view(array<uint8_t>({0, 2, 255, 1}), bool_);
  ASSERT_FALSE(b.is_failed());
  EXPECT_EQ(b.dtype(), bool_);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(b.astype(int32).sum().item<int32_t>(), 3);
  EXPECT_EQ(ops::logical_not(b).astype(uint8).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 0, 0, 0}));
  // Each byte of a wider dtype is one bool: 0x0100 (little-endian) is
  // bytes {0, 1}, 0x0300 is {0, 3}.
  Array w = ops::view(array<int16_t>({256, 768}), bool_);
  EXPECT_EQ(w.shape(), Shape{4});
  EXPECT_EQ(w.astype(uint8).to_vector<uint8_t>(),
            (std::vector<uint8_t>{0, 1, 0, 1}));
}

TEST_F(Sizes, ToVectorOfAHugeLazyArrayIsOutOfMemory) {
  // 2^40 float32 (4 TiB), a view of one scalar: evaluates to no memory.
  Array big = ops::broadcast_to(array(1.0f), {1 << 20, 1 << 20});
  try {
    (void)big.to_vector<float>();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory) << e.what();
    EXPECT_NE(e.message().find("4398046511104 bytes"), std::string::npos)
        << e.what();
  }
  // Past the fixture's 256 MiB limit though well within the machine.
  Array mid =
      ops::broadcast_to(array(1.0), {1 << 26});  // 2^26 doubles: 512 MiB
  try {
    (void)mid.to_vector<double>();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory) << e.what();
  }
  // A host staging buffer past the limit (2^27 int32 values, 512 MiB) is
  // refused before anything is read from the iterator.
  expect_fails(array(std::views::iota(0).begin(), {1 << 27}),
               ErrorKind::out_of_memory, "536870912 bytes");
  EXPECT_EQ(array(std::views::iota(5).begin(), {3}).to_vector<int32_t>(),
            (std::vector<int32_t>{5, 6, 7}));
}

// Lengths merged inside an op (einsum's grouped letters, masked_scatter's
// rows, a concatenated axis) are checked as output dimensions are.
TEST_F(Sizes, MergedLengthsInsideOpsAreChecked) {
  Array a = broadcast_to(array(1.0f), {65536, 65536, 2});
  Array b = ones({2, 3});
  expect_fails(einsum("abc,cd->abd", {a, b}), ErrorKind::overflow, "4294967296", "einsum");

  Array half = broadcast_to(array(0.0f), {G + 1});
  expect_fails(concatenate({half, half}), ErrorKind::overflow, "2147483650");

  Array big = broadcast_to(array(0.0f), {65536, 32769});
  Array mask = broadcast_to(array(true), {65536, 32769});
  expect_fails(masked_scatter(big, mask, array(1.0f)), ErrorKind::overflow, "2147549184");
}

// Integer arange values past the dtype fail (MLX wraps them silently).
TEST_F(Sizes, IntegerArangeValuesMustFitTheDtype) {
  expect_fails(arange(3e9, 3e9 + 3, 1.0, int32), ErrorKind::overflow, "int32");
  Array ok = arange(3e9, 3e9 + 3, 1.0, int64);
  EXPECT_EQ(ok.to_vector<int64_t>(), (std::vector<int64_t>{3000000000, 3000000001, 3000000002}));
}

// An empty target shape whose nonzero dimensions multiply past int64 (found
// by fuzz_ops: its strides overflowed before the size was checked).
TEST_F(Sizes, EmptyReshapeTargetsAreCheckedBeforeTheirStrides) {
  expect_fails(reshape(zeros({0}), {0, G, G, G}), ErrorKind::overflow, "1237940039285380274899124224");
  EXPECT_EQ(shape_size({0, G, G, G}), 0);
  EXPECT_EQ(shape_size({G, G, G}), INT64_MAX);  // saturated
}
