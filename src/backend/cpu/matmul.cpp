// Matrix products through BLAS. float32, float64 and complex64 call the
// BLAS routine directly (a transposed operand is passed as a flag, other
// strides are copied dense first); float16 and bfloat16 are widened to
// float32, multiplied, and rounded once.
//
// The bits must not depend on the machine's core count (DESIGN.md section
// 10): OpenBLAS's own threads split a product by their number, and its
// bits change with the split (512^3 float32: 13,737 of 262,144 elements
// differ between 1 and 2 threads). So OpenBLAS runs single-threaded, and
// nuvec splits each product into tiles of the output whose bounds depend on
// the shape only, computed on the thread pool, one BLAS call per tile.
#include <cblas.h>

#include <algorithm>
#include <vector>

#include "backend/broadcast_view.h"
#include "backend/cpu/cpu.h"
#include "backend/cpu/loops.h"
#include "core/strided.h"
#include "core/thread_pool.h"
#include "nuvec/kernels/binary.h"
#include "nuvec/kernels/cast.h"
#include "nuvec/ops/quantized.h"

// OpenBLAS's thread switch; absent from other BLAS libraries (then null).
#pragma weak openblas_set_num_threads

namespace nuvec::cpu {

namespace {

// How a [rows, cols] matrix with strides (rs, cs) is seen by BLAS.
struct MatrixView {
  bool usable = false;
  bool transposed = false;
  int64_t ld = 0;
};

MatrixView blas_view(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  MatrixView v;
  if ((cs == 1 || cols == 1) && rs >= std::max<int64_t>(cols, 1)) {
    v = {true, false, rs};
  } else if ((rs == 1 || rows == 1) && cs >= std::max<int64_t>(rows, 1)) {
    v = {true, true, cs};
  }
  if (rows == 1 && cols == 1) v = {true, false, 1};
  return v;
}

template <class T>
void gemm(bool ta, bool tb, int m, int n, int k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T* c, int64_t ldc) {
  auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, TA, TB, m, n, k, 1.0f, a, int(lda), b, int(ldb), 0.0f, c, int(ldc));
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, TA, TB, m, n, k, 1.0, a, int(lda), b, int(ldb), 0.0, c, int(ldc));
  } else {
    const float one[2] = {1, 0}, zero[2] = {0, 0};
    cblas_cgemm(CblasRowMajor, TA, TB, m, n, k, one, a, int(lda), b, int(ldb), zero, c, int(ldc));
  }
}

// At load (after OpenBLAS's own initialisation: a library's dependencies
// start first), so that LAPACK's calls (linalg) are single-threaded too.
[[maybe_unused]] const bool blas_single_threaded = [] {
  if (openblas_set_num_threads) openblas_set_num_threads(1);
  return true;
}();

// Output tiles: rows in blocks of 256, columns in blocks of 1024 (fixed:
// only the shape decides them). A tile's BLAS call repacks its operands'
// panels, about (256 + 1024) / (256 * 1024) of its multiply-adds.
constexpr int kTileRows = 256, kTileCols = 1024;

// C[b] (m x n, row-major, ld n) = op(A[b]) op(B[b]) for every matrix b
// of the batch (element offsets oa, ob), tile by tile; blocks of tiles hold
// at least 2^20 multiply-adds (small products: one block, on the caller).
template <class T>
void gemm_tiled(const MatrixView& va, const MatrixView& vb, int m, int n, int k, const T* a,
                const std::vector<int64_t>& oa, const T* b, const std::vector<int64_t>& ob, T* c) {
  const long long tr = (m + kTileRows - 1) / kTileRows, tc = (n + kTileCols - 1) / kTileCols;
  const long long per = tr * tc, total = per * static_cast<long long>(oa.size());
  const double tile_work = double(std::min(m, kTileRows)) * std::min(n, kTileCols) * k;
  const long long grain = std::max<long long>(1, static_cast<long long>((1 << 20) / tile_work));
  parallel_for(total, grain, [&](long long begin, long long end) {
    for (long long t = begin; t < end; ++t) {
      const long long bi = t / per, r = t % per;
      const int i0 = int(r / tc) * kTileRows, j0 = int(r % tc) * kTileCols;
      const int mi = std::min(kTileRows, m - i0), nj = std::min(kTileCols, n - j0);
      // Row i0 of op(A), column j0 of op(B).
      const T* ai = a + oa[bi] + (va.transposed ? i0 : int64_t(i0) * va.ld);
      const T* bj = b + ob[bi] + (vb.transposed ? int64_t(j0) * vb.ld : j0);
      T* cij = c + bi * int64_t(m) * n + int64_t(i0) * n + j0;
      gemm<T>(va.transposed, vb.transposed, mi, nj, k, ai, va.ld, bj, vb.ld, cij, n);
    }
  });
}

