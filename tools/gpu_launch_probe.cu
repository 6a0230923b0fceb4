// Host time of kernel launches issued back to back on one stream, per
// launch: the floor under nuvec's replay time (docs/compile.md, "Generated
// GPU kernels"). One kernel launched through cudaLaunchKernel by its
// address, by its cudaKernel_t (the handle nuvec's cudaLibraryGetKernel
// gives for NVRTC's kernels) and through the driver's cuLaunchKernel by
// its CUfunction (what nuvec launches), then that launch followed by an
// event record (nuvec records one per output buffer), then a CUDA graph of
// the one kernel. Best of three runs.
// Build and run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -o /tmp/probe tools/gpu_launch_probe.cu -lcuda && /tmp/probe
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <vector>

extern "C" __global__ void probe_kernel(const float* a, float* b, long long n) {
  long long i = blockIdx.x * 256ll + threadIdx.x;
  if (i < n) b[i] = a[i] * a[i] + 1.0f;
}

int main() {
  cudaFree(nullptr);
  cudaKernel_t lib_kernel = nullptr;
  if (cudaGetKernel(&lib_kernel, probe_kernel) != cudaSuccess) return std::printf("cudaGetKernel failed\n"), 1;
  CUfunction fn = nullptr;
  if (cuKernelGetFunction(&fn, reinterpret_cast<CUkernel>(lib_kernel)) != CUDA_SUCCESS)
    return std::printf("cuKernelGetFunction failed\n"), 1;
  float *a = nullptr, *b = nullptr;
  cudaMalloc(&a, 4096);
  cudaMalloc(&b, 4096 * 4096);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  std::vector<cudaEvent_t> events(4096);
  for (auto& e : events) cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  const int n_calls = 4000;
  long long n = 16;
  auto run = [&](const char* name, auto body) {
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      cudaDeviceSynchronize();
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n_calls; ++i) {
        float* out = b + (i % 4096) * 16;
        void* args[] = {&a, &out, &n};
        body(i, args);
      }
      cudaDeviceSynchronize();
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, us / n_calls);
    }
    std::printf("| %-44s | %6.2f |\n", name, best);
  };
  std::printf("| launch, back to back, 16 elements            | us     |\n|---|---|\n");
  run("cudaLaunchKernel (static kernel)", [&](int, void** args) {
    cudaLaunchKernel(reinterpret_cast<const void*>(probe_kernel), 1, 256, args, 0, s);
  });
  run("cudaLaunchKernel (cudaKernel_t)", [&](int, void** args) {
    cudaLaunchKernel(reinterpret_cast<const void*>(lib_kernel), 1, 256, args, 0, s);
  });
  run("cuLaunchKernel (CUfunction)", [&](int, void** args) {
    cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 0, reinterpret_cast<CUstream>(s), args, nullptr);
  });
  run("cuLaunchKernel (CUfunction) + event record", [&](int i, void** args) {
    cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 0, reinterpret_cast<CUstream>(s), args, nullptr);
    cudaEventRecord(events[i % 4096], s);
  });
  // A CUDA graph of the one kernel (what capturing a replayed compiled
  // function of one fused region would give): launched as is, and with its
  // output pointer changed before each launch (each call of a compiled
  // function writes a new buffer).
  cudaGraph_t graph;
  cudaGraphCreate(&graph, 0);
  float* out0 = b;
  void* args0[] = {&a, &out0, &n};
  cudaKernelNodeParams kp = {};
  kp.func = reinterpret_cast<void*>(probe_kernel);
  kp.gridDim = dim3(1);
  kp.blockDim = dim3(256);
  kp.kernelParams = args0;
  cudaGraphNode_t node;
  cudaGraphAddKernelNode(&node, graph, nullptr, 0, &kp);
  cudaGraphExec_t exec;
  cudaGraphInstantiate(&exec, graph, 0);
  run("cudaGraphLaunch (one kernel node)", [&](int, void**) { cudaGraphLaunch(exec, s); });
  run("cudaGraphExecKernelNodeSetParams + launch", [&](int, void** args) {
    kp.kernelParams = args;
    cudaGraphExecKernelNodeSetParams(exec, node, &kp);
    cudaGraphLaunch(exec, s);
  });
  std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
