// The Linalg primitive through LAPACK (OpenBLAS exports the Fortran
// symbols). Each matrix of the batch is copied into a column-major work
// buffer (any input strides), factored, and written back row-major. LAPACK
// failures (a singular matrix, a matrix that is not positive definite, no
// convergence) throw nuvec::Error, which fails the node at evaluation.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu.h"

extern "C" {
// Hidden Fortran string lengths are passed as trailing size_t arguments.
void sgetrf_(const int*, const int*, float*, const int*, int*, int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void sgetri_(const int*, float*, const int*, const int*, float*, const int*, int*);
void dgetri_(const int*, double*, const int*, const int*, double*, const int*, int*);
void spotrf_(const char*, const int*, float*, const int*, int*, size_t);
void dpotrf_(const char*, const int*, double*, const int*, int*, size_t);
void sgeqrf_(const int*, const int*, float*, const int*, float*, float*, const int*, int*);
void dgeqrf_(const int*, const int*, double*, const int*, double*, double*, const int*, int*);
void sorgqr_(const int*, const int*, const int*, float*, const int*, const float*, float*,
             const int*, int*);
void dorgqr_(const int*, const int*, const int*, double*, const int*, const double*, double*,
             const int*, int*);
void sgesdd_(const char*, const int*, const int*, float*, const int*, float*, float*,
             const int*, float*, const int*, float*, const int*, int*, int*, size_t);
void dgesdd_(const char*, const int*, const int*, double*, const int*, double*, double*,
             const int*, double*, const int*, double*, const int*, int*, int*, size_t);
void ssyevd_(const char*, const char*, const int*, float*, const int*, float*, float*,
             const int*, int*, const int*, int*, size_t, size_t);
void dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*,
             const int*, int*, const int*, int*, size_t, size_t);
void sgesv_(const int*, const int*, float*, const int*, int*, float*, const int*, int*);
void dgesv_(const int*, const int*, double*, const int*, int*, double*, const int*, int*);
void strtri_(const char*, const char*, const int*, float*, const int*, int*,
             size_t, size_t);
void dtrtri_(const char*, const char*, const int*, double*, const int*, int*,
             size_t, size_t);
void sgeev_(const char*, const char*, const int*, float*, const int*, float*,
            float*, float*, const int*, float*, const int*, float*, const int*,
            int*, size_t, size_t);
void dgeev_(const char*, const char*, const int*, double*, const int*, double*,
            double*, double*, const int*, double*, const int*, double*,
            const int*, int*, size_t, size_t);
// Complex arrays are interleaved (re, im) pairs: nuvec's complex64_t layout.
void cgeev_(const char*, const char*, const int*, nuvec::complex64_t*,
            const int*, nuvec::complex64_t*, nuvec::complex64_t*, const int*,
            nuvec::complex64_t*, const int*, nuvec::complex64_t*, const int*,
            float*, int*, size_t, size_t);
}

