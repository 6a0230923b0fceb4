// Matrix products on the GPU: float32 (no TF32 unless
// set_matmul_tf32(true): float32 products keep float32 accuracy), float64, complex64, and float16 /
// bfloat16 with float32 accumulation. A transposed operand is passed as a
// flag; other layouts are copied dense first. One matrix, or batches with
// even strides, go in one cuBLASLt call (addmm.cpp's, without C), or one
// strided-batched cuBLAS call where cuBLASLt's heuristic offers no
// algorithm; other batches one cuBLAS call per matrix. Products of at most
// ROW_INDEPENDENT_ROWS rows run our own kernel (matmul_rows.cu): cuBLAS's
// split depends on the row count, so its rows are not independent.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <mutex>
#include <string>
#include <unordered_map>

#include "backend/cuda/blas.h"
#include "backend/cuda/cuda.h"
#include "backend/cuda/matmul_rows.h"
#include "backend/cuda/module.h"
#include "core/strided.h"
#include "nuvec/ops/quantized.h"

namespace nuvec::cuda {

namespace blas {

void check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    (Error(ErrorKind::backend, std::string(what) + " failed (cuBLAS status " + std::to_string(int(st)) + ")")).raise();
}

Types types_of(DType d) {
  if (d == float32)
    return {CUDA_R_32F, matmul_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F};
  if (d == float64) return {CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
  if (d == complex64) return {CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F};
  if (d == float16) return {CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
  if (d == bfloat16) return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
  (Error(ErrorKind::unsupported_dtype, "no GPU matmul for " + std::string(dtype_name(d)))).raise();
}

View view_of(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  View v;
  if ((cs == 1 || cols == 1) && rs >= std::max<int64_t>(cols, 1)) v = {true, false, rs};
  else if ((rs == 1 || rows == 1) && cs >= std::max<int64_t>(rows, 1)) v = {true, true, cs};
  if (rows == 1 && cols == 1) v = {true, false, 1};
  return v;
}

namespace {

// A dense copy of `x` on the device (the copy kernel of casts).
Array dense(const Array& x, void* stream, Stream st) {
  auto d = std::make_shared<ArrayDesc>();
  d->shape = x.shape();
  d->strides = row_major_strides(d->shape);
  d->size = x.size();
  d->dtype = x.dtype();
  d->row_contiguous = true;
  d->data = allocate(static_cast<size_t>(d->size) * x.itemsize(), st);
  Array out(d);
  launch_cast(x, out, stream);
  return out;
}

// The element offsets of each batch's matrix, and whether they are evenly
// spaced (more than one).
bool batch_offsets(const Array& x, std::vector<int64_t>& out) {
  Shape batch(x.shape().begin(), x.shape().end() - 2);
  Strides st(x.strides().begin(), x.strides().end() - 2);
  out.clear();
  for_each_offset(batch, st, 0, [&](int64_t o) { out.push_back(o); });
  bool even = out.size() > 1;
  for (size_t i = 2; i < out.size() && even; ++i) even = out[i] - out[i - 1] == out[1] - out[0];
  return even;
}

}  // namespace

Operands operands(const Array& a0, const Array& b0, void* stream, Stream st, bool even) {
  Operands o;
  int nd = a0.ndim();
  o.m = a0.shape()[nd - 2], o.k = a0.shape()[nd - 1], o.n = b0.shape()[nd - 1];
  o.va = view_of(o.m, o.k, a0.strides()[nd - 2], a0.strides()[nd - 1]);
  o.vb = view_of(o.k, o.n, b0.strides()[nd - 2], b0.strides()[nd - 1]);
  o.a = o.va.usable ? a0 : dense(a0, stream, st);
  o.b = o.vb.usable ? b0 : dense(b0, stream, st);
  if (!o.va.usable) o.va = {true, false, o.k};
  if (!o.vb.usable) o.vb = {true, false, o.n};
  bool ea = batch_offsets(o.a, o.oa), eb = batch_offsets(o.b, o.ob);
  if (even && o.oa.size() > 1) {  // cuBLASLt: batch strides of at least 0
    ea = ea && o.oa[1] >= o.oa[0];
    eb = eb && o.ob[1] >= o.ob[0];
  }
  if (even && o.oa.size() > 1 && !(ea && eb)) {
    // Copied dense (and seen non-transposed): evenly spaced by one matrix.
    if (!ea) {
      o.a = dense(o.a, stream, st);
      o.va = {true, false, o.k};
      ea = batch_offsets(o.a, o.oa);
    }
    if (!eb) {
      o.b = dense(o.b, stream, st);
      o.vb = {true, false, o.n};
      eb = batch_offsets(o.b, o.ob);
    }
  }
  o.even = ea && eb;
  o.stride_a = o.even ? o.oa[1] - o.oa[0] : 0;
  o.stride_b = o.even ? o.ob[1] - o.ob[0] : 0;
  return o;
}

cublasHandle_t handle_for(cudaStream_t s) {
  static std::mutex mu;
  static std::unordered_map<cudaStream_t, cublasHandle_t> handles;
  std::lock_guard<std::mutex> lock(mu);
  auto& h = handles[s];
  if (!h) {
    blas::check(cublasCreate(&h), "cublasCreate");
    blas::check(cublasSetStream(h, s), "cublasSetStream");
    // The default math mode: float32 products use TF32 only when the
    // compute type asks for it (set_matmul_tf32).
    blas::check(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  }
  return h;
}

}  // namespace blas

using blas::handle_for;

namespace {

// The few-row kernel's product a0 b0 (equal batch shapes, m <= 8, k > 0):
// b copied dense where neither of its last axes is dense, batch axes
// without extent dropped and merged where contiguous in both operands.
// False, with nothing enqueued, beyond the kernel's batch axes or sizes
// (cuBLAS then runs).
bool few_rows(const Array& a0, const Array& b0, Array& out, void* stream, Stream st) {
  const int nd = a0.ndim();
  const int k = a0.shape()[nd - 1], n = b0.shape()[nd - 1];
  if (k > (1 << 30)) return false;
  rows::RowsArgs p;
  // The batch of a0 and b into p; false past kMaxBatchDims axes.
  auto batch = [&](const Array& b) {
    int dims = 0;
    for (int d = 0; d < nd - 2; ++d) {
      const int64_t size = a0.shape()[d], sa = a0.strides()[d], sb = b.strides()[d];
      if (size == 1) continue;
      if (dims > 0 && p.a_bs[dims - 1] == sa * size && p.b_bs[dims - 1] == sb * size) {
        p.batch_shape[dims - 1] *= size;  // items stay in row-major order
        p.a_bs[dims - 1] = sa, p.b_bs[dims - 1] = sb;
        continue;
      }
      if (dims == rows::kMaxBatchDims) return false;
      p.batch_shape[dims] = size, p.a_bs[dims] = sa, p.b_bs[dims] = sb;
      ++dims;
    }
    p.batch_ndim = dims;
    return true;
  };
  if (!batch(b0)) return false;
  Array b = b0;
  if (!rows::b_layout_ok(b.strides()[nd - 2], b.strides()[nd - 1], k, n)) {
    flush_launches(static_cast<cudaStream_t>(stream));
    b = blas::dense(b0, stream, st);
    batch(b);  // dense: merges at least as well
  }
  p.t = out.dtype();
  p.a = blas::bytes(a0), p.b = blas::bytes(b), p.out = blas::bytes(out);
  p.a_rs = a0.strides()[nd - 2], p.a_cs = a0.strides()[nd - 1];
  p.b_rs = b.strides()[nd - 2], p.b_cs = b.strides()[nd - 1];
  p.m = a0.shape()[nd - 2], p.n = n, p.k = k;
  p.items = 1;
  for (int d = 0; d < p.batch_ndim; ++d) p.items *= p.batch_shape[d];
  const Data& bd = *b.desc()->data;
  p.early_b = unwritten_by_held(static_cast<cudaStream_t>(stream), bd.ptr, bd.nbytes);
  rows::matmul_rows(p, stream);
  return true;
}

}  // namespace

void launch_matmul(const Array& a0, const Array& b0, Array& out, void* stream, Stream st) {
  auto s = static_cast<cudaStream_t>(stream);
  int nd = a0.ndim();
  int k = a0.shape()[nd - 1];
  if (out.size() == 0) return;
  DType d = out.dtype();
  // The few-row kernel may be held with the launches before it (launch.cuh);
  // everything below is enqueued after what the stream holds.
  if (k > 0 && a0.shape()[nd - 2] <= ROW_INDEPENDENT_ROWS && rows::supports(d) && few_rows(a0, b0, out, stream, st))
    return;
  flush_launches(s);
  if (k == 0) {
    if (cudaMemsetAsync(out.desc()->data->ptr, 0, out.nbytes(), s) != cudaSuccess)
      (Error(ErrorKind::backend, "cudaMemsetAsync failed")).raise();
    return;
  }
  blas::Types ty = blas::types_of(d);
  blas::Operands o = blas::operands(a0, b0, stream, st, false);
  int m = o.m, n = o.n;
  const int64_t item = o.a.itemsize();
  const char* pa = blas::bytes(o.a);
  const char* pb = blas::bytes(o.b);
  char* pc = blas::bytes(out);
  // Row-major C = A B is column-major C^T = B^T A^T.
  cublasOperation_t opa = o.va.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opb = o.vb.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const float one_f[2] = {1.0f, 0.0f}, zero_f[2] = {0.0f, 0.0f};
  const double one_d = 1.0, zero_d = 0.0;
  const void* alpha = d == float64 ? static_cast<const void*>(&one_d) : one_f;
  const void* beta = d == float64 ? static_cast<const void*>(&zero_d) : zero_f;
  size_t count = o.oa.size();
  if ((count == 1 || (o.even && o.stride_a >= 0 && o.stride_b >= 0)) && blas::lt_product(o, ty, out, s, st)) return;
  cublasHandle_t h = handle_for(s);
  if (o.even || count == 1) {
    blas::check(cublasGemmStridedBatchedEx(h, opb, opa, n, m, k, alpha, pb, ty.data, int(o.vb.ld), o.stride_b, pa,
                                     ty.data, int(o.va.ld), o.stride_a, beta, pc, ty.data, n, int64_t(m) * n,
                                     int(count), ty.compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
    return;
  }
  for (size_t i = 0; i < count; ++i)
    blas::check(cublasGemmEx(h, opb, opa, n, m, k, alpha, pb + o.ob[i] * item, ty.data, int(o.vb.ld),
                       pa + o.oa[i] * item, ty.data, int(o.va.ld), beta, pc + int64_t(i) * m * n * item,
                       ty.data, n, ty.compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
}

}  // namespace nuvec::cuda
