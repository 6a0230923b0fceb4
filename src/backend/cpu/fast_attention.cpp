// Attention on the CPU ("cpu_blocked", docs/fast.md): for each query row,
// an online softmax over blocks of kKeys keys in float32 (float64 for
// float64), never materializing [Lq, Lk]. K and V of a key/value head are
// converted once and serve its Hq / Hkv query heads (no repeat in memory).
// A row's arithmetic depends only on its own keys: blocks start at key 0
// and keys a causal mask hides are skipped, so a causal row equals the
// one-query call over its key prefix (the serial rule), and a batch gives
// each row the bits of that row computed alone.
#include <algorithm>
#include <cmath>

#include "backend/cpu/rows.h"
#include "backend/cpu/scratch.h"
#include "core/strided.h"
#include "nuvec/core/dtype_info.h"
#include "nuvec/kernels/binary.h"
#include "nuvec/kernels/unary.h"

namespace nuvec::cpu {

namespace {

constexpr int kKeys = 64;

// A dense [rows, cols] copy of a [.., rows, cols] slice of `a` (element
// offset `start`, strides of its last two axes), converted to A.
template <class A, class T>
void load_matrix(const Array& a, int64_t start, int64_t rows, int64_t cols, A* dst) {
  const T* src = base<T>(a);
  const int64_t sr = a.strides()[a.ndim() - 2], sc = a.strides()[a.ndim() - 1];
  kernels::Cast<A> cast;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[r * cols + c] = cast(src[start + r * sr + c * sc]);
}

// The dot product in a fixed order: 8 interleaved partial sums, then a tree.
template <class A>
A dot(const A* a, const A* b, int64_t n) {
  A acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += a[i + k] * b[i + k];
  for (int k = 0; i < n; ++i, ++k) acc[k] += a[i] * b[i];
  return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

// Rows of a [rows, cols] matrix in groups of 8, transposed within a group:
// element (r, c) at ((r / 8) * cols + c) * 8 + r % 8, rows past the end
// zero. dot8 then scores 8 rows at once with one SIMD lane each.
template <class A>
void transpose8(const A* m, int64_t rows, int64_t cols, A* dst) {
  const int64_t groups = (rows + 7) / 8;
  std::fill(dst, dst + groups * cols * 8, A(0));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[((r / 8) * cols + c) * 8 + r % 8] = m[r * cols + c];
}

// dot(a, row) for the 8 rows of one transposed group, each lane computing
// exactly dot's sums in dot's order (so each result has dot's bits).
template <class A>
void dot8(const A* a, const A* group, int64_t n, A* out) {
  A acc[8][8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k)
      for (int r = 0; r < 8; ++r) acc[k][r] += a[i + k] * group[(i + k) * 8 + r];
  for (int k = 0; i < n; ++i, ++k)
    for (int r = 0; r < 8; ++r) acc[k][r] += a[i] * group[i * 8 + r];
  for (int r = 0; r < 8; ++r)
    out[r] = ((acc[0][r] + acc[4][r]) + (acc[2][r] + acc[6][r])) +
             ((acc[1][r] + acc[5][r]) + (acc[3][r] + acc[7][r]));
}

// One query row's view of the keys, shared by the forward and the backward
// (one definition of the masking rules): the keys it sees (all, or the
// end-aligned causal prefix), and each key's score.
template <class A, class T>
struct RowScores {
  int64_t visible;  // keys [0, visible) are scored
  bool all_hidden;  // a causal row that sees none: every key at `lowest`
  const Array* mask;
  int64_t mrow;     // the mask row's element offset
  A lowest;         // a hidden key's score (the dtype's lowest value)

  RowScores(bool causal, const Array* m, int64_t b, int64_t h, int64_t i, int64_t lq, int64_t lk,
            A low)
      : visible(causal ? std::clamp<int64_t>(i + lk - lq + 1, 0, lk) : lk),
        all_hidden(causal && visible == 0), mask(m), mrow(0), lowest(low) {
    if (all_hidden) visible = lk;
    if (mask)
      mrow = mask->desc()->offset + b * mask->strides()[0] + h * mask->strides()[1] +
             i * mask->strides()[2];
  }
  // Key j's score from its scaled dot product: bool masks hide, additive
  // ones add.
  A operator()(A scaled_dot, int64_t j) const {
    A s = all_hidden ? lowest : scaled_dot;
    if (mask) {
      const int64_t mo = mrow + j * mask->strides()[3];
      if (mask->dtype() == bool_) {
        if (!base<bool>(*mask)[mo]) s = lowest;
      } else {
        s += kernels::Cast<A>{}(base<T>(*mask)[mo]);
      }
    }
    return s;
  }
};

template <class T>
void attention(const Attention& p, const Arrays& in, Array& out) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const Array &q = in[0], &k = in[1], &v = in[2];
  const Array* mask = p.has_mask() ? &in[3] : nullptr;
  const Array* sinks = p.has_sinks() ? &in.back() : nullptr;
  const int64_t B = q.shape(0), Hq = q.shape(1), Lq = q.shape(2), D = q.shape(3);
  const int64_t Hkv = k.shape(1), Lk = k.shape(2), Dv = v.shape(3), rep = Hq / Hkv;
  if (out.size() == 0) return;
  T* dst = ptr<T>(out);
  // A bool mask's hidden scores are the dtype's lowest value (as the
  // composite's where); a row that hides every key then averages them all.
  const A lowest = A(finfo(q.dtype()).min);
  const A scale = A(p.scale());
  Scratch<A> sink_vals(Hq);
  if (sinks) {
    Rows srows(*sinks);
    load_row<A, T>(*sinks, srows, 0, sink_vals.data());
  }
  parallel_for(B * Hkv, 1, [&](long long g0, long long g1) {
    Scratch<A> kf(Lk * D), kt(((Lk + 7) / 8) * 8 * D), vf(Lk * Dv), qf(D), o(Dv), sc(kKeys + 8),
        pr(kKeys);
    for (long long g = g0; g < g1; ++g) {
      const int64_t b = g / Hkv, kh = g % Hkv;
      load_matrix<A, T>(k, k.desc()->offset + b * k.strides()[0] + kh * k.strides()[1], Lk, D,
                        kf.data());
      transpose8(kf.data(), Lk, D, kt.data());
      load_matrix<A, T>(v, v.desc()->offset + b * v.strides()[0] + kh * v.strides()[1], Lk, Dv,
                        vf.data());
      for (int64_t h = kh * rep; h < (kh + 1) * rep; ++h) {
        for (int64_t i = 0; i < Lq; ++i) {
          load_matrix<A, T>(q, q.desc()->offset + b * q.strides()[0] + h * q.strides()[1] +
                                   i * q.strides()[2],
                            1, D, qf.data());
          const RowScores<A, T> score(p.causal(), mask, b, h, i, Lq, Lk, lowest);
          const int64_t visible = score.visible;
          A m = sinks ? sink_vals[h] : -std::numeric_limits<A>::infinity();
          A l = sinks ? A(1) : A(0);
          std::fill(o.begin(), o.end(), A(0));
          for (int64_t j0 = 0; j0 < visible; j0 += kKeys) {
            const int64_t nj = std::min<int64_t>(kKeys, visible - j0);
            A bm = -std::numeric_limits<A>::infinity();
            for (int64_t j = 0; j < nj; j += 8) dot8(qf.data(), kt.data() + (j0 + j) * D, D, sc.data() + j);
            for (int64_t j = 0; j < nj; ++j) {
              const A s = score(scale * sc[j], j0 + j);
              sc[j] = s;
              bm = std::max(bm, s);
            }
            const A mn = std::max(m, bm);
            // exp(-inf - -inf) would be NaN: a running max of -inf has nothing to rescale.
            const A alpha = m == -std::numeric_limits<A>::infinity() ? A(0)
                                                                      : kernels::Exp{}(m - mn);
            l *= alpha;
            // (restrict: the scratch rows do not overlap, so these loops
            // vectorize; each element's operations are the same.)
            A* __restrict orow_acc = o.data();
            for (int64_t d = 0; d < Dv; ++d) orow_acc[d] *= alpha;
            // The exponentials first (a loop that vectorizes), then the sums
            // in key order.
            const bool none = mn == -std::numeric_limits<A>::infinity();
            A* __restrict prp = pr.data();
            const A* __restrict scp = sc.data();
            for (int64_t j = 0; j < nj; ++j) prp[j] = kernels::Exp{}(scp[j] - mn);
            for (int64_t j = 0; j < nj; ++j) {
              const A pj = none ? A(0) : pr[j];
              l += pj;
              const A* __restrict vr = vf.data() + (j0 + j) * Dv;
              for (int64_t d = 0; d < Dv; ++d) orow_acc[d] += pj * vr[d];
            }
            m = mn;
          }
          T* orow = dst + ((b * Hq + h) * Lq + i) * Dv;
          kernels::Cast<T> cast;
          // No weight at all: NaN when every score was -inf (the composite's
          // softmax), zeros without keys (its empty product).
          const A inv = l > 0 ? A(1) / l : (Lk == 0 ? A(0) : std::numeric_limits<A>::quiet_NaN());
          for (int64_t d = 0; d < Dv; ++d) orow[d] = cast(o[d] * inv);
        }
      }
    }
  });
}

// The gradients (FlashAttention's backward, rows one at a time): per query
// row the scores and their softmax P again, Di = dout . o, then
// dS = P (dout . v - Di); dq = scale dS k, and dk += scale dS q, dv += P dout
// accumulated per key/value head over its query heads and rows in order.
template <class T>
void attention_grad(const AttentionGrad& p, const Arrays& in, Arrays& out) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const Array &q = in[0], &k = in[1], &v = in[2], &o = in[3], &dout = in[4];
  const Array* mask = p.has_mask() ? &in[5] : nullptr;
  const int64_t B = q.shape(0), Hq = q.shape(1), Lq = q.shape(2), D = q.shape(3);
  const int64_t Hkv = k.shape(1), Lk = k.shape(2), Dv = v.shape(3), rep = Hq / Hkv;
  T* dq = ptr<T>(out[0]);
  T* dk = ptr<T>(out[1]);
  T* dv = ptr<T>(out[2]);
  const A lowest = A(finfo(q.dtype()).min);
  const A scale = A(p.scale());
  const A inf = std::numeric_limits<A>::infinity();
  parallel_for(B * Hkv, 1, [&](long long g0, long long g1) {
    const int64_t padded = ((Lk + 7) / 8) * 8;
    Scratch<A> kf(Lk * D), vf(Lk * Dv), kt(padded * D), vt(padded * Dv), dkf(Lk * D), dvf(Lk * Dv),
        qf(D), of(Dv), dof(Dv), dqf(D), pr(padded), dv_dot(padded);
    for (long long g = g0; g < g1; ++g) {
      const int64_t b = g / Hkv, kh = g % Hkv;
      load_matrix<A, T>(k, k.desc()->offset + b * k.strides()[0] + kh * k.strides()[1], Lk, D,
                        kf.data());
      load_matrix<A, T>(v, v.desc()->offset + b * v.strides()[0] + kh * v.strides()[1], Lk, Dv,
                        vf.data());
      transpose8(kf.data(), Lk, D, kt.data());
      transpose8(vf.data(), Lk, Dv, vt.data());
      std::fill(dkf.begin(), dkf.end(), A(0));
      std::fill(dvf.begin(), dvf.end(), A(0));
      for (int64_t h = kh * rep; h < (kh + 1) * rep; ++h) {
        for (int64_t i = 0; i < Lq; ++i) {
          auto row_of = [&](const Array& a, int64_t cols, A* dst) {
            load_matrix<A, T>(a, a.desc()->offset + b * a.strides()[0] + h * a.strides()[1] +
                                     i * a.strides()[2],
                              1, cols, dst);
          };
          row_of(q, D, qf.data());
          row_of(o, Dv, of.data());
          row_of(dout, Dv, dof.data());
          const RowScores<A, T> score(p.causal(), mask, b, h, i, Lq, Lk, lowest);
          const int64_t visible = score.visible;
          A m = -inf;
          for (int64_t j = 0; j < visible; j += 8) {
            dot8(qf.data(), kt.data() + j * D, D, pr.data() + j);
            dot8(dof.data(), vt.data() + j * Dv, Dv, dv_dot.data() + j);
          }
          for (int64_t j = 0; j < visible; ++j) {
            const A sc = score(scale * pr[j], j);
            pr[j] = sc;
            m = std::max(m, sc);
          }
          A l = 0;
          const bool none = m == -inf;
          for (int64_t j = 0; j < visible; ++j) pr[j] = kernels::Exp{}(pr[j] - m);
          for (int64_t j = 0; j < visible; ++j) {
            if (none) pr[j] = A(0);
            l += pr[j];
          }
          const A inv = A(1) / l;
          const A di = dot(dof.data(), of.data(), Dv);
          std::fill(dqf.begin(), dqf.end(), A(0));
          for (int64_t j = 0; j < visible; ++j) {
            const A pj = pr[j] * inv;
            const A ds = pj * (dv_dot[j] - di) * scale;
            // (restrict: distinct scratch rows, so the loops vectorize with
            // each element's operations unchanged.)
            const A* __restrict kr = kf.data() + j * D;
            const A* __restrict qr = qf.data();
            const A* __restrict dor = dof.data();
            A* __restrict dqa = dqf.data();
            A* __restrict dkr = dkf.data() + j * D;
            for (int64_t d = 0; d < D; ++d) {
              dqa[d] += ds * kr[d];
              dkr[d] += ds * qr[d];
            }
            A* __restrict dvr = dvf.data() + j * Dv;
            for (int64_t d = 0; d < Dv; ++d) dvr[d] += pj * dor[d];
          }
          T* dqr = dq + ((b * Hq + h) * Lq + i) * D;
          for (int64_t d = 0; d < D; ++d) dqr[d] = kernels::Cast<T>{}(dqf[d]);
        }
      }
      T* dkh = dk + (b * Hkv + kh) * Lk * D;
      T* dvh = dv + (b * Hkv + kh) * Lk * Dv;
      for (int64_t e = 0; e < Lk * D; ++e) dkh[e] = kernels::Cast<T>{}(dkf[e]);
      for (int64_t e = 0; e < Lk * Dv; ++e) dvh[e] = kernels::Cast<T>{}(dvf[e]);
    }
  });
}

}  // namespace

void eval(const AttentionGrad& p, const Arrays& in, Arrays& out) {
  dispatch_floating(in[0].dtype(), [&](auto tag) {
    attention_grad<typename decltype(tag)::type>(p, in, out);
  });
}

void eval(const Attention& p, const Arrays& in, Arrays& out) {
  dispatch_floating(in[0].dtype(), [&](auto tag) {
    attention<typename decltype(tag)::type>(p, in, out[0]);
  });
}

}  // namespace nuvec::cpu