namespace nuvec::cpu {

namespace {

template <class T>
struct Lapack;

#define NUVEC_LAPACK_TYPE(T, p)                                                \
  template <>                                                                  \
  struct Lapack<T> {                                                           \
    static void getrf(const int* m, const int* n, T* a, const int* lda,        \
                      int* ipiv, int* info) {                                  \
      p##getrf_(m, n, a, lda, ipiv, info);                                     \
    }                                                                          \
    static void getri(const int* n, T* a, const int* lda, const int* ipiv,     \
                      T* w, const int* lw, int* info) {                        \
      p##getri_(n, a, lda, ipiv, w, lw, info);                                 \
    }                                                                          \
    static void potrf(const char* u, const int* n, T* a, const int* lda,       \
                      int* info) {                                             \
      p##potrf_(u, n, a, lda, info, 1);                                        \
    }                                                                          \
    static void geqrf(const int* m, const int* n, T* a, const int* lda,        \
                      T* tau, T* w, const int* lw, int* info) {                \
      p##geqrf_(m, n, a, lda, tau, w, lw, info);                               \
    }                                                                          \
    static void orgqr(const int* m, const int* n, const int* k, T* a,          \
                      const int* lda, const T* tau, T* w, const int* lw,       \
                      int* info) {                                             \
      p##orgqr_(m, n, k, a, lda, tau, w, lw, info);                            \
    }                                                                          \
    static void gesdd(const char* j, const int* m, const int* n, T* a,         \
                      const int* lda, T* s, T* u, const int* ldu, T* vt,       \
                      const int* ldvt, T* w, const int* lw, int* iw,           \
                      int* info) {                                             \
      p##gesdd_(j, m, n, a, lda, s, u, ldu, vt, ldvt, w, lw, iw, info, 1);     \
    }                                                                          \
    static void syevd(const char* j, const char* u, const int* n, T* a,        \
                      const int* lda, T* wv, T* w, const int* lw, int* iw,     \
                      const int* liw, int* info) {                             \
      p##syevd_(j, u, n, a, lda, wv, w, lw, iw, liw, info, 1, 1);              \
    }                                                                          \
    static void gesv(const int* n, const int* r, T* a, const int* lda,         \
                     int* ipiv, T* b, const int* ldb, int* info) {             \
      p##gesv_(n, r, a, lda, ipiv, b, ldb, info);                              \
    }                                                                          \
    static void trtri(const char* u, const char* d, const int* n, T* a,        \
                      const int* lda, int* info) {                             \
      p##trtri_(u, d, n, a, lda, info, 1, 1);                                  \
    }                                                                          \
    static void geev(const char* jl, const char* jr, const int* n, T* a,       \
                     const int* lda, T* wr, T* wi, T* vl, const int* ldvl,     \
                     T* vr, const int* ldvr, T* w, const int* lw, int* info) { \
      p##geev_(jl, jr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, w, lw, info, 1,  \
               1);                                                             \
    }                                                                          \
  };
NUVEC_LAPACK_TYPE(float, s)
NUVEC_LAPACK_TYPE(double, d)
#undef NUVEC_LAPACK_TYPE

[[noreturn]] void fail(const std::string& what) {
  (Error(ErrorKind::backend, what)).raise();
}

void check(int info, const char* routine) {
  if (info < 0)
    fail(std::string("LAPACK ") + routine + ": invalid argument " + std::to_string(-info));
}


// Row-major m x n -> column-major (ld m), and back.
template <class T>
void to_col(const T* src, T* col, int m, int n) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) col[i + int64_t(j) * m] = src[int64_t(i) * n + j];
}
template <class T>
void from_col(const T* col, int ld, T* dst, int m, int n) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) dst[int64_t(i) * n + j] = col[i + int64_t(j) * ld];
}

template <class T>
int query(T w) {
  return std::max(1, static_cast<int>(w));
}

