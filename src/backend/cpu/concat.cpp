// Concatenate: the output is [outer, total, inner] (row-major); input k
// fills the columns [start_k, start_k + n_k) of the middle axis. Each input
// is read in its own row-major order, whatever its strides.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/cpu.h"
#include "backend/cpu/loops.h"
#include "core/strided.h"

namespace nuvec::cpu {

namespace {

template <class T>
void concat_typed(const Concatenate& p, const Arrays& in, Array& out) {
  int axis = p.axis();
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= out.shape()[d];
  for (int d = axis + 1; d < out.ndim(); ++d) inner *= out.shape()[d];
  int64_t total_row = int64_t(out.shape()[axis]) * inner;
  T* dst = ptr<T>(out);
  int64_t start = 0;
  for (const Array& a : in) {
    int64_t block = int64_t(a.shape()[axis]) * inner;  // elements per outer row
    if (a.size() > 0) {
      const T* src = ptr<T>(a);
      T* base = dst + start;
      if (a.desc()->row_contiguous) {
        parallel_for(outer, std::max<long long>(1, kGrain / std::max<int64_t>(block, 1)),
                     [&](long long b, long long e) {
                       for (long long o = b; o < e; ++o)
                         std::memcpy(base + o * total_row, src + o * block, sizeof(T) * block);
                     });
      } else {
        int64_t f = 0;  // flat index in a's row-major order
        for_each_offset(a.shape(), a.strides(), 0, [&](int64_t off) {
          base[(f / block) * total_row + f % block] = src[off];
          ++f;
        });
      }
    }
    start += block;
  }
}

}  // namespace

void eval(const Concatenate& p, const Arrays& in, Arrays& out) {
  if (out[0].size() == 0) return;
  dispatch_dtype(out[0].dtype(), [&](auto t) { concat_typed<typename decltype(t)::type>(p, in, out[0]); });
}

}  // namespace nuvec::cpu
