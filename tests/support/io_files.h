// Helpers of the I/O tests (io_test.cpp, io_malformed_test.cpp, gguf_*_test.cpp).
#pragma once

#include <gtest/gtest.h>
#include <nuvec/nuvec.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <type_traits>

namespace nuvec::test {

// The array's element bytes in row-major order (bools as 0/1 bytes).
inline std::string bytes_of(const Array& a) {
  std::string out;
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      auto v = a.to_vector<uint8_t>();
      out.assign(v.begin(), v.end());
    } else {
      auto v = a.to_vector<T>();
      out.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    }
  });
  return out;
}

// Random bytes of a dtype (bools 0/1; floats may be NaN: bytes compare).
inline Array sample(DType d, const Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::string b(static_cast<size_t>(shape_size(shape) * d.size()), '\0');
  for (auto& c : b) c = static_cast<char>(d == bool_ ? rng() % 2 : rng());
  return nuvec::detail::array_from_bytes(b.data(), shape, d);
}

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string t =
        std::string(base && *base ? base : "/tmp") + "/nuvec_io_XXXXXX";
    path_ = ::mkdtemp(t.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string operator/(const std::string& name) const {
    return path_ + "/" + name;
  }

 private:
  std::string path_;
};

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), std::streamsize(bytes.size()));
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Runs f, which must throw nuvec::Error of kind io whose message names the
// file and the fault.
template <class F>
void expect_io_error(F&& f, const std::string& path, const std::string& fault) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << fault;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io) << e.what();
    EXPECT_NE(e.message().find(path), std::string::npos) << e.what();
    EXPECT_NE(e.message().find(fault), std::string::npos) << e.what();
  }
}

// Reads every element, as the fuzz targets do (fuzz/fuzz_common.h).
inline void touch(const Array& a) {
  if (a.size() == 0) return;
  ops::copy(a).eval();
  if (a.dtype() == bool_) ops::logical_not(a).astype(int32).sum().eval();
}

}  // namespace nuvec::test
