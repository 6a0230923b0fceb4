// C++ source of the CPU kernels of fused regions (DESIGN.md sections 5, 10).
#pragma once

#include <string>
#include <vector>

#include "nuvec/primitives/fused.h"

namespace nuvec::compiler {

struct EmitRegion {
  const Fused* fused;
  std::vector<DType> input_dtypes;
};

/// The kernels of `regions` as C++ to append to the functor header: region
/// i becomes `nuvec_k<i>_contig` and `nuvec_k<i>_strided` (the signatures
/// of FusedCpuKernel). Each value is held in its own dtype and computed by
/// the functor the eager kernel calls, so the bits are the eager ones.
std::string emit_cpu_kernels(const std::vector<EmitRegion>& regions);

/// The C++ type generated code uses for `d` (kernels' names).
const char* cpp_type(DType d);

}  // namespace nuvec::compiler