template <class T>
void run(const Linalg& p, const Arrays& in, Arrays& out) {
  using L = Lapack<T>;
  using Op = Linalg::Op;
  Array a = dense_copy(in[0]);
  int m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  int64_t batch = m * int64_t(n) == 0 ? 0 : a.size() / (int64_t(m) * n);
  if (m * int64_t(n) == 0) {  // empty matrices: identity factors, no values
    for (Array& o : out)      // outputs of several dtypes (lu_factor's uint32)
      if (o.size() > 0)
        std::memset(static_cast<char*>(o.desc()->data->ptr) +
                        o.desc()->offset * o.itemsize(),
                    0, static_cast<size_t>(o.size()) * o.itemsize());
    if (p.op() == Op::svd) {
      int64_t bs = out[0].size() / std::max(1, m * m);
      for (int64_t b = 0; b < bs; ++b) {
        for (int i = 0; i < m; ++i) ptr<T>(out[0])[b * m * m + i * (m + 1)] = T(1);
        for (int i = 0; i < n; ++i) ptr<T>(out[2])[b * n * n + i * (n + 1)] = T(1);
      }
    }
    if (p.op() == Op::lu_factor) {  // rows: no swaps, the identity
      uint32_t* rows = ptr<uint32_t>(out[2]);
      for (int64_t i = 0; i < out[2].size(); ++i)
        rows[i] = uint32_t(i % std::max(1, m));
    }
    return;
  }
  int lda = std::max(1, m), info = 0;
  std::vector<T> col(static_cast<size_t>(m) * n);
  const T* src = ptr<T>(a);
  Array b = p.op() == Op::solve ? dense_copy(in[1]) : Array();
  for (int64_t bi = 0; bi < batch; ++bi) {
    to_col(src + bi * m * n, col.data(), m, n);
    switch (p.op()) {
      case Op::inv: {
        // A NaN entry reaches every entry of the inverse (each is a cofactor
        // over the determinant, in which every entry takes part); LAPACK's
        // pivoting through NaN comparisons leaves some entries finite.
        if (std::any_of(col.begin(), col.end(), [](T v) { return v != v; })) {
          T* o = ptr<T>(out[0]) + bi * n * n;
          std::fill(o, o + int64_t(n) * n, std::numeric_limits<T>::quiet_NaN());
          break;
        }
        std::vector<int> ipiv(n);
        L::getrf(&n, &n, col.data(), &lda, ipiv.data(), &info);
        check(info, "getrf");
        if (info > 0)
          fail("the matrix is singular (U[" + std::to_string(info - 1) + ", " +
               std::to_string(info - 1) + "] of its LU factorization is exactly zero)");
        T wq;
        int lw = -1;
        L::getri(&n, col.data(), &lda, ipiv.data(), &wq, &lw, &info);
        lw = query(wq);
        std::vector<T> w(lw);
        L::getri(&n, col.data(), &lda, ipiv.data(), w.data(), &lw, &info);
        check(info, "getri");
        if (info > 0) fail("the matrix is singular");
        from_col(col.data(), n, ptr<T>(out[0]) + bi * n * n, n, n);
        break;
      }
      case Op::cholesky: {
        char uplo = 'L';
        L::potrf(&uplo, &n, col.data(), &lda, &info);
        check(info, "potrf");
        if (info > 0)
          fail("the matrix is not positive definite (the leading minor of order " +
               std::to_string(info) + " is not positive)");
        T* o = ptr<T>(out[0]) + bi * n * n;
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j) {
            T l = i >= j ? col[i + int64_t(j) * n] : T(0);  // L[i][j]
            if (p.upper()) o[int64_t(j) * n + i] = l;
            else o[int64_t(i) * n + j] = l;
          }
        break;
      }
      case Op::qr: {
        std::vector<T> tau(std::max(1, k));
        T wq;
        int lw = -1;
        L::geqrf(&m, &n, col.data(), &lda, tau.data(), &wq, &lw, &info);
        lw = query(wq);
        std::vector<T> w(lw);
        L::geqrf(&m, &n, col.data(), &lda, tau.data(), w.data(), &lw, &info);
        check(info, "geqrf");
        T* r = ptr<T>(out[1]) + bi * k * n;
        for (int i = 0; i < k; ++i)
          for (int j = 0; j < n; ++j) r[int64_t(i) * n + j] = i <= j ? col[i + int64_t(j) * m] : T(0);
        lw = -1;
        L::orgqr(&m, &k, &k, col.data(), &lda, tau.data(), &wq, &lw, &info);
        lw = query(wq);
        w.assign(lw, T(0));
        L::orgqr(&m, &k, &k, col.data(), &lda, tau.data(), w.data(), &lw, &info);
        check(info, "orgqr");
        from_col(col.data(), m, ptr<T>(out[0]) + bi * m * k, m, k);
        break;
      }
      case Op::svd:
      case Op::svdvals: {
        bool uv = p.op() == Op::svd;
        char jobz = uv ? 'A' : 'N';
        std::vector<T> u(uv ? size_t(m) * m : 1), vt(uv ? size_t(n) * n : 1);
        std::vector<int> iw(8 * size_t(k));
        int ldu = m, ldvt = n;
        T* s = ptr<T>(out[uv ? 1 : 0]) + bi * k;
        T wq;
        int lw = -1;
        L::gesdd(&jobz, &m, &n, col.data(), &lda, s, u.data(), &ldu, vt.data(), &ldvt, &wq,
                 &lw, iw.data(), &info);
        lw = query(wq);
        std::vector<T> w(lw);
        L::gesdd(&jobz, &m, &n, col.data(), &lda, s, u.data(), &ldu, vt.data(), &ldvt,
                 w.data(), &lw, iw.data(), &info);
        check(info, "gesdd");
        if (info > 0) fail("the singular value decomposition did not converge");
        if (uv) {
          from_col(u.data(), m, ptr<T>(out[0]) + bi * m * m, m, m);
          from_col(vt.data(), n, ptr<T>(out[2]) + bi * n * n, n, n);
        }
        break;
      }
      case Op::eigh:
      case Op::eigvalsh: {
        bool vec = p.op() == Op::eigh;
        char jobz = vec ? 'V' : 'N', uplo = p.upper() ? 'U' : 'L';
        T* wv = ptr<T>(out[0]) + bi * n;
        T wq;
        int lw = -1, iwq = 0, liw = -1;
        L::syevd(&jobz, &uplo, &n, col.data(), &lda, wv, &wq, &lw, &iwq, &liw, &info);
        lw = query(wq);
        liw = std::max(1, iwq);
        std::vector<T> w(lw);
        std::vector<int> iw(liw);
        L::syevd(&jobz, &uplo, &n, col.data(), &lda, wv, w.data(), &lw, iw.data(), &liw, &info);
        check(info, "syevd");
        if (info > 0) fail("the eigenvalue iteration did not converge");
        if (vec) from_col(col.data(), n, ptr<T>(out[1]) + bi * n * n, n, n);
        break;
      }
      case Op::lu_factor: {
        // A singular matrix still factors (info > 0: a zero on U's diagonal).
        std::vector<int> ipiv(std::max(1, k));
        L::getrf(&m, &n, col.data(), &lda, ipiv.data(), &info);
        check(info, "getrf");
        from_col(col.data(), m, ptr<T>(out[0]) + bi * m * n, m, n);
        uint32_t* piv = ptr<uint32_t>(out[1]) + bi * k;
        uint32_t* rows = ptr<uint32_t>(out[2]) + bi * m;
        for (int i = 0; i < k; ++i) piv[i] = uint32_t(ipiv[i] - 1);
        for (int i = 0; i < m; ++i) rows[i] = uint32_t(i);
        // A = P_0 ... P_{k-1} L U (P_i swaps rows i and piv[i]), so row i of
        // A is row (t_{k-1} o ... o t_0)(i) of L U: compose from the right.
        for (int i = k - 1; i >= 0; --i) std::swap(rows[i], rows[piv[i]]);
        break;
      }
      case Op::tri_inv: {
        char uplo = p.upper() ? 'U' : 'L', diag = 'N';
        L::trtri(&uplo, &diag, &n, col.data(), &lda, &info);
        check(info, "trtri");
        if (info > 0)
          fail("the matrix is singular (its diagonal element [" +
               std::to_string(info - 1) + ", " + std::to_string(info - 1) +
               "] is exactly zero)");
        T* o = ptr<T>(out[0]) + bi * n * n;
        for (int i = 0; i < n; ++i)  // the other triangle still holds the input
          for (int j = 0; j < n; ++j)
            o[int64_t(i) * n + j] =
                (p.upper() ? i <= j : i >= j) ? col[i + int64_t(j) * n] : T(0);
        break;
      }
      case Op::eig:
      case Op::eigvals:
        break;  // geev_run below (complex outputs)
      case Op::solve: {
        int r = b.shape(-1);
        int ldb = std::max(1, n);
        std::vector<T> bc(size_t(n) * r);
        to_col(ptr<T>(b) + bi * n * r, bc.data(), n, r);
        std::vector<int> ipiv(n);
        if (r > 0) L::gesv(&n, &r, col.data(), &lda, ipiv.data(), bc.data(), &ldb, &info);
        else L::getrf(&n, &n, col.data(), &lda, ipiv.data(), &info);
        check(info, "gesv");
        if (info > 0)
          fail("the matrix is singular (U[" + std::to_string(info - 1) + ", " +
               std::to_string(info - 1) + "] of its LU factorization is exactly zero)");
        from_col(bc.data(), n, ptr<T>(out[0]) + bi * n * r, n, r);
        break;
      }
    }
  }
}

