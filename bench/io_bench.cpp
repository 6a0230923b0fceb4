// safetensors loading and saving against plain read()/write() of the same
// bytes, on a 2 GiB file of 16 float32 tensors (docs/performance.md).
// The file lives in $NUVEC_BENCH_DIR, else $TMPDIR, else /tmp.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "bench_util.h"
#include "nuvec/core/graph.h"
#include "nuvec/io.h"
#include "nuvec/nuvec.h"

using namespace nuvec;

namespace {

constexpr int tensors = 16;
constexpr int64_t elems = int64_t(32)
                          << 20;  // float32: 128 MiB each, 2 GiB in all
constexpr double total_bytes = double(tensors) * double(elems) * 4;

std::string bench_dir() {
  for (const char* v : {"NUVEC_BENCH_DIR", "TMPDIR"})
    if (const char* d = std::getenv(v); d && *d) return d;
  return "/tmp";
}

void read_all(int fd, char* dst, size_t n) {
  while (n > 0) {
    ssize_t k = ::read(fd, dst, n);
    if (k <= 0) std::abort();
    dst += k;
    n -= static_cast<size_t>(k);
  }
}

void write_all(int fd, const char* src, size_t n) {
  while (n > 0) {
    ssize_t k = ::write(fd, src, n);
    if (k <= 0) std::abort();
    src += k;
    n -= static_cast<size_t>(k);
  }
}

double sum_floats(const float* p, size_t n) {
  float acc[16] = {};
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) acc[k] += p[i + static_cast<size_t>(k)];
  double s = 0;
  for (float a : acc) s += a;
  for (; i < n; ++i) s += p[i];
  return s;
}

}  // namespace

int main() {
  std::string path = bench_dir() + "/nuvec_io_bench.safetensors";
  std::string base_path = bench_dir() + "/nuvec_io_bench.raw";
  std::map<std::string, Array> arrays;
  for (int t = 0; t < tensors; ++t) {
    char name[32];
    std::snprintf(name, sizeof(name), "layers.%02d.weight", t);
    arrays[name] = ops::arange(0, double(elems), 1, float32) + float(t);
  }
  std::vector<Array> all;
  for (auto& [k, v] : arrays) all.push_back(v);
  eval(all);

  std::printf(
      "2 GiB safetensors file in %s (%d float32 tensors of 128 MiB)\n\n",
      bench_dir().c_str(), tensors);
  bench::header();

  // Saving: each run writes a new file and unlinks it, so dirty pages are
  // dropped rather than written back while the next run measures.
  double save = bench::median_ms(3, [&] {
    save_safetensors(path, arrays);
    ::unlink(path.c_str());
  });
  double save_base = bench::median_ms(3, [&] {
    int fd = ::open(base_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (const auto& a : all)
      write_all(fd, static_cast<const char*>(backend::host_pointer(a)),
                size_t(a.nbytes()));
    ::close(fd);
    ::unlink(base_path.c_str());
  });
  bench::row("save 2 GiB (vs write() of the buffers)", save, save_base);

  save_safetensors(path, arrays);  // in the page cache from here on
  arrays.clear();
  all.clear();
  std::vector<char> dst(static_cast<size_t>(total_bytes));
  std::memset(dst.data(), 0, dst.size());  // fault the destination in once

  double first = bench::median_ms(9, [&] {
    auto loaded = load_safetensors(path).first;
    if (loaded.begin()->second.shape(0) != elems) std::abort();
  });
  double first_base = bench::median_ms(9, [&] {
    int fd = ::open(path.c_str(), O_RDONLY);
    uint64_t n = 0;
    read_all(fd, reinterpret_cast<char*>(&n), 8);
    ::lseek(fd, off_t(8 + n), SEEK_SET);
    read_all(fd, dst.data(), size_t(elems) * 4);
    ::close(fd);
  });
  bench::row("time to first array (vs read() of one)", first, first_base);

  double copy = bench::median_ms(3, [&] {
    size_t off = 0;
    for (const auto& [k, a] : load_safetensors(path).first) {
      std::memcpy(dst.data() + off, backend::host_pointer(a),
                  size_t(a.nbytes()));
      off += size_t(a.nbytes());
    }
  });
  double copy_base = bench::median_ms(3, [&] {
    int fd = ::open(path.c_str(), O_RDONLY);
    uint64_t n = 0;
    read_all(fd, reinterpret_cast<char*>(&n), 8);
    ::lseek(fd, off_t(8 + n), SEEK_SET);
    read_all(fd, dst.data(), dst.size());
    ::close(fd);
  });
  bench::row("load + memcpy all 2 GiB (vs read())", copy, copy_base);

  double sum = bench::median_ms(3, [&] {
    std::vector<Array> sums;
    for (const auto& [k, a] : load_safetensors(path).first) sums.push_back(a.sum());
    eval(sums);
  });
  double sum_base = bench::median_ms(3, [&] {
    int fd = ::open(path.c_str(), O_RDONLY);
    uint64_t n = 0;
    read_all(fd, reinterpret_cast<char*>(&n), 8);
    ::lseek(fd, off_t(8 + n), SEEK_SET);
    read_all(fd, dst.data(), dst.size());
    ::close(fd);
    volatile double s =
        sum_floats(reinterpret_cast<const float*>(dst.data()), dst.size() / 4);
    (void)s;
  });
  bench::row("load + sum all 2 GiB (vs read() + loop)", sum, sum_base);
  ::unlink(path.c_str());

  std::printf(
      "\nsave %.2f GB/s (write() %.2f GB/s); load + memcpy %.2f GB/s (read() "
      "%.2f GB/s)\n",
      total_bytes / save / 1e6, total_bytes / save_base / 1e6,
      total_bytes / copy / 1e6, total_bytes / copy_base / 1e6);
  return 0;
}
