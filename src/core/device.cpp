#include "nuvec/core/device.h"

#include <atomic>
#include <cstdlib>
#include <string>
#include <optional>

#include "backend/backend.h"
#include "nuvec/core/error.h"

namespace nuvec {

namespace {

std::atomic<int> next_stream_index{1};
Device& global_default_device() {
  // The GPU when one is available (as MLX), the CPU otherwise;
  // NUVEC_DEFAULT_DEVICE=cpu keeps the CPU (docs/gpu-status.md).
  static Device d = [] {
    const char* v = std::getenv("NUVEC_DEFAULT_DEVICE");
    bool cpu = v && std::string(v) == "cpu";
    return !cpu && backend::gpu_available() ? Device(Device::gpu) : Device(Device::cpu);
  }();
  return d;
}
thread_local std::optional<Stream> thread_default_stream;
std::atomic<bool> tf32{[] {
  const char* v = std::getenv("NUVEC_MATMUL_TF32");
  return v && std::string(v) == "1";
}()};

}  // namespace

bool is_available(Device d) {
  return d.type == Device::cpu || (d.index == 0 && backend::gpu_available());
}

Device default_device() { return global_default_device(); }

void set_default_device(Device d) {
  if (!is_available(d))
    throw Error(ErrorKind::backend,
                "[set_default_device] the GPU is not available: " + backend::gpu_unavailable_reason());
  global_default_device() = d;
  thread_default_stream.reset();
}

Stream default_stream(Device d) { return Stream(0, d); }

Stream default_stream() {
  if (thread_default_stream) return *thread_default_stream;
  return default_stream(default_device());
}

void set_default_stream(Stream s) { thread_default_stream = s; }

Stream new_stream(Device d) { return Stream(next_stream_index++, d); }

Stream to_stream(const StreamOrDevice& s) {
  if (auto* st = std::get_if<Stream>(&s)) return *st;
  if (auto* d = std::get_if<Device>(&s)) return default_stream(*d);
  return default_stream();
}

void with_stream(const StreamOrDevice& s, const std::function<void()>& f) {
  auto saved = thread_default_stream;
  struct Restore {
    std::optional<Stream>& slot;
    std::optional<Stream> value;
    ~Restore() { slot = value; }
  } restore{thread_default_stream, saved};
  thread_default_stream = to_stream(s);
  f();
}

void set_matmul_tf32(bool on) { tf32 = on; }
bool matmul_tf32() { return tf32; }

std::ostream& operator<<(std::ostream& os, Device d) {
  return os << "Device(" << (d.type == Device::cpu ? "cpu" : "gpu") << ", "
            << d.index << ")";
}

std::ostream& operator<<(std::ostream& os, Stream s) {
  return os << "Stream(" << s.device << ", " << s.index << ")";
}

}  // namespace nuvec
