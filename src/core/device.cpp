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

namespace {
// As MLX: asking for a GPU stream without a GPU throws std::invalid_argument
// (ops given one fail instead: ops/builder.cpp).
void require(Device d, const char* who) {
  if (!is_available(d))
    Error(ErrorKind::invalid_argument,
          std::string("the GPU is not available: ") + backend::gpu_unavailable_reason(),
          std::string(who))
        .raise();
}
}  // namespace

void set_default_device(Device d) {
  require(d, "set_default_device");
  global_default_device() = d;
  thread_default_stream.reset();
}

Stream default_stream(Device d) {
  require(d, "default_stream");
  return Stream(0, d);
}

Stream default_stream() {
  if (thread_default_stream) return *thread_default_stream;
  return default_stream(default_device());
}

void set_default_stream(Stream s) {
  require(s.device, "set_default_stream");
  thread_default_stream = s;
}

Stream new_stream(Device d) {
  require(d, "new_stream");
  return Stream(next_stream_index++, d);
}

Stream to_stream(const StreamOrDevice& s) {
  if (auto* st = std::get_if<Stream>(&s)) {
    require(st->device, "stream");
    return *st;
  }
  if (auto* d = std::get_if<Device>(&s)) return default_stream(*d);
  return default_stream();
}

Stream detail::resolve_stream(const StreamOrDevice& s) {
  if (auto* st = std::get_if<Stream>(&s)) return *st;
  if (auto* d = std::get_if<Device>(&s)) return Stream(0, *d);
  if (thread_default_stream) return *thread_default_stream;
  return Stream(0, default_device());
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

StreamContext::StreamContext(StreamOrDevice s) : previous_(thread_default_stream) {
  thread_default_stream = to_stream(s);
}
StreamContext::~StreamContext() { thread_default_stream = previous_; }

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
