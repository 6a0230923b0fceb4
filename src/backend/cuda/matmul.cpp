// Matrix products on the GPU through cuBLAS: float32 (no TF32 unless
// set_matmul_tf32(true): float32 products keep float32 accuracy), float64, complex64, and float16 /
// bfloat16 with float32 accumulation. A transposed operand is passed as a
// flag; other layouts are copied dense first. Batches with even strides go
// in one strided-batched call, others one call per matrix.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <mutex>
#include <string>
#include <unordered_map>

#include "backend/cuda/cuda.h"
#include "core/strided.h"

namespace nuvec::cuda {

namespace {

void check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw Error(ErrorKind::backend, std::string(what) + " failed (cuBLAS status " + std::to_string(int(st)) + ")");
}

cublasHandle_t handle_for(cudaStream_t s) {
  static std::mutex mu;
  static std::unordered_map<cudaStream_t, cublasHandle_t> handles;
  std::lock_guard<std::mutex> lock(mu);
  auto& h = handles[s];
  if (!h) {
    check(cublasCreate(&h), "cublasCreate");
    check(cublasSetStream(h, s), "cublasSetStream");
    // The default math mode: float32 products use TF32 only when the
    // compute type asks for it (set_matmul_tf32).
    check(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  }
  return h;
}

struct View {
  bool usable = false, transposed = false;
  int64_t ld = 0;
};

View view_of(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  View v;
  if ((cs == 1 || cols == 1) && rs >= std::max<int64_t>(cols, 1)) v = {true, false, rs};
  else if ((rs == 1 || rows == 1) && cs >= std::max<int64_t>(rows, 1)) v = {true, true, cs};
  if (rows == 1 && cols == 1) v = {true, false, 1};
  return v;
}

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

}  // namespace

void launch_matmul(const Array& a0, const Array& b0, Array& out, void* stream, Stream st) {
  auto s = static_cast<cudaStream_t>(stream);
  int nd = a0.ndim();
  int m = a0.shape()[nd - 2], k = a0.shape()[nd - 1], n = b0.shape()[nd - 1];
  if (out.size() == 0) return;
  if (k == 0) {
    if (cudaMemsetAsync(out.desc()->data->ptr, 0, out.nbytes(), s) != cudaSuccess)
      throw Error(ErrorKind::backend, "cudaMemsetAsync failed");
    return;
  }
  cudaDataType t;
  cublasComputeType_t compute;
  DType d = out.dtype();
  if (d == float32) t = CUDA_R_32F, compute = matmul_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  else if (d == float64) t = CUDA_R_64F, compute = CUBLAS_COMPUTE_64F;
  else if (d == complex64) t = CUDA_C_32F, compute = CUBLAS_COMPUTE_32F;
  else if (d == float16) t = CUDA_R_16F, compute = CUBLAS_COMPUTE_32F;
  else if (d == bfloat16) t = CUDA_R_16BF, compute = CUBLAS_COMPUTE_32F;
  else throw Error(ErrorKind::unsupported_dtype, "no GPU matmul for " + std::string(dtype_name(d)));
  View va = view_of(m, k, a0.strides()[nd - 2], a0.strides()[nd - 1]);
  View vb = view_of(k, n, b0.strides()[nd - 2], b0.strides()[nd - 1]);
  Array a = va.usable ? a0 : dense(a0, stream, st);
  Array b = vb.usable ? b0 : dense(b0, stream, st);
  if (!va.usable) va = {true, false, k};
  if (!vb.usable) vb = {true, false, n};
  Shape batch(a.shape().begin(), a.shape().end() - 2);
  Strides sa(a.strides().begin(), a.strides().end() - 2), sb(b.strides().begin(), b.strides().end() - 2);
  std::vector<int64_t> oa, ob;
  for_each_offset(batch, sa, 0, [&](int64_t o) { oa.push_back(o); });
  for_each_offset(batch, sb, 0, [&](int64_t o) { ob.push_back(o); });
  const int64_t item = a.itemsize();
  const char* pa = static_cast<const char*>(a.desc()->data->ptr) + a.desc()->offset * item;
  const char* pb = static_cast<const char*>(b.desc()->data->ptr) + b.desc()->offset * item;
  char* pc = static_cast<char*>(out.desc()->data->ptr) + out.desc()->offset * item;
  // Row-major C = A B is column-major C^T = B^T A^T.
  cublasOperation_t opa = va.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opb = vb.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const float one_f[2] = {1.0f, 0.0f}, zero_f[2] = {0.0f, 0.0f};
  const double one_d = 1.0, zero_d = 0.0;
  const void* alpha = d == float64 ? static_cast<const void*>(&one_d) : one_f;
  const void* beta = d == float64 ? static_cast<const void*>(&zero_d) : zero_f;
  cublasHandle_t h = handle_for(s);
  size_t count = oa.size();
  bool even = count > 1;
  for (size_t i = 2; i < count && even; ++i)
    even = oa[i] - oa[i - 1] == oa[1] - oa[0] && ob[i] - ob[i - 1] == ob[1] - ob[0];
  if (even || count == 1) {
    int64_t stride_a = count > 1 ? oa[1] - oa[0] : 0, stride_b = count > 1 ? ob[1] - ob[0] : 0;
    check(cublasGemmStridedBatchedEx(h, opb, opa, n, m, k, alpha, pb, t, int(vb.ld), stride_b, pa, t,
                                     int(va.ld), stride_a, beta, pc, t, n, int64_t(m) * n, int(count),
                                     compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
    return;
  }
  for (size_t i = 0; i < count; ++i)
    check(cublasGemmEx(h, opb, opa, n, m, k, alpha, pb + ob[i] * item, t, int(vb.ld), pa + oa[i] * item, t,
                       int(va.ld), beta, pc + int64_t(i) * m * n * item, t, n, compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
}

}  // namespace nuvec::cuda
