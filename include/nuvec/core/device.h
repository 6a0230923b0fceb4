// Devices and streams. The CPU exists always; the GPU when the CUDA backend is
// built and a device is present.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <variant>

namespace nuvec {

/// A processor that executes array operations.
struct Device {
  enum class DeviceType { cpu, gpu };
  static constexpr DeviceType cpu = DeviceType::cpu;
  static constexpr DeviceType gpu = DeviceType::gpu;

  DeviceType type;
  int index = 0;
  constexpr Device(DeviceType t, int i = 0) : type(t), index(i) {}
  friend constexpr bool operator==(Device a, Device b) {
    return a.type == b.type && a.index == b.index;
  }
};

/// An ordered queue of operations on a device.
struct Stream {
  int index;
  Device device;
  constexpr Stream(int i, Device d) : index(i), device(d) {}
  friend constexpr bool operator==(Stream a, Stream b) {
    return a.index == b.index && a.device == b.device;
  }
};

/// Where an operation runs: the thread's default stream (empty), a stream,
/// or a device (its default stream).
using StreamOrDevice = std::variant<std::monostate, Stream, Device>;

/// Whether a device of this type can run operations in this process. As in
/// MLX, asking for a stream of a device that is not available (the GPU
/// without one) throws std::invalid_argument (nuvec::Error): default_stream,
/// new_stream, to_stream, set_default_stream, set_default_device,
/// with_stream, StreamContext. An operation given such a stream or device
/// builds its graph (graphs for the GPU can be built and transformed on any
/// machine) and fails when evaluated.
bool is_available(Device d);
/// The default device: the GPU when one is present, else the CPU.
Device default_device();
void set_default_device(Device d);
/// The default stream of device `d`.
Stream default_stream(Device d);
/// The stream new operations on this thread are recorded on.
Stream default_stream();
/// Sets the stream new operations on this thread are recorded on.
void set_default_stream(Stream s);
/// A new stream on device `d`.
Stream new_stream(Device d);
/// Resolves an operation's stream argument.
Stream to_stream(const StreamOrDevice& s);
namespace detail {
/// to_stream without the availability check (what operations record).
Stream resolve_stream(const StreamOrDevice& s);
}  // namespace detail
/// Runs `f` with `s` as this thread's default stream, restoring the previous
/// default afterwards (also when `f` throws).
void with_stream(const StreamOrDevice& s, const std::function<void()>& f);

/// MLX's StreamContext: `s` is this thread's default stream while the
/// context lives; the previous default comes back when it is destroyed.
class StreamContext {
 public:
  explicit StreamContext(StreamOrDevice s);
  ~StreamContext();
  StreamContext(const StreamContext&) = delete;
  StreamContext& operator=(const StreamContext&) = delete;

 private:
  std::optional<Stream> previous_;
};

/// float32 matrix products on the GPU through TF32 tensor cores: faster,
/// with operands rounded to 10 bits of mantissa. Off by default (float32
/// products float32-accurate); NUVEC_MATMUL_TF32=1 in the environment sets
/// the initial value. Read when a product runs; the CPU ignores it.
void set_matmul_tf32(bool on);
bool matmul_tf32();

std::ostream& operator<<(std::ostream& os, Device d);
std::ostream& operator<<(std::ostream& os, Stream s);

}  // namespace nuvec
