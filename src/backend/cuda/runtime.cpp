// The CUDA backend's runtime: the device, streams, the caching allocator,
// copies between host and device, and the dispatch of primitives to kernels.
//
// Submission is asynchronous: a node's kernel is enqueued on its stream and
// the node is done for the graph; each output buffer notes its write's
// place on the stream's timeline (timeline.h), which consumers on other
// streams wait for on the GPU and host reads wait for on the host, through
// events recorded when such a wait comes. eval() waits for the GPU at its
// end (as MLX's eval); async_eval does not.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "backend/cuda/fast.h"
#include "backend/cuda/quantized.h"
#include "backend/cuda/cuda.h"
#include "backend/cuda/module.h"
#include "backend/cuda/nccl.h"
#include "backend/cuda/timeline.h"

namespace nuvec::cuda {

namespace {

struct DeviceState {
  bool ok = false;
  std::string why;
};

const DeviceState& device() {
  static const DeviceState d = [] {
    DeviceState s;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      s.why = std::string("CUDA: ") + cudaGetErrorString(e);
    } else if (n == 0) {
      s.why = "no CUDA device";
    } else if ((e = cudaSetDevice(0)) != cudaSuccess) {
      s.why = std::string("CUDA: ") + cudaGetErrorString(e);
    } else {
      s.ok = true;
    }
    return s;
  }();
  return d;
}

// Caching allocator: freed blocks are kept by rounded size and reused (the
// driver's allocations are slow and synchronize). Sizes round up to 512 B
// below 1 MiB and to 2 MiB above.
class Allocator {
 public:
  struct Block {
    Allocator* owner;
    size_t size;
    cudaStream_t stream;             // the stream its writer runs on
    Timeline* writer = nullptr;      // that stream's timeline, once written
    uint64_t seq = 0;                // the write's number there
    std::mutex mu;                   // guards mirror and readers
    std::shared_ptr<Data> mirror;    // the host copy, once read on the host
    // Streams other than `stream` that read the buffer, each with an event
    // recorded after its latest reading kernel: the buffer is reused (from
    // the cache of `stream`, or donated) only after those reads.
    std::vector<std::pair<cudaStream_t, cudaEvent_t>> readers;

    // Makes `s` wait for the other streams' reads, and forgets them.
    void order_after_readers(cudaStream_t s) {
      if (!readers.empty()) flush_launches(s);
      for (auto& [rs, ev] : readers) {
        cudaStreamWaitEvent(s, ev, 0);
        put_event(ev);
      }
      readers.clear();
    }
  };

  std::shared_ptr<Data> allocate(size_t nbytes, cudaStream_t stream) {
    size_t size = round(nbytes);
    void* p = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find({stream, size});
      if (it != free_.end() && !it->second.empty()) {
        p = it->second.back();
        it->second.pop_back();
        cached_ -= size;
      } else if (active_ + cached_ + size > limit_) {
        release_cache_locked();
      }
      if (!p && active_ + size > limit_)
        (Error(ErrorKind::out_of_memory, "GPU memory limit reached (" + std::to_string(limit_) + " bytes)")).raise();
      active_ += size;
      peak_ = std::max(peak_, active_);
    }
    if (!p && cudaMalloc(&p, size) != cudaSuccess) {
      cudaGetLastError();
      std::lock_guard<std::mutex> lock(mu_);
      release_cache_locked();
      if (cudaMalloc(&p, size) != cudaSuccess) {
        cudaGetLastError();
        active_ -= size;
        (Error(ErrorKind::out_of_memory, "cudaMalloc of " + std::to_string(size) + " bytes failed")).raise();
      }
    }
    auto d = std::make_shared<Data>();
    d->ptr = p;
    d->nbytes = nbytes;
    d->capacity = size;
    d->device = Device::gpu;
    d->from_allocator = true;
    d->context = new Block{this, size, stream, nullptr, 0, {}, nullptr, {}};
    d->release = [](Data& data) {
      auto* b = static_cast<Block*>(data.context);
      b->order_after_readers(b->stream);  // its next user runs on b->stream
      b->owner->free(data.ptr, b->size, b->stream);
      delete b;
    };
    return d;
  }

