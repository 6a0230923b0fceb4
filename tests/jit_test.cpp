// The CPU JIT: generated kernels equal the eager kernels bit for bit in
// both variants (contiguous and strided), the disk cache serves a second
// process, unsafe or corrupt cache contents are refused, and without a
// compiler compile still runs (the interpreter) and says why.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include "compile/jit.h"
#include "support/bits.h"
#include "support/cpu_default.h"
#include <nuvec/compile.h>
#include <nuvec/nuvec.h>

using namespace nuvec;
using nuvec::testing::bits_of;
namespace fs = std::filesystem;

namespace {

// A fresh private cache directory, and sync mode, for one test.
class JitScope {
 public:
  explicit JitScope(jit::Mode mode = jit::Mode::sync, std::string compiler = "") {
    char tmpl[] = "/tmp/nuvec-jit-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    saved_ = jit::mode();
    jit::set_mode(mode);
    jit_detail::reset_for_tests(dir_, compiler);
  }
  ~JitScope() {
    jit::wait();
    jit::set_mode(saved_);
    jit_detail::reset_for_tests("", "");
    fs::remove_all(dir_);
  }
  const std::string& dir() const { return dir_; }
  std::vector<fs::path> kernels() const {
    std::vector<fs::path> out;
    if (!fs::exists(dir_ + "/cpu")) return out;
    for (const auto& e : fs::directory_iterator(dir_ + "/cpu"))
      if (e.path().extension() == ".so") out.push_back(e.path());
    return out;
  }

 private:
  std::string dir_;
  jit::Mode saved_;
};

Array data(const Shape& shape, DType dtype, int seed) {
  return (random::normal(shape, random::key(seed)) * 3.0f).astype(dtype);
}

// A chain with transcendental, comparison, select and cast steps, and two
// outputs, valid for the floating dtypes.
std::pair<Array, Array> float_chain(const Array& x, const Array& y) {
  Array a = ops::exp(ops::sin(x) * y) - ops::tanh(y) / (ops::abs(x) + 1.5f);
  Array b = ops::where(a > 0.25f, ops::sigmoid(a), ops::log1p(ops::abs(a)));
  return {b * 2.0f + a, ops::astype(a, int32)};
}

void expect_same(const Array& a, const Array& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(bits_of(a), bits_of(b));
}

}  // namespace

TEST(Jit, GeneratedKernelsEqualEagerBitForBit) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope;
  for (DType dt : {float32, float16, bfloat16, float64}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    auto f = compile(float_chain);
    // Dense, transposed (strided variant), a broadcast row, a runtime 0-d
    // input, and a size past one chunk (several threads).
    std::vector<std::pair<Array, Array>> cases{
        {data({5, 7}, dt, 1), data({5, 7}, dt, 2)},
        {ops::transpose(data({7, 5}, dt, 3)), data({5, 7}, dt, 4)},
        {data({5, 7}, dt, 5), data({7}, dt, 6)},
        {data({5, 7}, dt, 7), data({}, dt, 8)},
        {data({3, 40000}, dt, 9), data({40000}, dt, 10)},
        {ops::slice(data({6, 14}, dt, 11), {0, 0}, {6, 14}, {2, 2}), data({3, 7}, dt, 12)},
    };
    for (const auto& [x, y] : cases) {
      auto before = jit::stats();
      auto [e0, e1] = float_chain(x, y);
      auto [c0, c1] = f(x, y);
      expect_same(e0, c0);
      expect_same(e1, c1);
      auto after = jit::stats();
      EXPECT_GT(after.generated_runs, before.generated_runs);
      EXPECT_EQ(after.interpreted_runs, before.interpreted_runs);
    }
  }
  EXPECT_EQ(jit::unavailable_reason(), "");
  EXPECT_EQ(jit::disk_cache(), scope.dir() + "/cpu");
}

