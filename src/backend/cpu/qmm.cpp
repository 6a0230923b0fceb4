// Products with packed and gathered matrices on the CPU (QuantizedMatmul,
// GatherQMM, GatherMM). Each matrix row is dequantized once into a buffer
// (accumulation type) and used for every row of x. With at most
// ROW_INDEPENDENT_ROWS rows each output element is accumulated in an order
// fixed by K alone (eight lanes over k, then a fixed tree), so a row's bits
// never depend on how many rows the product has, on the batch or on the
// thread count (row independence, docs/quantization.md); more rows (a
// prefill) go through BLAS on blocks of dequantized rows, each item of a
// batch as its own product.
#include <cblas.h>

#include <algorithm>
#include <vector>

#include "backend/cpu/quant_rows.h"
#include "backend/cpu/qmv.h"
#include "backend/cpu/qmv4.h"
#include "nuvec/ops/quantized.h"

namespace nuvec::cpu {

namespace {

using kernels::u32;

// Dot product of a and b over n, in eight fixed lanes.
template <class A>
A dot(const A* a, const A* b, int64_t n) {
  A l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) l[j] += a[k + j] * b[k + j];
  for (int j = 0; k < n; ++k, ++j) l[j] += a[k] * b[k];
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

// Four dot products of a against b0..b3, each in dot's eight lanes and
// order (the same bits as four dot calls): four independent chains keep
// the adder busy where one chain waits on its own latency.
template <class A>
void dot4(const A* a, const A* const* b, int64_t n, A* out) {
  A l[4][8] = {};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int r = 0; r < 4; ++r)
      for (int j = 0; j < 8; ++j) l[r][j] += a[k + j] * b[r][k + j];
  for (int j = 0; k < n; ++k, ++j)
    for (int r = 0; r < 4; ++r) l[r][j] += a[k] * b[r][k];
  for (int r = 0; r < 4; ++r)
    out[r] = ((l[r][0] + l[r][1]) + (l[r][2] + l[r][3])) + ((l[r][4] + l[r][5]) + (l[r][6] + l[r][7]));
}

// Matrix rows per block of the many-rows product.
constexpr int64_t kBlasRows = 64;

// c [m, n] = a [m, k] b^T (b [n, k]), row-major, by BLAS (single-threaded:
// the callers split the work).
inline void blas_product(int m, int n, int k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
}
inline void blas_product(int m, int n, int k, const double* a, const double* b, double* c) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0, a, k, b, k, 0.0, c, n);
}

// One product: x [M, K] (values of A) times the matrix whose row r
// load(r, c0, c1, dst) gives (columns [c0, c1)): with `transpose` the
// matrix is [N, K] (out = x W^T), else [K, N] (out = x W, accumulated over
// k in order). Writes out [M, N] as T. `many_rows` (an item of more than
// ROW_INDEPENDENT_ROWS rows) lets a transposed product use BLAS.
template <class T, class A, class Load>
void product(const A* x, int64_t M, int64_t K, int64_t N, bool transpose, int64_t col_step,
             const Load& load, T* out, bool many_rows = false) {
  kernels::Cast<T> to_t;
  if (M == 0 || N == 0) return;
  if (transpose && many_rows) {
    // Many rows: blocks of kBlasRows matrix rows dequantized once, each
    // block's product by BLAS. Each output element comes from a product of
    // a shape fixed by M, K and N (the blocks do not depend on the threads).
    const int64_t blocks = (N + kBlasRows - 1) / kBlasRows;
    parallel_for(blocks, 1, [&](long long b0, long long b1) {
      std::vector<A> w(static_cast<size_t>(kBlasRows * K)), c(static_cast<size_t>(M * kBlasRows));
      for (long long b = b0; b < b1; ++b) {
        const int64_t n0 = b * kBlasRows, nb = std::min(N, n0 + kBlasRows) - n0;
        for (int64_t n = 0; n < nb; ++n) load(n0 + n, 0, K, w.data() + n * K);
        blas_product(int(M), int(nb), int(K), x, w.data(), c.data());
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < nb; ++n) out[m * N + n0 + n] = to_t(c[m * nb + n]);
      }
    });
    return;
  }
  if (transpose) {
    for_row_blocks(N, K * 4, [&](int64_t n0, int64_t n1) {
      std::vector<A> w(static_cast<size_t>(4 * K));
      int64_t n = n0;
      for (; n + 4 <= n1; n += 4) {
        const A* rows[4];
        for (int r = 0; r < 4; ++r) {
          load(n + r, 0, K, w.data() + r * K);
          rows[r] = w.data() + r * K;
        }
        for (int64_t m = 0; m < M; ++m) {
          A d[4];
          dot4(x + m * K, rows, K, d);
          for (int r = 0; r < 4; ++r) out[m * N + n + r] = to_t(d[r]);
        }
      }
      for (; n < n1; ++n) {
        load(n, 0, K, w.data());
        for (int64_t m = 0; m < M; ++m) out[m * N + n] = to_t(dot(x + m * K, w.data(), K));
      }
    });
    return;
  }
  // Column blocks (whole groups) in parallel; each block runs k in order.
  const int64_t step = std::max<int64_t>(col_step, ((256 + col_step - 1) / col_step) * col_step);
  const int64_t blocks = (N + step - 1) / step;
  parallel_for(blocks, 1, [&](long long b0, long long b1) {
    std::vector<A> w(static_cast<size_t>(step)), acc(static_cast<size_t>(M * step));
    for (long long b = b0; b < b1; ++b) {
      const int64_t c0 = b * step, c1 = std::min(N, c0 + step), w_n = c1 - c0;
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t k = 0; k < K; ++k) {
        load(k, c0, c1, w.data());
        for (int64_t m = 0; m < M; ++m) {
          const A xv = x[m * K + k];
          A* a = acc.data() + m * step;
          for (int64_t j = 0; j < w_n; ++j) a[j] += xv * w[j];
        }
      }
      for (int64_t m = 0; m < M; ++m)
        for (int64_t j = 0; j < w_n; ++j) out[m * N + c0 + j] = to_t(acc[m * step + j]);
    }
  });
}