  Allocator() {
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) == cudaSuccess) limit_ = cache_limit_ = total;
  }

  void free(void* p, size_t size, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mu_);
    active_ -= size;
    free_[{stream, size}].push_back(p);
    cached_ += size;
    trim_locked();
  }

  Stats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return {active_, peak_, cached_, limit_, cache_limit_};
  }
  void reset_peak() {
    std::lock_guard<std::mutex> lock(mu_);
    peak_ = active_;
  }
  size_t set_limit(size_t bytes, bool cache) {
    std::lock_guard<std::mutex> lock(mu_);
    size_t& l = cache ? cache_limit_ : limit_;
    size_t previous = l;
    l = bytes;
    trim_locked();
    return previous;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    release_cache_locked();
  }

 private:
  static size_t round(size_t n) {
    if (n == 0) n = 1;
    size_t q = n < (1u << 20) ? 512 : (2u << 20);
    return (n + q - 1) / q * q;
  }
  // Frees cached blocks while the cache is over its limit or active plus
  // cached memory is over the memory limit (cudaFree waits for the device,
  // so no kernel still uses them).
  void trim_locked() {
    // Held launches may use them (flush() never throws: free() calls this).
    if (cached_ > cache_limit_ || active_ + cached_ > limit_) flush();
    for (auto it = free_.begin(); it != free_.end() && (cached_ > cache_limit_ || active_ + cached_ > limit_);) {
      auto& ptrs = it->second;
      while (!ptrs.empty() && (cached_ > cache_limit_ || active_ + cached_ > limit_)) {
        cudaFree(ptrs.back());
        ptrs.pop_back();
        cached_ -= it->first.second;
      }
      it = ptrs.empty() ? free_.erase(it) : std::next(it);
    }
  }
  void release_cache_locked() {
    flush();
    cudaDeviceSynchronize();
    for (auto& [size, ptrs] : free_)
      for (void* p : ptrs) cudaFree(p);
    free_.clear();
    cached_ = 0;
  }

  std::mutex mu_;
  std::map<std::pair<cudaStream_t, size_t>, std::vector<void*>> free_;
  size_t active_ = 0, peak_ = 0, cached_ = 0;
  size_t limit_ = ~size_t(0), cache_limit_ = ~size_t(0);
};

Allocator& allocator() {
  static Allocator* a = new Allocator();  // outlives every array
  return *a;
}

cudaStream_t stream_for(Stream s) { return timeline(s).stream; }

Allocator::Block& block_of(const Data& d) { return *static_cast<Allocator::Block*>(d.context); }

// Marks `d` as written by the work enqueued so far on `t`'s stream.
void record(const Data& d, Timeline& t) {
  auto& b = block_of(d);
  b.stream = t.stream;
  b.writer = &t;
  b.seq = t.wrote();
}

// Notes that the work enqueued so far on `s` reads `d` (when `s` is not
// the stream that writes it).
void note_reader(const Data& d, cudaStream_t s) {
  auto& b = block_of(d);
  std::lock_guard<std::mutex> lock(b.mu);
  if (b.stream == s) return;
  cudaEvent_t ev = nullptr;
  for (auto& [rs, e] : b.readers)
    if (rs == s) ev = e;
  if (!ev) {
    ev = get_event();
    b.readers.emplace_back(s, ev);
  }
  flush_launches(s);  // the reading kernel first
  check(cudaEventRecord(ev, s), "cudaEventRecord");
}

// Host-to-device copies go through rings of pinned slots, so that they are
// enqueued without waiting for the stream (a copy from pageable memory
// waits for the stream's earlier work first): small buffers take one slot
// of 64 KiB, larger ones go in chunks of 2 MiB, the host copying the next
// chunk while the DMA moves the last. A slot is reused once its copy is
// done. Where pinned memory cannot be had, copies come from pageable memory.
class PinnedRing {
 public:
  PinnedRing(size_t slot, int slots) : slot_(slot), done_(slots) {
    if (cudaMallocHost(&base_, slot * slots) != cudaSuccess) {
      cudaGetLastError();
      base_ = nullptr;
      return;
    }
    for (auto& e : done_) cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  }
  bool usable() const { return base_ != nullptr; }
  size_t slot() const { return slot_; }

