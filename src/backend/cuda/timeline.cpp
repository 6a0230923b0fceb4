// Timelines of the CUDA streams (timeline.h) and the pool of events.
#include "backend/cuda/timeline.h"

#include <unordered_map>
#include <vector>

#include "backend/cuda/module.h"

namespace nuvec::cuda {

namespace {

class EventPool {
 public:
  cudaEvent_t get() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        cudaEvent_t e = free_.back();
        free_.pop_back();
        return e;
      }
    }
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    return e;
  }
  void put(cudaEvent_t e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (free_.size() < kKeep) {
        free_.push_back(e);
        return;
      }
    }
    cudaEventDestroy(e);  // released once it completes
  }

 private:
  static constexpr size_t kKeep = 4096;
  std::mutex mu_;
  std::vector<cudaEvent_t> free_;
};

EventPool& events() {
  static EventPool* p = new EventPool();  // outlives every array
  return *p;
}

struct Timelines {
  std::mutex mu;
  std::unordered_map<int, Timeline*> by_index;  // never freed: arrays may outlive main
};

Timelines& timelines() {
  static Timelines* t = new Timelines();
  return *t;
}

// Once a timeline holds this many events, recording another first returns
// the complete ones (oldest first) to the pool.
constexpr size_t kMarks = 64;

// Whether event e has completed (without leaving cudaErrorNotReady as the
// thread's last error, which a later launch check would read).
bool complete(cudaEvent_t e) {
  cudaError_t q = cudaEventQuery(e);
  if (q == cudaErrorNotReady && cudaPeekAtLastError() == cudaErrorNotReady) cudaGetLastError();
  return q == cudaSuccess;
}

}  // namespace

cudaEvent_t get_event() { return events().get(); }
void put_event(cudaEvent_t e) { events().put(e); }

void Timeline::prune_locked() {
  while (!marks_.empty() && (marks_.front().first <= done_ || complete(marks_.front().second))) {
    if (marks_.front().first > done_) done_ = marks_.front().first;
    events().put(marks_.front().second);
    marks_.pop_front();
  }
}

std::pair<cudaEvent_t, uint64_t> Timeline::mark_locked(uint64_t seq) {
  if (seq <= done_) return {nullptr, done_};
  for (const auto& [last, e] : marks_)
    if (last >= seq) return {e, last};
  if (marks_.size() >= kMarks) prune_locked();
  // Writes numbered up to `now` were enqueued before this record.
  const uint64_t now = enqueued();
  flush_launches(stream);  // the writes numbered so far are enqueued first
  cudaEvent_t e = events().get();
  check(cudaEventRecord(e, stream), "cudaEventRecord");
  marks_.emplace_back(now, e);
  return {e, now};
}

void Timeline::order_before(cudaStream_t other, uint64_t seq) {
  if (other == stream) return;
  std::lock_guard<std::mutex> lock(mu_);
  cudaEvent_t e = mark_locked(seq).first;
  if (!e) return;
  flush_launches(other);
  check(cudaStreamWaitEvent(other, e, 0), "cudaStreamWaitEvent");
}

void Timeline::wait_host(uint64_t seq) {
  // The lock is held while waiting, so that the event is not handed out
  // again meanwhile (only waits on this timeline queue behind it; writes
  // on it do not take the lock).
  std::lock_guard<std::mutex> lock(mu_);
  auto [e, last] = mark_locked(seq);
  if (!e) return;
  check(cudaEventSynchronize(e), "GPU work");
  if (last > done_) done_ = last;
  prune_locked();
}

void Timeline::completed(uint64_t upto) {
  std::lock_guard<std::mutex> lock(mu_);
  if (upto > done_) done_ = upto;
  prune_locked();
}

Timeline& timeline(Stream s) {
  Timelines& t = timelines();
  std::lock_guard<std::mutex> lock(t.mu);
  Timeline*& tl = t.by_index[s.index];
  if (!tl) {
    cudaStream_t cs = nullptr;
    check(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking), "cudaStreamCreate");
    tl = new Timeline(cs);
  }
  return *tl;
}

void synchronize_timelines() {
  std::vector<std::pair<Timeline*, uint64_t>> upto;
  {
    Timelines& t = timelines();
    std::lock_guard<std::mutex> lock(t.mu);
    for (auto& [index, tl] : t.by_index) upto.emplace_back(tl, tl->enqueued());
  }
  flush_all_launches();
  check(cudaDeviceSynchronize(), "GPU work");
  for (auto& [tl, n] : upto) tl->completed(n);
}

}  // namespace nuvec::cuda
