// Element-wise unary kernels, one template instantiated per registry entry.
#include <algorithm>

#include "backend/cpu/cpu.h"
#include "backend/cpu/loops.h"
#include "backend/functor_of.h"

namespace nuvec::cpu {

namespace {

constexpr int64_t kSmallBlock = 256;  // elements per check (in L1)

// [b, e) in blocks: F's fast variant for a block whose arguments are all
// small (the same bits), F itself for any other. Each block is checked
// before it is written (out may be in's buffer).
template <class F, class In, class Out>
void small_blocks(const In* src, Out* dst, int64_t b, int64_t e) {
  using S = kernels::Small<F>;
  for (int64_t s = b; s < e; s += kSmallBlock) {
    const int64_t t = std::min(e, s + kSmallBlock);
    kernels::u32 outside = 0;
    for (int64_t i = s; i < t; ++i) outside |= S::outside(src[i]);
    if (outside)
      for (int64_t i = s; i < t; ++i) dst[i] = F{}(src[i]);
    else
      for (int64_t i = s; i < t; ++i) dst[i] = S{}(src[i]);
  }
}

template <class F, class In>
void unary_typed(const Array& in, Array& out) {
  using Out = decltype(F{}(In{}));
  const In* src = ptr<In>(in);
  Out* dst = ptr<Out>(out);
  if (in.desc()->row_contiguous) {
    for_each_block(in.size(), [&](int64_t b, int64_t e) {
      if constexpr (requires { kernels::Small<F>{}(In{}); })
        small_blocks<F>(src, dst, b, e);
      else
        for (int64_t i = b; i < e; ++i) dst[i] = F{}(src[i]);
    });
    return;
  }
  Strides os = row_major_strides(out.shape());
  auto l = collapse<2>(in.shape(), {&in.strides(), &os});
  for_each_row(l, [&](const std::array<int64_t, 2>& off, int64_t n,
                      const std::array<int64_t, 2>& st) {
    const In* s = src + off[0];
    Out* d = dst + off[1];
    for (int64_t i = 0; i < n; ++i) d[i] = F{}(s[i * st[0]]);
  });
}

}  // namespace

template <PrimitiveId Id, UnaryRule R>
void eval(const UnaryPrimitive<Id, R>&, const Arrays& in, Arrays& out) {
  using F = backend::functor_of_t<Id>;
  dispatch_dtype(in[0].dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_invocable_v<F, T>) {
      if (dtype_v<std::decay_t<decltype(F{}(T{}))>> != out[0].dtype())
        (Error(ErrorKind::internal, "unary kernel output dtype mismatch")).raise();
      unary_typed<F, T>(in[0], out[0]);
    } else {
      (Error(ErrorKind::unsupported_dtype,
                  std::string("no CPU kernel for dtype ") + std::string(dtype_name(in[0].dtype())))).raise();
    }
  });
}

#define NUVEC_INSTANTIATE(Name, rule) \
  template void eval(const Name&, const Arrays&, Arrays&);
NUVEC_UNARY_PRIMITIVES(NUVEC_INSTANTIATE)
#undef NUVEC_INSTANTIATE

}  // namespace nuvec::cpu