// x as values of A, row-major.
template <class T, class A>
std::vector<A> values_of(const Array& x) {
  Scratch<T> keep;
  const T* p = dense_rows<T>(x, keep);
  std::vector<A> v(static_cast<size_t>(x.size()));
  for (int64_t i = 0; i < x.size(); ++i) v[i] = A(p[i]);
  return v;
}

// The matrix-row loader of a packed matrix: rows from `base` (a matrix's
// first row among all of w's rows), columns [c0, c1) (whole groups).
template <class S>
auto packed_loader(const PackedRows<S>& pk, int64_t base) {
  return [&pk, base](int64_t r, int64_t c0, int64_t c1, acc_t<S>* dst) {
    // Whole rows are cheap to unpack relative to their use (every x row).
    thread_local std::vector<acc_t<S>> row;
    if (c0 == 0 && c1 == pk.cols) return pk.row(base + r, dst);
    row.resize(size_t(pk.cols));
    pk.row(base + r, row.data());
    std::copy(row.begin() + c0, row.begin() + c1, dst);
  };
}

int64_t lead(const Array& a, int keep) {
  int64_t n = 1;
  for (int d = 0; d + keep < a.ndim(); ++d) n *= a.shape(d);
  return n;
}

// The 4-bit few-row kernel (qmv4.h) for the R rows at x against the matrix
// whose first row is row0 of pk, where it applies: true where it ran. Every
// few-row path takes it alike, so an item keeps the one-matrix bits.
template <class T, class A>
bool try_qmv4(bool transpose, const PackedRows<T>& pk, const A* x, int64_t R, int64_t K, int64_t N,
              T* o, int64_t row0) {
  if constexpr (std::is_same_v<T, float>) {
    if (R <= ROW_INDEPENDENT_ROWS && transpose && qmv4_applies(pk, K)) {
      qmv4(x, R, K, N, pk, o, row0);
      return true;
    }
  }
  return false;
}

template <class T>
void qmm(const QuantizedMatmul& p, const Arrays& in, Array& out) {
  using A = acc_t<T>;
  const QuantSpec& q = p.spec();
  PackedRows<T> pk(q, in[1], in[2], q.has_biases() ? &in[3] : nullptr);
  const Array& x = in[0];
  const int64_t K = x.shape(-1), N = out.shape(-1);
  std::vector<A> xv = values_of<T, A>(x);
  T* o = ptr<T>(out);
  const int64_t mat_rows = in[1].shape(-2);
  const int64_t M = x.ndim() >= 2 ? x.shape(-2) : 1;
  if (in[1].ndim() == 2 && M <= ROW_INDEPENDENT_ROWS) {
    // Few rows per item: every row of every item in one pass over w (each
    // row's sums are its own, so the batch changes no bits).
    const int64_t R = x.size() / std::max<int64_t>(K, 1);
    if constexpr (std::is_same_v<T, float>) {
      if (p.transpose() && qmv4_applies(pk, K)) return qmv4(xv.data(), R, K, N, pk, o);
      // Up to eight rows at a time (decode): each block of weights unpacked
      // in registers once for all of them (qmv4.h: 4-bit, K a multiple of
      // 64; qmv.h: product()'s sums).
      if (p.transpose() && qmv_affine_applies(pk)) return qmv_affine(xv.data(), R, K, N, pk, o);
    }
    product<T, A>(xv.data(), x.size() / std::max<int64_t>(K, 1), K, N, p.transpose(), q.group_size,
                  packed_loader(pk, 0), o);
    return;
  }
  // Each item its own product (a matrix per item, or many rows per item:
  // an item's bits are those of its product alone).
  const int64_t items = lead(x, 2);
  if (in[1].ndim() == 2) {
    for (int64_t i = 0; i < items; ++i)
      product<T, A>(xv.data() + i * M * K, M, K, N, p.transpose(), q.group_size, packed_loader(pk, 0),
                    o + i * M * N, true);
    return;
  }
  for (int64_t i = 0; i < items; ++i)
    if (!try_qmv4(p.transpose(), pk, xv.data() + i * M * K, M, K, N, o + i * M * N, i * mat_rows))
      product<T, A>(xv.data() + i * M * K, M, K, N, p.transpose(), q.group_size,
                    packed_loader(pk, i * mat_rows), o + i * M * N, M > ROW_INDEPENDENT_ROWS);
}

