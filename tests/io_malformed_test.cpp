// Malformed npy and safetensors input: one test per fault, each an io error
// naming the file and the fault, never a crash; and the fuzzers'
// regressions (fuzz/, docs/io.md).
#include <gtest/gtest.h>
#include <nuvec/io.h>
#include <nuvec/nuvec.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "io/loaders.h"
#include "support/io_files.h"

using namespace nuvec;
using namespace nuvec::test;
namespace fs = std::filesystem;

namespace {

// ------------------------------------------------------------ malformed input

std::string le64(uint64_t v) {
  return std::string(reinterpret_cast<const char*>(&v), 8);
}

std::string st_file(const std::string& header, const std::string& data = "") {
  return le64(header.size()) + header + data;
}

std::string entry(const std::string& name, const std::string& dtype,
                  const std::string& shape, const std::string& offsets) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}

std::string one(const std::string& e, const std::string& data = "") {
  return st_file("{" + e + "}", data);
}

struct Fault {
  std::string name, bytes, fault;
};

std::vector<Fault> safetensors_faults() {
  std::string ones65 = "[1";
  for (int i = 0; i < 64; ++i) ones65 += ",1";
  ones65 += "]";
  std::string u8 = entry("a", "U8", "[1]", "[0,1]");
  return {
      {"empty_file", "", "truncated"},
      {"truncated_length", std::string("\x10\0\0", 3), "truncated"},
      {"header_past_end", le64(100) + "{}", "runs past the end"},
      {"header_length_huge", le64(~uint64_t(0)) + "{}", "runs past the end"},
      {"header_empty", le64(0), "not JSON"},
      {"header_not_object", st_file("[1]"), "not JSON"},
      {"header_not_json", st_file("{\"a\":}"), "not valid JSON"},
      {"header_trailing_data", st_file("{} {}"), "unexpected data after"},
      {"header_unterminated", st_file("{\"a"), "unterminated string"},
      {"non_utf8_name", one(entry("\xff", "U8", "[1]", "[0,1]"), "\x01"),
       "invalid UTF-8"},
      {"overlong_utf8_name",
       one(entry("\xc0\xaf", "U8", "[1]", "[0,1]"), "\x01"), "invalid UTF-8"},
      {"surrogate_utf8_name",
       one(entry("\xed\xa0\x80", "U8", "[1]", "[0,1]"), "\x01"),
       "invalid UTF-8"},
      {"lone_surrogate_escape",
       one(entry("\\ud800", "U8", "[1]", "[0,1]"), "\x01"),
       "lone high surrogate"},
      {"control_char_name", one(entry("a\x01", "U8", "[1]", "[0,1]"), "\x01"),
       "control character"},
      {"invalid_escape", one(entry("a\\x", "U8", "[1]", "[0,1]"), "\x01"),
       "invalid escape"},
      {"duplicate_names", st_file("{" + u8 + "," + u8 + "}", "\x01"),
       "duplicate key \"a\""},
      {"deep_nesting",
       st_file("{\"__metadata__\":" + std::string(100, '[') +
               std::string(100, ']') + "}"),
       "nesting deeper"},
      {"bad_literal", one("\"a\":tru"), "invalid literal"},
      {"leading_zero", one(entry("a", "U8", "[01]", "[0,1]"), "\x01"),
       "not valid JSON"},
      {"unknown_dtype", one(entry("a", "F8_E4M3", "[1]", "[0,1]"), "\x01"),
       "unsupported dtype \"F8_E4M3\""},
      {"dtype_not_string",
       one("\"a\":{\"dtype\":1,\"shape\":[1],\"data_offsets\":[0,1]}", "\x01"),
       "\"dtype\" is not a string"},
      {"negative_dim", one(entry("a", "U8", "[-1]", "[0,1]"), "\x01"),
       "negative number -1"},
      {"fractional_dim", one(entry("a", "U8", "[1.5]", "[0,1]"), "\x01"),
       "not an integer"},
      {"exponent_dim", one(entry("a", "U8", "[1e0]", "[0,1]"), "\x01"),
       "not an integer"},
      {"dim_too_large", one(entry("a", "U8", "[3000000000]", "[0,1]"), "\x01"),
       "exceeds"},
      {"elements_overflow",
       one(entry("a", "U8", "[2147483647,2147483647,2147483647]", "[0,1]"),
           "\x01"),
       "nonzero dimensions multiply to more than 2^63"},
      {"bytes_overflow",
       one(entry("a", "F64", "[2147483647,2147483647,2]", "[0,1]"), "\x01"),
       "more than 2^63 bytes"},
      {"too_many_dims", one(entry("a", "U8", ones65, "[0,1]"), "\x01"),
       "65 dimensions"},
      {"shape_not_array", one(entry("a", "U8", "3", "[0,1]"), "\x01"),
       "\"shape\" is not an array"},
      {"shape_not_integers", one(entry("a", "U8", "[\"1\"]", "[0,1]"), "\x01"),
       "other than integers"},
      {"offset_past_2_64",
       one(entry("a", "U8", "[1]", "[0,18446744073709551616]"), "\x01"),
       "not an integer below 2^64"},
      {"offsets_outside_data", one(u8),
       "lie outside the data section of 0 bytes"},
      {"offsets_reversed", one(entry("a", "U8", "[0]", "[1,0]"), "\x01"),
       "end before they begin"},
      {"offsets_count", one(entry("a", "U8", "[1]", "[0,1,1]"), "\x01"),
       "must hold 2 integers"},
      {"size_disagrees_with_offsets",
       one(entry("a", "F32", "[2]", "[0,4]"), "abcd"), "need 8"},
      {"overlapping_tensors",
       st_file("{" + entry("a", "U8", "[2]", "[0,2]") + "," +
                   entry("b", "U8", "[2]", "[1,3]") + "}",
               "xyz"),
       "tensor \"b\" overlaps tensor \"a\""},
      {"gap_between_tensors",
       st_file("{" + entry("a", "U8", "[1]", "[0,1]") + "," +
                   entry("b", "U8", "[1]", "[2,3]") + "}",
               "xyz"),
       "bytes [1, 2) of the data section belong to no tensor"},
      {"uncovered_tail", one(u8, "xy"),
       "bytes [1, 2) of the data section belong to no tensor"},
      {"missing_field", one("\"a\":{\"dtype\":\"U8\",\"shape\":[1]}", "\x01"),
       "lacks \"data_offsets\""},
      {"unknown_field",
       one("\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":"
           "1}",
           "\x01"),
       "unknown field \"x\""},
      {"tensor_not_object", one("\"a\":[1]"),
       "tensor \"a\" is not a JSON object"},
      {"metadata_not_object", one("\"__metadata__\":[]"),
       "must be an object of strings"},
      {"metadata_value_not_string", one("\"__metadata__\":{\"k\":1}"),
       "value of \"k\" is not a string"},
  };
}

