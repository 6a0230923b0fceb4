// RMSNorm, LayerNorm and AddRMSNorm on the CPU: one pass per row, with the
// composite's arithmetic step for step (the statistics reduced with the
// Reduce kernels' fixed order, reduce_row.h; the same functors), so a row
// gets the composite's bits whatever the batch, layout or thread count.
#include "backend/cpu/reduce_row.h"
#include "backend/cpu/rows.h"
#include "backend/cpu/scratch.h"
#include "fast/composite.h"
#include "nuvec/kernels/binary.h"
#include "nuvec/kernels/unary.h"

namespace nuvec::cpu {

namespace {

using reduce_row::reduce_contiguous;
using RT = Reduce::Type;

// A per-feature parameter (0-d: none) as a dense vector of T.
template <class T>
Scratch<T> load_param(const Array& p) {
  Scratch<T> v;
  if (p.ndim() == 0) return v;
  Rows rows(p);
  v.reset(rows.length());
  load_row<T, T>(p, rows, 0, v.data());
  return v;
}

// y[i] = cast(x[i] * r) [* w[i]] [+ b[i]] into `out` row `dst` (a loop per
// case, so that each vectorizes).
template <class T, class A>
void write_scaled(const A* x, A r, const Scratch<T>& w, const Scratch<T>& b, int64_t n, T* dst) {
  kernels::Cast<T> cast;
  const T* wp = w.data();
  const T* bp = b.data();
  if (wp && bp) {
    NUVEC_INDEPENDENT_ITERATIONS
    for (int64_t i = 0; i < n; ++i)
      dst[i] = kernels::Add{}(kernels::Multiply{}(cast(kernels::Multiply{}(x[i], r)), wp[i]), bp[i]);
  } else if (wp) {
    NUVEC_INDEPENDENT_ITERATIONS
    for (int64_t i = 0; i < n; ++i) dst[i] = kernels::Multiply{}(cast(kernels::Multiply{}(x[i], r)), wp[i]);
  } else if (bp) {
    NUVEC_INDEPENDENT_ITERATIONS
    for (int64_t i = 0; i < n; ++i) dst[i] = kernels::Add{}(cast(kernels::Multiply{}(x[i], r)), bp[i]);
  } else {
    NUVEC_INDEPENDENT_ITERATIONS
    for (int64_t i = 0; i < n; ++i) dst[i] = cast(kernels::Multiply{}(x[i], r));
  }
}

// 1 / mean(x^2) + eps, as the composite: sum(square), times 1/n, + eps, rsqrt.
template <class A>
A inv_rms(const A* x, A* sq, int64_t n, A inv_n, A eps) {
  NUVEC_INDEPENDENT_ITERATIONS
  for (int64_t i = 0; i < n; ++i) sq[i] = kernels::Square{}(x[i]);
  A ms = kernels::Multiply{}(reduce_contiguous<RT::sum, A>(sq, n), inv_n);
  return kernels::Rsqrt{}(kernels::Add{}(ms, eps));
}

template <class T>
void rms_rows(const Array& x, const Array* residual, const Array& w_in, float eps, Array& out,
              Array* h_out) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  Rows rows(x);
  const int64_t n = rows.length();
  if (out.size() == 0 || n == 0) return;
  Rows rrows = residual ? Rows(*residual) : rows;
  Scratch<T> w = load_param<T>(w_in), none;
  const A inv_n = kernels::Cast<A>{}(1.0 / double(n)), e = kernels::Cast<A>{}(eps);
  T* dst = ptr<T>(out);
  T* hdst = h_out ? ptr<T>(*h_out) : nullptr;
  for_row_blocks(rows.count(), n, [&](int64_t r0, int64_t r1) {
    Scratch<A> xr(n), sq(n);
    Scratch<T> a(residual ? n : 0), b(residual ? n : 0);
    for (int64_t r = r0; r < r1; ++r) {
      if (residual) {
        // h = x + residual in T (the composite's add), then its statistics.
        load_row<T, T>(x, rows, r, a.data());
        load_row<T, T>(*residual, rrows, r, b.data());
        for (int64_t i = 0; i < n; ++i) {
          T hv = kernels::Add{}(a[i], b[i]);
          hdst[r * n + i] = hv;
          xr[i] = kernels::Cast<A>{}(hv);
        }
      } else {
        load_row<A, T>(x, rows, r, xr.data());
      }
      A rs = inv_rms(xr.data(), sq.data(), n, inv_n, e);
      write_scaled<T, A>(xr.data(), rs, w, none, n, dst + r * n);
    }
  });
}

template <class T>
void layer_rows(const Array& x, const Array& w_in, const Array& b_in, float eps, Array& out) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  Rows rows(x);
  const int64_t n = rows.length();
  if (out.size() == 0 || n == 0) return;
  Scratch<T> w = load_param<T>(w_in), b = load_param<T>(b_in);
  const A inv_n = kernels::Cast<A>{}(1.0 / double(n)), e = kernels::Cast<A>{}(eps);
  T* dst = ptr<T>(out);
  for_row_blocks(rows.count(), n, [&](int64_t r0, int64_t r1) {
    Scratch<A> xr(n), sq(n);
    for (int64_t r = r0; r < r1; ++r) {
      load_row<A, T>(x, rows, r, xr.data());
      const A mu = kernels::Multiply{}(reduce_contiguous<RT::sum, A>(xr.data(), n), inv_n);
      A* xp = xr.data();
      NUVEC_INDEPENDENT_ITERATIONS
      for (int64_t i = 0; i < n; ++i) xp[i] = kernels::Subtract{}(xp[i], mu);
      A rs = inv_rms(xr.data(), sq.data(), n, inv_n, e);
      write_scaled<T, A>(xr.data(), rs, w, b, n, dst + r * n);
    }
  });
}

}  // namespace

void eval(const RMSNorm& p, const Arrays& in, Arrays& out) {
  dispatch_floating(in[0].dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    rms_rows<T>(in[0], nullptr, in[1], p.eps(), out[0], nullptr);
  });
}

void eval(const AddRMSNorm& p, const Arrays& in, Arrays& out) {
  dispatch_floating(in[0].dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    rms_rows<T>(in[0], &in[1], in[2], p.eps(), out[1], &out[0]);
  });
}

void eval(const LayerNorm& p, const Arrays& in, Arrays& out) {
  dispatch_floating(in[0].dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    layer_rows<T>(in[0], in[1], in[2], p.eps(), out[0]);
  });
}

}  // namespace nuvec::cpu
