// Helpers of the I/O tests (io_test.cpp, io_malformed_test.cpp).
#pragma once

#include <gtest/gtest.h>
#include <nuvec/nuvec.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace nuvec::test {

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
