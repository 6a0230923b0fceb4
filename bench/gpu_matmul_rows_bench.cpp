// The few-row dense products on the GPU (src/backend/cuda/matmul_rows.cu,
// run on the H200): [M, K] x [K, N] for M = 1, 2, 4, 8, with B dense along
// k (x @ W^T, W [N, K]: a Linear layer's weight) and along n ([K, N]), in
// bfloat16 (also float16 and float32 for the smaller shape). Beside each,
// cublasGemmEx on the same buffers (the path nuvec took before, whose rows
// are not independent), and nuvec's ops::matmul end to end. Figures are
// microseconds per call and GB/s over B's bytes (the bytes the product must
// read), against a device-to-device copy measured in the same run (read +
// write). Each kernel figure: events around 50 back-to-back launches after
// 5 of warm-up, rotating over copies of B (at least 256 MB, so that B does
// not sit in the 50 MB L2), median of 5. Exits quietly without a GPU.
#include <nuvec/nuvec.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "nuvec/core/graph.h"

#ifdef NUVEC_BENCH_CUBLAS
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "backend/cuda/matmul_rows.h"
#endif

using namespace nuvec;

#ifdef NUVEC_BENCH_CUBLAS

namespace {

const StreamOrDevice G = Device::gpu;

// The device address of an evaluated GPU array.
const void* device_ptr(const Array& x) {
  return static_cast<const char*>(x.desc()->data->ptr) +
         x.desc()->offset * x.itemsize();
}

// Device buffers: `copies` of B (random normals of dtype dt), A [8, K], C.
struct Buffers {
  std::vector<void*> b;
  void *a = nullptr, *c = nullptr;
  size_t b_bytes = 0;
  Buffers(DType dt, int k, int n, int copies) {
    Array hb = ops::astype(random::normal({k, n}, random::key(1), G), dt, G);
    Array ha = ops::astype(random::normal({8, k}, random::key(2), G), dt, G);
    eval({hb, ha});
    b_bytes = size_t(hb.nbytes());
    for (int i = 0; i < copies; ++i) {
      void* p = nullptr;
      cudaMalloc(&p, b_bytes);
      cudaMemcpy(p, device_ptr(hb), b_bytes, cudaMemcpyDeviceToDevice);
      b.push_back(p);
    }
    cudaMalloc(&a, size_t(ha.nbytes()));
    cudaMemcpy(a, device_ptr(ha), size_t(ha.nbytes()),
               cudaMemcpyDeviceToDevice);
    cudaMalloc(&c, size_t(8) * n * ha.itemsize());
    cudaDeviceSynchronize();
  }
  ~Buffers() {
    for (void* p : b) cudaFree(p);
    cudaFree(a);
    cudaFree(c);
  }
};

// Microseconds per launch: events around 50 launches (after 5), median of 5.
double per_launch_us(const std::function<void(int)>& launch) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int i = 0; i < 5; ++i) launch(i);
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(e0);
    for (int i = 0; i < 50; ++i) launch(i);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    t.push_back(ms * 1e3 / 50);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(t.begin(), t.end());
  return t[2];
}

// GB/s of a device-to-device copy of 1 GB (read + write).
double copy_gbs() {
  const size_t bytes = size_t(1) << 30;
  void *x = nullptr, *y = nullptr;
  cudaMalloc(&x, bytes);
  cudaMalloc(&y, bytes);
  cudaMemset(x, 1, bytes);
  const double us = per_launch_us(
      [&](int) { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice); });
  cudaFree(x);
  cudaFree(y);
  return 2.0 * double(bytes) / (us * 1e3);
}

cudaDataType_t cuda_type(DType dt) {
  return dt == bfloat16 ? CUDA_R_16BF : dt == float16 ? CUDA_R_16F : CUDA_R_32F;
}

// nuvec's ops::matmul per call: 20 calls, one eval and wait, median of 7.
double nuvec_us(DType dt, int m, int k, int n, bool k_dense) {
  Array a = ops::astype(random::normal({m, k}, random::key(3), G), dt, G);
  Array b =
      k_dense
          ? ops::transpose(
                ops::astype(random::normal({n, k}, random::key(4), G), dt, G),
                G)
          : ops::astype(random::normal({k, n}, random::key(4), G), dt, G);
  eval({a, b});
  return bench::median_ms(7,
                          [&] {
                            std::vector<Array> keep;
                            for (int i = 0; i < 20; ++i)
                              keep.push_back(ops::matmul(a, b, G));
                            nuvec::eval(keep);
                            synchronize();
                          }) *
         1e3 / 20.0;
}

}  // namespace

