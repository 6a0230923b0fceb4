// im2col: for every output position, the input rows under each kernel tap
// (zeros in padding and input-dilation holes), written row-major so the
// convolution becomes one matrix product.
#include <cstring>

#include "backend/cpu/cpu.h"
#include "backend/cpu/loops.h"

namespace nuvec::cpu {

void eval(const Im2Col& p, const Arrays& in, Arrays& out) {
  const Array& x = in[0];
  Array& o = out[0];
  if (o.size() == 0) return;
  int d = x.ndim() - 2;
  int C = x.shape(-1);
  int item = x.itemsize();
  // Per spatial axis: for output index i and tap k, the input offset (in
  // elements, strides applied) or -1 for a zero.
  std::vector<int> osz(d), ksz(d);
  std::vector<std::vector<int64_t>> table(d);
  int64_t taps = 1, rows_per_batch = 1;
  for (int a = 0; a < d; ++a) {
    osz[a] = o.shape(1 + a);
    ksz[a] = o.shape(1 + d + a);
    int64_t n = x.shape(1 + a);
    int64_t dilated = n == 0 ? 0 : (n - 1) * p.input_dilation()[a] + 1;
    auto& t = table[a];
    t.resize(static_cast<size_t>(osz[a]) * ksz[a]);
    for (int i = 0; i < osz[a]; ++i)
      for (int k = 0; k < ksz[a]; ++k) {
        int64_t pos = int64_t(i) * p.stride()[a] + int64_t(k) * p.kernel_dilation()[a] -
                      p.padding_lo()[a];
        int64_t v = -1;
        if (pos >= 0 && pos < dilated && pos % p.input_dilation()[a] == 0)
          v = (pos / p.input_dilation()[a]) * x.strides()[1 + a];
        t[static_cast<size_t>(i) * ksz[a] + k] = v;
      }
    taps *= ksz[a];
    rows_per_batch *= osz[a];
  }
  int64_t cs = x.strides()[d + 1], bs = x.strides()[0];
  const char* src = static_cast<const char*>(x.desc()->data->ptr) + x.desc()->offset * item;
  char* dst = static_cast<char*>(o.desc()->data->ptr);
  int64_t row_bytes = int64_t(C) * item;
  int64_t rows = int64_t(x.shape(0)) * rows_per_batch;
  int64_t per_row = taps * row_bytes;
  parallel_for(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(per_row, 1)),
               [&](long long r0, long long r1) {
                 std::vector<int> oi(d), ki(d);
                 for (long long r = r0; r < r1; ++r) {
                   int64_t rem = r % rows_per_batch;
                   for (int a = d - 1; a >= 0; --a) {
                     oi[a] = int(rem % osz[a]);
                     rem /= osz[a];
                   }
                   int64_t base = (r / rows_per_batch) * bs;
                   char* dr = dst + r * per_row;
                   std::fill(ki.begin(), ki.end(), 0);
                   for (int64_t t = 0; t < taps; ++t) {
                     int64_t off = base;
                     bool zero = false;
                     for (int a = 0; a < d; ++a) {
                       int64_t v = table[a][static_cast<size_t>(oi[a]) * ksz[a] + ki[a]];
                       if (v < 0) {
                         zero = true;
                         break;
                       }
                       off += v;
                     }
                     char* dt = dr + t * row_bytes;
                     if (zero) {
                       std::memset(dt, 0, static_cast<size_t>(row_bytes));
                     } else if (cs == 1) {
                       std::memcpy(dt, src + off * item, static_cast<size_t>(row_bytes));
                     } else {
                       for (int c = 0; c < C; ++c)
                         std::memcpy(dt + c * item, src + (off + c * cs) * item, item);
                     }
                     for (int a = d - 1; a >= 0; --a) {
                       if (++ki[a] < ksz[a]) break;
                       ki[a] = 0;
                     }
                   }
                 }
               });
}

}  // namespace nuvec::cpu
