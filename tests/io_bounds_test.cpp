// Bounded loading: hostile headers are refused at the byte that shows the
// fault with memory a small multiple of the header (issue 26, "Bounded
// memory"); npy shapes as strict as numpy's literal_eval; GGUF count bounds;
// and LoadOptions{.copy = true}, whose arrays survive the file changing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nuvec/io.h>
#include <nuvec/nuvec.h>
#include <nuvec/tree/checkpoint.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "support/io_files.h"

using namespace nuvec;
using namespace nuvec::test;

namespace {

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}
std::string le32(uint32_t v) { return le64(v).substr(0, 4); }

std::string st_file(const std::string& header) {
  return le64(header.size()) + header;
}

// "[x,x,...]" with n copies of x.
std::string repeated(const std::string& x, size_t n) {
  std::string s = "[";
  s.reserve(n * (x.size() + 1) + 2);
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ',';
    s += x;
  }
  return s + "]";
}

size_t resident_bytes() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<size_t>(resident) *
         static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

// Loads `path` in a child process, which must fail with an io error whose
// message holds `fault`; returns how far the child's peak resident memory
// rose above the parent's resident memory at the fork (the child starts
// with the parent's pages), or SIZE_MAX when the child did not fail so.
size_t child_peak_growth(const std::string& path, const std::string& fault) {
  size_t before = resident_bytes();
  pid_t pid = ::fork();
  if (pid == 0) {
    int code = 1;
    try {
      load_safetensors(path);
    } catch (const Error& e) {
      code = e.kind() == ErrorKind::io &&
                     e.message().find(fault) != std::string::npos
                 ? 0
                 : 2;
      if (code) std::fprintf(stderr, "unexpected error: %s\n", e.what());
    }
    ::_exit(code);
  }
  int status = 0;
  struct rusage ru {};
  if (pid < 0 || ::wait4(pid, &status, 0, &ru) != pid) return SIZE_MAX;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return SIZE_MAX;
  size_t peak = static_cast<size_t>(ru.ru_maxrss) * 1024;  // KiB on Linux
  return peak > before ? peak - before : 0;
}

constexpr size_t MiB = size_t(1) << 20;

// A tree of values kept per JSON value (the old parser) took ~100 bytes a
// value: 4 million values need 400 MB. Bounded parsing keeps a few bytes
// per header byte at most.
void expect_bounded(const std::string& header, const std::string& fault) {
  TempDir dir;
  std::string path = dir / "big.safetensors";
  write_file(path, st_file(header));
  size_t growth = child_peak_growth(path, fault);
  ASSERT_NE(growth, SIZE_MAX) << "the load did not fail with: " << fault;
  EXPECT_LT(growth, 4 * header.size() + 32 * MiB)
      << "header of " << header.size() << " bytes";
}

TEST(IoBounds, LongShapeIsRefusedAtEntry65) {
  // The 50 million zeros, scaled to 4 million (8 MB).
  std::string h =
      "{\"a\":{\"dtype\":\"U8\",\"shape\":" + repeated("0", 4'000'000) +
      ",\"data_offsets\":[0,0]}}";
  expect_bounded(h, "\"shape\" holds 65 dimensions or more");
}

TEST(IoBounds, LongDataOffsetsAreRefusedAtEntry3) {
  std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":" +
                  repeated("0", 4'000'000) + "}}";
  expect_bounded(h, "must hold 2 integers, not 3 or more");
}

TEST(IoBounds, MetadataIsRefusedAtTheFirstNonString) {
  // The 33 million empty arrays as metadata values, scaled down:
  // "k0" names the first value, so nothing after it was kept.
  std::string h = "{\"__metadata__\":{";
  for (int i = 0; i < 1'000'000; ++i)
    h += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":[]";
  h += "}}";
  expect_bounded(h, "value of \"k0\" is not a string");
}

TEST(IoBounds, MetadataArrayOfEmptyArraysIsCheckedWithoutATree) {
  std::string h = "{\"__metadata__\":" + repeated("[]", 3'000'000) + "}";
  expect_bounded(h, "must be an object of strings");
}

TEST(IoBounds, UnknownFieldWithAHugeValueIsRefused) {
  std::string h = "{\"a\":{\"x\":" + repeated("{}", 3'000'000) + "}}";
  expect_bounded(h, "unknown field \"x\"");
}

TEST(IoBounds, DeepNestingIsRefusedAt64Levels) {
  std::string h = "{\"a\":{\"shape\":" + std::string(4'000'000, '[') +
                  std::string(4'000'000, ']') + "}}";
  expect_bounded(h, "nesting deeper than 64 levels");
}