#endif

int main() {
  if (!is_available(Device::gpu)) {
    std::printf("no GPU: nothing to measure\n");
    return 0;
  }
#ifdef NUVEC_BENCH_CUBLAS
  cublasHandle_t h;
  cublasCreate(&h);
  const double copy = copy_gbs();
  std::printf(
      "few-row matmul [M, K] x [K, N]; copy bandwidth (1 GB, read + write): "
      "%.0f GB/s\n\n",
      copy);
  std::printf(
      "| %-30s | %-8s | %-7s | %2s | %8s | %7s | %6s | %8s | %7s | %7s | %9s "
      "|\n",
      "product", "dtype", "B", "M", "ours us", "GB/s", "copy%", "cuBLAS",
      "GB/s", "speedup", "ops:: us");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  struct Shape2 {
    const char* name;
    int k, n;
    bool decode;  // a Llama-3.2-1B decode product: bfloat16, W [N, K], M = 1
  };
  for (const Shape2 sh : {Shape2{"[M,4096]x[4096,4096]", 4096, 4096, false},
                          Shape2{"[M,8192]x[8192,28672]", 8192, 28672, false},
                          Shape2{"1B q/o [M,2048]x[2048,2048]", 2048, 2048, true},
                          Shape2{"1B k/v [M,2048]x[2048,512]", 2048, 512, true},
                          Shape2{"1B up [M,2048]x[2048,8192]", 2048, 8192, true},
                          Shape2{"1B down [M,8192]x[8192,2048]", 8192, 2048, true},
                          Shape2{"1B head [M,2048]x[2048,128256]", 2048, 128256, true}})
    for (DType dt : {bfloat16, float16, float32}) {
      if ((sh.n > 4096 || sh.decode) && dt != bfloat16) continue;
      const size_t bytes = size_t(sh.k) * sh.n * dt.size();
      const int copies =
          int(std::max<size_t>(1, (size_t(256) << 20) / bytes + 1));
      Buffers buf(dt, sh.k, sh.n, copies);
      for (bool k_dense : {true, false}) {
        if (sh.decode && !k_dense) continue;
        double one = 0;
        for (int m : {1, 2, 4, 8}) {
          if (sh.decode && m > 1) continue;
          cuda::rows::RowsArgs p;
          p.t = dt, p.a = buf.a, p.out = buf.c, p.m = m, p.k = sh.k, p.n = sh.n;
          p.a_rs = sh.k, p.a_cs = 1;
          if (k_dense)
            p.b_rs = 1, p.b_cs = sh.k;  // W [N, K] seen transposed
          else
            p.b_rs = sh.n, p.b_cs = 1;
          const double ours = per_launch_us([&](int i) {
            p.b = buf.b[size_t(i) % buf.b.size()];
            cuda::rows::matmul_rows(p, nullptr);
          });
          const float alpha = 1.0f, beta = 0.0f;
          const cudaDataType_t ty = cuda_type(dt);
          const double theirs = per_launch_us([&](int i) {
            cublasGemmEx(h, k_dense ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N,
                         sh.n, m, sh.k, &alpha, buf.b[size_t(i) % buf.b.size()],
                         ty, k_dense ? sh.k : sh.n, buf.a, ty, sh.k, &beta,
                         buf.c, ty, sh.n, CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT);
          });
          const double e2e = nuvec_us(dt, m, sh.k, sh.n, k_dense);
          if (m == 1) one = ours;
          auto gbs = [&](double us) { return double(bytes) / (us * 1e3); };
          std::printf(
              "| %-30s | %-8s | %-7s | %2d | %8.1f | %7.0f | %5.1f%% | %8.1f | "
              "%7.0f | %6.2fx | %9.1f |\n",
              sh.name, std::string(dtype_name(dt)).c_str(),
              k_dense ? "[N,K]^T" : "[K,N]", m, ours, gbs(ours),
              100.0 * gbs(ours) / copy, theirs, gbs(theirs), theirs / ours,
              e2e);
          if (m == 8)
            std::printf("|   M=8 time / M=1 time: %.2f\n", ours / one);
          std::fflush(stdout);
        }
      }
      if (cudaGetLastError() != cudaSuccess) std::printf("CUDA error\n");
    }
  cublasDestroy(h);
#else
  std::printf("built without CUDA: nothing to measure\n");
#endif
  return 0;
}