  // Enqueues the copy of n <= slot() bytes on s.
  void copy(char* dst, const char* src, size_t n, cudaStream_t s) {
    int k = next_;
    next_ = (next_ + 1) % static_cast<int>(done_.size());
    check(cudaEventSynchronize(done_[k]), "staging");
    char* p = base_ + k * slot_;
    std::memcpy(p, src, n);
    check(cudaMemcpyAsync(dst, p, n, cudaMemcpyHostToDevice, s), "copy to the GPU");
    check(cudaEventRecord(done_[k], s), "cudaEventRecord");
  }

 private:
  size_t slot_;
  char* base_ = nullptr;
  std::vector<cudaEvent_t> done_;
  int next_ = 0;
};

class Staging {
 public:
  void upload(void* dst, const void* src, size_t n, cudaStream_t s) {
    const bool small = n <= kSmall;
    std::lock_guard<std::mutex> lock(small ? small_mu_ : large_mu_);
    auto& ring = small ? small_ : large_;
    if (!ring) ring = std::make_unique<PinnedRing>(small ? kSmall : kLarge, small ? 64 : 8);
    if (!ring->usable()) {
      check(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, s), "copy to the GPU");
      return;
    }
    for (size_t at = 0; at < n; at += ring->slot())
      ring->copy(static_cast<char*>(dst) + at, static_cast<const char*>(src) + at, std::min(ring->slot(), n - at),
                 s);
  }

 private:
  static constexpr size_t kSmall = 64 << 10, kLarge = 2 << 20;
  std::mutex small_mu_, large_mu_;
  std::unique_ptr<PinnedRing> small_, large_;  // made on first use
};

Staging& staging() {
  static Staging* s = new Staging();  // outlives every array
  return *s;
}

// `a` with its data on the device (uploaded when it lives on the host);
// data written on another stream is waited for on `s`.
Array on_device(const Array& a, cudaStream_t s, Stream st) {
  const auto& d = a.desc();
  if (!d->data) {
    // An empty array may have no buffer: kernels get a valid (unread)
    // device pointer rather than a null one.
    if (a.size() != 0) return a;
    auto copy = std::make_shared<ArrayDesc>(*d);
    copy->node = nullptr;
    copy->data = allocate(0, st);
    return Array(std::move(copy));
  }
  if (d->data->device == Device::gpu) {
    auto& b = block_of(*d->data);
    if (b.writer) b.writer->order_before(s, b.seq);
    return a;
  }
  auto g = allocate(d->data->nbytes, st);
  flush_launches(s);  // a held kernel may still use the reused buffer
  staging().upload(g->ptr, d->data->ptr, d->data->nbytes, s);
  record(*g, timeline(st));
  auto copy = std::make_shared<ArrayDesc>(*d);
  copy->node = nullptr;
  copy->data = std::move(g);
  return Array(std::move(copy));
}

}  // namespace

Array device_array(const Array& a, void* stream, Stream s) {
  return on_device(a, static_cast<cudaStream_t>(stream), s);
}

// The primitives of runtime.cpp's comment in eval (their launchers: fused.cpp,
// matmul.cpp / matmul_rows.cu, fast_rows.cu, fast_rope.cu, fast_attention.cu,
// scatter.cu, quantized.cpp / quantized_mv.cu).
bool keeps_held_launches(PrimitiveId id) {
  switch (id) {
    case PrimitiveId::Fused:
    case PrimitiveId::Matmul:
    case PrimitiveId::RMSNorm:
    case PrimitiveId::AddRMSNorm:
    case PrimitiveId::RoPE:
    case PrimitiveId::Attention:
    case PrimitiveId::Scatter:
    case PrimitiveId::QuantizedMatmul:
      return true;
    default:
      return false;
  }
}

