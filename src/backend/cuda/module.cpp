// Loading NVRTC-built modules and launching their kernels (module.h).
#include "backend/cuda/module.h"

#include <cuda.h>

#include "nuvec/core/error.h"

namespace nuvec::cuda {

namespace {

struct Library {
  cudaLibrary_t lib = nullptr;
  ~Library() {
    if (lib) cudaLibraryUnload(lib);
  }
};

// The driver's entry points for launching, reached through the runtime
// (no link to libcuda, absent on machines without a GPU). Host time per
// launch as cudaLaunchKernel's within noise (tools/gpu_launch_probe.cu:
// 3.8 against 4.1 us in one run, 3.53 against 3.48 in another). All null
// where the driver does not offer them: then the runtime launches.
struct Driver {
  CUresult (*get_function)(CUfunction*, CUkernel) = nullptr;
  CUresult (*set_attribute)(CUfunction, CUfunction_attribute, int) = nullptr;
  CUresult (*error_name)(CUresult, const char**) = nullptr;
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                     void**, void**) = nullptr;
};

template <class F>
bool entry_point(const char* name, F* fn) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !p) {
    cudaGetLastError();
    return false;
  }
  *fn = reinterpret_cast<F>(p);
  return true;
}

const Driver& driver() {
  static const Driver d = [] {
    Driver x;
    if (!entry_point("cuKernelGetFunction", &x.get_function) || !entry_point("cuLaunchKernel", &x.launch) ||
        !entry_point("cuFuncSetAttribute", &x.set_attribute) || !entry_point("cuGetErrorName", &x.error_name))
      x = Driver{};
    return x;
  }();
  return d;
}

// Driver calls act on the calling thread's current context, which runtime
// calls make the device's primary context lazily: bound once per thread
// before the first driver call (the backend uses device 0).
void bind_context() {
  thread_local const bool bound = cudaSetDevice(0) == cudaSuccess;
  (void)bound;
}

// Throws Error(backend) "what: <the driver's name of r>" unless r is
// CUDA_SUCCESS.
void check_driver(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (driver().error_name(r, &name) != CUDA_SUCCESS || !name) name = "an unknown CUDA driver error";
  throw Error(ErrorKind::backend, std::string(what) + ": " + name);
}

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
  const void* fn = reinterpret_cast<const void*>(k);
  if (driver().launch) {
    CUfunction f = nullptr;
    bind_context();
    check_driver(driver().get_function(&f, reinterpret_cast<CUkernel>(k)), ("the kernel " + name).c_str());
    fn = reinterpret_cast<const void*>(f);
  }
  m.kernels.emplace_back(name, fn);
  return m.kernels.back().second;
}

void allow_shared_memory(const void* fn, int bytes, const char* what) {
  if (!driver().launch) {
    check(cudaKernelSetAttributeForDevice(static_cast<cudaKernel_t>(const_cast<void*>(fn)),
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, bytes, 0),
          what);
    return;
  }
  bind_context();
  check_driver(driver().set_attribute(reinterpret_cast<CUfunction>(const_cast<void*>(fn)),
                                      CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
               what);
}

void launch_module_kernel(const void* fn, dim3 grid, dim3 block, void** args, size_t shared,
                          cudaStream_t s, const char* what) {
  if (!driver().launch) {
    check(cudaLaunchKernel(fn, grid, block, args, shared, s), what);
    return;
  }
  bind_context();
  check_driver(driver().launch(reinterpret_cast<CUfunction>(const_cast<void*>(fn)), grid.x, grid.y, grid.z, block.x,
                               block.y, block.z, static_cast<unsigned>(shared), reinterpret_cast<CUstream>(s), args,
                               nullptr),
               what);
}

}  // namespace nuvec::cuda