// The flat indices of a gathered product, clamped to [0, count).
std::vector<int64_t> flat_indices(const Array& idx, int64_t count) {
  Scratch<u32> keep;
  const u32* p = dense_rows<u32>(idx, keep);
  std::vector<int64_t> v(static_cast<size_t>(idx.size()));
  for (int64_t i = 0; i < idx.size(); ++i) v[i] = std::min<int64_t>(p[i], count - 1);
  return v;
}

template <class T>
void gather_qmm(const GatherQMM& p, const Arrays& in, Array& out) {
  using A = acc_t<T>;
  const QuantSpec& q = p.spec();
  const size_t np = q.has_biases() ? 3 : 2;
  PackedRows<T> pk(q, in[1], in[2], q.has_biases() ? &in[3] : nullptr);
  const Array& x = in[0];
  const int64_t K = x.shape(-1), M = x.shape(-2), N = out.shape(-1);
  const int64_t mat_rows = in[1].shape(-2);
  auto lhs = flat_indices(in[np + 1], lead(x, 2));
  auto rhs = flat_indices(in[np + 2], lead(in[1], 2));
  std::vector<A> xv = values_of<T, A>(x);
  T* o = ptr<T>(out);
  for (size_t i = 0; i < lhs.size(); ++i)
    if (!try_qmv4(p.transpose(), pk, xv.data() + lhs[i] * M * K, M, K, N, o + int64_t(i) * M * N,
                  rhs[i] * mat_rows))
      product<T, A>(xv.data() + lhs[i] * M * K, M, K, N, p.transpose(), q.group_size,
                    packed_loader(pk, rhs[i] * mat_rows), o + int64_t(i) * M * N, M > ROW_INDEPENDENT_ROWS);
}

template <class T>
void gather_mm(const Arrays& in, Array& out) {
  using A = acc_t<T>;
  const Array &a = in[0], &b = in[1];
  const int64_t K = a.shape(-1), M = a.shape(-2), N = b.shape(-1);
  auto lhs = flat_indices(in[2], lead(a, 2));
  auto rhs = flat_indices(in[3], lead(b, 2));
  std::vector<A> av = values_of<T, A>(a), bv = values_of<T, A>(b);
  T* o = ptr<T>(out);
  for (size_t i = 0; i < lhs.size(); ++i) {
    const A* bm = bv.data() + rhs[i] * K * N;
    auto load = [bm, N](int64_t r, int64_t c0, int64_t c1, A* dst) {
      std::copy(bm + r * N + c0, bm + r * N + c1, dst);
    };
    product<T, A>(av.data() + lhs[i] * M * K, M, K, N, false, 1, load, o + int64_t(i) * M * N);
  }
}

}  // namespace

void eval(const QuantizedMatmul& p, const Arrays& in, Arrays& out) {
  if (out[0].size() == 0) return;
  dispatch_floating(in[0].dtype(), [&](auto tag) { qmm<typename decltype(tag)::type>(p, in, out[0]); });
}

void eval(const GatherQMM& p, const Arrays& in, Arrays& out) {
  if (out[0].size() == 0) return;
  dispatch_floating(in[0].dtype(),
                    [&](auto tag) { gather_qmm<typename decltype(tag)::type>(p, in, out[0]); });
}

void eval(const GatherMM&, const Arrays& in, Arrays& out) {
  if (out[0].size() == 0) return;
  dispatch_floating(in[0].dtype(), [&](auto tag) { gather_mm<typename decltype(tag)::type>(in, out[0]); });
}

}  // namespace nuvec::cpu
