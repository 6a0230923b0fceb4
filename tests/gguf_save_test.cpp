// save_gguf: round trips through load_gguf, what MLX's save refuses,
// alignment, atomic replacement, and the files tools/record_gguf_fixtures.py
// --check-nuvec loads with MLX (GgufInterop).
#include <gtest/gtest.h>
#include <nuvec/gguf.h>
#include <nuvec/nuvec.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "support/io_files.h"

using namespace nuvec;
using namespace nuvec::test;
namespace fs = std::filesystem;

namespace {

bool is_copy(const Array& a) { return a.eval().desc()->data->from_allocator; }

const std::vector<DType> tensor_dtypes = {float32, float16, int8, int16, int32};
const std::vector<DType> meta_dtypes = {bool_,  uint8, int8,   uint16, int16,
                                        uint32, int32, uint64, int64,  float32};

TEST(GgufRoundTrip, EveryTensorDtypeAndShape) {
  TempDir dir;
  const std::vector<Shape> shapes = {
      {}, {1}, {7}, {3, 5}, {2, 1, 3}, {0}, {4, 0, 2}, {2, 3, 1, 2, 3}};
  std::unordered_map<std::string, Array> arrays;
  unsigned seed = 1;
  for (DType d : tensor_dtypes)
    for (size_t s = 0; s < shapes.size(); ++s)
      arrays.emplace(std::string(dtype_name(d)) + "/" + std::to_string(s),
                     sample(d, shapes[s], seed++));
  std::string path = dir / "all.gguf";
  save_gguf(path, arrays);
  auto [loaded, meta] = load_gguf(path);
  EXPECT_TRUE(meta.empty());
  ASSERT_EQ(loaded.size(), arrays.size());
  for (const auto& [name, a] : arrays) {
    SCOPED_TRACE(name);
    const Array& b = loaded.at(name);
    EXPECT_EQ(b.dtype(), a.dtype());
    EXPECT_EQ(b.shape(), a.shape());
    EXPECT_EQ(bytes_of(b), bytes_of(a));
    if (b.size() > 0) EXPECT_FALSE(is_copy(b));  // aligned: mapped
  }
}

TEST(GgufRoundTrip, EveryMetadataKind) {
  TempDir dir;
  std::unordered_map<std::string, GGUFMetaData> meta = {
      {"s", std::string("h\xc3\xa9llo\0x", 8)},
      {"empty.s", std::string()},
      {"strs", std::vector<std::string>{"a", "", "\xff\xfe not utf-8"}},
      {"no.strs", std::vector<std::string>{}},
      {"", std::string("empty key")},
  };
  unsigned seed = 7;
  for (DType d : meta_dtypes) {
    meta.emplace("scalar." + std::string(dtype_name(d)), sample(d, {}, seed++));
    meta.emplace("array." + std::string(dtype_name(d)), sample(d, {5}, seed++));
  }
  std::string path = dir / "meta.gguf";
  save_gguf(path, {}, meta);
  auto [arrays, loaded] = load_gguf(path);
  EXPECT_TRUE(arrays.empty());
  ASSERT_EQ(loaded.size(), meta.size());
  for (const auto& [key, v] : meta) {
    SCOPED_TRACE(key);
    const GGUFMetaData& got = loaded.at(key);
    ASSERT_EQ(got.index(), v.index());
    if (const auto* a = std::get_if<Array>(&v)) {
      const Array& b = std::get<Array>(got);
      EXPECT_EQ(b.dtype(), a->dtype());
      EXPECT_EQ(b.shape(), a->shape());
      EXPECT_EQ(bytes_of(b), bytes_of(*a));
    } else if (const auto* str = std::get_if<std::string>(&v)) {
      EXPECT_EQ(std::get<std::string>(got), *str);
    } else {
      EXPECT_EQ(std::get<std::vector<std::string>>(got),
                std::get<std::vector<std::string>>(v));
    }
  }
}

TEST(GgufRoundTrip, ViewsAreSavedDense) {
  TempDir dir;
  Array base = ops::arange(0, 24, 1, float32).reshape({2, 3, 4});
  std::unordered_map<std::string, Array> arrays = {
      {"transposed", base.transpose({2, 0, 1})},
      {"strided", base.i(slice(), slice(0, 3, 2), slice({}, {}, -1))},
      {"broadcast", ops::arange(0, 3, 1, int16).broadcast_to({4, 3})},
      {"offset", base.i(1)},
  };
  std::unordered_map<std::string, GGUFMetaData> meta = {
      {"reversed", ops::arange(0, 6, 1, int32).i(slice({}, {}, -2))},
      {"scalar view", base.i(1, 2, 3)},
  };
  std::string path = dir / "views.gguf";
  save_gguf(path, arrays, meta);
  auto [loaded, lmeta] = load_gguf(path);
  for (const auto& [name, a] : arrays) {
    SCOPED_TRACE(name);
    EXPECT_EQ(loaded.at(name).shape(), a.shape());
    EXPECT_EQ(bytes_of(loaded.at(name)), bytes_of(a));
  }
  EXPECT_EQ(std::get<Array>(lmeta.at("reversed")).to_vector<int32_t>(),
            (std::vector<int32_t>{5, 3, 1}));
  EXPECT_EQ(std::get<Array>(lmeta.at("scalar view")).ndim(), 0);
  EXPECT_EQ(std::get<Array>(lmeta.at("scalar view")).item<float>(), 23.0f);
}

TEST(GgufSave, AppendsTheExtensionAsMlxDoes) {
  TempDir dir;
  std::unordered_map<std::string, Array> a = {{"x", array({1.0f, 2.0f})}};
  save_gguf(dir / "model", a);
  EXPECT_TRUE(fs::exists(dir / "model.gguf"));
  EXPECT_FALSE(fs::exists(dir / "model"));
  save_gguf(dir / "named.gguf", a);
  EXPECT_TRUE(fs::exists(dir / "named.gguf"));
  save_gguf(dir / "upper.GGUF", a);  // MLX compares case-sensitively
  EXPECT_TRUE(fs::exists(dir / "upper.GGUF.gguf"));
}

// MLX aligns tensor data to 32 bytes; a "general.alignment" in the metadata
// is honoured (the file says so, and readers use it).
TEST(GgufSave, TensorsAreAligned) {
  TempDir dir;
  Array a = array({1.0f, 2.0f, 3.0f}), b = array({7, 8}).astype(int16);
  for (uint32_t align : {32u, 64u, 8u}) {
    SCOPED_TRACE(align);
    std::unordered_map<std::string, GGUFMetaData> meta;
    if (align != 32)
      meta.emplace("general.alignment", array<uint32_t>({align}, {}));
    std::string path = dir / "aligned.gguf";
    save_gguf(path, {{"a", a}, {"b", b}}, meta);
    std::string bytes = read_file(path);
    // "b" comes last: its 4 bytes end the file, at a multiple of the
    // alignment, and "a" is the 12 bytes one alignment before.
    size_t b_at = bytes.size() - 4;
    EXPECT_EQ(b_at % align, 0u);
    EXPECT_EQ(bytes.substr(b_at), bytes_of(b));
    EXPECT_EQ(bytes.substr(b_at - (align >= 16 ? align : 16), 12), bytes_of(a));
    auto [loaded, lmeta] = load_gguf(path);
    EXPECT_EQ(bytes_of(loaded.at("a")), bytes_of(a));
    EXPECT_EQ(bytes_of(loaded.at("b")), bytes_of(b));
  }
  for (GGUFMetaData bad : {GGUFMetaData(array<uint32_t>({48}, {})),
                           GGUFMetaData(array<int32_t>({64}, {})),
                           GGUFMetaData(std::string("64"))}) {
    std::string path = dir / "bad_alignment.gguf";
    expect_io_error(
        [&] {
          save_gguf(path, {{"a", a}}, {{"general.alignment", bad}});
        },
        path, "\"general.alignment\" must be a uint32 scalar");
  }
}

TEST(GgufSave, RefusesWhatMlxRefuses) {
  TempDir dir;
  std::string path = dir / "refused.gguf";
  for (DType d : {bfloat16, float64, uint8, bool_, int64, uint32, uint16,
                  uint64, complex64}) {
    SCOPED_TRACE(dtype_name(d));
    expect_io_error(
        [&] {
          save_gguf(path, {{"t", sample(d, {2}, 1)}});
        },
        path, "tensor \"t\" has dtype " + std::string(dtype_name(d)));
  }
  for (DType d : {float16, bfloat16, float64, complex64}) {
    SCOPED_TRACE(dtype_name(d));
    expect_io_error(
        [&] {
          save_gguf(path, {}, {{"m", sample(d, {2}, 1)}});
        },
        path, "metadata \"m\" has dtype " + std::string(dtype_name(d)));
  }
  expect_io_error(
      [&] {
        save_gguf(path, {}, {{"m", ops::zeros({2, 2}, int32)}});
      },
      path, "is an array of 2 dimensions");
  expect_io_error(
      [&] {
        save_gguf(path, {}, {{"m", ops::zeros({0}, int32)}});
      },
      path, "is an empty array");
  expect_io_error(
      [&] {
        save_gguf(path, {}, {{"m", GGUFMetaData()}});
      },
      path, "holds no value");
  EXPECT_TRUE(fs::is_empty(fs::path(path).parent_path()));  // nothing left
}

TEST(GgufSave, AFailedArrayRethrowsItsError) {
  TempDir dir;
  Array bad = ops::reshape(ops::zeros({6}, float32), {4, 2});
  for (int meta = 0; meta < 2; ++meta) {
    try {
      if (meta)
        save_gguf(dir / "f.gguf", {}, {{"m", bad}});
      else
        save_gguf(dir / "f.gguf", {{"t", bad}});
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_shape) << e.what();
      EXPECT_EQ(e.op_name(), std::optional<std::string>("reshape"));
    }
  }
  EXPECT_TRUE(fs::is_empty(fs::path(dir / "f.gguf").parent_path()));
}

