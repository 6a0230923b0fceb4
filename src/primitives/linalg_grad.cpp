// vjp and jvp rules of the linear-algebra factorizations, written with ops
// (matmul, inv, tri_inv, solve and the factorizations themselves), so they
// differentiate again (MLX 0.32.4 has none for inv, tri_inv and lu_factor;
// eig has none in either). Formulas: the jvp from differentiating the defining
// identity (A = L L^T, A = Q R, A V = V diag(w), A = U S V^T, A X = B), the
// vjp as its adjoint. Eigen- and singular-vector rules need distinct
// eigenvalues or singular values (and nonzero ones where S^-1 appears).
#include <algorithm>
#include <tuple>

#include "nuvec/linalg.h"
#include "nuvec/ops/ops.h"
#include "nuvec/primitives/linalg.h"
#include "primitives/grad_util.h"
#include "primitives/rules.h"

namespace nuvec {

namespace {

using Op = Linalg::Op;
using rules::mT;

Array mm(const Array& a, const Array& b) { return ops::matmul(a, b); }

int last(const Array& x) { return x.ndim() - 1; }

// Columns [start, start + size) of x.
Array cols(const Array& x, int start, int size) {
  return rules::take_range(x, last(x), start, size);
}

Array diag_part(const Array& m) { return ops::diagonal(m, 0, -2, -1); }

// [..., k] -> [..., k, k] with v on the diagonal.
Array diag_embed(const Array& v) {
  return ops::expand_dims(v, -1) * ops::eye(v.shape(-1), v.dtype());
}

// F[i][j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it.
Array inverse_gaps(const Array& w) {
  Array gap = ops::expand_dims(w, -2) - ops::expand_dims(w, -1);
  Array on_diag = ops::astype(ops::eye(w.shape(-1)), bool_);
  return ops::where(on_diag, 0,
                    1 / ops::where(on_diag, ops::ones_like(gap), gap));
}

// cholesky and eigh read one triangle of A as a symmetric matrix: the
// tangent of that matrix, and the adjoint (a gradient G for the symmetric
// matrix put back on the entries actually read).
Array sym_from(const Array& t, bool upper) {
  return upper ? ops::triu(t) + mT(ops::triu(t, 1))
               : ops::tril(t) + mT(ops::tril(t, -1));
}
Array onto_triangle(const Array& g, bool upper) {
  Array s = g + mT(g);
  return (upper ? ops::triu(s) : ops::tril(s)) - diag_embed(diag_part(g));
}

// The strict lower triangle plus half the diagonal (Cholesky's Phi).
Array phi(const Array& m) {
  return ops::tril(m, -1) + diag_embed(diag_part(m)) * 0.5;
}

// The given tangent of input `arg`, or none.
const Array* tangent_of(int arg, const Arrays& tangents,
                        const std::vector<int>& argnums) {
  for (size_t i = 0; i < argnums.size(); ++i)
    if (argnums[i] == arg) return &tangents[i];
  return nullptr;
}

// QR of a square or tall matrix (R square and invertible).
// jvp: C = Q^T dA R^-1, Omega = C's strict lower part made antisymmetric,
// dR = (C - Omega) R, dQ = dA R^-1 - Q (C - Omega).
std::pair<Array, Array> qr_tall_jvp(const Array& q, const Array& r,
                                    const Array& da) {
  Array rinv = linalg::inv(r);
  Array c = mm(mm(mT(q), da), rinv);
  Array low = ops::tril(c, -1);
  Array upper_part = c - (low - mT(low));
  return {mm(da, rinv) - mm(q, upper_part), mm(upper_part, r)};
}
// Its adjoint: N = Rb R^T - Q^T Qb, K = triu(N) + strict-lower(N^T),
// Ab = (Qb + Q K) R^-T.
Array qr_tall_vjp(const Array& q, const Array& r, const Array& qb,
                  const Array& rb) {
  Array n = mm(rb, mT(r)) - mm(mT(q), qb);
  Array k = ops::triu(n) + ops::tril(mT(n), -1);
  return mm(qb + mm(q, k), mT(linalg::inv(r)));
}

// The SVD's reduced factors and the complements of the full ones.
struct Svd {
  Array uk, u_rest, s, vk, v_rest, f;
  int m, n, k;
};
Svd svd_parts(const Array& a, const Arrays& usv) {
  Svd p;
  p.m = a.shape(-2), p.n = a.shape(-1), p.k = std::min(p.m, p.n);
  Array v = mT(usv[2]);
  p.uk = cols(usv[0], 0, p.k);
  p.vk = cols(v, 0, p.k);
  if (p.m > p.k) p.u_rest = cols(usv[0], p.k, p.m - p.k);
  if (p.n > p.k) p.v_rest = cols(v, p.k, p.n - p.k);
  p.s = usv[1];
  p.f = inverse_gaps(ops::square(p.s));
  return p;
}

// dU = U Om_U + (I - U U^T) dA V S^-1, Om_U = F o (dP S + S dP^T);
// dV likewise with dA^T; dP = U^T dA V, dS = diag(dP). The complements of
// the full factors turn without rotating among themselves:
// dU_rest = -U (dU^T U_rest).
Arrays svd_jvp(const Svd& p, const Array& da) {
  Array dp = mm(mm(mT(p.uk), da), p.vk);
  Array sj = ops::expand_dims(p.s, -2), si = ops::expand_dims(p.s, -1);
  Array du = mm(p.uk, p.f * (dp * sj + si * mT(dp)));
  Array dv = mm(p.vk, p.f * (si * dp + mT(dp) * sj));
  if (p.m > p.k) {
    du = du + (mm(da, p.vk) - mm(p.uk, dp)) / sj;
    du = ops::concatenate({du, -mm(p.uk, mm(mT(du), p.u_rest))}, -1);
  }
  if (p.n > p.k) {
    dv = dv + (mm(mT(da), p.uk) - mm(p.vk, mT(dp))) / sj;
    dv = ops::concatenate({dv, -mm(p.vk, mm(mT(dv), p.v_rest))}, -1);
  }
  return {du, diag_part(dp), mT(dv)};
}

Array svd_vjp(const Svd& p, const Array& ub, const Array& sb,
              const Array& vtb) {
  Array vb = mT(vtb);
  Array ubk = cols(ub, 0, p.k), vbk = cols(vb, 0, p.k);
  if (p.m > p.k)
    ubk = ubk - mm(p.u_rest, mm(mT(cols(ub, p.k, p.m - p.k)), p.uk));
  if (p.n > p.k)
    vbk = vbk - mm(p.v_rest, mm(mT(cols(vb, p.k, p.n - p.k)), p.vk));
  Array sj = ops::expand_dims(p.s, -2), si = ops::expand_dims(p.s, -1);
  Array ju = p.f * (mm(mT(p.uk), ubk) - mm(mT(ubk), p.uk));
  Array jv = p.f * (mm(mT(p.vk), vbk) - mm(mT(vbk), p.vk));
  Array inner = ju * sj + si * jv + diag_embed(sb);
  Array grad = mm(mm(p.uk, inner), mT(p.vk));
  if (p.m > p.k)
    grad = grad + mm((ubk - mm(p.uk, mm(mT(p.uk), ubk))) / sj, mT(p.vk));
  if (p.n > p.k)
    grad = grad + mm(p.uk, (mT(vbk) - mm(mm(mT(vbk), p.vk), mT(p.vk))) / si);
  return grad;
}

// Eigenvectors: dV = V (F o P), dw = diag(P), P = V^T dA V.
Arrays eigh_jvp(const Array& w, const Array& v, const Array& da) {
  Array p = mm(mm(mT(v), da), v);
  return {diag_part(p), mm(v, inverse_gaps(w) * p)};
}

// A = P L U for a square A (lu_factor), P the row permutation of `rows`
// (A[i] = (L U)[rows[i]]): L U = A[q] with q = argsort(rows).
struct Lu {
  Array l, u, rows;
};
Lu lu_parts(const Arrays& outs) {
  int n = outs[0].shape(-1);
  Array eye = ops::eye(n, outs[0].dtype());
  return {ops::tril(outs[0], -1) + eye, ops::triu(outs[0]), outs[2]};
}
Array rows_of(const Array& x, const Array& idx) {
  return ops::take_along_axis(x, ops::expand_dims(idx, -1), -2);
}
// jvp: X = L^-1 dA[q] U^-1, dL = L tril(X, -1), dU = triu(X) U; the
// packed output moves by dL + dU (dL strictly lower, dU upper).
Array lu_jvp(const Lu& f, const Array& da) {
  Array x = mm(mm(linalg::tri_inv(f.l), rows_of(da, ops::argsort(f.rows, -1))),
               linalg::tri_inv(f.u, true));
  return mm(f.l, ops::tril(x, -1)) + mm(ops::triu(x), f.u);
}
// Its adjoint, from G (the cotangent of the packed LU): Lb = tril(G, -1),
// Ub = triu(G), Ab[q] = L^-T (tril(L^T Lb, -1) + triu(Ub U^T)) U^-T.
Array lu_vjp(const Lu& f, const Array& g) {
  Array inner = ops::tril(mm(mT(f.l), ops::tril(g, -1)), -1) +
                ops::triu(mm(ops::triu(g), mT(f.u)));
  Array at =
      mm(mm(mT(linalg::tri_inv(f.l)), inner), mT(linalg::tri_inv(f.u, true)));
  return rows_of(at, f.rows);
}

}  // namespace

Arrays Linalg::vjp(const Arrays& primals, const Arrays& cotangents,
                   const std::vector<int>& argnums,
                   const Arrays& outputs) const {
  const Array& a = primals[0];
  Arrays outs = outputs;
  for (const Array& o : outputs)
    if (o.is_failed()) outs = rules::rebuild(*this, primals);
  const Arrays& g = cotangents;
  Array grad;
  switch (op_) {
    case Op::inv:
      grad = -mm(mm(mT(outs[0]), g[0]), mT(outs[0]));
      break;
    case Op::cholesky: {
      // G = L^-T Phi(L^T Lb) L^-1 for the symmetric input (read: lower).
      Array l = upper_ ? mT(outs[0]) : outs[0];
      Array lb = upper_ ? mT(g[0]) : g[0];
      Array linv = linalg::inv(l);
      grad = onto_triangle(mm(mm(mT(linv), phi(mm(mT(l), lb))), linv), false);
      break;
    }
    case Op::qr: {
      int m = a.shape(-2), n = a.shape(-1);
      if (m >= n) {
        grad = qr_tall_vjp(outs[0], outs[1], g[0], g[1]);
      } else {  // A = [X Y] with X square: X = Q R_X, R_Y = Q^T Y
        Array y = cols(a, m, n - m), rby = cols(g[1], m, n - m);
        Array xb = qr_tall_vjp(outs[0], cols(outs[1], 0, m),
                               g[0] + mm(y, mT(rby)), cols(g[1], 0, m));
        grad = ops::concatenate({xb, mm(outs[0], rby)}, -1);
      }
      break;
    }
    case Op::svd:
      grad = svd_vjp(svd_parts(a, outs), g[0], g[1], g[2]);
      break;
    case Op::svdvals: {
      Svd p = svd_parts(a, linalg::svd(a, true));
      grad = mm(p.uk * ops::expand_dims(g[0], -2), mT(p.vk));
      break;
    }
    case Op::eigh:
    case Op::eigvalsh: {
      Array w, v, vb;
      if (op_ == Op::eigh) {
        w = outs[0], v = outs[1], vb = g[1];
      } else {
        std::tie(w, v) = linalg::eigh(a, upper_ ? "U" : "L");
      }
      Array inner = diag_embed(g[0]);
      if (op_ == Op::eigh) inner = inner + inverse_gaps(w) * mm(mT(v), vb);
      grad = onto_triangle(mm(mm(v, inner), mT(v)), upper_);
      break;
    }
    case Op::tri_inv: {
      // Y = T^-1 of the triangle T read: Tb = -Y^T Yb Y^T on that triangle.
      Array tb = -mm(mm(mT(outs[0]), g[0]), mT(outs[0]));
      grad = upper_ ? ops::triu(tb) : ops::tril(tb);
      break;
    }
    case Op::lu_factor:
      if (a.shape(-1) != a.shape(-2)) rules::no_rule(*this, "vjp (non-square)");
      grad = lu_vjp(lu_parts(outs), g[0]);
      break;
    case Op::eig:
    case Op::eigvals:
      rules::no_rule(*this, "vjp");
    case Op::solve: {
      // X = A^-1 B: Bb = A^-T Xb, Ab = -Bb X^T.
      Array bb = linalg::solve(mT(a), g[0]);
      Arrays out;
      for (int arg : argnums)
        out.push_back(arg == 1 ? bb : -mm(bb, mT(outs[0])));
      return out;
    }
  }
  return Arrays(argnums.size(), grad);
}

Arrays Linalg::jvp(const Arrays& primals, const Arrays& tangents,
                   const std::vector<int>& argnums) const {
  const Array& a = primals[0];
  Arrays outs = rules::rebuild(*this, primals);
  const Array* da = tangent_of(0, tangents, argnums);
  if (op_ == Op::solve) {
    // A dX + dA X = dB.
    const Array* db = tangent_of(1, tangents, argnums);
    Array rhs = db ? *db : rules::zeros_of(primals[1]);
    if (da) rhs = rhs - mm(*da, outs[0]);
    return {linalg::solve(a, rhs)};
  }
  switch (op_) {
    case Op::inv:
      return {-mm(mm(outs[0], *da), outs[0])};
    case Op::cholesky: {
      // dL = L Phi(L^-1 dA L^-T).
      Array l = upper_ ? mT(outs[0]) : outs[0];
      Array linv = linalg::inv(l);
      Array dl = mm(l, phi(mm(mm(linv, sym_from(*da, false)), mT(linv))));
      return {upper_ ? mT(dl) : dl};
    }
    case Op::qr: {
      int m = a.shape(-2), n = a.shape(-1);
      if (m >= n) {
        auto [dq, dr] = qr_tall_jvp(outs[0], outs[1], *da);
        return {dq, dr};
      }
      auto [dq, drx] =
          qr_tall_jvp(outs[0], cols(outs[1], 0, m), cols(*da, 0, m));
      Array dry =
          mm(mT(dq), cols(a, m, n - m)) + mm(mT(outs[0]), cols(*da, m, n - m));
      return {dq, ops::concatenate({drx, dry}, -1)};
    }
    case Op::svd:
      return svd_jvp(svd_parts(a, outs), *da);
    case Op::svdvals: {
      Svd p = svd_parts(a, linalg::svd(a, true));
      return {diag_part(mm(mm(mT(p.uk), *da), p.vk))};
    }
    case Op::eigh:
      return eigh_jvp(outs[0], outs[1], sym_from(*da, upper_));
    case Op::eigvalsh: {
      auto [w, v] = linalg::eigh(a, upper_ ? "U" : "L");
      return {eigh_jvp(w, v, sym_from(*da, upper_))[0]};
    }
    case Op::tri_inv: {
      Array dt = upper_ ? ops::triu(*da) : ops::tril(*da);
      return {-mm(mm(outs[0], dt), outs[0])};
    }
    case Op::lu_factor:
      if (a.shape(-1) != a.shape(-2)) break;
      return {lu_jvp(lu_parts(outs), *da), ops::zeros(outs[1].shape(), uint32),
              ops::zeros(outs[2].shape(), uint32)};
    case Op::eig:
    case Op::eigvals:
    case Op::solve:
      break;
  }
  rules::no_rule(*this, "jvp");
}

}  // namespace nuvec
