// File I/O: safetensors and npy round trips, fixtures written by numpy, the
// safetensors package and MLX (tests/fixtures/io, tools/record_io_fixtures.py)
// and zero-copy loading (docs/io.md). Malformed input: io_malformed_test.cpp.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nuvec/io.h>
#include <nuvec/nuvec.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "io/loaders.h"
#include "nuvec/core/graph.h"
#include "support/io_files.h"
#include "support/cpu_default.h"

using namespace nuvec;
using namespace nuvec::test;
namespace fs = std::filesystem;

namespace {

const std::string fixtures = std::string(NUVEC_REFS_DIR) + "../fixtures/io/";

std::vector<DType> all_dtypes() {
  std::vector<DType> v;
  for (int i = 0; i < DType::count; ++i)
    v.push_back(DType(static_cast<DType::Val>(i)));
  return v;
}

bool is_copy(const Array& a) { return a.eval().desc()->data->from_allocator; }

// ---------------------------------------------------------------- round trips

TEST(IoRoundTrip, SafetensorsEveryDtypeAndShape) {
  TempDir dir;
  const std::vector<Shape> shapes = {
      {}, {1}, {7}, {3, 5}, {2, 1, 3}, {0}, {4, 0, 2}, {2, 3, 1, 2, 3}};
  std::map<std::string, Array> arrays;
  unsigned seed = 1;
  for (DType d : all_dtypes())
    for (size_t s = 0; s < shapes.size(); ++s)
      arrays[std::string(dtype_name(d)) + "/" + std::to_string(s)] =
          sample(d, shapes[s], seed++);
  std::string path = dir / "all.safetensors";
  save_safetensors(path, arrays);
  auto loaded = load_safetensors(path).first;
  ASSERT_EQ(loaded.size(), arrays.size());
  for (const auto& [name, a] : arrays) {
    SCOPED_TRACE(name);
    const Array& b = loaded.at(name);
    EXPECT_EQ(b.dtype(), a.dtype());
    EXPECT_EQ(b.shape(), a.shape());
    EXPECT_EQ(bytes_of(b), bytes_of(a));
    // Our writer aligns every tensor, so nothing is copied on loading.
    EXPECT_FALSE(is_copy(b));
  }
  EXPECT_TRUE(load_safetensors_metadata(path).empty());
  // The header is padded with spaces to a multiple of 8.
  std::string bytes = read_file(path);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes.substr(8, 2), "{\"");
}

TEST(IoRoundTrip, SafetensorsViewsAndMetadata) {
  TempDir dir;
  Array base = ops::arange(0, 24, 1, float32).reshape({2, 3, 4});
  std::map<std::string, Array> arrays = {
      {"transposed", base.transpose({2, 0, 1})},
      {"strided", base.i(slice(), slice(0, 3, 2), slice({}, {}, -1))},
      {"broadcast", ops::arange(0, 3, 1, int16).broadcast_to({4, 3})},
      {"offset", base.i(1)},
      {"zero_d", array(2.5).astype(float64)},
  };
  std::unordered_map<std::string, std::string> meta = {
      {"format", "nuvec"},
      {"quote\"back\\slash", "line\nbreak\ttab\x01"},
      {"ünï", "✓"},
      {"", ""}};
  std::string path = dir / "views.safetensors";
  save_safetensors(path, arrays, meta);
  auto loaded = load_safetensors(path).first;
  for (const auto& [name, a] : arrays) {
    SCOPED_TRACE(name);
    EXPECT_EQ(loaded.at(name).shape(), a.shape());
    EXPECT_EQ(bytes_of(loaded.at(name)), bytes_of(a));
  }
  EXPECT_EQ(loaded.at("transposed").to_vector<float>()[1], 4.0f);
  EXPECT_EQ(load_safetensors(path).second, meta);
  EXPECT_EQ(load_safetensors_metadata(path), (std::map<std::string, std::string>(meta.begin(), meta.end())));
}

TEST(IoRoundTrip, NpyEveryDtype) {
  TempDir dir;
  unsigned seed = 100;
  for (DType d : all_dtypes()) {
    for (const Shape& s : std::vector<Shape>{{}, {5}, {2, 3, 2}, {0, 3}}) {
      Array a = sample(d, s, seed++);
      std::string path = dir / "a.npy";
      save_npy(path, a);
      Array b = load_npy(path);
      SCOPED_TRACE(std::string(dtype_name(d)) + " ndim " +
                   std::to_string(s.size()));
      EXPECT_EQ(b.dtype(), d);
      EXPECT_EQ(b.shape(), s);
      EXPECT_EQ(bytes_of(b), bytes_of(a));
      EXPECT_FALSE(is_copy(b));  // the data is 64-byte aligned
      EXPECT_EQ(read_file(path).find("\n") % 64, 63u);
    }
  }
}

