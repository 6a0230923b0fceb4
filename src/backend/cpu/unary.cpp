// Element-wise unary kernels, one template instantiated per registry entry.
#include "backend/cpu/cpu.h"
#include "backend/cpu/loops.h"
#include "backend/functor_of.h"

namespace nuvec::cpu {

namespace {

template <class F, class In>
void unary_typed(const Array& in, Array& out) {
  using Out = decltype(F{}(In{}));
  const In* src = ptr<In>(in);
  Out* dst = ptr<Out>(out);
  if (in.desc()->row_contiguous) {
    for_each_block(in.size(), [&](int64_t b, int64_t e) {
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
        throw Error(ErrorKind::internal, "unary kernel output dtype mismatch");
      unary_typed<F, T>(in[0], out[0]);
    } else {
      throw Error(ErrorKind::unsupported_dtype,
                  std::string("no CPU kernel for dtype ") + std::string(dtype_name(in[0].dtype())));
    }
  });
}

#define NUVEC_INSTANTIATE(Name, rule) \
  template void eval(const Name&, const Arrays&, Arrays&);
NUVEC_UNARY_PRIMITIVES(NUVEC_INSTANTIATE)
#undef NUVEC_INSTANTIATE

}  // namespace nuvec::cpu
