// GPU kernels of the unary primitives (elementwise.cuh).
#include "backend/cuda/elementwise.cuh"

namespace nuvec::cuda {

using namespace ew;

void launch_unary(PrimitiveId id, const Array& in, Array& out, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  switch (id) {
#define NUVEC_CASE(Name, rule)           \
  case PrimitiveId::Name:                \
    return unary<PrimitiveId::Name>(in, out, s);
    NUVEC_UNARY_PRIMITIVES(NUVEC_CASE)
#undef NUVEC_CASE
    default: (Error(ErrorKind::internal, "launch_unary: not a unary primitive")).raise();
  }
}

}  // namespace nuvec::cuda