TEST(IoRoundTrip, NpyTransposedViewIsWrittenInFortranOrder) {
  TempDir dir;
  Array a = ops::arange(0, 24, 1, int32).reshape({2, 3, 4});
  std::string path = dir / "t.npy";
  save_npy(path, a.t());
  EXPECT_NE(read_file(path).find("'fortran_order': True"), std::string::npos);
  Array b = load_npy(path);
  EXPECT_EQ(b.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(b.to_vector<int>(), a.t().to_vector<int>());
  EXPECT_EQ(b.eval().strides(), (Strides{1, 4, 12}));  // a view of the file
  EXPECT_FALSE(is_copy(b));
  // A view that is neither C nor Fortran contiguous is copied to C order.
  save_npy(path, a.i(slice(), slice({}, {}, 2)));
  EXPECT_NE(
      read_file(path).find("'fortran_order': False, 'shape': (2, 2, 4), }"),
      std::string::npos);
  EXPECT_EQ(load_npy(path).to_vector<int>(),
            a.i(slice(), slice({}, {}, 2)).to_vector<int>());
}

TEST(IoRoundTrip, NpyHeaderMatchesNumpy) {
  TempDir dir;
  std::string path = dir / "f.npy";
  save_npy(path, ops::zeros({3}, float32));
  std::string bytes = read_file(path);
  // What np.save(np.zeros(3, np.float32)) writes, byte for byte.
  std::string expected =
      std::string("\x93NUMPY\x01\x00v\x00", 10) +
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  expected += std::string(128 - 1 - expected.size(), ' ') + "\n" +
              std::string(12, '\0');
  EXPECT_EQ(bytes, expected);
  save_npy(path, ops::zeros({2}, bfloat16));
  EXPECT_NE(read_file(path).find("'descr': '<V2'"), std::string::npos);
}

TEST(IoRoundTrip, SavingOverALoadedFileKeepsItsArrays) {
  TempDir dir;
  std::string path = dir / "w.safetensors";
  save_safetensors(path, {{"w", ops::full({4}, 1.0, float32)}});
  auto old = load_safetensors(path).first;
  save_safetensors(path, {{"w", ops::full({4}, 2.0, float32)}});
  EXPECT_EQ(old.at("w").to_vector<float>(), std::vector<float>(4, 1.0f));
  EXPECT_EQ(load_safetensors(path).first.at("w").to_vector<float>(),
            std::vector<float>(4, 2.0f));
  // Saving the loaded arrays into their own file works too.
  save_safetensors(path, old);
  EXPECT_EQ(load_safetensors(path).first.at("w").to_vector<float>(),
            std::vector<float>(4, 1.0f));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(IoRoundTrip, SaveErrors) {
  TempDir dir;
  std::string missing = dir / "no/such/dir/x.safetensors";
  expect_io_error(
      [&] {
        save_safetensors(missing, {{"a", ops::zeros({1})}});
      },
      missing, "cannot create");
  expect_io_error([&] { save_npy(missing, ops::zeros({1})); }, missing,
                  "cannot create");
  std::string path = dir / "x.safetensors";
  expect_io_error(
      [&] {
        save_safetensors(path, {{"\xff", ops::zeros({1})}});
      },
      path, "not valid UTF-8");
  expect_io_error(
      [&] {
        save_safetensors(path, {{"__metadata__", ops::zeros({1})}});
      },
      path, "reserved");
  expect_io_error(
      [&] {
        save_safetensors(path, {}, {{"k", "\xc0\xaf"}});
      },
      path, "not valid UTF-8");
  // A failed array keeps its own error.
  Array bad = ops::zeros({2, 3}).reshape({4});
  try {
    save_safetensors(path, {{"bad", bad}});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_shape);
  }
  EXPECT_FALSE(fs::exists(path));
  save_safetensors(path, {});  // an empty file is valid
  EXPECT_TRUE(load_safetensors(path).first.empty());
}

// ------------------------------------------------------------------- fixtures

struct Expected {
  std::string file, key, dtype, hex;
  Shape shape;
};

std::vector<Expected> read_expected() {
  std::vector<Expected> out;
  std::ifstream f(fixtures + "expected.txt");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream s(line);
    Expected e;
    std::string shape;
    s >> e.file >> e.key >> e.dtype >> shape >> e.hex;
    if (shape != "-") {
      std::istringstream ds(shape);
      std::string d;
      while (std::getline(ds, d, ',')) e.shape.push_back(std::stoi(d));
    }
    if (e.hex == "-") e.hex.clear();
    out.push_back(e);
  }
  return out;
}

