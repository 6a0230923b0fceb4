// The quantization primitives on the GPU (docs/quantization.md "Kernels"):
// inputs made dense (row_contiguous; a stack of matrices broadcast from one
// is read as that one), then the kernels of quantized_kernels.h.
// Products with up to ROW_INDEPENDENT_ROWS rows per matrix take the
// few-row kernels (row bits independent of the row count); more rows
// dequantize the matrices into scratch slabs of the output dtype (at most
// kSlabBytes at a time: column chunks of the matrix, several items per
// slab) and multiply them with cuBLAS (strided-batched, or batched with
// pointer arrays built on the device from the indices).
#include "backend/cuda/quantized.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>

#include "backend/cuda/blas.h"
#include "backend/cuda/cuda.h"
#include "backend/cuda/fast.h"
#include "backend/cuda/module.h"
#include "backend/cuda/quantized_kernels.h"
#include "nuvec/ops/quantized.h"
#include "nuvec/primitives/quantized.h"

namespace nuvec::cuda {

namespace {

constexpr int64_t kSlabBytes = int64_t(256) << 20;

[[noreturn]] void fail(const std::string& m) { (Error(ErrorKind::backend, m)).raise(); }

char* at(const Array& a) {
  return static_cast<char*>(a.desc()->data->ptr) + a.desc()->offset * a.itemsize();
}

// The product of the dims before the last `inner` ones.
int64_t batch_count(const Array& a, int inner) {
  int64_t n = 1;
  for (int d = 0; d + inner < a.ndim(); ++d) n *= a.shape(d);
  return n;
}

// The first matrix of a stack as a 2-D view (no copy): for a stack whose
// batch strides are all 0, that is every matrix of it.
Array one_matrix(const Array& a) {
  const int nd = a.ndim();
  if (nd <= 2) return a;
  auto d = std::make_shared<ArrayDesc>(*a.desc());
  d->node = nullptr;
  d->shape = Shape(std::vector<int>{a.shape(nd - 2), a.shape(nd - 1)});
  d->strides = Strides{a.strides()[nd - 2], a.strides()[nd - 1]};
  d->size = int64_t(d->shape[0]) * d->shape[1];
  Strides dense = row_major_strides(d->shape);
  d->row_contiguous = (d->shape[0] <= 1 || d->strides[0] == dense[0]) &&
                      (d->shape[1] <= 1 || d->strides[1] == dense[1]);
  return Array(d);
}

void zero(Array& out, cudaStream_t s) {
  if (cudaMemsetAsync(at(out), 0, out.nbytes(), s) != cudaSuccess) fail("cudaMemsetAsync failed");
}

void require(DType t, const char* what) {
  if (!quantk::supports(t))
    fail(std::string("no GPU kernel for ") + what + " on " + std::string(dtype_name(t)) +
         " (float32, float16, bfloat16 and float64 only)");
}

int checked_int(int64_t v, const char* what) {
  if (v > 0x7FFFFFFF) fail(std::string(what) + ": a dimension exceeds cuBLAS's int range");
  return int(v);
}

// The many-row quantized product through dequantized slabs and cuBLAS:
// items i of x [x_count, m, k] (matrix lhs[i]) times packed matrix rhs[i].
void slab_product(const quantk::MvArgs& a, cudaStream_t cs, Stream s) {
  const DType t = a.t;
  const blas::Types ty = blas::types_of(t);
  const int64_t sz = t.size(), K = a.k, N = a.n;
  // Columns of the output per slab: the matrix's rows with transpose,
  // else whole groups (and words) of its packed rows.
  int64_t nc = std::max<int64_t>(1, kSlabBytes / std::max<int64_t>(1, K * sz));
  if (!a.transpose) nc = std::max<int64_t>(128, nc / 128 * 128);
  nc = std::min(nc, N);
  const int64_t slab = nc * K * sz;
  const int64_t per = std::clamp<int64_t>(kSlabBytes / std::max<int64_t>(1, slab), 1, a.items);
  auto scratch = allocate(static_cast<size_t>(slab * per), s);
  const bool indexed = a.lhs || a.rhs;
  std::shared_ptr<Data> ptrs;
  if (indexed) ptrs = allocate(static_cast<size_t>(3 * per) * sizeof(void*), s);
  cublasHandle_t h = blas::handle_for(cs);
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const void* alpha = t == float64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = t == float64 ? static_cast<const void*>(&zero_d) : &zero_f;
  const cublasOperation_t opa = a.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int M = a.m, kk = checked_int(K, "QuantizedMatmul"), ldc = checked_int(N, "QuantizedMatmul");
  const char* x = static_cast<const char*>(a.x);
  char* out = static_cast<char*>(a.out);
  for (int64_t c0 = 0; c0 < N; c0 += nc) {
    const int w = int(std::min(nc, N - c0));
    const int lda = a.transpose ? kk : w;
    for (int64_t i0 = 0; i0 < a.items; i0 += per) {
      const int ni = int(std::min(per, a.items - i0));
      quantk::dequantize_slab(t, a.w, a.rhs, i0, ni, a.transpose, int(c0), w, scratch->ptr, cs);
      char* c = out + (i0 * M * N + c0) * sz;
      if (!indexed) {
        const char* xb = x + (a.x_count == 1 ? 0 : i0 * M * K * sz);
        blas::check(cublasGemmStridedBatchedEx(
                        h, opa, CUBLAS_OP_N, w, M, kk, alpha, scratch->ptr, ty.data, lda,
                        int64_t(w) * K, xb, ty.data, kk, a.x_count == 1 ? 0 : int64_t(M) * K,
                        beta, c, ty.data, ldc, int64_t(M) * N, ni, ty.compute, CUBLAS_GEMM_DEFAULT),
                    "cublasGemmStridedBatchedEx");
        continue;
      }
      auto** p = static_cast<const void**>(ptrs->ptr);
      quantk::gather_pointers(scratch->ptr, int64_t(w) * K * sz, nullptr, ni, 0, ni, p, cs);
      quantk::gather_pointers(x, int64_t(M) * K * sz, a.lhs, a.x_count, i0, ni, p + per, cs);
      quantk::gather_pointers(c, int64_t(M) * N * sz, nullptr, ni, 0, ni, p + 2 * per, cs);
      blas::check(cublasGemmBatchedEx(h, opa, CUBLAS_OP_N, w, M, kk, alpha, p, ty.data, lda,
                                      p + per, ty.data, kk, beta,
                                      static_cast<void**>(ptrs->ptr) + 2 * per, ty.data, ldc,
                                      ni, ty.compute, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmBatchedEx");
    }
  }
}

// Whether every batch stride of a stack of matrices is 0 (a broadcast of
// one matrix).
bool broadcast_stack(const Array& a) {
  if (a.ndim() <= 2) return true;
  for (int d = 0; d + 2 < a.ndim(); ++d)
    if (a.strides()[d] != 0 && a.shape(d) != 1) return false;
  return true;
}

// The packed matrices of inputs w_q, scales[, biases] (dense), kept alive;
// read as one matrix when all three are broadcasts of one.
quantk::Packed packed(const QuantSpec& q, const std::vector<Array>& in, size_t first,
                      std::vector<Array>& keep, void* stream, Stream s) {
  const size_t n = q.has_biases() ? 3 : 2;
  bool one = true;
  for (size_t i = 0; i < n; ++i) one = one && broadcast_stack(in[first + i]);
  auto dense = [&](const Array& a) {
    keep.push_back(row_contiguous(one ? one_matrix(a) : a, stream, s));
    return keep.back();
  };
  const Array w = dense(in[first]);
  const Array sc = dense(in[first + 1]);
  quantk::Packed p;
  p.q = q;
  p.w = reinterpret_cast<const uint32_t*>(at(w));
  p.scales = at(sc);
  if (q.has_biases()) p.biases = at(dense(in[first + 2]));
  p.count = batch_count(w, 2);
  p.rows = w.shape(-2);
  p.cols = int(int64_t(w.shape(-1)) * 32 / q.bits);
  return p;
}

bool run_quantize(const Quantize& p, const std::vector<Array>& in, std::vector<Array>& out,
                  void* stream, Stream s) {
  const Array& w0 = in[0];
  require(w0.dtype(), "Quantize");
  if (w0.size() == 0) return true;
  Array w = row_contiguous(w0, stream, s);
  const int64_t k = w.shape(-1);
  quantk::quantize(w.dtype(), p.spec(), at(w), reinterpret_cast<uint32_t*>(at(out[0])),
                   at(out[1]), p.spec().has_biases() ? at(out[2]) : nullptr, w.size() / k, k,
                   stream);
  return true;
}

bool run_dequantize(const Dequantize& p, const std::vector<Array>& in, std::vector<Array>& out,
                    void* stream, Stream s) {
  const QuantSpec& q = p.spec();
  require(p.dtype(), "Dequantize");
  if (q.has_biases()) require(in[1].dtype(), "Dequantize");
  if (out[0].size() == 0) return true;
  std::vector<Array> keep;
  for (size_t i = 0; i < in.size(); ++i) keep.push_back(row_contiguous(in[i], stream, s));
  const int64_t k = out[0].shape(-1);
  quantk::dequantize(in[1].dtype(), p.dtype(), q, reinterpret_cast<const uint32_t*>(at(keep[0])),
                     at(keep[1]), q.has_biases() ? at(keep[2]) : nullptr, at(out[0]),
                     out[0].size() / k, k, stream);
  return true;
}

// QuantizedMatmul (indexed false) and GatherQMM (indexed true).
bool run_qmm(const QuantSpec& q, bool transpose, bool indexed, const std::vector<Array>& in,
             std::vector<Array>& out, void* stream, Stream s) {
  auto cs = static_cast<cudaStream_t>(stream);
  const char* what = indexed ? "GatherQMM" : "QuantizedMatmul";
  const Array& x0 = in[0];
  require(x0.dtype(), what);
  if (out[0].size() == 0) return true;
  if (x0.shape(-1) == 0) {
    flush_launches(cs);  // (QuantizedMatmul may hold its launches: launch.cuh)
    zero(out[0], cs);
    return true;
  }
  std::vector<Array> keep;
  quantk::MvArgs a;
  a.t = x0.dtype();
  a.transpose = transpose;
  a.w = packed(q, in, 1, keep, stream, s);
  a.k = x0.shape(-1);
  a.n = out[0].shape(-1);
  const int m = x0.ndim() >= 2 ? x0.shape(-2) : 1;
  if (indexed) {
    const size_t np = q.has_biases() ? 4 : 3;
    keep.push_back(row_contiguous(in[np], stream, s));
    a.lhs = reinterpret_cast<const uint32_t*>(at(keep.back()));
    keep.push_back(row_contiguous(in[np + 1], stream, s));
    a.rhs = reinterpret_cast<const uint32_t*>(at(keep.back()));
    a.items = in[np].size();
    keep.push_back(row_contiguous(x0, stream, s));
    a.x = at(keep.back());
    a.x_count = batch_count(x0, 2);
    a.m = m;
    if (a.x_count == 0 || a.w.count == 0)
      fail("GatherQMM: indices into an empty batch of matrices");
  } else if (a.w.count == 1) {
    // One matrix: every row of x is a row of the product.
    keep.push_back(row_contiguous(x0, stream, s));
    a.x = at(keep.back());
    a.items = 1;
    a.m = static_cast<int>(x0.size() / a.k);
    if (int64_t(a.m) * a.k != x0.size()) fail("QuantizedMatmul: too many rows");
  } else {
    keep.push_back(row_contiguous(x0, stream, s));
    a.x = at(keep.back());
    a.items = a.x_count = a.w.count;
    a.m = m;
  }
  a.out = at(out[0]);
  a.early_w = true;
  const size_t np = q.has_biases() ? 4 : 3;
  for (size_t i = 1; i < np; ++i) {
    const Data& d = *in[i].desc()->data;
    a.early_w = a.early_w && unwritten_by_held(cs, d.ptr, d.nbytes);
  }
  if (m <= ROW_INDEPENDENT_ROWS) quantk::qmv(a, stream);
  else {
    flush_launches(cs);
    slab_product(a, cs, s);
  }
  return true;
}

bool run_gather_mm(const std::vector<Array>& in, std::vector<Array>& out, void* stream, Stream s) {
  auto cs = static_cast<cudaStream_t>(stream);
  const DType t = in[0].dtype();
  require(t, "GatherMM");
  if (out[0].size() == 0) return true;
  const int m = in[0].shape(-2), k = in[0].shape(-1), n = in[1].shape(-1);
  if (k == 0) {
    zero(out[0], cs);
    return true;
  }
  std::vector<Array> keep;
  for (const Array& a : in) keep.push_back(row_contiguous(a, stream, s));
  const int64_t a_count = batch_count(in[0], 2), b_count = batch_count(in[1], 2);
  const int64_t items = in[2].size();
  if (a_count == 0 || b_count == 0) fail("GatherMM: indices into an empty batch of matrices");
  const auto* lhs = reinterpret_cast<const uint32_t*>(at(keep[2]));
  const auto* rhs = reinterpret_cast<const uint32_t*>(at(keep[3]));
  if (m <= ROW_INDEPENDENT_ROWS) {
    quantk::gmv(t, at(keep[0]), a_count, at(keep[1]), b_count, lhs, rhs, items, m, n, k,
                at(out[0]), stream);
    return true;
  }
  const blas::Types ty = blas::types_of(t);
  const int64_t sz = t.size();
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const void* alpha = t == float64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = t == float64 ? static_cast<const void*>(&zero_d) : &zero_f;
  const int64_t per = std::min<int64_t>(items, int64_t(1) << 20);
  auto ptrs = allocate(static_cast<size_t>(3 * per) * sizeof(void*), s);
  auto** p = static_cast<const void**>(ptrs->ptr);
  cublasHandle_t h = blas::handle_for(cs);
  for (int64_t i0 = 0; i0 < items; i0 += per) {
    const int ni = int(std::min(per, items - i0));
    // Column-major: C^T [n, m] = B^T [n, k] A^T [k, m].
    quantk::gather_pointers(at(keep[1]), int64_t(k) * n * sz, rhs, b_count, i0, ni, p, cs);
    quantk::gather_pointers(at(keep[0]), int64_t(m) * k * sz, lhs, a_count, i0, ni, p + per, cs);
    quantk::gather_pointers(at(out[0]) + i0 * m * n * sz, int64_t(m) * n * sz, nullptr, ni, 0, ni,
                            p + 2 * per, cs);
    blas::check(cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, alpha, p, ty.data, n,
                                    p + per, ty.data, k, beta,
                                    static_cast<void**>(ptrs->ptr) + 2 * per, ty.data, n, ni,
                                    ty.compute, CUBLAS_GEMM_DEFAULT),
                "cublasGemmBatchedEx");
  }
  return true;
}

}  // namespace

bool launch_quantized(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out,
                      void* stream, Stream s) {
  switch (p.id()) {
    case PrimitiveId::Quantize:
      return run_quantize(static_cast<const Quantize&>(p), in, out, stream, s);
    case PrimitiveId::Dequantize:
      return run_dequantize(static_cast<const Dequantize&>(p), in, out, stream, s);
    case PrimitiveId::QuantizedMatmul: {
      auto& q = static_cast<const QuantizedMatmul&>(p);
      return run_qmm(q.spec(), q.transpose(), false, in, out, stream, s);
    }
    case PrimitiveId::GatherQMM: {
      auto& q = static_cast<const GatherQMM&>(p);
      return run_qmm(q.spec(), q.transpose(), true, in, out, stream, s);
    }
    case PrimitiveId::GatherMM:
      return run_gather_mm(in, out, stream, s);
    default:
      return false;
  }
}

}  // namespace nuvec::cuda
