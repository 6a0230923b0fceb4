// The CPU JIT's safety around the disk cache and the compiler process: a
// cached kernel whose code was overwritten is rebuilt, never run; symbolic
// links at the cache root or below it disable the disk cache without
// anything written through them; a compiler that hangs costs one time
// limit per process, is killed with its children, and so is a compiler
// still running when the process exits; the compiler runs in a process
// group of its own at the lowest scheduling priority.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "compile/jit.h"
#include "support/child.h"
#include "support/bits.h"
#include "support/cpu_default.h"
#include <nuvec/compile.h>
#include <nuvec/nuvec.h>

using namespace nuvec;
using nuvec::testing::bits_of;
using nuvec::testing::run_child;
namespace fs = std::filesystem;

namespace {

// A fresh private cache directory and a JIT mode for one test; restores
// the defaults (and NUVEC_JIT_TIMEOUT) after it.
class Scope {
 public:
  explicit Scope(jit::Mode mode = jit::Mode::sync, std::string compiler = "") {
    char tmpl[] = "/tmp/nuvec-jit-cache-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    saved_ = jit::mode();
    jit::set_mode(mode);
    jit_detail::reset_for_tests(dir_, compiler);
  }
  ~Scope() {
    jit::wait();
    unsetenv("NUVEC_JIT_TIMEOUT");
    jit::set_mode(saved_);
    jit_detail::reset_for_tests("", "");
    fs::remove_all(dir_);
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  jit::Mode saved_;
};

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// An executable shell script standing in for the compiler.
std::string fake_compiler(const std::string& dir, const std::string& body) {
  std::string path = dir + "/fake-c++";
  std::ofstream(path) << "#!/bin/sh\n" << body;
  chmod(path.c_str(), 0700);
  return path;
}

std::vector<int> pids_in(const std::string& path) {
  std::vector<int> out;
  std::ifstream f(path);
  for (int p; f >> p;) out.push_back(p);
  return out;
}

// Whether `pid` has ended (gone, or a zombie nobody reaped yet: an orphan
// whose new parent is slow to reap it).
bool ended(int pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  size_t p = stat.rfind(')');
  return p != std::string::npos && p + 2 < stat.size() && stat[p + 2] == 'Z';
}

// Waits (up to a minute: the machine may be loaded) for `done`.
template <class F>
bool eventually(F done) {
  for (int i = 0; i < 6000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

// The offset and size of the .text section of a 64-bit ELF file.
bool text_section(const std::string& elf, size_t& offset, size_t& size) {
  auto u16 = [&](size_t at) {
    uint16_t v;
    std::memcpy(&v, elf.data() + at, 2);
    return static_cast<size_t>(v);
  };
  auto u64 = [&](size_t at) {
    uint64_t v;
    std::memcpy(&v, elf.data() + at, 8);
    return static_cast<size_t>(v);
  };
  if (elf.size() < 64 || elf.compare(0, 4, "\x7f" "ELF") != 0 || elf[4] != 2) return false;
  size_t shoff = u64(0x28), shentsize = u16(0x3a), shnum = u16(0x3c), shstrndx = u16(0x3e);
  if (shoff + shnum * shentsize > elf.size() || shstrndx >= shnum) return false;
  size_t strtab = u64(shoff + shstrndx * shentsize + 0x18);
  for (size_t i = 0; i < shnum; ++i) {
    size_t h = shoff + i * shentsize;
    size_t name = strtab + (u16(h) | u16(h + 2) << 16);
    if (name < elf.size() && std::strcmp(elf.c_str() + name, ".text") == 0) {
      offset = u64(h + 0x18);
      size = u64(h + 0x20);
      return offset + size <= elf.size() && size > 0;
    }
  }
  return false;
}

Array data(const Shape& shape, int seed) {
  return random::normal(shape, random::key(seed)) * 3.0f;
}

Array damaged_body(const Array& x) { return ops::log(ops::abs(x) + 1.0f) * 4.0f - x; }

}  // namespace

// Run by DamagedCodeIsRebuiltNotRun in a child process, on the cache whose
// kernel's code that test overwrote with breakpoints (int3: loading or
// running any of it stops the process with SIGTRAP).
TEST(JitCache, ChildRebuildsDamagedKernel) {
  nuvec::testing::CpuDefault cpu_default;
  const char* dir = std::getenv("NUVEC_JIT_CACHE_TEST_DIR");
  if (!dir) GTEST_SKIP() << "run by JitCache.DamagedCodeIsRebuiltNotRun";
  jit::set_mode(jit::Mode::sync);
  jit_detail::reset_for_tests(dir, "");
  Array x = data({1000}, 1);
  auto f = compile(damaged_body);
  EXPECT_EQ(bits_of(f(x)), bits_of(damaged_body(x)));
  EXPECT_EQ(jit::stats().disk_hits, 0u);
  EXPECT_EQ(jit::stats().compiled, 1u);
  EXPECT_GE(jit::stats().generated_runs, 1u);
}

TEST(JitCache, DamagedCodeIsRebuiltNotRun) {
  nuvec::testing::CpuDefault cpu_default;
  Scope scope;
  Array x = data({1000}, 1);
  { (void)compile(damaged_body)(x).eval(); }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(scope.dir() + "/cpu"))
    if (e.path().extension() == ".so") files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  std::string elf = read_text(files[0]);
  size_t offset = 0, size = 0;
  ASSERT_TRUE(text_section(elf, offset, size));
  std::string damaged = elf;
  std::memset(damaged.data() + offset, 0xcc, size);  // headers and symbols intact
  std::ofstream(files[0], std::ios::binary | std::ios::trunc) << damaged;
  ASSERT_EQ(read_text(files[0]), damaged);
  EXPECT_TRUE(run_child("JitCache.ChildRebuildsDamagedKernel",
                        {"NUVEC_JIT_CACHE_TEST_DIR=" + scope.dir()}))
      << "the child ran the damaged kernel, or its checks failed";
  // The damaged file was replaced by a good one, which this process (its
  // modules dropped) now loads from disk.
  std::string rebuilt = read_text(files[0]);
  ASSERT_TRUE(text_section(rebuilt, offset, size));
  EXPECT_NE(rebuilt.substr(offset, size), std::string(size, '\xcc'));
  jit_detail::reset_for_tests(scope.dir(), "");
  auto before = jit::stats();
  EXPECT_EQ(bits_of(compile(damaged_body)(x)), bits_of(damaged_body(x)));
  EXPECT_EQ(jit::stats().disk_hits, before.disk_hits + 1);
  EXPECT_EQ(jit::stats().compiled, before.compiled);
}

// One damaged byte anywhere (here past the code, in the middle of the
// file) is enough: the file is rebuilt.
TEST(JitCache, OneDamagedByteIsRebuilt) {
  nuvec::testing::CpuDefault cpu_default;
  Scope scope;
  auto body = [](const Array& x) { return ops::square(x) * 0.5f + x; };
  Array x = data({64}, 2);
  { (void)compile(body)(x).eval(); }
  fs::path file;
  for (const auto& e : fs::directory_iterator(scope.dir() + "/cpu"))
    if (e.path().extension() == ".so") file = e.path();
  ASSERT_FALSE(file.empty());
  std::string bytes = read_text(file);
  bytes[bytes.size() / 2] ^= 0x01;
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  jit_detail::reset_for_tests(scope.dir(), "");
  auto before = jit::stats();
  EXPECT_EQ(bits_of(compile(body)(x)), bits_of(body(x)));
  EXPECT_EQ(jit::stats().compiled, before.compiled + 1);
  EXPECT_EQ(jit::stats().disk_hits, before.disk_hits);
  EXPECT_NE(read_text(file), bytes);
}

// $NUVEC_CACHE_DIR itself a symbolic link, or its cpu directory one: no
// disk cache (kernels are still built, privately, and run from memory),
// and nothing is created or written through the link, also for the GPU's
// directory (the same check).
TEST(JitCache, SymbolicLinksAtAnyLevelAreRefused) {
  nuvec::testing::CpuDefault cpu_default;
  Scope scope;
  auto body = [](const Array& x) { return ops::exp(x) * 0.25f - 1.0f; };
  Array x = data({33}, 3);
  std::string target = scope.dir() + "/target", root = scope.dir() + "/root-link";
  fs::create_directory(target);
  chmod(target.c_str(), 0700);
  fs::create_directory_symlink(target, root);
  jit_detail::reset_for_tests(root, "");
  auto before = jit::stats();
  EXPECT_EQ(bits_of(compile(body)(x)), bits_of(body(x)));
  EXPECT_EQ(jit::disk_cache(), "none: " + root + " is a symbolic link");
  EXPECT_EQ(jit::stats().compiled, before.compiled + 1);
  EXPECT_GT(jit::stats().generated_runs, before.generated_runs);
  EXPECT_TRUE(fs::is_empty(target));
  std::string why;
  EXPECT_EQ(jit_detail::cache_directory(root + "/cuda", why), "");
  EXPECT_EQ(why, root + " is a symbolic link");
  EXPECT_TRUE(fs::is_empty(target));
  // A symbolic link below a good root.
  std::string good = scope.dir() + "/good", sub_target = scope.dir() + "/sub-target";
  fs::create_directory(good);
  fs::create_directory(sub_target);
  chmod(good.c_str(), 0700);
  chmod(sub_target.c_str(), 0700);
  fs::create_directory_symlink(sub_target, good + "/cpu");
  jit_detail::reset_for_tests(good, "");
  EXPECT_EQ(bits_of(compile(body)(x)), bits_of(body(x)));
  EXPECT_EQ(jit::disk_cache(), "none: " + good + "/cpu is a symbolic link");
  EXPECT_TRUE(fs::is_empty(sub_target));
  // A root writable by its group.
  std::string shared = scope.dir() + "/shared";
  fs::create_directory(shared);
  chmod(shared.c_str(), 0770);
  jit_detail::reset_for_tests(shared, "");
  EXPECT_EQ(bits_of(compile(body)(x)), bits_of(body(x)));
  EXPECT_EQ(jit::disk_cache(), "none: " + shared + " is writable by group or others");
  EXPECT_TRUE(fs::is_empty(shared));
  // A good root (made here, 0700) and its directory are used.
  jit_detail::reset_for_tests(scope.dir() + "/fresh/root", "");
  EXPECT_EQ(bits_of(compile(body)(x)), bits_of(body(x)));
  EXPECT_EQ(jit::disk_cache(), scope.dir() + "/fresh/root/cpu");
  struct stat st;
  ASSERT_EQ(lstat((scope.dir() + "/fresh/root").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

// A compiler that never finishes: the first build is killed after the
// time limit (with the compiler's own children: its process group), said
// once, and no later trace runs the compiler again (sync and async); the
// interpreter gives the same bits throughout.
TEST(JitCache, HangingCompilerCostsOneTimeLimit) {
  nuvec::testing::CpuDefault cpu_default;
  char tmpl[] = "/tmp/nuvec-fake-cxx-XXXXXX";
  std::string bin = mkdtemp(tmpl);
  std::string compiler = fake_compiler(
      bin, "echo $$ >> " + bin + "/starts\nsleep 300 &\necho $! >> " + bin + "/sleepers\nwait\n");
  setenv("NUVEC_JIT_TIMEOUT", "0.5", 1);
  Scope scope(jit::Mode::sync, compiler);
  Array x = data({2, 300}, 4);
  auto b1 = [](const Array& x) { return ops::tanh(x) * x + 1.0f; };
  auto b2 = [](const Array& x) { return ops::sigmoid(x) - x * 0.5f; };
  auto b3 = [](const Array& x) { return ops::abs(x) * 3.0f + x; };
  auto before = jit::stats();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(bits_of(compile(b1)(x)), bits_of(b1(x)));
  EXPECT_EQ(bits_of(compile(b2)(x)), bits_of(b2(x)));
  EXPECT_EQ(bits_of(compile(b3)(x)), bits_of(b3(x)));
  jit::set_mode(jit::Mode::async);
  auto b4 = [](const Array& x) { return ops::exp(x) * 2.0f - x; };
  EXPECT_EQ(bits_of(compile(b4)(x)), bits_of(b4(x)));
  jit::wait();
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(pids_in(bin + "/starts").size(), 1u);
  EXPECT_NE(jit::unavailable_reason().find("ran past the time limit of 0.5 s"), std::string::npos)
      << jit::unavailable_reason();
  size_t said = 0;
  for (size_t p = err.find("time limit"); p != std::string::npos; p = err.find("time limit", p + 1))
    ++said;
  EXPECT_EQ(said, 1u) << err;
  EXPECT_EQ(jit::stats().failures, before.failures + 1);
  EXPECT_EQ(jit::stats().compiled, before.compiled);
  EXPECT_EQ(jit::stats().generated_runs, before.generated_runs);
  EXPECT_GE(jit::stats().interpreted_runs, before.interpreted_runs + 4);
  for (int pid : pids_in(bin + "/starts")) EXPECT_TRUE(eventually([&] { return ended(pid); }));
  for (int pid : pids_in(bin + "/sleepers")) EXPECT_TRUE(eventually([&] { return ended(pid); }));
  // The build's temporary directory is gone.
  for (const auto& e : fs::directory_iterator(scope.dir() + "/cpu"))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
  // A reset (a new process, for tests) builds again, with the default time
  // limit (a real compile can take longer than 0.5 s: the H200 machine's).
  unsetenv("NUVEC_JIT_TIMEOUT");
  jit::set_mode(jit::Mode::sync);
  jit_detail::reset_for_tests(scope.dir(), "");
  auto b5 = [](const Array& x) { return ops::cos(x) * x; };
  auto mid = jit::stats();
  EXPECT_EQ(bits_of(compile(b5)(x)), bits_of(b5(x)));
  EXPECT_EQ(jit::stats().compiled, mid.compiled + 1);
  fs::remove_all(bin);
}

// The compiler runs in a process group of its own, with TMPDIR in a
// directory of the build's own that is removed afterwards; a background
// build's compiler at SCHED_IDLE and nice 19, a sync build's (its caller
// waits) at the caller's priority. (The fake compiler records its
// /proc/PID/stat and fails.)
TEST(JitCache, CompilerRunsAtIdlePriorityInItsOwnGroup) {
  nuvec::testing::CpuDefault cpu_default;
  char tmpl[] = "/tmp/nuvec-fake-cxx-XXXXXX";
  std::string bin = mkdtemp(tmpl);
  std::string compiler = fake_compiler(
      bin, "echo $$ > " + bin + "/pid\ncat /proc/$$/stat > " + bin + "/stat\necho \"$TMPDIR\" > " +
               bin + "/tmpdir\nexit 1\n");
  for (jit::Mode mode : {jit::Mode::async, jit::Mode::sync}) {
    SCOPED_TRACE(mode == jit::Mode::async ? "async" : "sync");
    Scope scope(mode, compiler);
    auto body = [](const Array& x) { return ops::sqrt(ops::abs(x)) + x; };
    Array x = data({50}, 5);
    ::testing::internal::CaptureStderr();
    auto f = compile(body);
    EXPECT_EQ(bits_of(f(x)), bits_of(body(x)));
    f.wait_for_kernels();
    (void)::testing::internal::GetCapturedStderr();
    std::string stat = read_text(bin + "/stat");
    ASSERT_NE(stat.rfind(')'), std::string::npos) << stat;
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::vector<std::string> f3;  // from field 3 (state) on
    for (std::string v; fields >> v;) f3.push_back(v);
    ASSERT_GE(f3.size(), 39u);
    int pid = pids_in(bin + "/pid").at(0);
    EXPECT_EQ(std::stoi(f3[5 - 3]), pid) << "not the leader of its own process group";
    int nice = std::stoi(f3[19 - 3]), policy = std::stoi(f3[41 - 3]);
    if (mode == jit::Mode::async) {
      EXPECT_EQ(policy, SCHED_IDLE);
      EXPECT_EQ(nice, 19);
    } else {
      EXPECT_EQ(policy, sched_getscheduler(0));
      EXPECT_EQ(nice, getpriority(PRIO_PROCESS, 0));
    }
    std::string tmpdir = read_text(bin + "/tmpdir");
    tmpdir = tmpdir.substr(0, tmpdir.find('\n'));
    EXPECT_EQ(tmpdir.rfind(scope.dir() + "/cpu/", 0), 0u) << tmpdir;
    EXPECT_FALSE(fs::exists(tmpdir));
    EXPECT_NE(jit::unavailable_reason().find("the compiler failed"), std::string::npos);
    fs::remove(bin + "/stat");
  }
  fs::remove_all(bin);
}

// Run by CompilerIsKilledAtExit in a child process: a build starts in the
// background with a compiler that never finishes, and the process exits.
TEST(JitCache, ChildExitsWhileCompiling) {
  nuvec::testing::CpuDefault cpu_default;
  const char* dir = std::getenv("NUVEC_JIT_CACHE_TEST_DIR");
  const char* compiler = std::getenv("NUVEC_JIT_CACHE_TEST_CXX");
  if (!dir || !compiler) GTEST_SKIP() << "run by JitCache.CompilerIsKilledAtExit";
  jit::set_mode(jit::Mode::async);
  jit_detail::reset_for_tests(dir, compiler);
  auto body = [](const Array& x) { return ops::erf(x) * x; };
  Array x = data({10}, 6);
  EXPECT_EQ(bits_of(compile(body)(x)), bits_of(body(x)));  // the interpreter
  std::string bin = fs::path(compiler).parent_path().string();
  EXPECT_TRUE(eventually([&] { return pids_in(bin + "/sleepers").size() == 1; }));
  // Returning exits the process without waiting for the build.
}

TEST(JitCache, CompilerIsKilledAtExit) {
  nuvec::testing::CpuDefault cpu_default;
  char tmpl[] = "/tmp/nuvec-fake-cxx-XXXXXX";
  std::string bin = mkdtemp(tmpl);
  std::string compiler = fake_compiler(
      bin, "echo $$ >> " + bin + "/starts\nsleep 300 &\necho $! >> " + bin + "/sleepers\nwait\n");
  Scope scope;
  EXPECT_TRUE(run_child("JitCache.ChildExitsWhileCompiling",
                        {"NUVEC_JIT_CACHE_TEST_DIR=" + scope.dir(),
                         "NUVEC_JIT_CACHE_TEST_CXX=" + compiler}));
  auto starts = pids_in(bin + "/starts"), sleepers = pids_in(bin + "/sleepers");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(sleepers.size(), 1u);
  EXPECT_TRUE(eventually([&] { return ended(starts[0]); })) << "the compiler outlived the process";
  EXPECT_TRUE(eventually([&] { return ended(sleepers[0]); })) << "its child outlived the process";
  // No temporary file or directory is left in the cache.
  for (const auto& e : fs::directory_iterator(scope.dir() + "/cpu"))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
  fs::remove_all(bin);
}