// A region with sin/cos runs blocks of 256 through the fast variants when
// every sin/cos argument of the block is below 2^18, else through the
// general functors (and the next blocks too, for a while). Compiled equals
// uncompiled where some blocks hold a large argument (also one computed in
// the region, inf, NaN) and others not, with two outputs or with cos as
// the last step, in float32 and the 16-bit floats.
TEST(Jit, SinCosBlocksEqualEager) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope;
  auto chain = [](const Array& x, const Array& y) {
    Array c = ops::cos(x);
    Array e = ops::exp(ops::sin(x * y) * 2.0f + c) / (ops::abs(x) + 1.0f);
    return std::make_pair(e, c);
  };
  auto f = compile(chain);
  auto last = [](const Array& x, const Array& y) { return ops::cos(x * y - 0.5f); };
  auto g = compile(last);  // cos is the region's last step
  const int n = 40000;  // three chunks of 16,384; the last block partial
  std::vector<float> xv(n), yv(n, 1.0f);
  for (int i = 0; i < n; ++i) xv[i] = 50.0f * std::sin(0.3f * static_cast<float>(i));
  xv[5 * 256 + 7] = 3e5f;  // x itself large
  xv[9 * 256] = 100.0f;     // only sin's argument x * y
  yv[9 * 256] = 1e4f;
  xv[40 * 256 + 255] = -0x1p18f;  // the bound itself
  xv[41 * 256 + 1] = std::numeric_limits<float>::infinity();
  xv[70 * 256 + 3] = std::numeric_limits<float>::quiet_NaN();
  xv[n - 5] = 1e20f;  // in the partial last block
  for (DType dt : {float32, bfloat16, float16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    Array x = array<float>(xv, {n}).astype(dt), y = array<float>(yv, {n}).astype(dt);
    auto before = jit::stats();
    auto [e0, e1] = chain(x, y);
    auto [c0, c1] = f(x, y);
    expect_same(e0, c0);
    expect_same(e1, c1);
    expect_same(last(x, y), g(x, y));
    EXPECT_GT(jit::stats().generated_runs, before.generated_runs + 1);
  }
}

// Outputs beyond jit::stream_min_bytes() go through the streaming variant
// (tiles of 256 on the stack, written with non-temporal stores): the same
// bits as eager for every tile position (whole tiles, a partial last tile,
// chunks of 16,384 on several threads), dtypes of 1 to 8 bytes, several
// outputs, and an output written over its own input's buffer.
TEST(Jit, StreamingKernelsEqualEager) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope;
  struct Restore {
    ~Restore() { jit::set_stream_min_bytes(-1); }
  } restore;
  auto adam = [](const Array& p, const Array& g, const Array& m, const Array& v) {
    Array m1 = m * 0.9f + g * 0.1f;
    Array v1 = v * 0.999f + g * g * 0.001f;
    return std::make_tuple(p - m1 * 1e-3f / (ops::sqrt(v1) + 1e-8f), m1, v1 > 1.0f);
  };
  auto f = compile(adam);
  jit::set_stream_min_bytes(0);
  for (DType dt : {float32, float16, bfloat16, float64}) {
    for (int n : {1, 255, 256, 257, 40000}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " n=" + std::to_string(n));
      Array p = data({n}, dt, 40), g = data({n}, dt, 41), m = data({n}, dt, 42);
      Array v = ops::abs(data({n}, dt, 43));
      auto [e0, e1, e2] = adam(p, g, m, v);
      auto before = jit::stats();
      auto [c0, c1, c2] = f(p, g, m, v);
      expect_same(e0, c0);
      expect_same(e1, c1);
      expect_same(e2, c2);
      EXPECT_GT(jit::stats().streamed_runs, before.streamed_runs);
    }
  }
  // The input of x * x + 1 held by nobody else: its buffer becomes the output.
  auto sq = compile([](const Array& x) { return x * x + 1.0f; });
  Array want = data({40000}, float32, 44) * data({40000}, float32, 44) + 1.0f;
  expect_same(sq(data({40000}, float32, 44)), want);
  // Above the threshold nothing streams.
  jit::set_stream_min_bytes(1ll << 40);
  auto before = jit::stats();
  expect_same(sq(data({40000}, float32, 44)), want);
  EXPECT_EQ(jit::stats().streamed_runs, before.streamed_runs);
  EXPECT_GT(jit::stats().generated_runs, before.generated_runs);
  jit::set_stream_min_bytes(-1);
  EXPECT_GT(jit::stream_min_bytes(), 0);
}

