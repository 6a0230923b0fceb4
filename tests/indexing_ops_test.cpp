// Gathers, scatters and slice updates where the MLX parity cases
// (tests/parity/cases_indexing.inc) cannot reach: x.i(...) (MLX's C++ has no
// indexing operator; shapes below were read from MLX 0.32.4's Python x[...]),
// calls MLX crashes on or rejects only when it evaluates, nuvec's documented
// clamping of out-of-range indices (MLX reads and writes out of bounds), the
// order of repeated updates, and error kinds and locations.
#include <gtest/gtest.h>
#include <nuvec/nuvec.h>

#include <stdexcept>

namespace nuvec {
namespace {

// The class boundaries throw for a failed array.
template <class E>
bool throws_as(const Array& a) {
  try {
    a.eval();
  } catch (const E&) {
    return true;
  } catch (...) {
    return false;
  }
  return false;
}

// Regression: index arrays into an array with an empty axis used to fail
// ("cannot reshape an array of size 0 into shape (-1, 0)"). Shapes from
// MLX 0.32.4: mx.zeros((2, 0))[mx.array([1])].shape == (1, 0), ...
TEST(IndexingOps, IndexArraysWithEmptyAxes) {
  struct Case {
    Array got;
    Shape want;
  };
  Case cases[] = {
      {ops::zeros({2, 0}).i(array({1})), {1, 0}},
      {ops::zeros({2, 3}).i(array({0}), slice(1, 1)), {1, 0}},
      {ops::zeros({0, 3}).i(ops::zeros({0}, int32)), {0, 3}},
      {ops::zeros({2, 0}).i(array({1, 0}), slice()), {2, 0}},
      {ops::zeros({2, 3, 0}).i(array({1}), array({2})), {1, 0}},
      {ops::zeros({2, 3, 0}).i(slice(), array({1, 2, 0})), {2, 3, 0}},
      {ops::arange(6).reshape({2, 3}).i(ops::zeros({0}, int32)), {0, 3}},
      {ops::arange(6).reshape({2, 3}).i(slice(), ops::zeros({0, 2}, int32)),
       {2, 0, 2}},
      {ops::zeros({0, 3}).i(slice(), array({2, 0})), {0, 2}},
      {ops::zeros({2, 0, 4}).i(array({1}), slice(), array({3})), {1, 0}},
  };
  for (auto& c : cases) {
    ASSERT_FALSE(c.got.is_failed()) << c.got.error()->what();
    EXPECT_EQ(c.got.shape(), c.want);
    EXPECT_EQ(c.got.eval().size(), 0);
  }
  // Reading an element of an empty axis is an error, as in MLX.
  EXPECT_TRUE(ops::zeros({2, 0, 3}).i(slice(), array({0, 0})).is_failed());
}

// Index arrays of every integer dtype index alike (MLX 0.32.4:
// mx.arange(10, 16)[mx.array([1, 5], dtype=d)] == [11, 15] for each d, and
// [-1, -6] as int8 gives [15, 10]).
TEST(IndexingOps, IndexArraysOfEveryIntegerDtype) {
  Array x = ops::arange(10, 16);
  for (DType d : {uint8, uint16, uint32, uint64, int8, int16, int32, int64})
    EXPECT_EQ(x.i(array({1, 5}, d)).to_vector<int>(),
              (std::vector<int>{11, 15}))
        << d;
  EXPECT_EQ(x.i(array({-1, -6}, int8)).to_vector<int>(),
            (std::vector<int>{15, 10}));
  EXPECT_EQ(x.i(array({1.0f})).error()->kind(), ErrorKind::unsupported_dtype);
}

// Regression: dynamic slices accepted repeated axes; MLX rejects them with
// std::invalid_argument.
TEST(IndexingOps, DynamicSlicesRejectRepeatedAxes) {
  Array src = ops::arange(6).reshape({2, 3});
  for (const Array& bad :
       {slice(src, array({1, 0}), {0, 0}, {1, 1}),
        slice(src, array({1, 0}), {1, -1}, {1, 1}),
        slice_update(src, ops::zeros({1, 1}, int32), array({1, 0}), {0, 0}),
        slice_update(src, ops::zeros({1, 1}, int32), array({0, 1}), {-1, 1})}) {
    ASSERT_TRUE(bad.is_failed());
    EXPECT_EQ(bad.error()->kind(), ErrorKind::invalid_argument);
    EXPECT_NE(bad.error()->message().find("repeated axes"), std::string::npos);
    EXPECT_TRUE(throws_as<std::invalid_argument>(bad));
  }
}

// MLX throws a C string (not a std::exception) for bool scatter indices and
// fails only when it evaluates float indices of take_along_axis and
// put_along_axis: nuvec fails when the call is made.
TEST(IndexingOps, IndexDtypesFailWhenCalled) {
  Array x = ops::zeros({4});
  Array u = ops::ones({1, 1});
  for (const Array& bad :
       {scatter(x, array({true}), u, 0),
        scatter_add(x, {array({true})}, u, {0}),
        gather(x, array({true}), 0, {1}), take(x, array({true, false})),
        take_along_axis(x, array({1.0f}), 0),
        put_along_axis(x, array({1.5f}), array(1.0f), 0),
        scatter_add_axis(x, array({true}), array(1.0f), 0)}) {
    ASSERT_TRUE(bad.is_failed());
    EXPECT_TRUE(throws_as<std::invalid_argument>(bad)) << bad.error()->what();
  }
}

// nuvec's documented rule: an index is wrapped once when negative, then
// clamped so that the slice it starts stays inside the array.
TEST(IndexingOps, OutOfRangeIndicesClamp) {
  Array x = ops::arange(10);
  // gather: starts 9 and -20 clamp to 8 (a slice of 2 fits) and 0.
  EXPECT_EQ(gather(x, array({9, -20}), 0, {2}).to_vector<int>(),
            (std::vector<int>{8, 9, 0, 1}));
  EXPECT_EQ(
      scatter(ops::zeros({4}, int32), array({7, -9}), array({1, 2}, {2, 1}), 0)
          .to_vector<int>(),
      (std::vector<int>{2, 0, 0, 1}));
  // Dynamic slices clamp (without wrapping) as JAX's: MLX reads out of
  // bounds here (slice(arange(5), [4], {0}, {2}) gives [4, garbage]).
  EXPECT_EQ(slice(ops::arange(5), array({4}), {0}, {2}).to_vector<int>(),
            (std::vector<int>{3, 4}));
  EXPECT_EQ(slice(ops::arange(5), array({-3}), {0}, {2}).to_vector<int>(),
            (std::vector<int>{0, 1}));
  EXPECT_EQ(slice_update(ops::arange(5), array({7, 8}), array({4}), {0})
                .to_vector<int>(),
            (std::vector<int>{0, 1, 2, 7, 8}));
  EXPECT_EQ(take_along_axis(x, array({12, -1}), 0).to_vector<int>(),
            (std::vector<int>{9, 9}));
}

// Updates apply in row-major order: repeated float sums round in that
// order (1 + 1e8 is 1e8 in float32; the reverse order would give 1), and
// scatter keeps the last write.
TEST(IndexingOps, RepeatedUpdatesApplyInOrder) {
  Array upd = array({1.0f, 1e8f, -1e8f}, {3, 1});
  EXPECT_EQ(
      scatter_add(ops::zeros({2}), array({1, 1, 1}), upd, 0).to_vector<float>(),
      (std::vector<float>{0, 0}));
  EXPECT_EQ(scatter(ops::zeros({3}, int32), array({2, 0, 2}),
                    array({5, 6, 7}, {3, 1}), 0)
                .to_vector<int>(),
            (std::vector<int>{6, 0, 7}));
  EXPECT_EQ(scatter_add_axis(ops::zeros({2}), array({0, 0, 0}),
                             array({1.0f, 1e8f, -1e8f}), 0)
                .to_vector<float>(),
            (std::vector<float>{0, 0}));
}

TEST(IndexingOps, EdgeCasesMlxDoesNotHandle) {
  Array x = ops::arange(6).reshape({2, 3});
  // Updates with an empty slice (MLX's CPU scatter divides by zero).
  EXPECT_EQ(
      scatter(x, array({1}), ops::zeros({1, 1, 0}, int32), 0).to_vector<int>(),
      x.to_vector<int>());
  // masked_scatter with too few source values repeats the last (MLX fails
  // when it evaluates); with none the array is unchanged.
  Array mask = array({true, false, true, false, true, true}, {2, 3});
  EXPECT_EQ(masked_scatter(x, mask, array({10, 20})).to_vector<int>(),
            (std::vector<int>{10, 1, 20, 3, 20, 20}));
  EXPECT_EQ(masked_scatter(x, mask, ops::zeros({0}, int32)).to_vector<int>(),
            x.to_vector<int>());
  // take with a negative integer counts from the end (MLX's slice-based
  // take rejects it).
  EXPECT_EQ(take(x, -1, 1).to_vector<int>(), (std::vector<int>{2, 5}));
  EXPECT_EQ(take(x, -6).item<int>(), 0);
  EXPECT_TRUE(throws_as<std::invalid_argument>(take(x, -7)));
  // An update with more axes than the array.
  EXPECT_TRUE(throws_as<std::invalid_argument>(
      slice_update(ops::zeros({3}), ops::zeros({1, 1}), array({0}), {0})));
}

// The forms that only compile in nuvec: braced shapes in the four-argument
// slice_update (ambiguous with MLX's explicit array constructors), and the
// stream argument of the three-shape slice.
TEST(IndexingOps, OverloadsResolveAsMlx) {
  Array x = ops::zeros({2, 3}, int32);
  EXPECT_EQ(slice_update(x, array({7}), {1, 1}, {2, 3}).to_vector<int>(),
            (std::vector<int>{0, 0, 0, 0, 7, 7}));
  EXPECT_EQ(slice(ops::arange(6).reshape({2, 3}), {0, 1}, {2, 3}, Device::cpu)
                .shape(),
            (Shape{2, 2}));
  EXPECT_EQ(take(ops::arange(6).reshape({2, 3}), 1, 0).to_vector<int>(),
            (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(
      scatter_add_along_axis(ops::zeros({3}, int32), array({1}), array({4}), 0)
          .to_vector<int>(),
      (std::vector<int>{0, 4, 0}));
}

TEST(IndexingOps, ErrorsNameTheOpAndCaller) {
  Array bad = gather(ops::zeros({3}), {array({1})}, {-1}, {1});
  int line = __LINE__ - 1;
  ASSERT_TRUE(bad.is_failed());
  EXPECT_EQ(bad.error()->op_name(), std::optional<std::string>("gather"));
  EXPECT_EQ(bad.error()->line(), line);
  Array upd =
      slice_update_max(ops::zeros({3, 4}), ops::zeros({2, 3}), {0, 0}, {2, 2});
  line = __LINE__ - 1;
  ASSERT_TRUE(upd.is_failed());
  EXPECT_EQ(upd.error()->op_name(),
            std::optional<std::string>("slice_update_max"));
  EXPECT_EQ(upd.error()->line(), line);
  EXPECT_EQ(upd.error()->kind(), ErrorKind::shape_mismatch);
  // A failed input passes through unchanged.
  EXPECT_EQ(scatter(bad, array({0}), ops::zeros({1, 1}), 0).error()->op_name(),
            std::optional<std::string>("gather"));
}

}  // namespace
}  // namespace nuvec
