// libFuzzer target: any bytes as a safetensors file give arrays or an io
// error, never a crash, a leak or a read outside the input. The input is
// copied to an exact-size heap buffer (io::detail::Mapping::copy_of), where
// AddressSanitizer catches overreads that a file mapping would hide.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "io/loaders.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nuvec;
  auto bytes = io::detail::Mapping::copy_of(data, size);
  fuzz::expect_io_or_success([&] {
    auto file = io::detail::parse_safetensors(bytes, "load_safetensors",
                                              "<fuzz>", true);
    for (const auto& [name, a] : file.arrays) fuzz::touch(a);
  });
  return 0;
}