class IoMalformedSafetensors : public ::testing::TestWithParam<Fault> {};

TEST_P(IoMalformedSafetensors, IsAnIoErrorNamingTheFault) {
  const Fault& f = GetParam();
  TempDir dir;
  std::string path = dir / "bad.safetensors";
  write_file(path, f.bytes);
  expect_io_error([&] { load_safetensors(path); }, path, f.fault);
  expect_io_error([&] { load_safetensors_metadata(path); }, path, f.fault);
  // From an exact-size heap copy, where AddressSanitizer sees any overread.
  auto m = io::detail::Mapping::copy_of(f.bytes.data(), f.bytes.size());
  expect_io_error(
      [&] {
        io::detail::parse_safetensors(m, "load_safetensors", "<bytes>", true);
      },
      "<bytes>", f.fault);
}

std::string npy(const std::string& header, const std::string& data = "",
                int major = 1) {
  std::string out =
      std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  uint32_t n = static_cast<uint32_t>(header.size());
  out += std::string(reinterpret_cast<const char*>(&n), major == 1 ? 2 : 4);
  return out + header + data;
}

std::string dict(const std::string& descr, const std::string& shape,
                 const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran +
         ", 'shape': " + shape + ", }";
}

std::vector<Fault> npy_faults() {
  std::string dims65 = "(1";
  for (int i = 0; i < 64; ++i) dims65 += ", 1";
  dims65 += ")";
  return {
      {"empty_file", "", "truncated"},
      {"short_preamble", std::string("\x93NUMPY\x01", 7), "truncated"},
      {"bad_magic", std::string("\x93NUMPZ\x01\x00\x00\x00", 10),
       "not an npy file"},
      {"version_4", npy(dict("<f4", "(1,)"), "abcd", 4),
       "unsupported npy format version 4.0"},
      {"version_1_1", npy(dict("<f4", "(1,)"), "abcd", 1).replace(7, 1, "\x01"),
       "version 1.1"},
      {"v2_short_length", std::string("\x93NUMPY\x02\x00\x10\x00", 10),
       "truncated in the header length"},
      {"header_past_end", std::string("\x93NUMPY\x01\x00\xc8\x00{}", 12),
       "runs past the end"},
      {"not_a_dict", npy("hello"), "not an npy dict"},
      {"missing_key", npy("{'descr': '<f4', 'shape': (1,)}", "abcd"),
       "lacks 'fortran_order'"},
      {"unknown_key", npy("{'descr': '<f4', 'x': 1}", "abcd"),
       "unknown key 'x'"},
      {"duplicate_key", npy("{'descr': '<f4', 'descr': '<f4'}", "abcd"),
       "repeats the key 'descr'"},
      {"structured_dtype",
       npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}",
           "abcd"),
       "structured dtypes"},
      {"complex128", npy(dict("<c16", "(1,)"), std::string(16, 'x')),
       "unsupported dtype '<c16'"},
      {"object_dtype", npy(dict("|O", "(1,)"), std::string(8, 'x')),
       "unsupported dtype '|O'"},
      {"unicode_dtype", npy(dict("<U3", "(1,)"), std::string(12, 'x')),
       "unsupported dtype '<U3'"},
      {"negative_dim", npy(dict("<f4", "(-1,)")), "negative dimension"},
      {"dim_too_large", npy(dict("<f4", "(3000000000,)")), "exceeds"},
      {"elements_overflow",
       npy(dict("|u1", "(2147483647, 2147483647, 2147483647)")),
       "nonzero dimensions multiply to more than 2^63"},
      {"too_many_dims", npy(dict("<f4", dims65), "abcd"),
       "more than 64 dimensions"},
      {"truncated_data", npy(dict("<f4", "(3,)"), "abcdefgh"),
       "truncated: shape (3,) of <f4 needs 12"},
      {"trailing_bytes", npy(dict("<f4", "(1,)"), "abcdefgh"),
       "trailing bytes"},
      {"tuple_without_comma", npy(dict("<f4", "(3)"), std::string(12, 'x')),
       "trailing comma"},
      {"shape_missing_comma", npy(dict("<f4", "(2 3)"), std::string(24, 'x')),
       "expected ','"},
      {"fortran_not_bool", npy(dict("<f4", "(1,)", "0"), "abcd"),
       "expected True or False"},
      {"non_ascii_descr", npy(dict("<f\xc3\xa9", "(1,)"), "abcd"),
       "unexpected character"},
      {"unterminated_string", npy("{'descr': '<f4"), "unterminated string"},
      {"data_after_dict", npy(dict("<f4", "(1,)") + " x", "abcd"),
       "unexpected data after"},
  };
}

