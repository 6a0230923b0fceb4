// GPU matrix products (scripts/gpu.sh; tools/peer_gpu_bench.py --matmul
// prints torch.matmul's figures for the same rows): square sizes 1024-8192
// and the products of the nn issue's GPT step (16,384 tokens, d_model 384:
// forward, and the backward's transposed products), in float32 (no TF32),
// bfloat16 and float16. Each figure is per call, from 60 less 20 calls issued
// back to back (the fixed cost of one eval and one synchronisation cancels),
// the median of 5. Beside nuvec's matmul, the same product straight through
// cuBLAS (cublasGemmEx) and through cuBLASLt's first heuristic answer with
// several workspace limits, and the best of its first 8 answers, on buffers
// of our own: the table that chooses nuvec's path. Exits quietly without a
// GPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <nuvec/nuvec.h>

#ifdef NUVEC_BENCH_CUBLAS
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

#include "bench_util.h"

using namespace nuvec;

namespace {

struct Product {
  const char* name;
  int m, k, n;
  bool ta, tb;  // a is stored k x m (seen transposed), b n x k
};

const std::vector<Product> kProducts = {
    {"square 1024", 1024, 1024, 1024, false, false},
    {"square 2048", 2048, 2048, 2048, false, false},
    {"square 4096", 4096, 4096, 4096, false, false},
    {"square 8192", 8192, 8192, 8192, false, false},
    {"gpt qkv x W (16384x384x1152)", 16384, 384, 1152, false, false},
    {"gpt proj (16384x384x384)", 16384, 384, 384, false, false},
    {"gpt up (16384x384x1536)", 16384, 384, 1536, false, false},
    {"gpt down (16384x1536x384)", 16384, 1536, 384, false, false},
    {"gpt head (16384x384x96)", 16384, 384, 96, false, false},
    {"gpt dX = dY W^T (16384x1536x384)", 16384, 1536, 384, false, true},
    {"gpt dW = X^T dY (384x16384x1536)", 384, 16384, 1536, true, false},
    {"gpt dW = X^T dY (1536x16384x384)", 1536, 16384, 384, true, false},
};

// Per call, ms: (time of 60 calls - time of 20) / 40, median of 5.
template <class Issue, class Sync>
double per_call_ms(Issue issue, Sync sync) {
  auto run = [&](int calls) {
    sync();
    auto s = std::chrono::steady_clock::now();
    issue(calls);
    sync();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
  };
  run(20);
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) t.push_back((run(60) - run(20)) / 40.0);
  std::sort(t.begin(), t.end());
  return t[2];
}

double tflops(const Product& p, double ms) { return 2.0 * p.m * double(p.k) * p.n / (ms * 1e9); }

double nuvec_ms(const Product& p, DType dt) {
  Shape sa = p.ta ? Shape{p.k, p.m} : Shape{p.m, p.k};
  Shape sb = p.tb ? Shape{p.n, p.k} : Shape{p.k, p.n};
  Array a = ops::astype(ops::copy(random::normal(sa, random::key(3)), Device::gpu), dt, Device::gpu);
  Array b = ops::astype(ops::copy(random::normal(sb, random::key(4)), Device::gpu), dt, Device::gpu);
  if (p.ta) a = ops::transpose(a, {1, 0}, Device::gpu);
  if (p.tb) b = ops::transpose(b, {1, 0}, Device::gpu);
  eval({a, b});
  return per_call_ms(
      [&](int calls) {
        std::vector<Array> outs;
        for (int i = 0; i < calls; ++i) outs.push_back(ops::matmul(a, b, Device::gpu));
        eval(outs);
      },
      [] { synchronize(); });
}

#ifdef NUVEC_BENCH_CUBLAS

struct Raw {
  cudaDataType_t data;
  cublasComputeType_t compute;
  cudaDataType_t scale;
  int item;
};

Raw raw_of(DType dt) {
  if (dt == bfloat16) return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2};
  if (dt == float16) return {CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2};
  return {CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 4};
}

// Device buffers of our own, filled with the bytes of nuvec's random
// normals in dtype dt (the same values as nuvec's operands).
struct Buffers {
  void *a = nullptr, *b = nullptr, *c = nullptr, *ws = nullptr;
  size_t ws_bytes = 256u << 20;
  Buffers(const Product& p, DType dt) {
    Raw r = raw_of(dt);
    auto fill = [&](void*& dst, Shape s, int seed) {
      Array h = ops::astype(random::normal(s, random::key(seed)), dt);
      h.eval();
      size_t bytes = size_t(h.size()) * r.item;
      cudaMalloc(&dst, bytes);
      const void* src = dt == bfloat16  ? static_cast<const void*>(h.data<bfloat16_t>())
                        : dt == float16 ? static_cast<const void*>(h.data<float16_t>())
                                        : static_cast<const void*>(h.data<float>());
      cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
    };
    fill(a, p.ta ? Shape{p.k, p.m} : Shape{p.m, p.k}, 3);
    fill(b, p.tb ? Shape{p.n, p.k} : Shape{p.k, p.n}, 4);
    cudaMalloc(&c, size_t(p.m) * p.n * r.item);
    cudaMalloc(&ws, ws_bytes);
  }
  ~Buffers() {
    for (void* x : {a, b, c, ws}) cudaFree(x);
  }
};

// Row-major C = op(A) op(B) as column-major C^T = op(B)^T op(A)^T: the
// first cuBLAS operand is b (n x k, or k x n stored when tb), the second a.
struct Layout {
  cublasOperation_t opa, opb;  // for cuBLAS's A (= b) and B (= a)
  int lda, ldb;
};
Layout layout_of(const Product& p) {
  return {p.tb ? CUBLAS_OP_T : CUBLAS_OP_N, p.ta ? CUBLAS_OP_T : CUBLAS_OP_N, p.tb ? p.k : p.n,
          p.ta ? p.m : p.k};
}

