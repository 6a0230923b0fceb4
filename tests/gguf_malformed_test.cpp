// Malformed GGUF input: one test per fault, each an io error naming the file
// and the fault, never a crash or a huge allocation (CI runs these under
// AddressSanitizer and UBSan); truncations and byte flips of the fixtures;
// the fuzzer's corpus (fuzz/fuzz_gguf.cpp).
#include <gtest/gtest.h>
#include <nuvec/gguf.h>
#include <nuvec/nuvec.h>

#include <filesystem>
#include <random>

#include "io/gguf_format.h"
#include "io/mapping.h"
#include "support/io_files.h"

using namespace nuvec;
using namespace nuvec::test;
namespace fs = std::filesystem;

namespace {

const std::string fixtures = std::string(NUVEC_REFS_DIR) + "../fixtures/gguf/";

std::string u32(uint32_t v) {
  return std::string(reinterpret_cast<const char*>(&v), 4);
}
std::string u64(uint64_t v) {
  return std::string(reinterpret_cast<const char*>(&v), 8);
}
std::string str(const std::string& s) { return u64(s.size()) + s; }

std::string header(uint64_t tensors, uint64_t kvs, uint32_t version = 3) {
  return "GGUF" + u32(version) + u64(tensors) + u64(kvs);
}
std::string kv(const std::string& key, uint32_t type,
               const std::string& value) {
  return str(key) + u32(type) + value;
}
std::string info(const std::string& name, std::vector<uint64_t> dims,
                 uint32_t type, uint64_t offset = 0) {
  std::string s = str(name) + u32(static_cast<uint32_t>(dims.size()));
  for (uint64_t d : dims) s += u64(d);
  return s + u32(type) + u64(offset);
}
// A file: header, entries, infos, padding to 32, data.
std::string file(const std::vector<std::string>& kvs,
                 const std::vector<std::string>& infos,
                 const std::string& data = "") {
  std::string s = header(infos.size(), kvs.size());
  for (const auto& k : kvs) s += k;
  for (const auto& i : infos) s += i;
  s.append((32 - s.size() % 32) % 32, '\0');
  return s + data;
}

struct Fault {
  std::string name, bytes, fault;
};

std::vector<Fault> faults() {
  const uint64_t huge = uint64_t(1) << 60, gb = uint64_t(1) << 30;
  std::string f32x2(8, '\0');
  std::vector<uint64_t> dims65(65, 1);
  return {
      {"empty_file", "", "truncated: the file has 0 bytes"},
      {"bad_magic", "GGML" + u32(3) + u64(0) + u64(0), "not a GGUF file"},
      {"truncated_version", "GGUF\x03", "truncated: the version needs 4 bytes"},
      {"version_1", header(0, 0, 1), "unsupported GGUF version 1"},
      {"version_4", header(0, 0, 4), "unsupported GGUF version 4"},
      {"big_endian", header(0, 0, 0x03000000), "big-endian"},
      {"truncated_counts", "GGUF" + u32(3) + u64(0),
       "truncated: the metadata count"},
      {"metadata_count_huge", header(0, huge),
       "claims 1152921504606846976 metadata entries"},
      {"tensor_count_huge", header(huge, 0),
       "claims 1152921504606846976 tensors"},
      {"key_too_long", header(0, 1) + u64(gb) + "abc" + std::string(10, 'x'),
       "the key of metadata entry 0 is 1073741824 bytes long (at most 65535"},
      {"key_truncated", header(0, 1) + u64(100) + "abc" + std::string(10, 'x'),
       "truncated: the key of metadata entry 0 of 100 bytes needs 100"},
      {"string_of_1_gb", file({kv("s", 8, u64(gb) + "x")}, {}),
       "truncated: the string of metadata \"s\" of 1073741824 bytes"},
      {"strings_2_60", file({kv("a", 9, u32(8) + u64(huge))}, {}),
       "claims 1152921504606846976 strings"},
      {"string_in_array_truncated",
       file({kv("a", 9, u32(8) + u64(2) + str("x") + u64(500))}, {}),
       "truncated: string 1 of metadata \"a\" of 500 bytes"},
      {"numbers_over_int_max", file({kv("a", 9, u32(4) + u64(gb * 4))}, {}),
       "claims 4294967296 elements"},
      {"numbers_past_end", file({kv("a", 9, u32(4) + u64(1000))}, {}),
       "truncated: the 1000 uint32 values of metadata \"a\""},
      {"nested_array",
       file({kv("n", 9, u32(9) + u64(1) + u32(4) + u64(1) + u32(7))}, {}),
       "metadata \"n\" is an array of arrays"},
      {"unknown_value_type", file({kv("k", 13, "")}, {}),
       "metadata \"k\" has the unknown value type 13"},
      {"unknown_element_type", file({kv("k", 9, u32(99) + u64(0))}, {}),
       "an array of the unknown value type 99"},
      {"truncated_value", header(0, 1) + str("k") + u32(10) + "abc",
       "truncated: the value of metadata \"k\" needs 8 bytes"},
      {"alignment_not_uint32", file({kv("general.alignment", 5, u32(64))}, {}),
       "\"general.alignment\" must be a uint32, not int32"},
      {"alignment_zero", file({kv("general.alignment", 4, u32(0))}, {}),
       "is 0, not a power of two"},
      {"alignment_48", file({kv("general.alignment", 4, u32(48))}, {}),
       "is 48, not a power of two"},
      {"duplicate_key", file({kv("k", 0, "a"), kv("k", 0, "b")}, {}),
       "the metadata key \"k\" appears twice"},
      {"duplicate_tensor",
       file({}, {info("a\n", {1}, 0), info("a\n", {1}, 0)}, std::string(4, 0)),
       "two tensors are named \"a\\x0a\""},
      {"truncated_tensor_info",
       header(1, 0) + str("tensor_name") + u32(1) + "abc",
       "truncated: dimension 0 of tensor \"tensor_name\""},
      {"too_many_dims", file({}, {info("t", dims65, 0)}),
       "tensor \"t\" has 65 dimensions"},
      {"dim_too_large", file({}, {info("t", {3000000000u}, 0)}), "exceeds"},
      {"elements_overflow",
       file({}, {info("t", {2147483647, 2147483647, 2147483647}, 24)}),
       "multiply to more than 2^63"},
      {"bytes_overflow", file({}, {info("t", {2147483647, 2147483647, 2}, 0)}),
       "needs more than 2^63 bytes"},
      {"unknown_tensor_type", file({}, {info("t", {2}, 99)}, f32x2),
       "tensor \"t\" has the unknown GGUF type 99"},
      {"unsupported_q6_k", file({}, {info("t", {256}, 14)}),
       "the GGUF type Q6_K = 14, which is not supported"},
      {"unsupported_f64", file({}, {info("t", {1}, 28)}, f32x2),
       "the GGUF type F64 = 28"},
      {"offset_unaligned", file({}, {info("t", {1}, 0, 4)}, f32x2),
       "offset 4 is not a multiple of the alignment 32"},
      {"offset_past_end", file({}, {info("t", {1}, 0, 64)}, f32x2),
       "run past the end of the file (the data section has 8 bytes)"},
      {"offset_near_2_64", file({}, {info("t", {1}, 0, ~uint64_t(31))}, f32x2),
       "run past the end"},
      {"data_truncated", file({}, {info("t", {4}, 0)}, f32x2),
       "its 16 bytes of F32 at offset 0"},
      {"data_section_missing", header(1, 0) + info("t", {1}, 0),
       "the data section has 0 bytes"},
      {"quant_data_truncated",
       file({}, {info("w", {64}, 2)}, std::string(18, 0)),
       "its 36 bytes of Q4_0"},
      {"quant_last_dim", file({}, {info("w", {16, 2}, 8)}, std::string(34, 0)),
       "of shape (2, 16): its last dimension is not a multiple of the block "
       "size 32"},
      {"quant_0d", file({}, {info("w", {}, 3)}, std::string(20, 0)),
       "is Q4_1 with no dimensions"},
      {"quant_names_collide",
       file({}, {info("w.scales", {1}, 0), info("w.weight", {32}, 8, 32)},
            std::string(32 + 34, 0)),
       "which another tensor already gave"},
  };
}

class GgufMalformed : public ::testing::TestWithParam<Fault> {};

TEST_P(GgufMalformed, IsAnIoErrorNamingTheFault) {
  const Fault& f = GetParam();
  TempDir dir;
  std::string path = dir / "bad.gguf";
  write_file(path, f.bytes);
  expect_io_error([&] { load_gguf(path); }, path, f.fault);
  // From an exact-size heap copy, where AddressSanitizer sees any overread.
  auto m = io::detail::Mapping::copy_of(f.bytes.data(), f.bytes.size());
  expect_io_error([&] { io::detail::parse_gguf(m, "<bytes>"); }, "<bytes>",
                  f.fault);
}

INSTANTIATE_TEST_SUITE_P(Gguf, GgufMalformed, ::testing::ValuesIn(faults()),
                         [](const ::testing::TestParamInfo<Fault>& i) {
                           return i.param.name;
                         });

TEST(GgufMalformedFiles, ThatAreNotThere) {
  TempDir dir;
  std::string missing = dir / "missing.gguf";
  expect_io_error([&] { load_gguf(missing); }, missing,
                  "cannot open: No such file");
  expect_io_error([&] { load_gguf(dir / ""); }, dir / "", "not a regular file");
}

template <class F>
void io_error_or_success(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io) << e.what();
  }
}

