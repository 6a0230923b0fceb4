// Core array behaviour: construction, metadata, laziness, views, errors and
// the spec's examples.
#include <gtest/gtest.h>

#include <nuvec/nuvec.h>

using namespace nuvec;

TEST(Array, SpecTour) {
  Array x = array({{0.0, 1.0, 2.0}, {3.0, 4.0, 5.0}});
  Array col = array({10, 20}, {2, 1});
  Array y = (x * 2.0 + col).t();
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.dtype(), float32);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{10, 26, 12, 28, 14, 30}));
}

TEST(Array, SpecErrorExample) {
  Array a = array({{1.0, 2.0, 3.0}});
  Array bad = a.matmul(a).exp().sum(-1);
  int line = __LINE__ - 1;
  try {
    bad.check();
    FAIL() << "check() should throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.op_name(), std::optional<std::string>("matmul"));
    EXPECT_EQ(e.line(), line);
    EXPECT_NE(e.file().find("array_test.cpp"), std::string::npos);
    EXPECT_EQ(e.kind(), ErrorKind::shape_mismatch);
  }
  EXPECT_EQ(a.matmul(a.t()).sum().check().item<float>(), 14.0f);
}

TEST(Array, MetadataWithoutEvaluation) {
  Array x = ops::ones({4, 3}, float16).t();
  EXPECT_EQ(x.shape(), (Shape{3, 4}));
  EXPECT_EQ(x.strides(), (Strides{0, 0}));  // a broadcast value, transposed
  EXPECT_EQ(x.size(), 12);
  EXPECT_EQ(x.ndim(), 2);
  EXPECT_EQ(x.itemsize(), 2);
  EXPECT_EQ(x.nbytes(), 24);
  Array z = ops::arange(6).reshape({2, 3}).t();
  EXPECT_EQ(z.strides(), (Strides{1, 3}));
  EXPECT_FALSE(z.is_available());
  z.eval();
  EXPECT_TRUE(z.is_available());
}

TEST(Array, LiteralDtypes) {
  EXPECT_EQ(array({1, 2}).dtype(), int32);
  EXPECT_EQ(array({1, 2.5}).dtype(), float32);
  EXPECT_EQ(array({true, false}).dtype(), bool_);
  EXPECT_EQ(array<uint8_t>({1, 2, 3}).dtype(), uint8);
  EXPECT_EQ(array<double>({1, 2}).dtype(), float64);
  EXPECT_EQ(array(2.0).dtype(), float32);
  EXPECT_EQ(array({10, 20}, {2, 1}).shape(), (Shape{2, 1}));
  Array typed = array<int16_t>({1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_EQ(typed.dtype(), int16);
  EXPECT_EQ(typed.shape(), (Shape{3, 2}));
  EXPECT_EQ(typed.t().to_vector<int>(), (std::vector<int>{1, 3, 5, 2, 4, 6}));
  EXPECT_TRUE(array<float>({1, 2, 3}, {2, 2}).is_failed());
  EXPECT_EQ(array<bool>({true, false}).to_vector<bool>(), (std::vector<bool>{true, false}));
  Array four = array({{{{1, 2}}}, {{{3, 4}}}});
  EXPECT_EQ(four.shape(), (Shape{2, 1, 1, 2}));
  EXPECT_EQ(four.to_vector<int>(), (std::vector<int>{1, 2, 3, 4}));
}

TEST(Array, RaggedLiteralFails) {
  Array r = array({{1, 2}, {3}});
  EXPECT_TRUE(r.is_failed());
  EXPECT_THROW(r.eval(), Error);
  EXPECT_THROW(r.item<float>(), Error);
}

TEST(Array, DefaultConstructedIsFailed) {
  Array a;
  EXPECT_TRUE(a.is_failed());
  EXPECT_THROW(a.to_vector<float>(), Error);
}

TEST(Array, ErrorsPropagate) {
  Array a = ops::ones({2, 3});
  Array b = ops::ones({4});
  Array bad = (a + b).exp().sum();
  ASSERT_TRUE(bad.is_failed());
  EXPECT_EQ(bad.error()->op_name(), std::optional<std::string>("add"));
  EXPECT_EQ(bad.error()->kind(), ErrorKind::shape_mismatch);
  EXPECT_EQ(a.reshape({4, 2}).error()->message(),
            "cannot reshape an array of size 6 into shape (4, 2)");
  EXPECT_EQ(a.sum(5).error()->kind(), ErrorKind::invalid_axis);
  EXPECT_EQ(ops::zeros({-1, 2}).error()->kind(), ErrorKind::invalid_shape);
  EXPECT_EQ(ops::bitwise_and(array({1.5}), array({2.5})).error()->kind(),
            ErrorKind::unsupported_dtype);
}

TEST(Array, ItemNeedsOneElement) {
  EXPECT_THROW(ops::ones({2}).item<float>(), Error);
  EXPECT_EQ(ops::ones({1, 1}).item<int>(), 1);
}

TEST(Array, SumAxesForms) {
  Array x = ops::arange(24).reshape({2, 3, 4});
  EXPECT_EQ(x.sum().item<int>(), 276);
  EXPECT_EQ(x.sum(-1).shape(), (Shape{2, 3}));
  EXPECT_EQ(x.sum({0, 2}).to_vector<int>(), (std::vector<int>{60, 92, 124}));
  EXPECT_EQ(x.sum({}).shape(), (Shape{2, 3, 4}));  // no axes: nothing reduced
  EXPECT_EQ(x.sum({0, 2}, true).shape(), (Shape{1, 3, 1}));
  // The free functions: an int is one axis (as MLX's sum(a, axis)), a bool
  // alone is keepdims over all axes.
  EXPECT_EQ(ops::sum(x, 0).shape(), (Shape{3, 4}));
  EXPECT_EQ(ops::sum(x, 1).to_vector<int>(), (x.sum(1)).to_vector<int>());
  EXPECT_EQ(ops::max(x, -1, true).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(ops::sum(x, true).shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(ops::mean(x, 2).shape(), (Shape{2, 3}));
  EXPECT_EQ(ops::var(x, 0).shape(), (Shape{3, 4}));
  EXPECT_EQ(ops::std(x, 0, false, 1).shape(), (Shape{3, 4}));
  EXPECT_EQ(ops::var(x, true).shape(), (Shape{1, 1, 1}));
}

TEST(Array, Printing) {
  EXPECT_EQ(to_string(array({{1, 2}, {3, 4}})), "array([[1, 2],\n       [3, 4]], dtype=int32)");
  EXPECT_EQ(to_string(array({1.0, 2.5, -3.25})), "array([1, 2.5, -3.25], dtype=float32)");
  EXPECT_EQ(to_string(array(3.0)), "array(3, dtype=float32)");
  EXPECT_EQ(to_string(array({true, false})), "array([True, False], dtype=bool)");
  EXPECT_EQ(to_string(ops::arange(9)), "array([0, 1, 2, ..., 6, 7, 8], dtype=int32)");
  EXPECT_EQ(to_string(ops::arange(200).reshape({2, 100})),
            "array([[0, 1, 2, ..., 97, 98, 99],\n       [100, 101, 102, ..., 197, 198, 199]], "
            "dtype=int32)");
  EXPECT_EQ(to_string(ops::zeros({2, 0})), "array([[],\n       []], dtype=float32)");
  EXPECT_EQ(to_string(ops::arange(8).reshape({2, 2, 2})),
            "array([[[0, 1],\n        [2, 3]],\n       [[4, 5],\n        [6, 7]]], dtype=int32)");
}