TEST(Jit, IntegerBoolAndComplexRegions) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope;
  auto ints = compile([](const Array& x, const Array& y) {
    Array s = ops::left_shift(x, 3) ^ (y * 7 - x);
    return std::make_tuple(ops::floor_divide(s, y | 1), ops::remainder(s, 5), (s > 2) & (y < 1));
  });
  for (DType dt : {int8, uint8, int32, uint32, int64}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    Array x = data({4, 9}, dt, 20), y = ops::transpose(data({9, 4}, dt, 21));
    Array s = ops::left_shift(x, 3) ^ (y * 7 - x);
    auto [a, b, c] = ints(x, y);
    expect_same(a, ops::floor_divide(s, y | 1));
    expect_same(b, ops::remainder(s, 5));
    expect_same(c, (s > 2) & (y < 1));
  }
  auto cplx = compile([](const Array& z, const Array& w) { return ops::exp(z * w) + ops::sqrt(z) / w; });
  Array z = data({6}, float32, 30).astype(complex64) * 1.0f + data({6}, float32, 31).astype(complex64);
  Array w = ops::astype(data({6}, float32, 32), complex64);
  expect_same(cplx(z, w), ops::exp(z * w) + ops::sqrt(z) / w);
}

TEST(Jit, OneSharedObjectPerTraceAndMemoryReuse) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope;
  auto f = compile([](const Array& x) {
    Array a = ops::exp(x) + 1.0f;            // region 1
    Array s = ops::sum(a, -1, true);         // not fused
    return ops::sigmoid(a / s) * 3.0f;       // region 2
  });
  Array x = data({4, 8}, float32, 40);
  auto before = jit::stats();
  (void)f(x).eval();
  EXPECT_EQ(scope.kernels().size(), 1u);
  EXPECT_EQ(jit::stats().compiled, before.compiled + 1);
  // Another function with the same program reuses the loaded module.
  auto g = compile([](const Array& x) {
    Array a = ops::exp(x) + 1.0f;
    Array s = ops::sum(a, -1, true);
    return ops::sigmoid(a / s) * 3.0f;
  });
  expect_same(g(x), f(x));
  EXPECT_EQ(jit::stats().compiled, before.compiled + 1);
  EXPECT_EQ(jit::stats().memory_hits, before.memory_hits + 1);
}

TEST(Jit, DiskCacheServesALaterLoad) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope;
  auto body = [](const Array& x) { return ops::cosh(x) * x - 0.5f; };
  Array x = data({3, 5}, float32, 50);
  Array expect = body(x);
  { expect_same(compile(body)(x), expect); }  // built; its module unloads with f
  jit_detail::reset_for_tests(scope.dir(), "");
  auto before = jit::stats();
  expect_same(compile(body)(x), expect);
  EXPECT_EQ(jit::stats().compiled, before.compiled);
  EXPECT_EQ(jit::stats().disk_hits, before.disk_hits + 1);
}

// Run by DiskCacheServesASecondProcess in a child process.
TEST(Jit, ChildLoadsFromDisk) {
  nuvec::testing::CpuDefault cpu_default;
  const char* dir = std::getenv("NUVEC_JIT_TEST_CHILD_DIR");
  if (!dir) GTEST_SKIP() << "run by Jit.DiskCacheServesASecondProcess";
  jit::set_mode(jit::Mode::sync);
  jit_detail::reset_for_tests(dir, "");
  Array x = array({1.0f, 2.0f, 3.0f});
  auto f = compile([](const Array& x) { return ops::erf(x) * x + 2.0f; });
  EXPECT_EQ(bits_of(f(x)), bits_of(ops::erf(x) * x + 2.0f));
  EXPECT_EQ(jit::stats().compiled, 0u);
  EXPECT_EQ(jit::stats().disk_hits, 1u);
  EXPECT_GE(jit::stats().generated_runs, 1u);
}

