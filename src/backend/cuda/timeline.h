// The order of the work on each CUDA stream (runtime.cpp's bookkeeping):
// which buffer writes a reader must wait for, with CUDA events recorded
// only when someone waits (a kernel on another stream, or the host).
//
// Each write enqueued on a stream takes the next number of its timeline
// (after its kernel was enqueued). A wait for write k finds an event
// already recorded after it, or records one now (which covers every write
// enqueued so far: a kernel on another stream may then wait a little
// longer than it must, never less). Writes known to be complete (an event
// seen complete, or the device synchronized) need no wait at all, so a
// program that reads its results after eval() records no events (an event
// recorded after every kernel cost about 0.2 us of host time each on the
// H200: bench/launch_floor.cu, 3.27-3.30 us a launch back to back, 3.48-3.52
// with a record).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <utility>

#include "nuvec/core/device.h"

namespace nuvec::cuda {

/// An event from a pool (created once, reused: creating and destroying one
/// per buffer cost a driver call each). put_event may be given an event a
/// stream still waits on: that wait keeps the recording it saw.
cudaEvent_t get_event();
void put_event(cudaEvent_t e);

class Timeline {
 public:
  explicit Timeline(cudaStream_t s) : stream(s) {}
  const cudaStream_t stream;

  /// The number of a write just enqueued on `stream`.
  uint64_t wrote() { return enqueued_.fetch_add(1, std::memory_order_acq_rel) + 1; }
  /// Writes enqueued so far.
  uint64_t enqueued() const { return enqueued_.load(std::memory_order_acquire); }
  /// Makes `other` wait (on the GPU) for write `seq` of this timeline.
  void order_before(cudaStream_t other, uint64_t seq);
  /// Waits on the host for write `seq`.
  void wait_host(uint64_t seq);
  /// Notes that writes up to `upto` are complete (the device synchronized).
  void completed(uint64_t upto);

 private:
  // An event recorded after write `seq` (or nullptr when it is known
  // complete), and the last write it covers; with mu_ held.
  std::pair<cudaEvent_t, uint64_t> mark_locked(uint64_t seq);
  void prune_locked();

  std::mutex mu_;
  std::atomic<uint64_t> enqueued_{0};
  uint64_t done_ = 0;                                    // writes known complete
  std::deque<std::pair<uint64_t, cudaEvent_t>> marks_;  // (last write covered, event), in order
};

/// The timeline (and CUDA stream) of a nuvec GPU stream, created on first use.
Timeline& timeline(Stream s);
/// Waits for all the device's work; every write enqueued before is then complete.
void synchronize_timelines();

}  // namespace nuvec::cuda
