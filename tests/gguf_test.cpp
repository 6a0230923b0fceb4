// GGUF: the fixtures of tests/fixtures/gguf load as MLX 0.32.4 loads them
// (tests/refs/gguf.ref, tools/record_gguf_fixtures.py), files nuvec writes
// load back identically and equal MLX's bytes, quantized blocks convert as
// derived by hand. Malformed files: gguf_malformed_test.cpp.
#include <gtest/gtest.h>
#include <nuvec/gguf.h>
#include <nuvec/nuvec.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "io/gguf_format.h"
#include "io/mapping.h"
#include "support/io_files.h"
#include "support/refs.h"

using namespace nuvec;
using namespace nuvec::test;
namespace fs = std::filesystem;

namespace {

const std::string fixtures = std::string(NUVEC_REFS_DIR) + "../fixtures/gguf/";

// ------------------------------------------------------------ the reference

struct RefValue {
  std::string kind;  // "array", "string", "strings"
  std::string dtype;
  std::vector<int> shape;
  std::vector<unsigned char> bytes;  // array bytes or string bytes
  std::vector<std::string> strings;
};

struct RefFile {
  std::string name, source;  // source: mlx, numpy or refused
  bool resave = false;
  std::map<std::string, RefValue> tensors, meta;
};

std::string unhex(const std::string& h) {
  auto b = refs::parse_hex(h);
  return std::string(b.begin(), b.end());
}

std::vector<RefFile> load_ref() {
  std::ifstream in(refs::ref_path("gguf.ref"));
  EXPECT_TRUE(in.good()) << "tests/refs/gguf.ref is missing";
  std::vector<RefFile> files;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string tag;
    ss >> tag;
    if (tag == "file") {
      RefFile f;
      std::string flag;
      ss >> f.name >> f.source >> flag;
      f.resave = flag == "resave";
      files.push_back(f);
    } else if (tag == "tensor" || tag == "meta") {
      std::string name, shape, hex;
      RefValue v;
      ss >> name;
      if (tag == "tensor") {
        v.kind = "array";
      } else {
        ss >> v.kind;
      }
      if (v.kind == "array") {
        ss >> v.dtype >> shape >> hex;
        v.shape = refs::parse_shape(shape);
        v.bytes = refs::parse_hex(hex);
      } else if (v.kind == "string") {
        ss >> hex;
        v.bytes = refs::parse_hex(hex);
      } else {
        size_t n = 0;
        ss >> n;
        for (size_t i = 0; i < n && ss >> hex; ++i)
          v.strings.push_back(unhex(hex));
      }
      (tag == "tensor" ? files.back().tensors : files.back().meta)
          .emplace(unhex(name), v);
    }
  }
  return files;
}

// ------------------------------------------------------------------ helpers

bool is_nan_bits(const unsigned char* p, int size) {
  if (size == 2) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
  }
  uint32_t f;
  std::memcpy(&f, p, 4);
  return (f & 0x7f800000u) == 0x7f800000u && (f & 0x7fffffu) != 0;
}

// Equal bytes, floats bit for bit except that any NaN matches any NaN.
void expect_same_bytes(const std::string& got,
                       const std::vector<unsigned char>& want,
                       const std::string& dtype, const std::string& who) {
  ASSERT_EQ(got.size(), want.size()) << who;
  int fsize = dtype == "float16" ? 2 : dtype == "float32" ? 4 : 0;
  auto g = reinterpret_cast<const unsigned char*>(got.data());
  for (size_t i = 0; i < got.size(); i += fsize ? fsize : 1) {
    if (fsize && is_nan_bits(g + i, fsize) && is_nan_bits(&want[i], fsize))
      continue;
    size_t n = fsize ? static_cast<size_t>(fsize) : 1;
    ASSERT_EQ(std::memcmp(g + i, &want[i], n), 0)
        << who << ": element " << i / n << " differs";
  }
}

void expect_array(const Array& a, const RefValue& r, const std::string& who) {
  ASSERT_EQ(r.kind, "array") << who;
  EXPECT_EQ(dtype_name(a.dtype()), r.dtype) << who;
  EXPECT_EQ(Shape(r.shape.begin(), r.shape.end()), a.shape()) << who;
  expect_same_bytes(bytes_of(a), r.bytes, r.dtype, who);
}

