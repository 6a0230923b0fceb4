// The GPU entry points of backend.h: the CUDA backend when the library is
// built with it (NUVEC_WITH_CUDA), otherwise "not available" errors.
#include "backend/backend.h"

#ifdef NUVEC_WITH_CUDA
#include "backend/cuda/cuda.h"
#include "backend/cuda/fast.h"
#include "backend/cuda/nccl.h"
#endif
#include "distributed/group.h"

namespace nuvec::backend {

#ifdef NUVEC_WITH_CUDA

bool gpu_available() { return cuda::available(); }
std::string gpu_unavailable_reason() { return cuda::unavailable_reason(); }
std::shared_ptr<Data> allocate_gpu(size_t nbytes, Stream s) { return cuda::allocate(nbytes, s); }
bool gpu_donate(const Data& d, Stream s) { return cuda::donate(d, s); }
bool gpu_fast_kernel(PrimitiveId id, DType d) { return cuda::has_fast_kernel(id, d); }
std::string gpu_attention_kernel(const std::vector<int>& dims, DType d, bool causal, bool has_mask,
                                 bool has_sinks, bool backward) {
  return cuda::attention_kernel_for(dims, d, causal, has_mask, has_sinks, backward);
}
void gpu_synchronize() { cuda::synchronize(); }
void gpu_wait(const Data& d) { cuda::wait_written(d); }
void gpu_flush() { cuda::flush(); }
void eval_gpu(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out, Stream s) {
  cuda::eval(p, in, out, s);
}
const void* host_data(const Data& d) { return cuda::to_host(d)->ptr; }
GpuMemory gpu_memory() {
  if (!cuda::available()) return {};
  auto st = cuda::stats();
  return {st.active, st.peak, st.cached, st.limit, st.cache_limit};
}
void gpu_reset_peak_memory() {
  if (cuda::available()) cuda::reset_peak();
}
size_t gpu_set_limit(size_t bytes, bool cache) {
  if (!cuda::available()) return 0;
  return cache ? cuda::set_cache_limit(bytes) : cuda::set_memory_limit(bytes);
}
void gpu_clear_cache() {
  if (cuda::available()) cuda::clear_cache();
}
GpuTarget gpu_target() {
  auto t = cuda::code_target();
  return {t.first, t.second};
}
std::string gpu_compile(const std::string& source, const std::string& arch, std::string& binary) {
  return cuda::compile_program(source, arch, binary);
}

#else

namespace {
[[noreturn]] void no_gpu() {
  (Error(ErrorKind::backend, "the GPU is not available: nuvec was built without CUDA")).raise();
}
}  // namespace

bool gpu_available() { return false; }
std::string gpu_unavailable_reason() { return "nuvec was built without CUDA"; }
std::shared_ptr<Data> allocate_gpu(size_t, Stream) { no_gpu(); }
bool gpu_donate(const Data&, Stream) { return false; }
bool gpu_fast_kernel(PrimitiveId, DType) { return false; }
std::string gpu_attention_kernel(const std::vector<int>&, DType, bool, bool, bool, bool) {
  return "";
}
void gpu_synchronize() {}
void gpu_wait(const Data&) {}
void gpu_flush() {}
void eval_gpu(const Primitive&, const std::vector<Array>&, std::vector<Array>&, Stream) { no_gpu(); }
const void* host_data(const Data&) { no_gpu(); }
GpuMemory gpu_memory() { return {}; }
void gpu_reset_peak_memory() {}
size_t gpu_set_limit(size_t, bool) { return 0; }
void gpu_clear_cache() {}
GpuTarget gpu_target() { return {}; }
std::string gpu_compile(const std::string&, const std::string&, std::string&) {
  return "nuvec was built without CUDA";
}

#endif

std::vector<Array> on_host(const std::vector<Array>& inputs) {
  bool any = false;
  for (const auto& a : inputs) any = any || (a.desc()->data && a.desc()->data->device == Device::gpu);
  if (!any) return inputs;
  std::vector<Array> out;
  for (const auto& a : inputs) {
    const auto& d = a.desc();
    if (!d->data || d->data->device != Device::gpu) {
      out.push_back(a);
      continue;
    }
#ifdef NUVEC_WITH_CUDA
    auto copy = std::make_shared<ArrayDesc>(*d);
    copy->node = nullptr;
    copy->data = cuda::to_host(*d->data);
    out.emplace_back(std::move(copy));
#else
    no_gpu();
#endif
  }
  return out;
}

}  // namespace nuvec::backend

// The nccl backend is part of the CUDA backend (src/backend/cuda/nccl.cpp).
namespace nuvec::distributed::detail {
#ifdef NUVEC_WITH_CUDA
std::shared_ptr<GroupImpl> nccl_world(std::string& why) { return cuda::nccl_world(why); }
bool nccl_loadable() { return cuda::nccl_loadable(); }
#else
std::shared_ptr<GroupImpl> nccl_world(std::string& why) {
  why = "nuvec was built without CUDA";
  return nullptr;
}
bool nccl_loadable() { return false; }
#endif
}  // namespace nuvec::distributed::detail
