// The quantization primitives on the GPU (quantized.cpp and quantized*.cu;
// docs/quantization.md "Kernels"). Included by runtime.cpp only.
#pragma once

#include <vector>

#include "nuvec/core/graph.h"

namespace nuvec::cuda {

/// Runs Quantize, Dequantize, QuantizedMatmul, GatherMM or GatherQMM
/// (inputs device-resident, outputs dense device buffers already
/// allocated); false for other primitives.
bool launch_quantized(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out,
                      void* stream, Stream s);

}  // namespace nuvec::cuda