// Products of at most ROW_INDEPENDENT_ROWS rows (docs/quantization.md,
// "Row independence"): BLAS's kernels for a few rows differ with the row
// count (a one-row product goes through another code path), so each output
// element is accumulated here in an order fixed by k and B's layout alone:
// over k in order into the row's accumulators (B row-major), or a dot
// product in eight lanes and a fixed tree (B transposed).
template <class T>
void gemm_few_rows(const MatrixView& va, const MatrixView& vb, int m, int n, int k, const T* a,
                   const std::vector<int64_t>& oa, const T* b, const std::vector<int64_t>& ob,
                   T* c) {
  constexpr int kCols = 256;
  const long long blocks = (n + kCols - 1) / kCols, total = blocks * (long long)oa.size();
  auto at = [&](const T* base, int i, int p) {
    return va.transposed ? base[int64_t(p) * va.ld + i] : base[int64_t(i) * va.ld + p];
  };
  parallel_for(total, 1, [&](long long begin, long long end) {
    std::vector<T> acc(size_t(ROW_INDEPENDENT_ROWS) * kCols);
    for (long long t = begin; t < end; ++t) {
      const long long bi = t / blocks;
      const int j0 = int(t % blocks) * kCols, w = std::min(kCols, n - j0);
      const T* ab = a + oa[bi];
      const T* bb = b + ob[bi];
      T* cb = c + bi * int64_t(m) * n;
      if (!vb.transposed) {
        std::fill(acc.begin(), acc.end(), T(0));
        for (int p = 0; p < k; ++p) {
          const T* brow = bb + int64_t(p) * vb.ld + j0;
          for (int i = 0; i < m; ++i) {
            const T x = at(ab, i, p);
            T* ai = acc.data() + size_t(i) * kCols;
            for (int j = 0; j < w; ++j) ai[j] += x * brow[j];
          }
        }
        for (int i = 0; i < m; ++i)
          std::copy(acc.begin() + size_t(i) * kCols, acc.begin() + size_t(i) * kCols + w,
                    cb + int64_t(i) * n + j0);
        continue;
      }
      for (int j = 0; j < w; ++j) {
        const T* bcol = bb + int64_t(j0 + j) * vb.ld;  // column j of op(B), contiguous
        for (int i = 0; i < m; ++i) {
          T l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
          int p = 0;
          for (; p + 8 <= k; p += 8)
            for (int q = 0; q < 8; ++q) l[q] += at(ab, i, p + q) * bcol[p + q];
          for (int q = 0; p < k; ++p, ++q) l[q] += at(ab, i, p) * bcol[p];
          cb[int64_t(i) * n + j0 + j] = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
        }
      }
    }
  });
}

// A dense row-major copy of `x` converted to T.
template <class T>
Array dense_as(const Array& x) {
  auto d = std::make_shared<ArrayDesc>();
  d->shape = x.shape();
  d->strides = row_major_strides(d->shape);
  d->size = x.size();
  d->dtype = dtype_v<T>;
  d->data = allocate_data(static_cast<size_t>(d->size) * sizeof(T));
  Array out(d);
  copy_general(x, out);
  return out;
}

// BLAS's complex products form ac - bd and ad + bc, which give NaN where a
// product overflows or meets an infinity (inf - inf); nuvec's complex
// multiply recovers the infinities (C99 Annex G, as MLX's std::complex). A
// NaN output is recomputed with the element-wise functors: each product with
// recovery, summed in order.
void fix_nonfinite(int m, int n, int k, const complex64_t* a, MatrixView va,
                   const complex64_t* b, MatrixView vb, complex64_t* c) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      complex64_t& o = c[int64_t(i) * n + j];
      if (o.re == o.re && o.im == o.im) continue;
      complex64_t acc(0.0f, 0.0f);
      for (int p = 0; p < k; ++p) {
        const complex64_t x = va.transposed ? a[p * va.ld + i] : a[i * va.ld + p];
        const complex64_t y = vb.transposed ? b[j * vb.ld + p] : b[p * vb.ld + j];
        acc = kernels::Add{}(acc, kernels::Multiply{}(x, y));
      }
      o = acc;
    }
}

