// For tests of CPU mechanisms (the CPU JIT, buffer donation, the CPU
// allocator's limit, zero-copy loading, LAPACK): the default device is the
// CPU while one lives, whatever NUVEC_DEFAULT_DEVICE says.
#pragma once

#include <nuvec/nuvec.h>

namespace nuvec::testing {

class CpuDefault {
 public:
  CpuDefault() : saved_(default_device()) { set_default_device(Device::cpu); }
  ~CpuDefault() { set_default_device(saved_); }
  CpuDefault(const CpuDefault&) = delete;
  CpuDefault& operator=(const CpuDefault&) = delete;

 private:
  Device saved_;
};

}  // namespace nuvec::testing
