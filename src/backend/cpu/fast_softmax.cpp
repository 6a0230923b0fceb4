// Softmax, LogSumExp and CrossEntropy over the last axis on the CPU: one
// pass per row into a float32 (float64) row, the composite's arithmetic
// step for step (reduce_row.h's order, the same functors), so a row gets
// the composite's bits whatever the batch, layout or thread count.
#include <optional>
#include <string>

#include "backend/cpu/reduce_row.h"
#include "backend/cpu/rows.h"
#include "backend/cpu/scratch.h"
#include "core/strided.h"
#include "nuvec/kernels/binary.h"
#include "nuvec/kernels/unary.h"

namespace nuvec::cpu {

namespace {

using reduce_row::reduce_contiguous;
using RT = Reduce::Type;

template <class T>
using stats_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// e[i] = exp(x[i] - m) with m the row's max (0 where it is infinite when
// `lse_shift`, as logsumexp's composite); returns the sum of e, writes m.
template <class A>
A exp_sum(const A* x, A* e, int64_t n, bool lse_shift, A& m) {
  A mx = reduce_contiguous<RT::max, A>(x, n);
  if (lse_shift && kernels::IsInf{}(mx)) mx = A(0);
  m = mx;
  // (A local max: through the reference, stores to e could alias it and
  // the loop would not vectorize.)
  NUVEC_INDEPENDENT_ITERATIONS
  for (int64_t i = 0; i < n; ++i) e[i] = kernels::Exp{}(kernels::Subtract{}(x[i], mx));
  return reduce_contiguous<RT::sum, A>(e, n);
}

template <class A>
A row_logsumexp(const A* x, A* e, int64_t n) {
  A m;
  A s = exp_sum(x, e, n, true, m);
  return kernels::Add{}(kernels::Log{}(s), m);
}

template <class T>
void softmax_rows(const Array& x, Array& out) {
  using A = stats_t<T>;
  Rows rows(x);
  const int64_t n = rows.length();
  if (out.size() == 0) return;
  T* dst = ptr<T>(out);
  for_row_blocks(rows.count(), n, [&](int64_t r0, int64_t r1) {
    Scratch<A> xr(n), e(n);
    for (int64_t r = r0; r < r1; ++r) {
      load_row<A, T>(x, rows, r, xr.data());
      A m;
      A s = exp_sum(xr.data(), e.data(), n, false, m);
      kernels::Cast<T> cast;
      T* o = dst + r * n;
      NUVEC_INDEPENDENT_ITERATIONS
      for (int64_t i = 0; i < n; ++i) o[i] = cast(kernels::Divide{}(e[i], s));
    }
  });
}

template <class T>
void logsumexp_rows(const Array& x, Array& out) {
  using A = stats_t<T>;
  Rows rows(x);
  const int64_t n = rows.length();
  if (out.size() == 0) return;
  T* dst = ptr<T>(out);
  for_row_blocks(rows.count(), n, [&](int64_t r0, int64_t r1) {
    Scratch<A> xr(n), e(n);
    for (int64_t r = r0; r < r1; ++r) {
      load_row<A, T>(x, rows, r, xr.data());
      dst[r] = kernels::Cast<T>{}(row_logsumexp(xr.data(), e.data(), n));
    }
  });
}

// Row-major offsets of the targets (any strides), one per row.
Scratch<int64_t> target_offsets(const Array& targets, int64_t rows) {
  Scratch<int64_t> toff(rows);
  int64_t k = 0;
  for_each_offset(targets.shape(), targets.strides(), targets.desc()->offset,
                  [&](int64_t o) { toff[k++] = o; });
  return toff;
}

// Whether row r is ignored; throws for a target outside [0, n).
bool ignored_or_checked(const std::optional<int>& ignore, int32_t t, int64_t r, int64_t n) {
  if (ignore && t == *ignore) return true;
  if (t < 0 || t >= n)
    (Error(ErrorKind::out_of_range, "cross_entropy: target " + std::to_string(t) + " of row " +
                                        std::to_string(r) + " is outside [0, " + std::to_string(n) +
                                        ")"))
        .raise();
  return false;
}

template <class T>
void cross_entropy_rows(const CrossEntropy& p, const Array& logits, const Array& targets,
                        Array& out) {
  Rows rows(logits);
  const int64_t n = rows.length();
  if (out.size() == 0) return;
  const int32_t* tbase = base<int32_t>(targets);
  Scratch<int64_t> toff = target_offsets(targets, rows.count());
  const float s = p.label_smoothing();
  const float keep = 1.0f - s;
  const float inv_n = kernels::Cast<float>{}(1.0 / double(n));
  float* dst = ptr<float>(out);
  for_row_blocks(rows.count(), n, [&](int64_t r0, int64_t r1) {
    Scratch<float> xr(n), e(n);
    for (int64_t r = r0; r < r1; ++r) {
      const int32_t t = tbase[toff[r]];
      if (ignored_or_checked(p.ignore_index(), t, r, n)) {
        dst[r] = 0.0f;
        continue;
      }
      load_row<float, T>(logits, rows, r, xr.data());
      float lse = row_logsumexp(xr.data(), e.data(), n);
      float picked = xr[t];
      float loss;
      if (s > 0) {
        float mean = kernels::Multiply{}(reduce_contiguous<RT::sum, float>(xr.data(), n), inv_n);
        loss = kernels::Subtract{}(kernels::Subtract{}(lse, kernels::Multiply{}(picked, keep)),
                                   kernels::Multiply{}(mean, s));
      } else {
        loss = kernels::Subtract{}(lse, picked);
      }
      dst[r] = loss;
    }
  });
}

// g * (softmax - (1 - s) onehot - s / n), the composite's steps: the
// softmax as Softmax's kernel, then the subtractions and the product in
// float32, one rounding to T.
template <class T>
void cross_entropy_grad_rows(const CrossEntropyGrad& p, const Array& logits, const Array& targets,
                             const Array& g, Array& out) {
  Rows rows(logits);
  const int64_t n = rows.length();
  if (out.size() == 0) return;
  const int32_t* tbase = base<int32_t>(targets);
  Scratch<int64_t> toff = target_offsets(targets, rows.count());
  Scratch<int64_t> goff = target_offsets(g, rows.count());
  const float* gbase = base<float>(g);
  const float s = p.label_smoothing(), keep = 1.0f - s, per_class = s / float(n);
  T* dst = ptr<T>(out);
  for_row_blocks(rows.count(), n, [&](int64_t r0, int64_t r1) {
    Scratch<float> xr(n), e(n);
    kernels::Cast<T> cast;
    for (int64_t r = r0; r < r1; ++r) {
      const int32_t t = tbase[toff[r]];
      T* o = dst + r * n;
      const float gr = gbase[goff[r]];
      if (ignored_or_checked(p.ignore_index(), t, r, n)) {
        // g * 0, as the composite (a negative g gives -0).
        const T z = cast(kernels::Multiply{}(gr, 0.0f));
        for (int64_t i = 0; i < n; ++i) o[i] = z;
        continue;
      }
      load_row<float, T>(logits, rows, r, xr.data());
      float m;
      float sum = exp_sum(xr.data(), e.data(), n, false, m);
      for (int64_t i = 0; i < n; ++i) {
        float d = kernels::Subtract{}(kernels::Divide{}(e[i], sum), i == t ? keep : 0.0f);
        if (s > 0) d = kernels::Subtract{}(d, per_class);
        o[i] = cast(kernels::Multiply{}(gr, d));
      }
    }
  });
}

}  // namespace

void eval(const Softmax&, const Arrays& in, Arrays& out) {
  dispatch_floating(in[0].dtype(), [&](auto tag) {
    softmax_rows<typename decltype(tag)::type>(in[0], out[0]);
  });
}

void eval(const LogSumExp&, const Arrays& in, Arrays& out) {
  dispatch_floating(in[0].dtype(), [&](auto tag) {
    logsumexp_rows<typename decltype(tag)::type>(in[0], out[0]);
  });
}

void eval(const CrossEntropyGrad& p, const Arrays& in, Arrays& out) {
  dispatch_floating(in[0].dtype(), [&](auto tag) {
    cross_entropy_grad_rows<typename decltype(tag)::type>(p, in[0], in[1], in[2], out[0]);
  });
}

void eval(const CrossEntropy& p, const Arrays& in, Arrays& out) {
  dispatch_floating(in[0].dtype(), [&](auto tag) {
    cross_entropy_rows<typename decltype(tag)::type>(p, in[0], in[1], out[0]);
  });
}

}  // namespace nuvec::cpu
