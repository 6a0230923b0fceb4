// The CUDA runtime's own costs on this machine, measured beside nuvec's
// compiled calls (bench/gpu_compile_bench.cpp, `replay`): what a C++
// program pays at least for one small kernel, so that nuvec's replay time
// reads against a floor taken in the same run (machines of one pool
// differ by 2x in host speed). Built into gpu_compile_bench when the
// CUDA backend is.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "launch_floor.h"

namespace {

__global__ void square_plus_one(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i] + 1.0f;
}

double median_us(int calls, const std::vector<double>& t) {
  std::vector<double> s = t;
  std::sort(s.begin(), s.end());
  return s[s.size() / 2] * 1e6 / calls;
}

template <class F>
double time_us(int calls, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < 6; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  t.erase(t.begin());  // warm-up
  return median_us(calls, t);
}

}  // namespace

std::vector<FloorRow> launch_floor() {
  std::vector<FloorRow> rows;
  const int n = 16, calls = 2000;
  float *x = nullptr, *y = nullptr;
  cudaStream_t s = nullptr;
  cudaEvent_t ev = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaMalloc(&y, n * sizeof(float)) != cudaSuccess ||
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
      cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess)
    return rows;
  cudaMemsetAsync(x, 0, n * sizeof(float), s);
  auto launch = [&] { square_plus_one<<<1, 128, 0, s>>>(x, y, n); };
  rows.push_back({"launch, stream sync each", time_us(calls, [&] {
                    for (int i = 0; i < calls; ++i) {
                      launch();
                      cudaStreamSynchronize(s);
                    }
                  })});
  rows.push_back({"launch + event record, event sync each", time_us(calls, [&] {
                    for (int i = 0; i < calls; ++i) {
                      launch();
                      cudaEventRecord(ev, s);
                      cudaEventSynchronize(ev);
                    }
                  })});
  rows.push_back({"launch, back to back", time_us(calls, [&] {
                    for (int i = 0; i < calls; ++i) launch();
                    cudaStreamSynchronize(s);
                  })});
  rows.push_back({"launch + event record, back to back", time_us(calls, [&] {
                    for (int i = 0; i < calls; ++i) {
                      launch();
                      cudaEventRecord(ev, s);
                    }
                    cudaStreamSynchronize(s);
                  })});
  // A one-node graph whose parameters are set before each launch (as
  // nuvec's small launches).
  cudaGraph_t g = nullptr;
  cudaGraphExec_t ge = nullptr;
  cudaGraphNode_t node = nullptr;
  int count = n;
  void* args[] = {&x, &y, &count};
  cudaKernelNodeParams p{};
  p.func = reinterpret_cast<void*>(square_plus_one);
  p.gridDim = dim3(1);
  p.blockDim = dim3(128);
  p.kernelParams = args;
  if (cudaGraphCreate(&g, 0) == cudaSuccess && cudaGraphAddKernelNode(&node, g, nullptr, 0, &p) == cudaSuccess &&
      cudaGraphInstantiate(&ge, g, 0) == cudaSuccess) {
    auto graph = [&] {
      cudaGraphExecKernelNodeSetParams(ge, node, &p);
      cudaGraphLaunch(ge, s);
    };
    rows.push_back({"graph (set params, launch), stream sync each", time_us(calls, [&] {
                      for (int i = 0; i < calls; ++i) {
                        graph();
                        cudaStreamSynchronize(s);
                      }
                    })});
    rows.push_back({"graph (set params, launch), back to back", time_us(calls, [&] {
                      for (int i = 0; i < calls; ++i) graph();
                      cudaStreamSynchronize(s);
                    })});
    cudaGraphExecDestroy(ge);
  }
  if (g) cudaGraphDestroy(g);
  cudaStreamSynchronize(s);
  cudaEventDestroy(ev);
  cudaStreamDestroy(s);
  cudaFree(x);
  cudaFree(y);
  return rows;
}