TEST(IoBounds, SyntaxErrorInsideARefusedValueIsReportedAsSuch) {
  TempDir dir;
  std::string path = dir / "bad.safetensors";
  write_file(path, st_file("{\"a\":{\"x\":[1,]}}"));
  expect_io_error([&] { load_safetensors(path); }, path, "not valid JSON");
}

TEST(IoBounds, DuplicateFieldsAndMetadataKeysAreRefused) {
  TempDir dir;
  std::string path = dir / "dup.safetensors";
  write_file(path, st_file("{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\"}}"));
  expect_io_error([&] { load_safetensors(path); }, path,
                  "duplicate key \"dtype\"");
  write_file(path, st_file("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}"));
  expect_io_error([&] { load_safetensors(path); }, path, "duplicate key \"k\"");
  write_file(path, st_file("{\"__metadata__\":{},\"__metadata__\":{}}"));
  expect_io_error([&] { load_safetensors(path); }, path,
                  "duplicate key \"__metadata__\"");
}

TEST(IoBounds, ManySmallTensorsStillLoad) {
  // 20000 empty tensors: a valid header is read whole, fields in any order.
  std::string h = "{";
  for (int i = 0; i < 20000; ++i)
    h += (i ? ",\"t" : "\"t") + std::to_string(i) +
         "\":{\"shape\":[0,3],\"data_offsets\":[0,0],\"dtype\":\"F32\"}";
  h += ",\"__metadata__\":{\"format\":\"pt\"}}";
  TempDir dir;
  std::string path = dir / "many.safetensors";
  write_file(path, st_file(h));
  auto [arrays, meta] = load_safetensors(path);
  EXPECT_EQ(arrays.size(), 20000u);
  EXPECT_EQ(arrays.at("t19999").shape(), (Shape{0, 3}));
  EXPECT_EQ(meta.at("format"), "pt");
}

// ---------------------------------------------------------------- npy

