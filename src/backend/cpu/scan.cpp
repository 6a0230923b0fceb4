// Scans (cumsum, cumprod, cummax, cummin, logcumsumexp). The input is seen
// as [outer, n, inner] (row-major; a strided input is gathered first); each
// lane runs sequentially along the axis in the output dtype, as MLX's CPU
// scan does, so integer scans match MLX exactly and float scans round at
// each step like MLX's.
#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "backend/cpu/cpu.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/scratch.h"
#include "backend/scan_op.h"
#include "core/strided.h"
#include "nuvec/kernels/binary.h"
#include "nuvec/kernels/cast.h"

namespace nuvec::cpu {

namespace {

using ST = Scan::Type;

using backend::scan_init;
using backend::ScanOp;


template <ST type, class In, class U>
void scan_typed(const Scan& p, const Array& in, Array& out) {
  if (in.size() == 0) return;
  int axis = p.axis();
  int64_t n = in.shape()[axis], outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= in.shape()[d];
  for (int d = axis + 1; d < in.ndim(); ++d) inner *= in.shape()[d];
  Scratch<In> dense;  // a dense copy, counted by the memory limit
  const In* src = ptr<In>(in);
  if (!in.desc()->row_contiguous) {
    dense.reset(in.size());
    int64_t k = 0;
    for_each_offset(in.shape(), in.strides(), 0, [&](int64_t o) { dense[k++] = src[o]; });
    src = dense.data();
  }
  U* dst = ptr<U>(out);
  ScanOp<type> op;
  kernels::Cast<U> cast;
  bool rev = p.reverse(), incl = p.inclusive();
  const U init = scan_init<type, U>();
  if (inner == 1) {  // one lane per row: a scalar accumulator
    long long g = std::max<long long>(1, kGrain / std::max<int64_t>(n, 1));
    parallel_for(outer, g, [&](long long b, long long e) {
      for (long long o = b; o < e; ++o) {
        const In* x = src + o * n;
        U* y = dst + o * n;
        int64_t step = rev ? -1 : 1, a = rev ? n - 1 : 0;
        U acc = incl ? cast(x[a]) : init;
        y[a] = acc;
        for (int64_t s = 1; s < n; ++s, a += step) {
          if (incl) {
            acc = op(acc, cast(x[a + step]));
          } else {
            acc = op(acc, cast(x[a]));
          }
          y[a + step] = acc;
        }
      }
    });
    return;
  }
  // Lanes are (outer, inner-chunk) pairs; each walks the axis.
  constexpr int64_t kChunk = 256;
  int64_t chunks = (inner + kChunk - 1) / kChunk;
  long long grain = std::max<long long>(1, kGrain / std::max<int64_t>(n * std::min(inner, kChunk), 1));
  parallel_for(outer * chunks, grain, [&](long long b, long long e) {
    std::unique_ptr<U[]> acc(new U[static_cast<size_t>(std::min(inner, kChunk))]);
    for (long long t = b; t < e; ++t) {
      int64_t o = t / chunks, i0 = (t % chunks) * kChunk, m = std::min(kChunk, inner - i0);
      const In* x = src + o * n * inner + i0;
      U* y = dst + o * n * inner + i0;
      for (int64_t s = 0; s < n; ++s) {
        int64_t a = rev ? n - 1 - s : s;
        const In* xr = x + a * inner;
        U* yr = y + a * inner;
        if (incl) {
          if (s == 0)
            for (int64_t i = 0; i < m; ++i) acc[i] = cast(xr[i]);
          else
            for (int64_t i = 0; i < m; ++i) acc[i] = op(acc[i], cast(xr[i]));
          for (int64_t i = 0; i < m; ++i) yr[i] = acc[i];
        } else {
          if (s == 0)
            for (int64_t i = 0; i < m; ++i) acc[i] = init;
          for (int64_t i = 0; i < m; ++i) yr[i] = acc[i];
          for (int64_t i = 0; i < m; ++i) acc[i] = op(acc[i], cast(xr[i]));
        }
      }
    }
  });
}

template <ST type>
void scan_dispatch(const Scan& p, const Array& in, Array& out) {
  dispatch_dtype(in.dtype(), [&](auto ti) {
    using In = typename decltype(ti)::type;
    using U = type_of_t<scan_output_dtype(type, dtype_v<In>).val>;
    scan_typed<type, In, U>(p, in, out);
  });
}

}  // namespace

void eval(const Scan& p, const Arrays& in, Arrays& out) {
  switch (p.type()) {
    case ST::sum: return scan_dispatch<ST::sum>(p, in[0], out[0]);
    case ST::prod: return scan_dispatch<ST::prod>(p, in[0], out[0]);
    case ST::max: return scan_dispatch<ST::max>(p, in[0], out[0]);
    case ST::min: return scan_dispatch<ST::min>(p, in[0], out[0]);
    case ST::logaddexp: return scan_dispatch<ST::logaddexp>(p, in[0], out[0]);
  }
}

}  // namespace nuvec::cpu
