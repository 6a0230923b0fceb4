// Indexing (x.i(...), take, take_along_axis) against MLX's x[...] recorded in
// tests/refs/indexing.ref, plus hand-derived cases.
#include <gtest/gtest.h>

#include <nuvec/core/graph.h>

#include "support/conformance.h"

namespace nuvec {
namespace {

namespace cf = conformance;

// A nested integer list "[[0],[2]]" as values and shape.
void parse_list(const std::string& s, size_t& pos, std::vector<Literal>& values, Shape& shape,
                size_t depth) {
  ++pos;  // '['
  int count = 0;
  while (s[pos] != ']') {
    if (s[pos] == '[') {
      parse_list(s, pos, values, shape, depth + 1);
    } else {
      size_t end = s.find_first_of(",]", pos);
      std::string tok = s.substr(pos, end - pos);
      if (tok.find('.') != std::string::npos) values.emplace_back(std::stod(tok));
      else values.emplace_back(std::stoi(tok));
      pos = end;
    }
    ++count;
    if (s[pos] == ',') ++pos;
  }
  ++pos;  // ']'
  if (shape.size() <= depth) shape.resize(depth + 1);
  shape[depth] = count;
}

// The expression grammar of tools/record_mlx_indexing.py.
std::vector<Index> parse_index(const std::string& expr) {
  std::vector<Index> out;
  size_t pos = 0;
  while (pos <= expr.size()) {
    if (expr[pos] == '[') {
      std::vector<Literal> values;
      Shape shape;
      parse_list(expr, pos, values, shape, 0);
      out.emplace_back(detail::array_from_literals(values, shape, NUVEC_LOC));
    } else {
      size_t end = expr.find(',', pos);
      if (end == std::string::npos) end = expr.size();
      std::string tok = expr.substr(pos, end - pos);
      pos = end;
      if (tok == "None") {
        out.emplace_back(newaxis);
      } else if (tok == "...") {
        out.emplace_back(ellipsis);
      } else if (tok.find(':') != std::string::npos) {
        std::optional<int> part[3];
        size_t b = 0;
        for (int k = 0; k < 3; ++k) {
          size_t e = tok.find(':', b);
          std::string p = tok.substr(b, e == std::string::npos ? std::string::npos : e - b);
          if (!p.empty()) part[k] = std::stoi(p);
          if (e == std::string::npos) break;
          b = e + 1;
        }
        out.emplace_back(slice(part[0], part[1], part[2].value_or(1)));
      } else {
        out.emplace_back(std::stoi(tok));
      }
    }
    if (pos >= expr.size()) break;
    ++pos;  // ','
  }
  return out;
}

std::vector<Array> build_indexing(const refs::Case& c) {
  auto in = cf::make_inputs(c);
  if (c.op == "put_along_axis")
    return {ops::put_along_axis(in.at(0), in.at(1), in.at(2), static_cast<int>(c.param_int("axis")))};
  auto idx = parse_index(c.param("expr"));
  if (c.op == "index") return {ops::index(in.at(0), idx)};
  At at(in.at(0), idx);
  const std::string& u = c.param("update");
  const Array& v = in.at(1);
  if (u == "add") return {at.add(v)};
  if (u == "subtract") return {at.subtract(v)};
  if (u == "multiply") return {at.multiply(v)};
  if (u == "divide") return {at.divide(v)};
  if (u == "maximum") return {at.maximum(v)};
  if (u == "minimum") return {at.minimum(v)};
  throw std::runtime_error("no update " + u);
}

TEST(Indexing, MatchesMlx) {
  cf::FileHooks hooks;
  // at.divide of floats multiplies by a rounded reciprocal: one rounding more.
  hooks.tolerance = [](const refs::Case& c) {
    return c.op == "at" && c.param("update") == "divide" ? cf::Tolerance::ulps(1, 1, 1)
                                                          : cf::Tolerance::exact();
  };
  cf::run_file("indexing.ref", build_indexing, hooks);
}

TEST(Indexing, AtSetAndRepeatedIndices) {
  Array x = ops::zeros({5}, int32);
  Array idx = array({1, 1, 3});
  // add accumulates repeated indices; set keeps the last write (in order).
  EXPECT_EQ(x.at(idx).add(2).to_vector<int>(), (std::vector<int>{0, 4, 0, 2, 0}));
  EXPECT_EQ(x.at(idx).set(array({7, 8, 9})).to_vector<int>(), (std::vector<int>{0, 8, 0, 9, 0}));
  EXPECT_EQ(x.at(slice(1, 3)).set(5).to_vector<int>(), (std::vector<int>{0, 5, 5, 0, 0}));
  EXPECT_EQ(x.to_vector<int>(), (std::vector<int>{0, 0, 0, 0, 0}));  // x unchanged
  EXPECT_TRUE(x.at(idx).add(array({1, 2})).is_failed());             // shapes do not fit
  EXPECT_EQ(ops::scatter_add_along_axis(ops::zeros({2, 3}), array({{0, 0}, {2, 1}}),
                                        array({{1.5, 2.5}, {1.0, 1.0}}), 1)
                .to_vector<float>(),
            (std::vector<float>{4, 0, 0, 0, 1, 1}));
}

TEST(Indexing, BasicIndexingIsAView) {
  Array x = ops::arange(24).reshape({2, 3, 4});
  x.eval();
  Array v = x.i(1, slice(0, 3, 2), slice({}, {}, -1));
  EXPECT_EQ(v.shape(), (Shape{2, 4}));
  EXPECT_EQ(v.to_vector<int>(), (std::vector<int>{15, 14, 13, 12, 23, 22, 21, 20}));
  EXPECT_EQ(v.desc()->data, x.desc()->data);  // shares the buffer
}

TEST(Indexing, ErrorsNameTheIndexAndSize) {
  Array x = ops::zeros({3, 4});
  Array bad = x.i(0, 7);
  int line = __LINE__ - 1;
  ASSERT_TRUE(bad.is_failed());
  EXPECT_EQ(bad.error()->kind(), ErrorKind::out_of_range);
  EXPECT_EQ(bad.error()->message(), "index 7 is out of bounds for axis 1 with size 4");
  EXPECT_EQ(bad.error()->line(), line);
  EXPECT_EQ(x.i(0, 0, 0).error()->kind(), ErrorKind::invalid_argument);
  EXPECT_EQ(x.i(array({0.5})).error()->kind(), ErrorKind::unsupported_dtype);
}

TEST(Indexing, GathersClampOutOfRange) {
  // Documented rule: negative indices wrap once, then clamp into range.
  Array x = ops::arange(5);
  EXPECT_EQ(ops::take(x, array({-1, 7, -9, 2})).to_vector<int>(), (std::vector<int>{4, 4, 0, 2}));
}

TEST(Indexing, TakeAlongAxis) {
  // out[i][j] = x[i][idx[i][j]], by hand.
  Array x = array({{10, 30, 20}, {60, 50, 40}});
  Array idx = array({{1, 0}, {2, 2}});
  EXPECT_EQ(ops::take_along_axis(x, idx, 1).to_vector<int>(),
            (std::vector<int>{30, 10, 40, 40}));
  // Broadcast indices along axis 0: out[i][j] = x[idx[0][j]][j].
  Array col = array({1, 0, 1}, {1, 3});
  EXPECT_EQ(ops::take_along_axis(x, col, 0).to_vector<int>(), (std::vector<int>{60, 30, 40}));
  EXPECT_TRUE(ops::take_along_axis(x, array({1}), 1).is_failed());
}

}  // namespace
}  // namespace nuvec