class IoMalformedNpy : public ::testing::TestWithParam<Fault> {};

TEST_P(IoMalformedNpy, IsAnIoErrorNamingTheFault) {
  const Fault& f = GetParam();
  TempDir dir;
  std::string path = dir / "bad.npy";
  write_file(path, f.bytes);
  expect_io_error([&] { load_npy(path); }, path, f.fault);
  auto m = io::detail::Mapping::copy_of(f.bytes.data(), f.bytes.size());
  expect_io_error([&] { io::detail::parse_npy(m, "<bytes>"); }, "<bytes>",
                  f.fault);
}

std::string fault_name(const ::testing::TestParamInfo<Fault>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Io, IoMalformedSafetensors,
                         ::testing::ValuesIn(safetensors_faults()), fault_name);
INSTANTIATE_TEST_SUITE_P(Io, IoMalformedNpy, ::testing::ValuesIn(npy_faults()),
                         fault_name);

TEST(IoMalformed, FilesThatAreNotThere) {
  TempDir dir;
  std::string missing = dir / "missing.npy";
  expect_io_error([&] { load_npy(missing); }, missing,
                  "cannot open: No such file");
  std::string folder = dir / "folder.safetensors";
  fs::create_directory(folder);
  expect_io_error([&] { load_safetensors(folder); }, folder,
                  "not a regular file");
  std::string fifo = dir / "fifo.npy";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_io_error([&] { load_npy(fifo); }, fifo,
                  "not a regular file");  // without blocking
}

