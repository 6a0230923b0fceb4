// Memory statistics and limits per device (memory.h): the CPU allocator's
// functions, or the GPU backend's caching allocator.
#include "nuvec/core/memory.h"

#include "backend/backend.h"

namespace nuvec {

size_t get_active_memory(Device d) {
  return d == Device::cpu ? get_active_memory() : backend::gpu_memory().active;
}
size_t get_peak_memory(Device d) { return d == Device::cpu ? get_peak_memory() : backend::gpu_memory().peak; }
void reset_peak_memory(Device d) {
  if (d == Device::cpu) reset_peak_memory();
  else backend::gpu_reset_peak_memory();
}
size_t get_cache_memory(Device d) {
  return d == Device::cpu ? get_cache_memory() : backend::gpu_memory().cached;
}
size_t set_memory_limit(size_t limit, Device d) {
  return d == Device::cpu ? set_memory_limit(limit) : backend::gpu_set_limit(limit, false);
}
size_t get_memory_limit(Device d) {
  return d == Device::cpu ? get_memory_limit() : backend::gpu_memory().limit;
}
size_t set_cache_limit(size_t limit, Device d) {
  return d == Device::cpu ? set_cache_limit(limit) : backend::gpu_set_limit(limit, true);
}
void clear_cache(Device d) {
  if (d == Device::cpu) clear_cache();
  else backend::gpu_clear_cache();
}

}  // namespace nuvec
