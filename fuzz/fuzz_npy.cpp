// libFuzzer target: any bytes as an npy file give an array or an io error,
// never a crash, a leak or a read outside the input (an exact-size heap copy,
// as in fuzz_safetensors.cpp).
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "io/loaders.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nuvec;
  auto bytes = io::detail::Mapping::copy_of(data, size);
  fuzz::expect_io_or_success(
      [&] { fuzz::touch(io::detail::parse_npy(bytes, "<fuzz>")); });
  return 0;
}