std::string from_hex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

Array load_expected(const Expected& e) {
  if (e.key == "-") return load_npy(fixtures + e.file);
  return load_safetensors(fixtures + e.file).first.at(e.key);
}

TEST(IoFixtures, EveryFileHoldsTheRecordedValues) {
  auto expected = read_expected();
  ASSERT_GE(expected.size(), 60u);
  for (const auto& e : expected) {
    SCOPED_TRACE(e.file + " " + e.key);
    Array a = load_expected(e);
    EXPECT_EQ(dtype_name(a.dtype()), e.dtype);
    EXPECT_EQ(a.shape(), e.shape);
    EXPECT_EQ(bytes_of(a), from_hex(e.hex));
  }
}

TEST(IoFixtures, CopiesOnlyWhatCannotBeMapped) {
  // Fortran order: a transposed view of the mapping.
  Array f = load_npy(fixtures + "np_float32_f.npy");
  EXPECT_EQ(f.eval().strides(), (Strides{1, 2, 6}));
  EXPECT_FALSE(is_copy(f));
  EXPECT_FALSE(is_copy(load_npy(fixtures + "np_int64_c.npy")));
  // Big-endian data is byte-swapped into a copy.
  EXPECT_TRUE(is_copy(load_npy(fixtures + "np_be_int32.npy")));
  // MLX pads npy headers to 16 bytes: its float32 data is misaligned.
  EXPECT_TRUE(is_copy(load_npy(fixtures + "mlx_f32.npy")));
  EXPECT_FALSE(is_copy(load_npy(fixtures + "mlx_bf16.npy")));
  auto mlx = load_safetensors(fixtures + "mlx.safetensors").first;
  EXPECT_TRUE(is_copy(mlx.at("m_complex64")));  // at offset 111
  EXPECT_EQ(load_safetensors_metadata(fixtures + "mlx.safetensors"),
            (std::map<std::string, std::string>{{"made_by", "mlx"}}));
  EXPECT_EQ(load_safetensors_metadata(fixtures + "st_numpy.safetensors"),
            (std::map<std::string, std::string>{
                {"format", "np"}, {"note", "ünïcode \"quoted\" \\ ✓"}}));
}

// Writes what our savers make of every fixture, for tools/io_interop.py to
// load with numpy, safetensors and MLX (skipped unless asked for).
TEST(IoFixtures, WriteFilesForInterop) {
  const char* out = std::getenv("NUVEC_IO_INTEROP_DIR");
  if (!out)
    GTEST_SKIP() << "set NUVEC_IO_INTEROP_DIR (tools/io_interop.py does)";
  std::string dir = out;
  std::ofstream list(dir + "/expected.txt");
  std::map<std::string, Array> all;
  int i = 0;
  for (const auto& e : read_expected()) {
    Array a = load_expected(e);
    std::string name = "ours_" + std::to_string(i++);
    save_npy(dir + "/" + name + ".npy", a);
    all[name] = a;
    std::string shape;
    for (size_t k = 0; k < e.shape.size(); ++k) {
      if (k) shape += ',';
      shape += std::to_string(e.shape[k]);
    }
    std::string line = name + ".npy - " + e.dtype + " " +
                       (shape.empty() ? "-" : shape) + " " +
                       (e.hex.empty() ? "-" : e.hex);
    list << line << "\n";
    list << "ours.safetensors " << name << line.substr(line.find(' ') + 2)
         << "\n";
  }
  // A transposed view, saved in Fortran order.
  save_npy(dir + "/ours_fortran.npy",
           ops::arange(0, 6, 1, int32).reshape({2, 3}).t());
  list << "ours_fortran.npy - int32 3,2 "
          "000000000300000001000000040000000200000005000000\n";
  save_safetensors(dir + "/ours.safetensors", all, {{"made_by", "nuvec"}});
  // MLX (0.32) reads no F64 from safetensors.
  std::erase_if(all,
                [](const auto& kv) { return kv.second.dtype() == float64; });
  save_safetensors(dir + "/ours_no_f64.safetensors", all);
}

// ------------------------------------------------------------------ zero copy

int64_t resident_bytes() {
  std::ifstream f("/proc/self/statm");
  int64_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

// The address range of `path` in /proc/self/maps, or {0, 0}.
std::pair<uintptr_t, uintptr_t> mapped_range(const std::string& path) {
  std::ifstream f("/proc/self/maps");
  std::string line;
  while (std::getline(f, line)) {
    if (line.size() < path.size() ||
        line.compare(line.size() - path.size(), path.size(), path) != 0)
      continue;
    uintptr_t lo = 0, hi = 0;
    std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi);
    return {lo, hi};
  }
  return {0, 0};
}

