// Scatter updates: copy the input, then apply each update in order (so the
// result does not depend on threads: repeated positions accumulate
// deterministically, and `set` keeps the last write).
#include "backend/cpu/cpu.h"
#include "backend/cpu/scratch.h"
#include "core/strided.h"
#include "nuvec/kernels/binary.h"

namespace nuvec::cpu {

void eval(const Scatter& p, const Arrays& in, Arrays& out) {
  const Array& x = in[0];
  Array& o = out[0];
  if (o.desc()->data != x.desc()->data) copy_general(x, o);
  int64_t n = x.size();
  Scratch<int64_t> pos(in[1].size());  // counted by the memory limit
  int64_t count = 0;
  dispatch_dtype(in[1].dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<I>) {
      const I* pp = ptr<I>(in[1]) - in[1].desc()->offset;
      for_each_offset(in[1].shape(), in[1].strides(), in[1].desc()->offset, [&](int64_t off) {
        int64_t v = static_cast<int64_t>(pp[off]);
        if (v < 0) v += n;
        pos[count++] = v < 0 ? 0 : (v >= n ? n - 1 : v);
      });
    }
  });
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = ptr<T>(o);
    const Array& u = in[2];
    const T* up = ptr<T>(u) - u.desc()->offset;
    int64_t k = 0;
    for_each_offset(u.shape(), u.strides(), u.desc()->offset, [&](int64_t off) {
      T& d = dst[pos[k++]];
      T v = up[off];
      switch (p.type()) {
        case Scatter::Type::set: d = v; break;
        case Scatter::Type::add: d = kernels::Add{}(d, v); break;
        case Scatter::Type::multiply: d = kernels::Multiply{}(d, v); break;
        case Scatter::Type::maximum: d = kernels::Maximum{}(d, v); break;
        case Scatter::Type::minimum: d = kernels::Minimum{}(d, v); break;
      }
    });
  });
}

}  // namespace nuvec::cpu