TEST(IoMalformed, HeaderOverTheLimit) {
  TempDir dir;
  std::string path = dir / "huge_header.safetensors";
  const uint64_t n = 100'000'008;
  write_file(path, le64(n) + "{");
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(8 + n)), 0);  // sparse
  expect_io_error([&] { load_safetensors(path); }, path,
                  "exceeds the limit of 100000000 bytes");
}

// ------------------------------------------------------- fuzzing regressions

template <class F>
void io_error_or_arrays(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io) << e.what();
  }
}

// fuzz_npy, 5 minutes: a zero-size Fortran-order array whose other
// dimensions multiply past int64 made row_major_strides overflow (UBSan).
TEST(IoFuzzRegression, ZeroSizeShapeWhoseStridesOverflow) {
  std::string bytes =
      npy("{'descr': '<f2', 'fortran_order': True, 'shape': (1912597,77 "
          ",147,47,74\r\r\r\r\r\r\r"
          " ,7\r,47,74136\r\r,4732, 4, 0), }         ");
  auto m = io::detail::Mapping::copy_of(bytes.data(), bytes.size());
  expect_io_error([&] { io::detail::parse_npy(m, "<bytes>"); }, "<bytes>",
                  "nonzero dimensions multiply to more than 2^63");
  // The same shape in safetensors, and a zero-size one that is fine.
  auto st = one(
      entry("a", "F16", "[1912597,77,147,47,74,7,47,74136,4732,4,0]", "[0,0]"));
  m = io::detail::Mapping::copy_of(st.data(), st.size());
  expect_io_error(
      [&] {
        io::detail::parse_safetensors(m, "load_safetensors", "<bytes>", true);
      },
      "<bytes>", "nonzero dimensions multiply to more than 2^63");
  st = one(entry("a", "F16", "[2147483647,0,2147483647]", "[0,0]"));
  m = io::detail::Mapping::copy_of(st.data(), st.size());
  Array a =
      io::detail::parse_safetensors(m, "load_safetensors", "<bytes>", true)
          .arrays.at("a");
  EXPECT_EQ(a.size(), 0);
  touch(a);
  touch(a.t());
}

// fuzz_npy, second run: a zero-size array with many dimensions loads (the
// crash was in the CPU loops' dimension merging, which the fuzz target now
// skips for empty arrays; see fuzz/fuzz_common.h).
TEST(IoFuzzRegression, ZeroSizeArrayWithManyDimensions) {
  std::string bytes = npy(
      "{'descr': '|b1', 'fortran_order': True, 'shape': "
      "(0,1474,147,7,1,14,147,0,43,97,7, 7, ) }                             ");
  auto m = io::detail::Mapping::copy_of(bytes.data(), bytes.size());
  Array a = io::detail::parse_npy(m, "<bytes>");
  EXPECT_EQ(a.shape(), (Shape{0, 1474, 147, 7, 1, 14, 147, 0, 43, 97, 7, 7}));
  EXPECT_EQ(a.size(), 0);
  EXPECT_EQ(a.dtype(), bool_);
}

// The fuzzers' seed corpus loads or fails cleanly (under the sanitizers in
// CI, which is where an overread would show).
TEST(IoFuzzRegression, CorpusReplays) {
  std::string corpus = std::string(NUVEC_REFS_DIR) + "../../fuzz/corpus/";
  int files = 0;
  for (const char* kind : {"safetensors", "npy"}) {
    for (const auto& entry : fs::directory_iterator(corpus + kind)) {
      std::string bytes = read_file(entry.path());
      auto m = io::detail::Mapping::copy_of(bytes.data(), bytes.size());
      io_error_or_arrays([&] {
        if (kind[0] == 's') {
          for (auto& [k, a] :
               io::detail::parse_safetensors(m, "load_safetensors", "x", true)
                   .arrays)
            touch(a);
        } else {
          touch(io::detail::parse_npy(m, "x"));
        }
      });
      ++files;
    }
  }
  EXPECT_GE(files, 10);
}

}  // namespace