TEST(IoZeroCopy, OneGibFileLoadsWithoutReadingIt) {
  nuvec::testing::CpuDefault cpu_default;
  TempDir dir;
  std::string path = dir / "big.safetensors";
  const uint64_t n = uint64_t(1) << 28;  // float32 elements: 1 GiB
  std::string header = "{\"big\":{\"dtype\":\"F32\",\"shape\":[" +
                       std::to_string(n) + "],\"data_offsets\":[0," +
                       std::to_string(4 * n) + "]}}";
  header.append((8 - header.size() % 8) % 8, ' ');
  {
    uint64_t len = header.size();
    std::string bytes(reinterpret_cast<const char*>(&len), 8);
    write_file(path, bytes + header);
    // A sparse file: the data reads as zeros and takes no disk.
    ASSERT_EQ(
        ::truncate(path.c_str(), static_cast<off_t>(8 + header.size() + 4 * n)),
        0);
  }
  int64_t mappings = io::detail::live_mappings();
  int64_t before = resident_bytes();
  auto t0 = std::chrono::steady_clock::now();
  auto arrays = load_safetensors(path).first;
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - t0)
                  .count();
  std::printf("[ info     ] loaded a 1 GiB file in %.3f ms\n", ms);
  Array big = arrays.at("big");
  EXPECT_EQ(big.shape(), (Shape{1 << 28}));
  EXPECT_LT(resident_bytes() - before, int64_t(64) << 20);
  auto [lo, hi] = mapped_range(path);
  auto ptr = reinterpret_cast<uintptr_t>(big.desc()->data->ptr);
  EXPECT_TRUE(ptr >= lo && ptr + (4 * n) <= hi)
      << std::hex << ptr << " " << lo << "-" << hi;
  EXPECT_EQ(io::detail::live_mappings(), mappings + 1);
  // Reading a little touches a little.
  EXPECT_EQ(big.i(slice(1000, 1010)).sum().item<float>(), 0.0f);
  EXPECT_EQ(big.i(-1).item<float>(), 0.0f);
  EXPECT_LT(resident_bytes() - before, int64_t(64) << 20);
  arrays.clear();
  EXPECT_NE(mapped_range(path).first, 0u);  // `big` still holds the mapping
  big = Array();
  EXPECT_EQ(mapped_range(path).first, 0u);
  EXPECT_EQ(io::detail::live_mappings(), mappings);
}

TEST(IoZeroCopy, LoadedBuffersAreNeverDonated) {
  TempDir dir;
  std::string path = dir / "x.safetensors";
  save_safetensors(path, {{"x", ops::full({1000}, 3.0, float32)}});
  {
    Array x = load_safetensors(path).first.at("x");
    EXPECT_FALSE(x.desc()->data->from_allocator);
    // x's buffer is held by nothing else: an allocator buffer would be
    // reused for the output (and the read-only mapping would fault).
    Array y = ops::add(std::move(x), 1.0);
    EXPECT_EQ(y.to_vector<float>()[999], 4.0f);
  }
  EXPECT_EQ(load_safetensors(path).first.at("x").to_vector<float>()[0], 3.0f);
}

TEST(IoZeroCopy, MisalignedAndBoolTensorsAreCopied) {
  TempDir dir;
  std::string path = dir / "odd.safetensors";
  std::string header =
      "{\"b\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[0,3]},"
      "\"f\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[3,11]},"
      "\"u\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[11,12]}}";
  header.append((8 - header.size() % 8) % 8, ' ');
  uint64_t len = header.size();
  float f[2] = {1.5f, -2.0f};
  write_file(path, std::string(reinterpret_cast<const char*>(&len), 8) +
                       header + std::string("\x00\x02\xff", 3) +
                       std::string(reinterpret_cast<char*>(f), 8) + "\x07");
  auto a = load_safetensors(path).first;
  // Bool bytes other than 0 and 1 become 1 in a copy.
  EXPECT_TRUE(is_copy(a.at("b")));
  EXPECT_EQ(bytes_of(a.at("b")), std::string("\x00\x01\x01", 3));
  EXPECT_EQ(ops::logical_not(a.at("b")).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 0, 0}));
  EXPECT_TRUE(is_copy(a.at("f")));
  EXPECT_EQ(a.at("f").to_vector<float>(), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_FALSE(is_copy(a.at("u")));
  EXPECT_EQ(a.at("u").item<int>(), 7);
}

}  // namespace
