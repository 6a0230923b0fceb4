// fast::CudaKernel (include/nuvec/fast.h): validates a call, generates its
// program (cuda_kernel_source.cpp), builds it with NVRTC when the process
// has a GPU (compile's module cache: memory, then disk, then NVRTC; the
// kernel object also keeps its modules by program, so a repeated call
// neither hashes the functor header nor waits for another build), and adds
// a CudaKernel node, which the CUDA backend launches
// (src/backend/cuda/cuda_kernel.cpp).
#include <cstdio>

#include "compile/jit.h"
#include "fast/cuda_kernel_source.h"
#include "ops/builder.h"

namespace nuvec::fast {

namespace {

constexpr const char* kOp = "cuda_kernel";

// The program built for this GPU; null without a GPU (the node then fails
// when evaluated, as every GPU node there), or the NVRTC error.
Expected<std::shared_ptr<const GpuModule>> module_for(
    CudaKernel::State& m, const CudaKernelParams& p) {
  backend::GpuTarget t = backend::gpu_target();
  if (t.arch.empty()) return std::shared_ptr<const GpuModule>();
  {
    std::lock_guard<std::mutex> lock(m.mu);
    auto it = m.modules.find(p.program);
    if (it != m.modules.end()) return it->second;
  }
  std::string error;
  auto built = compiler::gpu_module(p.program, t, error);
  if (!built)
    return Error(ErrorKind::invalid_argument, cuda_kernel_label(p.name) +
                                                  " does not compile (NVRTC, " +
                                                  t.arch + "):\n" + error);
  std::lock_guard<std::mutex> lock(m.mu);
  return m.modules.emplace(p.program, built).first->second;
}

std::vector<Array> failed(const Error& e, size_t n, Location loc) {
  Array f = ops::impl::fail(e.kind(), e.message(), kOp, loc);
  return std::vector<Array>(n, f);
}

}  // namespace

CudaKernel::CudaKernel(std::string name, std::vector<std::string> input_names,
                       std::vector<std::string> output_names,
                       std::string source, std::string header,
                       bool ensure_row_contiguous, int shared_memory)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.name = std::move(name);
  s.input_names = std::move(input_names);
  s.output_names = std::move(output_names);
  s.source = std::move(source);
  s.header = std::move(header);
  s.ensure_row_contiguous = ensure_row_contiguous;
  s.shared_memory = shared_memory;
  detail::validate(s);
}

const std::string& CudaKernel::name() const { return state_->name; }

std::string CudaKernel::source(const std::vector<Array>& inputs,
                               const CudaKernelCall& call) const {
  auto p = detail::call_params(*state_, inputs, call);
  if (!p) (p.error()).raise();
  return p->program;
}

std::vector<Array> CudaKernel::operator()(const std::vector<Array>& inputs,
                                          const CudaKernelCall& call,
                                          Location loc) const {
  const size_t n = state_->output_names.size();
  if (const Array* f = ops::impl::first_failed(inputs))
    return std::vector<Array>(n, *f);
  auto p = detail::call_params(*state_, inputs, call);
  if (!p) return failed(p.error(), n, loc);
  Stream stream = nuvec::detail::resolve_stream(call.stream);
  if (stream.device != Device::gpu)
    return failed(nuvec::CudaKernel(*p, nullptr).gpu_only(), n, loc);
  if (call.verbose)
    std::printf("Generated source of %s (%s):\n```\n%s```\n",
                cuda_kernel_label(p->name).c_str(), p->function.c_str(),
                p->program.c_str());
  auto module = module_for(*state_, *p);
  if (!module) return failed(module.error(), n, loc);
  auto prim = std::make_shared<const nuvec::CudaKernel>(std::move(*p),
                                                        std::move(*module));
  auto out = ops::impl::build(std::move(prim), inputs, stream, kOp, loc);
  if (out.size() < n)
    out.resize(n, out.at(0));  // rejected: the failed array n times
  return out;
}

}  // namespace nuvec::fast