TEST(Jit, DiskCacheServesASecondProcess) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope;
  Array x = array({1.0f, 2.0f, 3.0f});
  auto f = compile([](const Array& x) { return ops::erf(x) * x + 2.0f; });
  (void)f(x).eval();
  ASSERT_EQ(scope.kernels().size(), 1u);
  std::string filter = "--gtest_filter=Jit.ChildLoadsFromDisk";
  std::string env_dir = "NUVEC_JIT_TEST_CHILD_DIR=" + scope.dir();
  std::vector<char*> argv{const_cast<char*>("/proc/self/exe"), filter.data(), nullptr};
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  envp.push_back(env_dir.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's checks failed";
}

TEST(Jit, CorruptCachedKernelIsRebuilt) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope;
  auto body = [](const Array& x) { return ops::log(ops::abs(x) + 1.0f) * 4.0f; };
  Array x = data({10}, float32, 60);
  { (void)compile(body)(x).eval(); }
  auto files = scope.kernels();
  ASSERT_EQ(files.size(), 1u);
  std::ofstream(files[0], std::ios::trunc) << "not a shared object";
  jit_detail::reset_for_tests(scope.dir(), "");
  auto before = jit::stats();
  expect_same(compile(body)(x), body(x));
  EXPECT_EQ(jit::stats().compiled, before.compiled + 1);
  EXPECT_EQ(jit::stats().disk_hits, before.disk_hits);
}

TEST(Jit, UnsafeCacheDirectoriesAreRefused) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope;
  auto body = [](const Array& x) { return ops::square(x) + 2.0f; };
  Array x = array({1.0f, -2.0f});
  // Writable by others: no disk cache (kernels still built, privately).
  std::string open_dir = scope.dir() + "/open";
  fs::create_directories(open_dir + "/cpu");
  chmod((open_dir + "/cpu").c_str(), 0777);
  jit_detail::reset_for_tests(open_dir, "");
  expect_same(compile(body)(x), body(x));
  EXPECT_NE(jit::disk_cache().find("writable by group or others"), std::string::npos)
      << jit::disk_cache();
  EXPECT_EQ(jit::unavailable_reason(), "");
  EXPECT_TRUE(fs::is_empty(open_dir + "/cpu"));
  EXPECT_GE(jit::stats().generated_runs, 1u);
  // A symbolic link.
  std::string target = scope.dir() + "/target", link = scope.dir() + "/link";
  fs::create_directories(target + "/cpu");
  fs::create_directories(link);
  fs::create_directory_symlink(target + "/cpu", link + "/cpu");
  jit_detail::reset_for_tests(link, "");
  expect_same(compile(body)(x), body(x));
  EXPECT_NE(jit::disk_cache().find("symbolic link"), std::string::npos) << jit::disk_cache();
  EXPECT_TRUE(fs::is_empty(target + "/cpu"));
}

TEST(Jit, WithoutACompilerTheInterpreterRuns) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope(jit::Mode::sync, "/nonexistent/c++");
  auto body = [](const Array& x) { return ops::tanh(x) * x + 1.0f; };
  Array x = data({4, 4}, float32, 70);
  auto before = jit::stats();
  expect_same(compile(body)(x), body(x));
  EXPECT_GT(jit::stats().interpreted_runs, before.interpreted_runs);
  EXPECT_EQ(jit::stats().generated_runs, before.generated_runs);
  EXPECT_NE(jit::unavailable_reason().find("no C++ compiler"), std::string::npos);
}

TEST(Jit, AsyncModeSwitchesToTheKernelWhenReady) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope(jit::Mode::async);
  auto f = compile([](const Array& x) { return ops::sqrt(ops::abs(x)) * 3.0f - x; });
  Array x = data({64}, float32, 80);
  Array expect = ops::sqrt(ops::abs(x)) * 3.0f - x;
  expect_same(f(x), expect);  // the interpreter or the kernel: the same bits
  jit::wait();
  auto before = jit::stats();
  expect_same(f(x), expect);
  EXPECT_EQ(jit::stats().generated_runs, before.generated_runs + 1);
}

