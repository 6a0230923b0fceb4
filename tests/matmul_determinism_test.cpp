// CPU matrix products give the same bits whatever the machine's core
// count: the product has the same bits in a child process with
// NUVEC_NUM_THREADS and OPENBLAS_NUM_THREADS 1 and 3 as here (docs/semantics.md, "Determinism").
// Shapes straddle the tiles (256 rows, 1024 columns) and include batches,
// transposed operands and every BLAS dtype.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/child.h"
#include "support/cpu_default.h"
#include <nuvec/nuvec.h>

using namespace nuvec;

namespace {

// The products' raw bits, one after the other.
std::string product_bits() {
  nuvec::testing::CpuDefault cpu;
  struct Case {
    Shape a, b;
    DType dtype;
    bool ta;
  };
  const std::vector<Case> cases = {
      {{512, 512}, {512, 512}, float32, false}, {{300, 700}, {700, 1500}, float32, true},
      {{3, 257, 64}, {64, 1030}, float32, false}, {{1, 4000}, {4000, 3000}, float32, false},
      {{260, 130}, {130, 1100}, float64, false},  {{270, 40}, {40, 1030}, complex64, false},
      {{258, 96}, {96, 1025}, bfloat16, true},
  };
  std::string out;
  uint64_t seed = 1;
  for (const Case& c : cases) {
    Array a = random::normal(c.ta ? Shape{c.a.rbegin(), c.a.rend()} : c.a, random::key(seed++));
    Array b = random::normal(c.b, random::key(seed++));
    if (c.ta) a = transpose(a);
    if (c.dtype == complex64) {
      a = a + multiply(a, array(complex64_t(0.0f, 1.0f)));
      b = b - multiply(b, array(complex64_t(0.0f, 0.5f)));
    }
    Array p = matmul(a.astype(c.dtype), b.astype(c.dtype));
    p.eval();
    Array raw = contiguous(p).view(uint8);
    auto bytes = raw.to_vector<uint8_t>();
    out.append(bytes.begin(), bytes.end());
  }
  return out;
}

}  // namespace

// Run by the test below in a child: writes the bits to the named file.
TEST(MatmulDeterminism, ChildWritesItsBits) {
  const char* path = std::getenv("NUVEC_TEST_MATMUL_OUT");
  if (!path) GTEST_SKIP() << "run by IndependentOfTheThreadCount";
  std::ofstream(path, std::ios::binary) << product_bits();
}

TEST(MatmulDeterminism, IndependentOfTheThreadCount) {
  if (std::getenv("NUVEC_TEST_MATMUL_OUT")) GTEST_SKIP();
  const std::string here = product_bits();
  for (int threads : {1, 3}) {
    auto path = std::filesystem::temp_directory_path() /
                ("nuvec_matmul_bits_" + std::to_string(getpid()) + "_" + std::to_string(threads));
    ASSERT_TRUE(nuvec::testing::run_child("MatmulDeterminism.ChildWritesItsBits",
                                          {"NUVEC_NUM_THREADS=" + std::to_string(threads),
                                           "OPENBLAS_NUM_THREADS=" + std::to_string(threads),
                                           "NUVEC_TEST_MATMUL_OUT=" + path.string()}));
    std::ifstream in(path, std::ios::binary);
    std::string there((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(path);
    ASSERT_EQ(there.size(), here.size()) << threads << " threads";
    EXPECT_TRUE(there == here) << "the bits differ with " << threads << " threads";
  }
}
