// GPU kernels of the binary primitives (elementwise.cuh).
#include "backend/cuda/elementwise.cuh"

namespace nuvec::cuda {

using namespace ew;

void launch_binary(PrimitiveId id, const Array& a, const Array& b, Array& out, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  switch (id) {
#define NUVEC_CASE(Name, rule)           \
  case PrimitiveId::Name:                \
    return binary<PrimitiveId::Name>(a, b, out, s);
    NUVEC_BINARY_PRIMITIVES(NUVEC_CASE)
#undef NUVEC_CASE
    default: (Error(ErrorKind::internal, "launch_binary: not a binary primitive")).raise();
  }
}

}  // namespace nuvec::cuda
