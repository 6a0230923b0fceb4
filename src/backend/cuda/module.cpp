// Loading NVRTC-built modules (module.h).
#include "backend/cuda/module.h"

#include "nuvec/core/error.h"

namespace nuvec::cuda {

namespace {

struct Library {
  cudaLibrary_t lib = nullptr;
  ~Library() {
    if (lib) cudaLibraryUnload(lib);
  }
};

}  // namespace

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Error(ErrorKind::backend,
                std::string(what) + ": " + cudaGetErrorString(e));
}

const void* module_kernel(const GpuModule& m, const std::string& name) {
  std::lock_guard<std::mutex> lock(m.mu);
  for (const auto& [n, fn] : m.kernels)
    if (n == name) return fn;
  if (!m.loaded) {
    auto l = std::make_shared<Library>();
    check(cudaLibraryLoadData(&l->lib, m.binary.data(), nullptr, nullptr, 0,
                              nullptr, nullptr, 0),
          "loading a kernel built with NVRTC");
    m.loaded = l;
  }
  cudaKernel_t k;
  check(cudaLibraryGetKernel(&k, static_cast<Library*>(m.loaded.get())->lib,
                             name.c_str()),
        ("the kernel " + name).c_str());
  m.kernels.emplace_back(name, reinterpret_cast<const void*>(k));
  return m.kernels.back().second;
}

}  // namespace nuvec::cuda
