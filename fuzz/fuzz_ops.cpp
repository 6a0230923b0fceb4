// libFuzzer target for the ops at extreme sizes (fuzz/fuzz_ops_extreme.h):
// the input's bytes are the choices. A result that breaks the size rule or
// fails as `internal` aborts; a crash or a sanitizer report is a finding.
//   build/fuzz/fuzz/fuzz_ops -max_total_time=600 fuzz/corpus/ops
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz_ops_extreme.h"

namespace {

// Choices from the input: two bytes per choice, then the low end.
struct Bytes {
  const uint8_t* p;
  size_t n;
  int pick(int lo, int hi) {
    if (n < 2 || hi <= lo) return lo;
    unsigned v = unsigned(p[0]) | unsigned(p[1]) << 8;
    p += 2, n -= 2;
    return lo + static_cast<int>(v % (static_cast<unsigned>(hi - lo) + 1));
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool limited = [] {
    nuvec::set_memory_limit(size_t(16) << 20);
    return true;
  }();
  (void)limited;
  Bytes src{data, size};
  nuvec::fuzz::ExtremeOps<Bytes> ops(src);
  while (src.n >= 2) {
    ops.run_one();
    if (!ops.fault().empty()) {
      std::fprintf(stderr, "fuzz_ops: %s\n", ops.fault().c_str());
      std::abort();
    }
  }
  return 0;
}
