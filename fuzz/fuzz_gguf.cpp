// libFuzzer target: any bytes as a GGUF file give arrays and metadata or an
// io error, never a crash, a leak, a huge allocation or a read outside the
// input (an exact-size heap copy, as in fuzz_safetensors.cpp).
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "io/gguf_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nuvec;
  auto bytes = io::detail::Mapping::copy_of(data, size);
  fuzz::expect_io_or_success([&] {
    auto [arrays, meta] = io::detail::parse_gguf(bytes, "<fuzz>");
    for (const auto& [name, a] : arrays) fuzz::touch(a);
    for (const auto& [key, v] : meta)
      if (const auto* a = std::get_if<Array>(&v)) fuzz::touch(*a);
  });
  return 0;
}
