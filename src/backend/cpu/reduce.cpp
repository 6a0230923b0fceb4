// Reductions. The reduced axes are moved last (a view), then each output
// element reduces its block. Summation order depends only on the shape:
// contiguous runs use 16 interleaved accumulators combined in a fixed tree,
// so results do not depend on thread count or buffer alignment.
#include <algorithm>
#include <memory>

#include "backend/cpu/cpu.h"
#include "backend/cpu/loops.h"
#include "core/strided.h"
#include "nuvec/kernels/binary.h"
#include "nuvec/kernels/cast.h"

namespace nuvec::cpu {

namespace {

using RT = Reduce::Type;

// The accumulator type: float for 16-bit floats, int64-width wrapping for
// integer sums and products stays in the output type.
template <class In, class Out>
using acc_t = std::conditional_t<kernels::is_half_v<Out>, float, Out>;

template <RT type, class A>
struct Combine {
  A init() const {
    if constexpr (type == RT::sum || type == RT::any) return A(0);
    else if constexpr (type == RT::prod || type == RT::all) return A(1);
    else return A(0);  // max/min start from the first element instead
  }
  A operator()(A a, A b) const {
    if constexpr (type == RT::sum) return kernels::Add{}(a, b);
    else if constexpr (type == RT::prod) return kernels::Multiply{}(a, b);
    else if constexpr (type == RT::max) return kernels::Maximum{}(a, b);
    else if constexpr (type == RT::min) return kernels::Minimum{}(a, b);
    else if constexpr (type == RT::all) return A(a && b);
    else return A(a || b);
  }
};

// Reduces n >= 1 contiguous elements with 16 accumulators and a fixed tree.
template <RT type, class In, class A>
A reduce_contiguous(const In* x, int64_t n) {
  Combine<type, A> c;
  constexpr int W = 16;
  if (n < W) {
    A r = kernels::Cast<A>{}(x[0]);
    for (int64_t i = 1; i < n; ++i) r = c(r, kernels::Cast<A>{}(x[i]));
    return r;
  }
  A acc[W];
  for (int j = 0; j < W; ++j) acc[j] = kernels::Cast<A>{}(x[j]);
  int64_t i = W;
  for (; i + W <= n; i += W)
    for (int j = 0; j < W; ++j) acc[j] = c(acc[j], kernels::Cast<A>{}(x[i + j]));
  for (int w = W / 2; w > 0; w /= 2)
    for (int j = 0; j < w; ++j) acc[j] = c(acc[j], acc[j + w]);
  A r = acc[0];
  for (; i < n; ++i) r = c(r, kernels::Cast<A>{}(x[i]));
  return r;
}

template <RT type, class In, class Out>
void reduce_typed(const Array& in, Array& out, const std::vector<int>& axes) {
  using A = acc_t<In, Out>;
  Combine<type, A> c;
  bool extreme = type == RT::max || type == RT::min;
  // Permute: kept axes first, reduced axes last.
  Shape kept_shape, red_shape;
  Strides kept_st, red_st;
  for (int d = 0; d < in.ndim(); ++d) {
    bool r = std::find(axes.begin(), axes.end(), d) != axes.end();
    (r ? red_shape : kept_shape).push_back(in.shape()[d]);
    (r ? red_st : kept_st).push_back(in.strides()[d]);
  }
  int64_t m = shape_size(red_shape);
  Out* dst = ptr<Out>(out);
  const In* src = ptr<In>(in);
  int64_t n_out = out.size();
  // Is the reduced block one contiguous run?
  bool red_contig = is_row_contiguous(red_shape, red_st);
  std::vector<int64_t> out_offsets;
  out_offsets.reserve(static_cast<size_t>(n_out));
  for_each_offset(kept_shape, kept_st, 0, [&](int64_t o) { out_offsets.push_back(o); });
  auto reduce_one = [&](int64_t base) -> A {
    if (m == 0) return c.init();
    if (red_contig) return reduce_contiguous<type, In, A>(src + base, m);
    A acc = c.init();
    bool first = true;
    for_each_offset(red_shape, red_st, base, [&](int64_t off) {
      A v = kernels::Cast<A>{}(src[off]);
      acc = (first && extreme) ? v : c(acc, v);
      first = false;
    });
    return acc;
  };
  if (n_out == 1) {  // one big reduction: fixed blocks combined in order
    if (red_contig && m > (int64_t(1) << 16)) {
      constexpr int64_t B = int64_t(1) << 16;
      int64_t nb = (m + B - 1) / B;
      std::unique_ptr<A[]> part(new A[static_cast<size_t>(nb)]);  // not vector<bool>
      parallel_for(nb, 1, [&](long long b, long long e) {
        for (long long k = b; k < e; ++k)
          part[k] = reduce_contiguous<type, In, A>(src + out_offsets[0] + k * B,
                                                   std::min<int64_t>(B, m - k * B));
      });
      for (int64_t w = 1; w < nb; w *= 2)  // fixed pairwise tree
        for (int64_t k = 0; k + w < nb; k += 2 * w) part[k] = c(part[k], part[k + w]);
      dst[0] = kernels::Cast<Out>{}(part[0]);
      return;
    }
    dst[0] = kernels::Cast<Out>{}(reduce_one(out_offsets[0]));
    return;
  }
  long long grain = std::max<long long>(1, kGrain / std::max<int64_t>(m, 1));
  parallel_for(n_out, grain, [&](long long b, long long e) {
    for (long long i = b; i < e; ++i) dst[i] = kernels::Cast<Out>{}(reduce_one(out_offsets[i]));
  });
}

template <RT type>
void reduce_dispatch(const Array& in, Array& out, const std::vector<int>& axes) {
  dispatch_dtype(in.dtype(), [&](auto ti) {
    using In = typename decltype(ti)::type;
    using Out = type_of_t<reduce_output_dtype(type, dtype_v<In>).val>;
    reduce_typed<type, In, Out>(in, out, axes);
  });
}

}  // namespace

void eval(const Reduce& p, const Arrays& in, Arrays& out) {
  switch (p.type()) {
    case RT::sum: return reduce_dispatch<RT::sum>(in[0], out[0], p.axes());
    case RT::prod: return reduce_dispatch<RT::prod>(in[0], out[0], p.axes());
    case RT::max: return reduce_dispatch<RT::max>(in[0], out[0], p.axes());
    case RT::min: return reduce_dispatch<RT::min>(in[0], out[0], p.axes());
    case RT::all: return reduce_dispatch<RT::all>(in[0], out[0], p.axes());
    case RT::any: return reduce_dispatch<RT::any>(in[0], out[0], p.axes());
  }
}

void eval(const ArgReduce& p, const Arrays& in, Arrays& out) {
  const Array& x = in[0];
  int axis = p.axis();
  bool is_max = p.type() == ArgReduce::Type::argmax;
  Shape kept = x.shape();
  Strides kst = x.strides();
  kept.erase(kept.begin() + axis);
  kst.erase(kst.begin() + axis);
  int len = x.shape()[axis];
  int64_t st = x.strides()[axis];
  uint32_t* dst = ptr<uint32_t>(out[0]);
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = ptr<T>(x);
    int64_t i = 0;
    for_each_offset(kept, kst, 0, [&](int64_t base) {
      uint32_t best = 0;
      T bv = src[base];
      for (int k = 1; k < len && !kernels::any_nan(bv); ++k) {
        T v = src[base + k * st];
        bool better = kernels::any_nan(v) ||
                      (is_max ? kernels::less_than(bv, v) : kernels::less_than(v, bv));
        if (better) {
          best = static_cast<uint32_t>(k);
          bv = v;
        }
      }
      dst[i++] = best;
    });
  });
}

}  // namespace nuvec::cpu
