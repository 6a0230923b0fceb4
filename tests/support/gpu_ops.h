// The cross-backend harness over the primitive registry
// (tests/gpu_ops_test.cpp): its input helpers and one check per primitive,
// declared from the registry's X-macros (a check missing for a primitive is
// a build error). Checks are defined in gpu_ops_test.cpp (element-wise,
// copies and views) and support/gpu_ops_cases.cpp (the others).
#pragma once

#include <nuvec/nuvec.h>

#include <functional>
#include <string>
#include <vector>

#include "support/gpu.h"

namespace nuvec::testing::gpu_ops {

inline std::string name(DType d) { return std::string(dtype_name(d)); }

inline Array values(DType dt, const Shape& s, int seed) {
  Array x = random::normal(s, random::key(seed)) * 3.0f;
  return dt == bool_ ? x > 0.0f : x.astype(dt);
}

struct Input {
  std::string layout;
  Array x;
};

// The same shape [6, 32] in four layouts.
inline std::vector<Input> layouts(DType dt, int seed) {
  return {{"dense", values(dt, {6, 32}, seed)},
          {"transposed", ops::transpose(values(dt, {32, 6}, seed + 1))},
          {"broadcast", ops::broadcast_to(values(dt, {32}, seed + 2), {6, 32})},
          {"sliced", ops::slice(values(dt, {12, 64}, seed + 3), {0, 1},
                                {12, 64}, {2, 2})}};
}

// f built on stream s through APIs that take the thread's default stream.
inline Array on(StreamOrDevice s, const std::function<Array()>& f) {
  Array r;
  with_stream(s, [&] { r = f(); });
  return r;
}

#define NUVEC_DECLARE_CHECK(Name, trait) void check_##Name();
NUVEC_UNARY_PRIMITIVES(NUVEC_DECLARE_CHECK)
NUVEC_BINARY_PRIMITIVES(NUVEC_DECLARE_CHECK)
NUVEC_OTHER_PRIMITIVES(NUVEC_DECLARE_CHECK)
#undef NUVEC_DECLARE_CHECK

}  // namespace nuvec::testing::gpu_ops