std::string npy_file(const std::string& dict, int major = 1) {
  std::string header = dict;
  size_t pre = major == 1 ? 10 : 12;
  header.append((64 - (pre + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out =
      std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  out += major == 1 ? le32(static_cast<uint32_t>(header.size())).substr(0, 2)
                    : le32(static_cast<uint32_t>(header.size()));
  return out + header;
}

// Python 3 (numpy's ast.literal_eval) refuses "01" ("leading zeros in
// decimal integer literals are not permitted") but reads "0" and "00" as 0.
TEST(IoBoundsNpy, LeadingZerosAreRefusedAsNumpyRefusesThem) {
  TempDir dir;
  std::string path = dir / "x.npy";
  for (std::string shape : {"(01,)", "(2, 03)", "(007,)", "(00010,)"}) {
    write_file(path, npy_file("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': " +
                              shape + ", }"));
    expect_io_error([&] { load_npy(path); }, path, "leading zero");
  }
  write_file(path, npy_file("{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (00,), }"));
  EXPECT_EQ(load_npy(path).shape(), (Shape{0}));
  write_file(path, npy_file("{'descr': '<u1', 'fortran_order': False, "
                            "'shape': (0, 10), }"));
  EXPECT_EQ(load_npy(path).shape(), (Shape{0, 10}));
}

// numpy reads Python 2's long suffix in versions 1.0 and 2.0 only.
TEST(IoBoundsNpy, LongSuffixInVersions1And2Only) {
  TempDir dir;
  std::string path = dir / "x.npy";
  std::string dict =
      "{'descr': '|u1', 'fortran_order': False, "
      "'shape': (0L, 2L), }";
  for (int major : {1, 2}) {
    write_file(path, npy_file(dict, major));
    EXPECT_EQ(load_npy(path).shape(), (Shape{0, 2})) << major;
  }
  write_file(path, npy_file(dict, 3));
  expect_io_error([&] { load_npy(path); }, path, "not an npy dict");
}

// ---------------------------------------------------------------- GGUF

std::string gguf_prefix(uint64_t tensors, uint64_t kvs) {
  return std::string("GGUF") + le32(3) + le64(tensors) + le64(kvs);
}

TEST(IoBoundsGguf, MetadataCountIsBoundedEvenWhenTheFileHoldsThem) {
  // 65537 real uint8 entries: the count, not the file size, refuses them.
  std::string f = gguf_prefix(0, 65537);
  for (int i = 0; i < 65537; ++i) {
    std::string key = "k" + std::to_string(i);
    f += le64(key.size()) + key + le32(0) + std::string(1, '\x01');
  }
  TempDir dir;
  std::string path = dir / "meta.gguf";
  write_file(path, f);
  expect_io_error([&] { load_gguf(path); }, path,
                  "65537 metadata entries (at most 65536");
}

TEST(IoBoundsGguf, TensorCountIsBounded) {
  std::string f = gguf_prefix((uint64_t(1) << 18) + 1, 0);
  f += std::string(((size_t(1) << 18) + 1) * 24, '\0');
  TempDir dir;
  std::string path = dir / "tensors.gguf";
  write_file(path, f);
  expect_io_error([&] { load_gguf(path); }, path,
                  "262145 tensors (at most 262144");
}

// ---------------------------------------------------------------- copy mode

// Truncates the file and then rewrites its first bytes in place (what a
// process that rewrites a file without renaming does); a mapping would
// fault on the next read of the lost pages.
void clobber(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 0), 0);
  std::string junk(4096, '\x5a');
  ASSERT_EQ(::write(fd, junk.data(), junk.size()),
            static_cast<ssize_t>(junk.size()));
  ::close(fd);
}

std::vector<float> ramp(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = 0.5f * i - 7.0f;
  return v;
}

TEST(IoCopyMode, SafetensorsArraysSurviveTheFileChanging) {
  TempDir dir;
  std::string path = dir / "w.safetensors";
  auto v = ramp(100000);
  save_safetensors(
      path, {{"w", array(v.data(), {100, 1000})}, {"b", array({1, 2, 3})}},
      {{"k", "v"}});
  size_t active = get_active_memory();
  auto [arrays, meta] = load_safetensors(path, {.copy = true});
  // The whole file is in one allocator buffer (counted by the limit).
  EXPECT_GE(get_active_memory(), active + v.size() * 4);
  clobber(path);
  EXPECT_EQ(arrays.at("w").to_vector<float>(), v);
  EXPECT_EQ(arrays.at("b").to_vector<int>(), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(meta.at("k"), "v");
  // MLX's call with a braced default still means the stream overload.
  save_safetensors(path, {{"b", array({4})}});
  EXPECT_EQ(load_safetensors(path, {}).first.at("b").item<int>(), 4);
}

TEST(IoCopyMode, NpyArraySurvivesTheFileChanging) {
  TempDir dir;
  std::string path = dir / "x.npy";
  auto v = ramp(50000);
  save_npy(path, array(v.data(), {50000}));
  Array x = load_npy(path, {.copy = true});
  clobber(path);
  EXPECT_EQ(x.to_vector<float>(), v);
  // Fortran order stays a view of the copied buffer.
  save_npy(path, ops::transpose(array(v.data(), {100, 500})));
  Array t = load_npy(path, {.copy = true});
  clobber(path);
  EXPECT_EQ(ops::transpose(t).reshape({-1}).to_vector<float>(), v);
}

TEST(IoCopyMode, GgufArraysSurviveTheFileChanging) {
  TempDir dir;
  std::string path = dir / "m.gguf";
  auto v = ramp(4096);
  save_gguf(path, {{"w", array(v.data(), {64, 64})}},
            {{"name", std::string("m")}});
  auto [arrays, meta] = load_gguf(path, {.copy = true});
  clobber(path);
  EXPECT_EQ(arrays.at("w").to_vector<float>(), v);
  EXPECT_EQ(std::get<std::string>(meta.at("name")), "m");
}

TEST(IoCopyMode, TreeCheckpointSurvivesTheFileChanging) {
  TempDir dir;
  std::string path = dir / "ckpt.safetensors";
  auto v = ramp(3000);
  std::map<std::string, Array> tree{{"a", array(v.data(), {3, 1000})},
                                    {"b", array({5.0f})}};
  save(path, tree);
  std::map<std::string, Array> back{{"a", ops::zeros({3, 1000})},
                                    {"b", ops::zeros({1})}};
  load_into(path, back, {.copy = true});
  clobber(path);
  EXPECT_EQ(back.at("a").reshape({-1}).to_vector<float>(), v);
  EXPECT_EQ(back.at("b").item<float>(), 5.0f);
}

TEST(IoCopyMode, TheMemoryLimitCoversTheCopy) {
  TempDir dir;
  std::string path = dir / "big.npy";
  auto v = ramp(1 << 20);  // 4 MiB
  save_npy(path, array(v.data(), {1 << 20}));
  clear_cache();
  size_t old = set_memory_limit(get_active_memory() + MiB);
  try {
    load_npy(path, {.copy = true});
    ADD_FAILURE() << "a 4 MiB copy passed a 1 MiB allowance";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory) << e.what();
  }
  // The mapped load takes no allocator memory.
  Array mapped = load_npy(path);
  set_memory_limit(old);
  EXPECT_EQ(mapped.to_vector<float>()[12345], v[12345]);
}

}  // namespace