// eig through geev. The row-major matrix read as column-major is A^T, and
// a left eigenvector u of A^T gives the right eigenvector conj(u) of A; this
// is MLX's arrangement, so the eigenvalues come in MLX's order. LAPACK
// normalizes each vector to unit 2-norm with its largest component real.
template <class T>
void geev_run(const Linalg& p, const Array& x, Arrays& out) {
  constexpr bool cplx = std::is_same_v<T, complex64_t>;
  Array a = dense_copy(x);
  int n = a.shape(-1);
  if (n == 0) return;
  bool vec = p.op() == Linalg::Op::eig;
  int64_t batch = a.size() / (int64_t(n) * n);
  char jl = vec ? 'V' : 'N', jr = 'N';
  int ldvl = vec ? n : 1, ldvr = 1, info = 0, lw = -1;
  size_t nn = size_t(n) * n;
  std::vector<T> m(nn), vl(vec ? nn : 1), vr(1), wr(n), wi(cplx ? 1 : n);
  std::vector<float> rw(cplx ? 2 * size_t(n) : 1);
  T wq{};
  auto geev = [&](T* w, int* lwork) {
    if constexpr (cplx)
      cgeev_(&jl, &jr, &n, m.data(), &n, wr.data(), vl.data(), &ldvl, vr.data(),
             &ldvr, w, lwork, rw.data(), &info, 1, 1);
    else
      Lapack<T>::geev(&jl, &jr, &n, m.data(), &n, wr.data(), wi.data(),
                      vl.data(), &ldvl, vr.data(), &ldvr, w, lwork, &info);
  };
  geev(&wq, &lw);
  if constexpr (cplx)
    lw = query(wq.re);
  else
    lw = query(wq);
  std::vector<T> w(lw);
  auto finite = [](T v) {
    if constexpr (cplx)
      return std::isfinite(v.re) && std::isfinite(v.im);
    else
      return std::isfinite(v);
  };
  for (int64_t bi = 0; bi < batch; ++bi) {
    const T* src = ptr<T>(a) + bi * int64_t(nn);
    if (!std::all_of(src, src + nn, finite))
      fail("the matrix has non-finite values (inf or NaN)");
    std::copy(src, src + nn, m.begin());
    geev(w.data(), &lw);
    check(info, "geev");
    if (info > 0) fail("the eigenvalue iteration did not converge");
    complex64_t* val = ptr<complex64_t>(out[0]) + bi * n;
    complex64_t* v =
        vec ? ptr<complex64_t>(out[1]) + bi * int64_t(nn) : nullptr;
    for (int j = 0; j < n; ++j) {
      if constexpr (cplx) {
        val[j] = wr[j];
        for (int r = 0; vec && r < n; ++r) {
          complex64_t u = vl[r + size_t(j) * n];
          v[int64_t(r) * n + j] = complex64_t(u.re, -u.im);
        }
      } else if (wi[j] == T(0)) {
        val[j] = complex64_t(float(wr[j]), 0.0f);
        for (int r = 0; vec && r < n; ++r)
          v[int64_t(r) * n + j] =
              complex64_t(float(vl[r + size_t(j) * n]), 0.0f);
      } else {  // a conjugate pair (j, j + 1), u_j = VL[:, j] + i VL[:, j + 1]
        val[j] = complex64_t(float(wr[j]), float(wi[j]));
        val[j + 1] = complex64_t(float(wr[j + 1]), float(wi[j + 1]));
        for (int r = 0; vec && r < n; ++r) {
          float re = float(vl[r + size_t(j) * n]),
                im = float(vl[r + size_t(j + 1) * n]);
          v[int64_t(r) * n + j] = complex64_t(re, -im);
          v[int64_t(r) * n + j + 1] = complex64_t(re, im);
        }
        ++j;
      }
    }
  }
}

}  // namespace

void eval(const Linalg& p, const Arrays& in, Arrays& out) {
  DType d = in[0].dtype();
  if (p.op() == Linalg::Op::eig || p.op() == Linalg::Op::eigvals) {
    if (d == float32) return geev_run<float>(p, in[0], out);
    if (d == float64) return geev_run<double>(p, in[0], out);
    if (d == complex64) return geev_run<complex64_t>(p, in[0], out);
  } else {
    if (d == float32) return run<float>(p, in, out);
    if (d == float64) return run<double>(p, in, out);
  }
  (Error(ErrorKind::unsupported_dtype, "linalg: no CPU kernel for this dtype"))
      .raise();
}

}  // namespace nuvec::cpu