// f.wait_for_kernels() returns once f's own builds ended (earlier queued
// builds too: one worker takes them in order), nuvec::wait_for_kernels()
// once every build did; calls after either run the generated kernels.
TEST(Jit, WaitForKernelsReturnsOnceTheyAreBuilt) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope(jit::Mode::async);
  auto body_f = [](const Array& x) { return ops::sqrt(ops::abs(x)) * 1.5f + x; };
  auto body_g = [](const Array& x) { return ops::exp(x * 0.5f) - x; };
  auto body_h = [](const Array& x) { return ops::square(x) * 0.75f + 2.0f; };
  auto f = compile(body_f);
  auto g = compile(body_g);
  auto h = compile(body_h);
  Array x = data({4, 16}, float32, 85);
  const auto start = jit::stats();
  expect_same(f(x), body_f(x));  // each call: the interpreter or a kernel
  expect_same(g(x), body_g(x));
  f.wait_for_kernels();
  auto before = jit::stats();
  expect_same(f(x), body_f(x));
  EXPECT_EQ(jit::stats().generated_runs, before.generated_runs + 1);
  EXPECT_EQ(jit::stats().interpreted_runs, before.interpreted_runs);
  expect_same(h(x), body_h(x));
  nuvec::wait_for_kernels();
  before = jit::stats();
  expect_same(g(x), body_g(x));
  expect_same(h(x), body_h(x));
  EXPECT_EQ(jit::stats().generated_runs, before.generated_runs + 2);
  EXPECT_EQ(jit::stats().compiled, start.compiled + 3);
  // Nothing pending (and in sync mode): at once.
  f.wait_for_kernels();
  jit::set_mode(jit::Mode::sync);
  auto k = compile([](const Array& x) { return ops::abs(x) - 1.0f; });
  expect_same(k(x), ops::abs(x) - 1.0f);
  k.wait_for_kernels();
}

TEST(Jit, OffModeInterprets) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope(jit::Mode::off);
  auto f = compile([](const Array& x) { return ops::exp(x) * 2.0f; });
  Array x = data({8}, float32, 90);
  auto before = jit::stats();
  expect_same(f(x), ops::exp(x) * 2.0f);
  EXPECT_EQ(jit::stats().generated_runs, before.generated_runs);
  EXPECT_TRUE(scope.kernels().empty());
}

// Two compiled functions with the same code share one module; destroying
// one leaves the other's kernels loaded and running.
TEST(Jit, DestroyingOneOfTwoFunctionsWithTheSameCode) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope;
  auto body = [](const Array& x) { return ops::sinh(x) * 0.5f + x; };
  Array x = data({33}, float32, 95);
  auto g = compile(body);
  {
    auto f = compile(body);
    expect_same(f(x), body(x));
    expect_same(g(x), body(x));
  }
  auto before = jit::stats();
  for (int i = 0; i < 3; ++i) expect_same(g(x), body(x));
  EXPECT_EQ(jit::stats().generated_runs, before.generated_runs + 3);
  EXPECT_EQ(jit::stats().compiled, before.compiled);
}

TEST(Jit, DebugKernelsPrintsTheGeneratedSource) {
  nuvec::testing::CpuDefault cpu_default;
  JitScope scope;
  setenv("NUVEC_DEBUG_KERNELS", "1", 1);
  ::testing::internal::CaptureStderr();
  auto f = compile([](const Array& x) { return ops::exp(x) * 3.0f; });
  (void)f(array({1.0f, 2.0f})).eval();
  std::string err = ::testing::internal::GetCapturedStderr();
  unsetenv("NUVEC_DEBUG_KERNELS");
  EXPECT_NE(err.find("nuvec_k0_contig"), std::string::npos) << err;
  EXPECT_NE(err.find("Exp{}(v0)"), std::string::npos) << err;
  EXPECT_NE(err.find("bit_cast<float>((unsigned int)0x40400000ull)"), std::string::npos) << err;  // 3.0f
}