bool host_scalar(const Array& a) {
  const auto& d = a.desc();
  if (!d->data || d->data->device != Device::cpu || a.size() == 0) return false;
  for (auto st : a.strides())
    if (st != 0) return false;
  return true;
}

bool available() { return device().ok; }
std::string unavailable_reason() { return device().why; }

std::shared_ptr<Data> allocate(size_t nbytes, Stream s) {
  if (!available()) (Error(ErrorKind::backend, "the GPU is not available: " + unavailable_reason())).raise();
  return allocator().allocate(nbytes, stream_for(s));
}

// A launch error of a flush at an eval's end (possibly on the async
// worker, which must not throw), thrown by the next synchronize.
namespace {
std::mutex flush_error_mu;
std::exception_ptr flush_error;
}  // namespace

void flush() {
  if (!available()) return;
  try {
    flush_all_launches();
  } catch (...) {
    std::lock_guard<std::mutex> lock(flush_error_mu);
    if (!flush_error) flush_error = std::current_exception();
  }
}

namespace {
void rethrow_flush_error() {
  std::exception_ptr e;
  {
    std::lock_guard<std::mutex> lock(flush_error_mu);
    std::swap(e, flush_error);
  }
  if (e) std::rethrow_exception(e);
}
}  // namespace

void report_async_error(const Error& e) {
  std::lock_guard<std::mutex> lock(flush_error_mu);
  if (!flush_error) flush_error = std::make_exception_ptr(e);
}

void synchronize() {
  if (!available()) return;
  rethrow_flush_error();
  synchronize_timelines();
  rethrow_flush_error();  // one found while waiting (a collective timed out)
}

void wait_written(const Data& d) {
  if (!available()) return;
  rethrow_flush_error();
  auto& b = block_of(d);
  Timeline* writer;
  uint64_t seq;
  cudaStream_t stream;
  {
    std::lock_guard<std::mutex> lock(b.mu);
    writer = b.writer;
    seq = b.seq;
    stream = b.stream;
  }
  if (writer) {
    writer->wait_host(seq);
  } else {
    flush_launches(stream);
    check(cudaStreamSynchronize(stream), "GPU work");
  }
  rethrow_flush_error();
}

Stats stats() { return allocator().stats(); }
void reset_peak() { allocator().reset_peak(); }
size_t set_memory_limit(size_t bytes) { return allocator().set_limit(bytes, false); }
size_t set_cache_limit(size_t bytes) { return allocator().set_limit(bytes, true); }
void clear_cache() { allocator().clear(); }

bool donate(const Data& d, Stream s) {
  auto& b = block_of(d);
  cudaStream_t cs = stream_for(s);
  std::lock_guard<std::mutex> lock(b.mu);
  if (b.stream != cs) return false;  // its writer's later readers are not tracked
  b.order_after_readers(cs);
  b.mirror.reset();  // the bytes change
  return true;
}

std::shared_ptr<Data> to_host(const Data& d) {
  auto* b = static_cast<Allocator::Block*>(d.context);
  std::lock_guard<std::mutex> lock(b->mu);
  if (!b->mirror) {
    if (b->writer) {
      b->writer->wait_host(b->seq);
    } else {
      flush_launches(b->stream);
      check(cudaStreamSynchronize(b->stream), "GPU work");
    }
    auto h = allocate_data(d.nbytes);
    check(cudaMemcpy(h->ptr, d.ptr, d.nbytes, cudaMemcpyDeviceToHost), "copy from the GPU");
    b->mirror = std::move(h);
  }
  return b->mirror;
}