template <class T>
void matmul_blas(const Array& a0, const Array& b0, Array& out) {
  int nd = a0.ndim();
  int m = a0.shape()[nd - 2], k = a0.shape()[nd - 1], n = b0.shape()[nd - 1];
  T* c = ptr<T>(out);
  if (out.size() == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < out.size(); ++i) c[i] = T(0);
    return;
  }
  auto va = blas_view(m, k, a0.strides()[nd - 2], a0.strides()[nd - 1]);
  auto vb = blas_view(k, n, b0.strides()[nd - 2], b0.strides()[nd - 1]);
  Array a = va.usable ? a0 : dense_as<T>(a0);
  Array b = vb.usable ? b0 : dense_as<T>(b0);
  if (!va.usable) va = {true, false, k};
  if (!vb.usable) vb = {true, false, n};
  Shape batch(a.shape().begin(), a.shape().end() - 2);
  Strides sa(a.strides().begin(), a.strides().end() - 2);
  Strides sb(b.strides().begin(), b.strides().end() - 2);
  std::vector<int64_t> oa, ob;
  for_each_offset(batch, sa, 0, [&](int64_t o) { oa.push_back(o); });
  for_each_offset(batch, sb, 0, [&](int64_t o) { ob.push_back(o); });
  const T* pa = ptr<T>(a);
  const T* pb = ptr<T>(b);
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (m <= ROW_INDEPENDENT_ROWS) return gemm_few_rows<T>(va, vb, m, n, k, pa, oa, pb, ob, c);
  }
  gemm_tiled<T>(va, vb, m, n, k, pa, oa, pb, ob, c);
  if constexpr (std::is_same_v<T, complex64_t>)
    for (size_t i = 0; i < oa.size(); ++i)
      fix_nonfinite(m, n, k, pa + oa[i], va, pb + ob[i], vb, c + int64_t(i) * m * n);
}

// out = (alpha != 1 ? out * A : out) + (beta != 1 ? c * B : c) with the
// Multiply and Add functors in T, A and B the weak scalars converted as
// ops convert them: each step rounds as the element-wise ops would.
template <class T>
void scale_add(const AddMM& p, const Array& c, Array& out) {
  const T A = kernels::Cast<T>{}(p.alpha()), B = kernels::Cast<T>{}(p.beta());
  const bool ka = p.alpha() != 1.0f, kb = p.beta() != 1.0f;
  T* o = ptr<T>(out);
  const T* pc = ptr<T>(c);
  Strides os = row_major_strides(out.shape());
  auto l = collapse<2>(out.shape(), {&c.strides(), &os});
  for_each_row(l, [&](const std::array<int64_t, 2>& off, int64_t n,
                      const std::array<int64_t, 2>& st) {
    for (int64_t i = 0; i < n; ++i) {
      T x = o[off[1] + i];
      T y = pc[off[0] + i * st[0]];
      if (ka) x = kernels::Multiply{}(x, A);
      if (kb) y = kernels::Multiply{}(y, B);
      o[off[1] + i] = kernels::Add{}(x, y);
    }
  });
}

}  // namespace

// The product exactly as Matmul computes it, into the output (AddMM is not
// element-wise, so no input was donated to it), then the element-wise tail.
void eval(const AddMM& p, const Arrays& in, Arrays& out) {
  eval(Matmul{}, Arrays{in[0], in[1]}, out);
  Array c = backend::broadcast_view(in[2], out[0].shape());
  DType d = out[0].dtype();
  if (d == float32) return scale_add<float>(p, c, out[0]);
  if (d == float64) return scale_add<double>(p, c, out[0]);
  if (d == float16) return scale_add<float16_t>(p, c, out[0]);
  if (d == bfloat16) return scale_add<bfloat16_t>(p, c, out[0]);
  return scale_add<complex64_t>(p, c, out[0]);
}

void eval(const Matmul&, const Arrays& in, Arrays& out) {
  DType d = out[0].dtype();
  if (d == float32) return matmul_blas<float>(in[0], in[1], out[0]);
  if (d == float64) return matmul_blas<double>(in[0], in[1], out[0]);
  if (d == complex64) return matmul_blas<complex64_t>(in[0], in[1], out[0]);
  // 16-bit floats: widen, multiply in float32, round once.
  Array a = dense_as<float>(in[0]), b = dense_as<float>(in[1]);
  auto d32 = std::make_shared<ArrayDesc>(*out[0].desc());
  d32->dtype = float32;
  d32->node = nullptr;
  d32->data = allocate_data(static_cast<size_t>(out[0].size()) * sizeof(float));
  Array c(d32);
  matmul_blas<float>(a, b, c);
  copy_general(c, out[0]);
}

}  // namespace nuvec::cpu