void load_and_touch(const std::string& bytes) {
  auto m = io::detail::Mapping::copy_of(bytes.data(), bytes.size());
  auto [arrays, meta] = io::detail::parse_gguf(m, "<bytes>");
  for (auto& [k, a] : arrays) touch(a);
  for (auto& [k, v] : meta)
    if (auto* a = std::get_if<Array>(&v)) touch(*a);
}

// Every prefix of the fixtures is an io error, or loads when only padding
// after the last tensor is missing.
TEST(GgufMalformedFiles, TruncatedAtEveryByte) {
  for (const char* name : {"meta.gguf", "quant.gguf", "mlx_saved.gguf"}) {
    SCOPED_TRACE(name);
    std::string bytes = read_file(fixtures + name);
    ASSERT_GT(bytes.size(), 64u);
    for (size_t n = 0; n < bytes.size(); ++n)
      io_error_or_success([&] { load_and_touch(bytes.substr(0, n)); });
  }
}

// Byte flips anywhere in the fixtures: an io error or arrays that read.
TEST(GgufMalformedFiles, FlippedBytes) {
  std::mt19937 rng(12345);
  for (const auto& entry : fs::directory_iterator(fixtures)) {
    std::string bytes = read_file(entry.path());
    for (int trial = 0; trial < 300; ++trial) {
      std::string b = bytes;
      for (int k = 0; k < 1 + trial % 3; ++k) {
        size_t at = rng() % b.size();
        b[at] = static_cast<char>(trial % 2 ? rng() : b[at] ^ (1 << rng() % 8));
      }
      io_error_or_success([&] { load_and_touch(b); });
    }
  }
}

// The fuzzer's seed corpus loads or fails cleanly.
TEST(GgufFuzzRegression, CorpusReplays) {
  std::string corpus = std::string(NUVEC_REFS_DIR) + "../../fuzz/corpus/gguf";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    std::string bytes = read_file(entry.path());
    io_error_or_success([&] { load_and_touch(bytes); });
    ++files;
  }
  EXPECT_GE(files, 10);
}

}  // namespace
