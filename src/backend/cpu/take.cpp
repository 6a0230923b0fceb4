// Gathers along one axis. Indices are read once (any strides), wrapped when
// negative and clamped, then rows of the trailing axes are copied.
#include <cstring>

#include "backend/cpu/cpu.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/scratch.h"
#include "core/strided.h"

namespace nuvec::cpu {

namespace {

// The scratch comes from the allocator: 2^26 int8 indices need 512 MiB of
// int64 here, which the memory limit must see.
Scratch<int64_t> read_indices(const Array& idx, int64_t n) {
  Scratch<int64_t> out(idx.size());
  int64_t k = 0;
  dispatch_dtype(idx.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      const T* p = ptr<T>(idx) - idx.desc()->offset;
      for_each_offset(idx.shape(), idx.strides(), idx.desc()->offset, [&](int64_t o) {
        int64_t v = static_cast<int64_t>(p[o]);
        if (v < 0) v += n;
        out[k++] = v < 0 ? 0 : (v >= n ? n - 1 : v);
      });
    }
  });
  return out;
}

}  // namespace

void eval(const Take& p, const Arrays& in, Arrays& out) {
  const Array& x = in[0];
  Array& o = out[0];
  if (o.size() == 0) return;
  int axis = p.axis();
  int64_t n = x.shape()[axis];
  Scratch<int64_t> idx = read_indices(in[1], n);
  // Outer axes before `axis`, inner axes after it (as sub-shapes).
  Shape outer(x.shape().begin(), x.shape().begin() + axis);
  Strides outer_st(x.strides().begin(), x.strides().begin() + axis);
  Shape inner(x.shape().begin() + axis + 1, x.shape().end());
  Strides inner_st(x.strides().begin() + axis + 1, x.strides().end());
  // Dense trailing axes: each gathered row is one copy.
  bool dense_rows = is_row_contiguous(inner, inner_st);
  Scratch<int64_t> outer_off(shape_size(outer)), inner_off;
  int64_t k = 0;
  for_each_offset(outer, outer_st, 0, [&](int64_t v) { outer_off[k++] = v; });
  int64_t m = shape_size(inner);
  if (!dense_rows) {
    inner_off.reset(m);
    k = 0;
    for_each_offset(inner, inner_st, 0, [&](int64_t v) { inner_off[k++] = v; });
  }
  int item = x.itemsize();
  const char* src = static_cast<const char*>(x.desc()->data->ptr) + x.desc()->offset * item;
  char* dst = static_cast<char*>(o.desc()->data->ptr);
  int64_t ni = idx.size();
  int64_t axis_stride = x.strides()[axis];
  int64_t rows = outer_off.size() * ni;
  parallel_for(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(m, 1)),
               [&](long long r0, long long r1) {
                 for (long long r = r0; r < r1; ++r) {
                   int64_t base = outer_off[r / ni] + idx[r % ni] * axis_stride;
                   char* d = dst + r * m * item;
                   if (dense_rows) {
                     std::memcpy(d, src + base * item, static_cast<size_t>(m * item));
                     continue;
                   }
                   for (int64_t k = 0; k < m; ++k)
                     std::memcpy(d + k * item, src + (base + inner_off[k]) * item, item);
                 }
               });
}

}  // namespace nuvec::cpu
