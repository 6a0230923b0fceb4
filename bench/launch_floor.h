// The CUDA runtime's floor for a small kernel (launch_floor.cu), for the
// replay table of gpu_compile_bench.
#pragma once

#include <vector>

struct FloorRow {
  const char* what;
  double us;  // per call, median of five runs of 2000 calls
};

/// Launch costs of a 16-element kernel through the CUDA runtime alone
/// (empty when the device refuses a step).
std::vector<FloorRow> launch_floor();
