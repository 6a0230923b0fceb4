// Compiling generated CUDA C++ at run time with NVRTC (cuda.h:
// compile_program), with the options the library's own CUDA code is built
// with: no contraction of multiplies and adds, IEEE division and square
// root, no flush to zero, so generated kernels give the eager kernels' bits.
#include <cuda_runtime.h>
#include <nvrtc.h>

#include "backend/cuda/cuda.h"

namespace nuvec::cuda {

std::pair<std::string, std::string> code_target() {
  static const std::pair<std::string, std::string> t = [] {
    std::pair<std::string, std::string> r;
    if (!available()) return r;
    int major = 0, minor = 0, driver = 0, nv_major = 0, nv_minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    cudaDriverGetVersion(&driver);
    nvrtcVersion(&nv_major, &nv_minor);
    r.first = "sm_" + std::to_string(major) + std::to_string(minor);
    r.second = "nvrtc " + std::to_string(nv_major) + "." + std::to_string(nv_minor) + " driver " +
               std::to_string(driver);
    return r;
  }();
  return t;
}

std::string compile_program(const std::string& source, const std::string& arch, std::string& binary) {
  nvrtcProgram prog;
  nvrtcResult r = nvrtcCreateProgram(&prog, source.c_str(), "nuvec_fused.cu", 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) return std::string("nvrtcCreateProgram: ") + nvrtcGetErrorString(r);
  std::string arch_flag = "--gpu-architecture=" + arch;
  const char* options[] = {arch_flag.c_str(), "--std=c++20",   "--fmad=false",
                           "--ftz=false",     "--prec-div=true", "--prec-sqrt=true",
                           "--diag-suppress=186"};
  r = nvrtcCompileProgram(prog, sizeof options / sizeof options[0], options);
  std::string error;
  if (r != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    if (n) nvrtcGetProgramLog(prog, log.data());
    error = std::string("NVRTC: ") + nvrtcGetErrorString(r) + "\n" + log;
  } else {
    size_t n = 0;
    nvrtcGetCUBINSize(prog, &n);
    binary.assign(n, '\0');
    if (n == 0 || nvrtcGetCUBIN(prog, binary.data()) != NVRTC_SUCCESS) error = "NVRTC gave no cubin";
  }
  nvrtcDestroyProgram(&prog);
  return error;
}

}  // namespace nuvec::cuda