void expect_meta(const GGUFMetaData& v, const RefValue& r,
                 const std::string& who) {
  if (r.kind == "array") {
    ASSERT_TRUE(std::holds_alternative<Array>(v)) << who;
    expect_array(std::get<Array>(v), r, who);
  } else if (r.kind == "string") {
    ASSERT_TRUE(std::holds_alternative<std::string>(v)) << who;
    EXPECT_EQ(std::get<std::string>(v),
              std::string(r.bytes.begin(), r.bytes.end()))
        << who;
  } else {
    ASSERT_TRUE(std::holds_alternative<std::vector<std::string>>(v)) << who;
    EXPECT_EQ(std::get<std::vector<std::string>>(v), r.strings) << who;
  }
}

template <class M>
std::vector<std::string> keys_of(const M& m) {
  std::vector<std::string> k;
  for (const auto& e : m) k.push_back(e.first);
  std::sort(k.begin(), k.end());
  return k;
}

bool is_copy(const Array& a) { return a.eval().desc()->data->from_allocator; }

// --------------------------------------------------------------- fixtures

TEST(GgufFixtures, LoadAsMlxLoadsThem) {
  auto files = load_ref();
  int checked = 0;
  for (const auto& f : files) {
    if (f.source == "refused") continue;
    SCOPED_TRACE(f.name);
    auto [arrays, meta] = load_gguf(fixtures + f.name);
    EXPECT_EQ(keys_of(arrays), keys_of(f.tensors));
    EXPECT_EQ(keys_of(meta), keys_of(f.meta));
    for (const auto& [name, r] : f.tensors)
      if (arrays.count(name))
        expect_array(arrays.at(name), r, "tensor " + name);
    for (const auto& [key, r] : f.meta)
      if (meta.count(key)) expect_meta(meta.at(key), r, "metadata " + key);
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

// MLX refuses these files too; nuvec names the fault.
TEST(GgufFixtures, RefusedAsMlxRefusesThem) {
  const std::map<std::string, std::string> faults = {
      {"f64_tensor.gguf", "the GGUF type F64 = 28, which is not supported"},
      {"i64_tensor.gguf", "the GGUF type I64 = 27, which is not supported"},
      {"nested.gguf", "metadata \"n\" is an array of arrays"},
      {"duplicate_tensor.gguf", "two tensors are named \"t\""},
  };
  int checked = 0;
  for (const auto& f : load_ref()) {
    if (f.source != "refused") continue;
    ASSERT_TRUE(faults.count(f.name)) << f.name;
    std::string path = fixtures + f.name;
    expect_io_error([&] { load_gguf(path); }, path, faults.at(f.name));
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(faults.size()));
}

// With one entry of each kind MLX's order is fixed, and nuvec writes the
// same bytes.
TEST(GgufFixtures, SaveWritesTheBytesMlxWrites) {
  TempDir dir;
  int checked = 0;
  for (const auto& f : load_ref()) {
    if (!f.resave) continue;
    SCOPED_TRACE(f.name);
    auto [arrays, meta] = load_gguf(fixtures + f.name);
    std::string out = dir / f.name;
    save_gguf(out, arrays, meta);
    EXPECT_EQ(read_file(out), read_file(fixtures + f.name));
    ++checked;
  }
  EXPECT_GE(checked, 4);
}

TEST(GgufFixtures, PlainTensorsAreMappedNotCopied) {
  int64_t before = io::detail::live_mappings();
  {
    auto [arrays, meta] = load_gguf(fixtures + "plain.gguf");
    EXPECT_EQ(io::detail::live_mappings(), before + 1);
    for (const char* name : {"f32", "f16", "i8", "i16", "i32", "one"})
      EXPECT_FALSE(is_copy(arrays.at(name))) << name;
    EXPECT_TRUE(is_copy(arrays.at("bf16")));  // converted to float16
    EXPECT_EQ(arrays.at("bf16").dtype(), float16);
  }
  EXPECT_EQ(io::detail::live_mappings(), before);
}

// ------------------------------------------------------- quantized blocks

std::string le16(uint16_t v) { return std::string{char(v), char(v >> 8)}; }

// A GGUF 3 file with one tensor of `type` and GGML dims `dims` whose data
// is `data`.
std::string one_tensor(const std::string& name, std::vector<uint64_t> dims,
                       uint32_t type, const std::string& data) {
  auto u32 = [](uint32_t v) {
    return std::string(reinterpret_cast<char*>(&v), 4);
  };
  auto u64 = [](uint64_t v) {
    return std::string(reinterpret_cast<char*>(&v), 8);
  };
  std::string s = "GGUF" + u32(3) + u64(1) + u64(0) + u64(name.size()) + name +
                  u32(static_cast<uint32_t>(dims.size()));
  for (uint64_t d : dims) s += u64(d);
  s += u32(type) + u64(0);
  s.append((32 - s.size() % 32) % 32, '\0');
  return s + data;
}

io::GGUFLoad parse(const std::string& bytes) {
  return io::detail::parse_gguf(
      io::detail::Mapping::copy_of(bytes.data(), bytes.size()), "<bytes>");
}

TEST(GgufQuantized, Q4_0ByHand) {
  // d = 1.0; weight i (low nibbles) is i, weight 16 + i (high) is 15 - i.
  std::string block = le16(0x3c00);
  for (int i = 0; i < 16; ++i) block += char(i | (15 - i) << 4);
  auto [arrays, meta] = parse(one_tensor("blk.w.weight", {32}, 2, block));
  ASSERT_EQ(arrays.size(), 3u);
  const Array& w = arrays.at("blk.w.weight");
  EXPECT_EQ(w.dtype(), uint32);
  EXPECT_EQ(w.shape(), Shape{4});
  // Element e sits in bits 4 (e % 8) of word e / 8.
  EXPECT_EQ(
      w.to_vector<uint32_t>(),
      (std::vector<uint32_t>{0x76543210, 0xfedcba98, 0x89abcdef, 0x01234567}));
  EXPECT_EQ(arrays.at("blk.w.scales").shape(), Shape{1});
  EXPECT_EQ(arrays.at("blk.w.scales").view(uint16).item<uint16_t>(), 0x3c00);
  EXPECT_EQ(arrays.at("blk.w.biases").dtype(), float16);
  EXPECT_EQ(arrays.at("blk.w.biases").astype(float32).item<float>(), -8.0f);
}

TEST(GgufQuantized, Q4_1ByHand) {
  // Two rows of one block: d = 0.5 and m = -3, then d = 2 and m = 0.25.
  std::string data;
  for (auto [d, m] : {std::pair{0x3800, 0xc200}, std::pair{0x4000, 0x3400}}) {
    data += le16(static_cast<uint16_t>(d)) + le16(static_cast<uint16_t>(m));
    for (int i = 0; i < 16; ++i) data += char(0x5a);  // low 10, high 5
  }
  auto [arrays, meta] = parse(one_tensor("q", {32, 2}, 3, data));
  EXPECT_EQ(arrays.at("q").shape(), (Shape{2, 4}));
  std::vector<uint32_t> row = {0xaaaaaaaa, 0xaaaaaaaa, 0x55555555, 0x55555555};
  std::vector<uint32_t> both = row;
  both.insert(both.end(), row.begin(), row.end());
  EXPECT_EQ(arrays.at("q").to_vector<uint32_t>(), both);
  EXPECT_EQ(arrays.at("q.scales").astype(float32).to_vector<float>(),
            (std::vector<float>{0.5f, 2.0f}));
  EXPECT_EQ(arrays.at("q.biases").astype(float32).to_vector<float>(),
            (std::vector<float>{-3.0f, 0.25f}));
  EXPECT_EQ(arrays.at("q.scales").shape(), (Shape{2, 1}));
}

TEST(GgufQuantized, Q8_0ByHand) {
  // d = 0.25: int8 q is stored as q + 128, and the bias is -128 d = -32.
  std::string block = le16(0x3400);
  const int8_t q[4] = {-128, -1, 0, 127};
  for (int i = 0; i < 32; ++i) block += static_cast<char>(q[i % 4]);
  std::string data = block + block;
  auto [arrays, meta] = parse(one_tensor("token_embd", {64}, 8, data));
  // A name without ".weight" keeps its whole name (MLX would cut 7 bytes
  // and give "tok.scales": docs/mlx-differences.md).
  EXPECT_EQ(keys_of(arrays),
            (std::vector<std::string>{"token_embd", "token_embd.biases",
                                      "token_embd.scales"}));
  const Array& w = arrays.at("token_embd");
  EXPECT_EQ(w.shape(), Shape{16});
  for (uint32_t word : w.to_vector<uint32_t>()) EXPECT_EQ(word, 0xff80'7f00u);
  EXPECT_EQ(arrays.at("token_embd.biases").astype(float32).to_vector<float>(),
            (std::vector<float>{-32.0f, -32.0f}));
  // scale * stored + bias gives d * q back.
  Array deq =
      (w.view(uint8).reshape({2, 32}).astype(float32) *
           arrays.at("token_embd.scales").astype(float32).reshape({2, 1}) +
       arrays.at("token_embd.biases").astype(float32).reshape({2, 1}));
  std::vector<float> want;
  for (int i = 0; i < 64; ++i) want.push_back(0.25f * q[i % 4]);
  EXPECT_EQ(deq.reshape({64}).to_vector<float>(), want);
}

TEST(GgufQuantized, BiasOverflowAndSignedZero) {
  // -8 d overflows float16 for d >= 8192 (-65536 rounds to -inf); 8188 gives
  // -65504 exactly; -8 (+0) is -0.
  std::string data;
  for (uint16_t d : {0x7000, 0x6fff, 0x0000, 0x8000}) {
    data += le16(d);
    data.append(16, '\0');
  }
  auto [arrays, meta] = parse(one_tensor("x.weight", {128}, 2, data));
  EXPECT_EQ(arrays.at("x.biases").view(uint16).to_vector<uint16_t>(),
            (std::vector<uint16_t>{0xfc00, 0xfbff, 0x8000, 0x0000}));
}

TEST(GgufQuantized, BF16RoundsToNearestEvenFloat16) {
  // 2^-25 is half the smallest float16 subnormal: a tie, to 0; 3 * 2^-26
  // rounds up to 2^-24; 65536 overflows; 65280 is exact; NaN stays NaN.
  std::string data = le16(0x3300) + le16(0x3340) + le16(0x4780) + le16(0x477f) +
                     le16(0xff81) + le16(0xbf80);
  auto [arrays, meta] = parse(one_tensor("b", {6}, 30, data));
  EXPECT_EQ(arrays.at("b").dtype(), float16);
  EXPECT_EQ(
      arrays.at("b").view(uint16).to_vector<uint16_t>(),
      (std::vector<uint16_t>{0x0000, 0x0001, 0x7c00, 0x7bf8, 0xfe00, 0xbc00}));
}

TEST(GgufQuantized, NamesThatCollideAreAnError) {
  TempDir dir;
  std::string path = dir / "collide.gguf";
  std::string block = le16(0x3c00) + std::string(32, '\0');
  auto u32 = [](uint32_t v) {
    return std::string(reinterpret_cast<char*>(&v), 4);
  };
  auto u64 = [](uint64_t v) {
    return std::string(reinterpret_cast<char*>(&v), 8);
  };
  std::string s = "GGUF" + u32(3) + u64(2) + u64(0);
  s += u64(8) + "a.weight" + u32(1) + u64(32) + u32(8) + u64(0);
  s += u64(8) + "a.scales" + u32(1) + u64(1) + u32(0) + u64(64);
  s.append((32 - s.size() % 32) % 32, '\0');
  s += block + std::string(64 - block.size(), '\0') + std::string(4, '\0');
  write_file(path, s);
  expect_io_error([&] { load_gguf(path); }, path,
                  "tensor \"a.scales\" gives the array \"a.scales\", which "
                  "another tensor already gave");
}

}  // namespace
