// Unit test of the reference-file reader (tests/support/refs.h).
#include "support/refs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <fstream>
#include <sstream>

namespace refs = nuvec::refs;

namespace {

std::vector<refs::Case> parse_str(const std::string& s, const std::string& name = "inline") {
  std::istringstream in(s);
  return refs::parse(in, name);
}

std::string expect_error(const std::string& s) {
  try {
    parse_str(s, "bad.ref");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << s;
  return "";
}

}  // namespace

TEST(RefsReader, ParsesCases) {
  const std::string text =
      "# recorded with mlx 0.32.4, numpy 2.4.6\n"
      "# comment\n"
      "\n"
      "case add_f32 add\n"
      "param scalar 2.5\n"
      "param scalar_type float\n"
      "param axes 1,-2,3\n"
      "param empty []\n"
      "param keepdims true\n"
      "param n -7\n"
      "param x nan\n"
      "param y -inf\n"
      "in float32 2,2 c 0000803f000000400000404000008040\n"
      "in float32 3,2 t 000000000000803f000000400000404000008040000080bf\n"
      "in int8 2,4 s 0102030405060708\n"
      "in bfloat16 1,3 b:4,2,3 803f00400040\n"
      "in float32 - c 00002040\n"
      "in uint8 0,3 c -\n"
      "out float32 2,2 0000a0400000c0400000e04000000041\n"
      "end\n"
      "case div_zero floor_divide\n"
      "in int32 1 c 01000000\n"
      "in int32 1 c 00000000\n"
      "err MLX process crashed with SIGFPE (no value exists)\n"
      "end\n"
      "case divmod_x divmod\r\n"
      "in int8 - c 07\r\n"
      "in int8 - c 02\r\n"
      "out int8 - 03\r\n"
      "out int8 - 01\r\n"
      "end\r\n";
  auto cs = parse_str(text, "mem.ref");
  ASSERT_EQ(cs.size(), 3u);

  const auto& c = cs[0];
  EXPECT_EQ(c.id, "add_f32");
  EXPECT_EQ(c.op, "add");
  EXPECT_EQ(c.line, 4);
  EXPECT_EQ(c.where(), "mem.ref:4 add_f32");
  EXPECT_FALSE(c.error.has_value());
  EXPECT_TRUE(c.has("scalar"));
  EXPECT_FALSE(c.has("nope"));
  EXPECT_DOUBLE_EQ(c.param_double("scalar"), 2.5);
  EXPECT_EQ(c.param("scalar_type"), "float");
  EXPECT_EQ(c.param_ints("axes"), (std::vector<int>{1, -2, 3}));
  EXPECT_TRUE(c.param_ints("empty").empty());
  EXPECT_TRUE(c.param_bool("keepdims"));
  EXPECT_EQ(c.param_int("n"), -7);
  EXPECT_DOUBLE_EQ(c.param_double("n"), -7.0);
  EXPECT_EQ(c.param_ints("n"), (std::vector<int>{-7}));
  EXPECT_TRUE(std::isnan(c.param_double("x")));
  EXPECT_EQ(c.param_double("y"), -INFINITY);
  EXPECT_THROW(c.param_int("scalar"), std::runtime_error);
  EXPECT_THROW(c.param_double("scalar_type"), std::runtime_error);
  EXPECT_THROW(c.param_bool("n"), std::runtime_error);
  EXPECT_THROW(c.param_ints("axes_missing"), std::runtime_error);
  EXPECT_THROW(c.param_ints("scalar"), std::runtime_error);

  ASSERT_EQ(c.inputs.size(), 6u);
  const auto& a = c.inputs[0];
  EXPECT_EQ(a.dtype, "float32");
  EXPECT_EQ(a.shape, (std::vector<int>{2, 2}));
  EXPECT_EQ(a.view, "c");
  EXPECT_EQ(a.numel(), 4u);
  ASSERT_EQ(a.bytes.size(), 16u);
  EXPECT_EQ(a.at<float>(0), 1.0f);
  EXPECT_EQ(a.at<float>(3), 4.0f);
  EXPECT_THROW(a.at<float>(4), std::out_of_range);

  EXPECT_EQ(c.inputs[1].view, "t");
  EXPECT_EQ(c.inputs[1].view_shape(), (std::vector<int>{2, 3}));
  EXPECT_EQ(c.inputs[1].at<float>(5), -1.0f);
  EXPECT_EQ(c.inputs[2].view, "s");
  EXPECT_EQ(c.inputs[2].view_shape(), (std::vector<int>{2, 2}));
  EXPECT_EQ(c.inputs[2].at<std::int8_t>(7), 8);

  const auto& b = c.inputs[3];
  EXPECT_TRUE(b.is_broadcast());
  EXPECT_EQ(b.dtype, "bfloat16");
  EXPECT_EQ(b.shape, (std::vector<int>{1, 3}));
  EXPECT_EQ(b.broadcast_shape, (std::vector<int>{4, 2, 3}));
  EXPECT_EQ(b.view_shape(), (std::vector<int>{4, 2, 3}));
  EXPECT_EQ(b.at<std::uint16_t>(0), 0x3f80);  // bfloat16 1.0

  const auto& z = c.inputs[4];
  EXPECT_TRUE(z.shape.empty());
  EXPECT_EQ(z.numel(), 1u);
  EXPECT_EQ(z.at<float>(0), 2.5f);

  const auto& e = c.inputs[5];
  EXPECT_EQ(e.shape, (std::vector<int>{0, 3}));
  EXPECT_EQ(e.numel(), 0u);
  EXPECT_TRUE(e.bytes.empty());

  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_EQ(c.outputs[0].at<float>(3), 8.0f);

  const auto& d = cs[1];
  ASSERT_TRUE(d.error.has_value());
  EXPECT_EQ(*d.error, "MLX process crashed with SIGFPE (no value exists)");
  EXPECT_TRUE(d.crashed());
  EXPECT_TRUE(d.outputs.empty());
  EXPECT_EQ(d.inputs.size(), 2u);

  const auto& m = cs[2];
  EXPECT_FALSE(m.crashed());
  ASSERT_EQ(m.outputs.size(), 2u);
  EXPECT_EQ(m.outputs[0].at<std::int8_t>(0), 3);
  EXPECT_EQ(m.outputs[1].at<std::int8_t>(0), 1);
}

TEST(RefsReader, RejectsMalformedInputWithLine) {
  auto has = [](const std::string& msg, const std::string& part) {
    return msg.find(part) != std::string::npos;
  };
  EXPECT_TRUE(has(expect_error("case a add\nin float32 2 c 0000\nend\n"), "bad.ref:2:"));
  EXPECT_TRUE(has(expect_error("case a add\nin float33 1 c 00000000\nout float32 1 00\nend\n"),
                  "bad.ref:2:"));
  EXPECT_TRUE(has(expect_error("case a add\nin float32 1 x 00000000\nout float32 1 00000000\nend\n"),
                  "bad.ref:2:"));
  EXPECT_TRUE(has(expect_error("case a add\nin float32 1 c 0000zz00\nend\n"), "bad.ref:2:"));
  EXPECT_TRUE(has(expect_error("case a add\nout float32 1 00000000\n"), "bad.ref:2:"));  // no end
  EXPECT_TRUE(has(expect_error("in float32 1 c 00000000\n"), "bad.ref:1:"));
  EXPECT_TRUE(has(expect_error("case a add\ncase b add\n"), "bad.ref:2:"));
  EXPECT_TRUE(has(expect_error("case a add\nend\n"), "bad.ref:2:"));  // no out/err
  EXPECT_TRUE(has(expect_error("case a add\nerr boom\nout float32 1 00000000\nend\n"),
                  "bad.ref:3:"));
  EXPECT_TRUE(has(expect_error("case a add\nbogus 1\nend\n"), "bad.ref:2:"));
  EXPECT_TRUE(has(expect_error("case a add\nparam k\nend\n"), "bad.ref:2:"));
  EXPECT_TRUE(has(expect_error("case a add\nparam k 1\nparam k 2\nend\n"), "bad.ref:3:"));
  EXPECT_TRUE(has(expect_error("case a add\nout float32 0 00\nend\n"), "bad.ref:2:"));
  EXPECT_TRUE(has(expect_error("case a add\nout float32 2,-1 -\nend\n"), "bad.ref:2:"));
  EXPECT_TRUE(has(expect_error("case a\n"), "bad.ref:1:"));
  EXPECT_THROW(refs::load("/nonexistent/dir/x.ref"), std::runtime_error);
}

TEST(RefsReader, Promotion) {
  std::istringstream in(
      "# recorded with mlx 0.32.4\n"
      "promote uint64 int64 float32\n"
      "promote bool bool bool\n"
      "weak uint8 float float32\n"
      "weak bool int int32\n");
  auto p = refs::parse_promotion(in, "p.ref");
  ASSERT_EQ(p.promote.size(), 2u);
  ASSERT_EQ(p.weak.size(), 2u);
  EXPECT_EQ(p.promote[0], std::make_tuple(std::string("uint64"), std::string("int64"),
                                          std::string("float32")));
  EXPECT_EQ(std::get<2>(p.weak[1]), "int32");
  std::istringstream bad("promote a b\n");
  EXPECT_THROW(refs::parse_promotion(bad, "p.ref"), std::runtime_error);
  std::istringstream bad2("weak int8 complex float32\n");
  EXPECT_THROW(refs::parse_promotion(bad2, "p.ref"), std::runtime_error);
}

TEST(RefsReader, Helpers) {
  EXPECT_EQ(refs::parse_shape("-"), std::vector<int>{});
  EXPECT_EQ(refs::parse_shape("0"), std::vector<int>{0});
  EXPECT_EQ(refs::parse_shape("2,0,3"), (std::vector<int>{2, 0, 3}));
  EXPECT_THROW(refs::parse_shape("2,,3"), std::invalid_argument);
  EXPECT_EQ(refs::parse_hex("-").size(), 0u);
  EXPECT_EQ(refs::parse_hex("00ff7A"), (std::vector<unsigned char>{0, 255, 0x7a}));
  EXPECT_EQ(refs::dtype_size("complex64"), 8u);
  EXPECT_EQ(refs::dtype_size("bfloat16"), 2u);
  EXPECT_THROW(refs::dtype_size("float8"), std::runtime_error);
  const std::string p = refs::ref_path("unary.ref");
  EXPECT_EQ(p.substr(p.size() - 10), "/unary.ref");
}

TEST(RefsReader, LoadFromFile) {
  const std::string path = ::testing::TempDir() + "nuvec_refs_reader_test.ref";
  {
    std::ofstream f(path, std::ios::binary);
    f << "case c1 negative\nin int16 2 c 0100ffff\nout int16 2 ffff0100\nend\n";
  }
  auto cs = refs::load(path);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].file, path);
  EXPECT_EQ(cs[0].outputs[0].at<std::int16_t>(0), -1);
  EXPECT_EQ(cs[0].outputs[0].at<std::int16_t>(1), 1);
  std::remove(path.c_str());
}