TEST(GgufSave, ReplacesAtomically) {
  TempDir dir;
  std::string path = dir / "m.gguf";
  save_gguf(path, {{"x", array({1.0f, 2.0f, 3.0f})}},
            {{"v", std::string("1")}});
  auto [old_arrays, old_meta] = load_gguf(path);
  Array old = old_arrays.at("x");
  save_gguf(path, {{"x", array({9.0f})}});
  // The old arrays keep their data (the old inode lives on).
  EXPECT_EQ(old.to_vector<float>(), (std::vector<float>{1.0f, 2.0f, 3.0f}));
  EXPECT_EQ(load_gguf(path).first.at("x").to_vector<float>(),
            (std::vector<float>{9.0f}));
  // A refused save leaves the file as it was, and no temporary file.
  std::string before = read_file(path);
  EXPECT_THROW(save_gguf(path, {{"x", array({1.0}).astype(float64)}}), Error);
  EXPECT_EQ(read_file(path), before);
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir / ""))
    ++files;
  EXPECT_EQ(files, 1);
  expect_io_error([&] { save_gguf(dir / "no/such/dir/m.gguf", {}); },
                  dir / "no/such/dir/m.gguf", "cannot create");
}

// tools/record_gguf_fixtures.py --check-nuvec sets NUVEC_GGUF_INTEROP_DIR:
// every fixture nuvec can save is saved there again, for MLX to load.
TEST(GgufInterop, WriteFilesForMlx) {
  const char* out = std::getenv("NUVEC_GGUF_INTEROP_DIR");
  if (!out || !*out)
    GTEST_SKIP() << "set NUVEC_GGUF_INTEROP_DIR (tools/record_gguf_fixtures.py "
                    "--check-nuvec does)";
  std::string fixtures = std::string(NUVEC_REFS_DIR) + "../fixtures/gguf/";
  for (const auto& entry : fs::directory_iterator(fixtures)) {
    std::string name = entry.path().filename();
    std::string target = std::string(out) + "/" + name;
    try {
      auto [arrays, meta] = load_gguf(entry.path());
      save_gguf(target, arrays, meta);
    } catch (const Error& e) {
      fs::remove(target);  // unloadable or unsavable: skipped
    }
  }
}

}  // namespace