void eval(const Primitive& p, const std::vector<Array>& raw_in, std::vector<Array>& out, Stream s) {
  Timeline& tl = timeline(s);
  cudaStream_t cs = tl.stream;
  PrimitiveId id = p.id();
  // Kernels held back (defer_module_kernel, launch.cuh) go out with the
  // launches after them as one CUDA graph. The primitives whose launchers
  // hold their kernels on the decode path, and flush before enqueueing
  // anything else, keep what the stream holds; the work of any other
  // primitive is enqueued after it.
  const bool keep = keeps_held_launches(id);
  if (!keep) flush_launches(cs);
  const HoldingScope holding(keep);
  // A host operand of a binary op that holds one value (a weak scalar, a
  // 0-d constant) travels to the kernel by value, not as an upload.
  const bool binary = primitive_kind(id) == PrimitiveKind::binary;
  std::vector<Array> in;
  for (size_t k = 0; k < raw_in.size(); ++k) {
    bool by_value = binary && host_scalar(raw_in[k]) && !host_scalar(raw_in[1 - k]);
    // uploaded where read (a scatter's positions only where they are not
    // a block data::scatter writes from the host values)
    bool later = id == PrimitiveId::Fused || id == PrimitiveId::FusedReduce || (id == PrimitiveId::Scatter && k == 1);
    in.push_back(by_value || later ? raw_in[k] : on_device(raw_in[k], cs, s));
  }
  switch (primitive_kind(id)) {
    case PrimitiveKind::unary: launch_unary(id, in[0], out[0], cs); break;
    case PrimitiveKind::binary: launch_binary(id, in[0], in[1], out[0], cs); break;
    default:
      if (id == PrimitiveId::Reduce) {
        launch_reduce(static_cast<const Reduce&>(p), in[0], out[0], cs);
      } else if (id == PrimitiveId::Matmul) {
        launch_matmul(in[0], in[1], out[0], cs, s);
      } else if (id == PrimitiveId::AddMM) {
        launch_addmm(static_cast<const AddMM&>(p), in[0], in[1], in[2], out[0], cs, s);
      } else if (id == PrimitiveId::RandomBits) {
        launch_random_bits(static_cast<const RandomBits&>(p), in[0], out[0], cs);
      } else if (id == PrimitiveId::Arange) {
        // MLX's arange accumulates the step in the dtype, one element after
        // the other: computed on the host (the CPU kernel) and uploaded, so
        // the bits are the CPU's (a documented fallback; arange is small).
        auto hd = std::make_shared<ArrayDesc>(*out[0].desc());
        hd->node = nullptr;
        hd->data = allocate_data(out[0].desc()->data->nbytes);
        std::vector<Array> tmp{Array(hd)};
        backend::eval_cpu(p, {}, tmp);
        check(cudaMemcpyAsync(out[0].desc()->data->ptr, hd->data->ptr, hd->data->nbytes, cudaMemcpyHostToDevice, cs),
              "copy to the GPU");
      } else if (id == PrimitiveId::Fused) {
        launch_fused(static_cast<const Fused&>(p), in, out, cs, s);
      } else if (id == PrimitiveId::FusedReduce) {
        launch_fused_reduce(static_cast<const FusedReduce&>(p), in, out, cs, s);
      } else if (id == PrimitiveId::CudaKernel) {
        launch_cuda_kernel(static_cast<const CudaKernel&>(p), in, out, cs, s);
      } else if (id == PrimitiveId::Select) {
        launch_select(in[0], in[1], in[2], out[0], cs);
      } else if (id == PrimitiveId::AsType || id == PrimitiveId::Copy || id == PrimitiveId::Reshape ||
                 id == PrimitiveId::StopGradient) {
        launch_cast(in[0], out[0], cs);  // a copy in the input's logical order
      } else if (!launch_data(p, in, out, cs, s) && !launch_sort_scan(p, in, out, cs, s) &&
                 !launch_fast(p, in, out, cs, s) && !launch_quantized(p, in, out, cs, s)) {
        (Error(ErrorKind::backend, std::string("no GPU kernel for ") + primitive_name(id) +
                                            " yet (docs/gpu-status.md)")).raise();
      }
  }
  for (auto& o : out)
    if (o.desc()->data && o.desc()->data->device == Device::gpu) {
      record(*o.desc()->data, tl);
      if (keep) note_held_writes(cs, o.desc()->data->ptr, o.desc()->data->nbytes);
    }
  for (const auto& a : raw_in)
    if (a.desc()->data && a.desc()->data->device == Device::gpu) note_reader(*a.desc()->data, cs);
}

}  // namespace nuvec::cuda