// Parses every recorded file when present (skipped when run from elsewhere).
TEST(RefsReader, RecordedFilesParse) {
  const char* files[] = {"unary.ref", "binary.ref", "other.ref", "reduce.ref",
                         "matmul.ref", "shape.ref", "creation.ref"};
  {
    std::ifstream probe(refs::ref_path("promotion.ref"));
    if (!probe) GTEST_SKIP() << "no " << refs::ref_path("promotion.ref");
  }
  auto p = refs::load_promotion(refs::ref_path("promotion.ref"));
  EXPECT_EQ(p.promote.size(), 14u * 14u);
  EXPECT_EQ(p.weak.size(), 14u * 3u);
  for (const char* f : files) {
    auto cs = refs::load(refs::ref_path(f));
    EXPECT_GT(cs.size(), 50u) << f;
    std::map<std::string, int> ids;
    for (const auto& c : cs) {
      EXPECT_EQ(++ids[c.id], 1) << "duplicate id " << c.where();
      for (const auto& t : c.inputs) {
        if (t.view == "s") {
          EXPECT_FALSE(t.shape.empty()) << c.where();
        } else if (t.is_broadcast()) {
          EXPECT_GE(t.broadcast_shape.size(), t.shape.size()) << c.where();
        }
      }
      if (c.error) {
        EXPECT_TRUE(c.outputs.empty()) << c.where();
      }
    }
  }
}
