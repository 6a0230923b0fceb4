// Element-wise binary and ternary kernels: contiguous, scalar-broadcast and
// general strided paths.
#include "backend/cpu/cpu.h"
#include "backend/cpu/loops.h"
#include "backend/functor_of.h"

namespace nuvec::cpu {

namespace {

bool is_scalar_broadcast(const Array& a) {
  for (auto s : a.strides())
    if (s != 0) return false;
  return true;
}

// out[i] = f(a[i], b[i]) for any number of outputs written by `store`.
template <class In, class Op>
void binary_loop(const Array& a, const Array& b, const Shape& shape, Op&& op) {
  const In* pa = ptr<In>(a);
  const In* pb = ptr<In>(b);
  int64_t n = shape_size(shape);
  bool ca = a.desc()->row_contiguous, cb = b.desc()->row_contiguous;
  if (ca && cb) {
    for_each_block(n, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) op(i, pa[i], pb[i]);
    });
  } else if (ca && is_scalar_broadcast(b)) {
    const In vb = pb[0];
    for_each_block(n, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) op(i, pa[i], vb);
    });
  } else if (cb && is_scalar_broadcast(a)) {
    const In va = pa[0];
    for_each_block(n, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) op(i, va, pb[i]);
    });
  } else {
    Strides os = row_major_strides(shape);
    auto l = collapse<3>(shape, {&a.strides(), &b.strides(), &os});
    for_each_row(l, [&](const std::array<int64_t, 3>& off, int64_t cnt,
                        const std::array<int64_t, 3>& st) {
      for (int64_t i = 0; i < cnt; ++i)
        op(off[2] + i, pa[off[0] + i * st[0]], pb[off[1] + i * st[1]]);
    });
  }
}

}  // namespace

template <PrimitiveId Id, BinaryRule R>
void eval(const BinaryPrimitive<Id, R>&, const Arrays& in, Arrays& out) {
  using F = backend::functor_of_t<Id>;
  dispatch_dtype(in[0].dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_invocable_v<F, T, T>) {
      using Out = std::decay_t<decltype(F{}(T{}, T{}))>;
      Out* dst = ptr<Out>(out[0]);
      binary_loop<T>(in[0], in[1], out[0].shape(),
                     [dst](int64_t i, T x, T y) { dst[i] = F{}(x, y); });
    } else {
      (Error(ErrorKind::unsupported_dtype,
                  std::string("no CPU kernel for dtype ") + std::string(dtype_name(in[0].dtype())))).raise();
    }
  });
}

#define NUVEC_INSTANTIATE(Name, rule) \
  template void eval(const Name&, const Arrays&, Arrays&);
NUVEC_BINARY_PRIMITIVES(NUVEC_INSTANTIATE)
#undef NUVEC_INSTANTIATE

void eval(const DivMod&, const Arrays& in, Arrays& out) {
  dispatch_dtype(in[0].dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_invocable_v<kernels::FloorDivide, T, T>) {
      T* q = ptr<T>(out[0]);
      T* r = ptr<T>(out[1]);
      binary_loop<T>(in[0], in[1], out[0].shape(), [q, r](int64_t i, T x, T y) {
        q[i] = kernels::FloorDivide{}(x, y);
        r[i] = kernels::Remainder{}(x, y);
      });
    } else {
      (Error(ErrorKind::unsupported_dtype, "divmod: no CPU kernel for this dtype")).raise();
    }
  });
}

void eval(const Select&, const Arrays& in, Arrays& out) {
  dispatch_dtype(out[0].dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool* c = ptr<bool>(in[0]);
    const T* x = ptr<T>(in[1]);
    const T* y = ptr<T>(in[2]);
    T* dst = ptr<T>(out[0]);
    Strides os = row_major_strides(out[0].shape());
    auto l = collapse<4>(out[0].shape(),
                         {&in[0].strides(), &in[1].strides(), &in[2].strides(), &os});
    for_each_row(l, [&](const std::array<int64_t, 4>& off, int64_t n,
                        const std::array<int64_t, 4>& st) {
      for (int64_t i = 0; i < n; ++i)
        dst[off[3] + i] = kernels::Select{}(c[off[0] + i * st[0]], x[off[1] + i * st[1]],
                                            y[off[2] + i * st[2]]);
    });
  });
}

}  // namespace nuvec::cpu