double gemm_ex_ms(const Product& p, DType dt, cublasHandle_t h, Buffers& buf) {
  Raw r = raw_of(dt);
  Layout l = layout_of(p);
  const float one = 1.0f, zero = 0.0f;
  return per_call_ms(
      [&](int calls) {
        for (int i = 0; i < calls; ++i)
          cublasGemmEx(h, l.opa, l.opb, p.n, p.m, p.k, &one, buf.b, r.data, l.lda, buf.a, r.data, l.ldb,
                       &zero, buf.c, r.data, p.n, r.compute, CUBLAS_GEMM_DEFAULT);
      },
      [] { cudaDeviceSynchronize(); });
}

// cuBLASLt: the heuristic's answers under a workspace limit; the time of
// answer `pick` (or of the best of all when pick < 0).
double lt_ms(const Product& p, DType dt, cublasLtHandle_t h, Buffers& buf, size_t ws_limit, int pick,
             int* answers) {
  Raw r = raw_of(dt);
  Layout l = layout_of(p);
  cublasLtMatmulDesc_t desc;
  cublasLtMatmulDescCreate(&desc, r.compute, r.scale);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &l.opa, sizeof(l.opa));
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &l.opb, sizeof(l.opb));
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatrixLayoutCreate(&la, r.data, l.opa == CUBLAS_OP_N ? p.n : p.k, l.opa == CUBLAS_OP_N ? p.k : p.n,
                             l.lda);
  cublasLtMatrixLayoutCreate(&lb, r.data, l.opb == CUBLAS_OP_N ? p.k : p.m, l.opb == CUBLAS_OP_N ? p.m : p.k,
                             l.ldb);
  cublasLtMatrixLayoutCreate(&lc, r.data, p.n, p.m, p.n);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  uint64_t limit = ws_limit;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof(limit));
  cublasLtMatmulHeuristicResult_t res[8] = {};
  int found = 0;
  cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, lc, lc, pref, 8, res, &found);
  *answers = found;
  const float one = 1.0f, zero = 0.0f;
  double best = 1e30;
  for (int i = 0; i < found; ++i) {
    if (pick >= 0 && i != pick) continue;
    double t = per_call_ms(
        [&](int calls) {
          for (int c = 0; c < calls; ++c)
            cublasLtMatmul(h, desc, &one, buf.b, la, buf.a, lb, &zero, buf.c, lc, buf.c, lc, &res[i].algo,
                           buf.ws, res[i].workspaceSize, nullptr);
        },
        [] { cudaDeviceSynchronize(); });
    best = std::min(best, t);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  for (auto x : {la, lb, lc}) cublasLtMatrixLayoutDestroy(x);
  cublasLtMatmulDescDestroy(desc);
  return found ? best : 0.0;
}

#endif

}  // namespace

int main(int argc, char** argv) {
  // `gpu_matmul_bench PREFIX`: the rows whose product name starts so, nuvec
  // alone (for a profiler's trace).
  const std::string only = argc > 1 ? argv[1] : "";
  if (!is_available(Device::gpu)) {
    std::printf("no GPU: nothing to measure\n");
    return 0;
  }
#ifdef NUVEC_BENCH_CUBLAS
  cublasHandle_t gh;
  cublasCreate(&gh);
  cublasLtHandle_t lh;
  cublasLtCreate(&lh);
  void* gws = nullptr;
  cudaMalloc(&gws, 32u << 20);
  cublasSetWorkspace(gh, gws, 32u << 20);
#endif
  std::printf("matmul, TFLOP/s per call (60 less 20 back-to-back calls, median of 5)\n\n");
  std::printf("| %-34s | %-8s | %7s | %7s | %7s | %7s | %7s | %7s |\n", "product", "dtype", "nuvec", "GemmEx",
              "Lt 32M", "Lt 0", "Lt 256M", "Lt best");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (DType dt : {bfloat16, float16, float32})
    for (const Product& p : kProducts) {
      if (dt == float32 && p.m * double(p.k) * p.n > 4096.0 * 4096 * 4096) continue;
      if (!only.empty() && (std::string(p.name).rfind(only, 0) != 0 || dt != bfloat16)) continue;
      double ours = nuvec_ms(p, dt);
      std::printf("| %-34s | %-8s | %7.1f |", p.name, std::string(dtype_name(dt)).c_str(), tflops(p, ours));
#ifdef NUVEC_BENCH_CUBLAS
      if (!only.empty()) {
        std::printf("\n");
        continue;
      }
      Buffers buf(p, dt);
      int answers = 0;
      double ex = gemm_ex_ms(p, dt, gh, buf);
      double l32 = lt_ms(p, dt, lh, buf, 32u << 20, 0, &answers);
      double l0 = lt_ms(p, dt, lh, buf, 0, 0, &answers);
      double l256 = lt_ms(p, dt, lh, buf, 256u << 20, 0, &answers);
      double best = lt_ms(p, dt, lh, buf, 32u << 20, -1, &answers);
      auto f = [&](double ms) { return ms > 0 ? tflops(p, ms) : 0.0; };
      std::printf(" %7.1f | %7.1f | %7.1f | %7.1f | %7.1f (%d) |\n", f(ex), f(l32), f(l0), f(l256), f(best),
                  answers);
#else
      std::printf(" - | - | - | - | - |\n");
#endif
      std::fflush(stdout);
    }
  return 0;
}
