// Helpers of the GPU tests (gpu_test.cpp, gpu_ops_test.cpp): an op run on
// the CPU stream and on the GPU, compared bit for bit or within a
// tolerance; the tests skip where no GPU is present (CI).
#pragma once

#include <gtest/gtest.h>
#include <nuvec/nuvec.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "support/bits.h"

#define NUVEC_GPU_REQUIRED()                        \
  if (!::nuvec::is_available(::nuvec::Device::gpu)) \
  GTEST_SKIP() << "no GPU in this process"

namespace nuvec::testing {

inline const Stream kCpu = default_stream(Device::cpu);

inline const DType kDtypes[] = {float32, float16, bfloat16, float64,  int8,
                                uint8,   int16,   uint16,   int32,    uint32,
                                int64,   uint64,  bool_,    complex64};

/// How many cases were checked (a GPU result against the CPU's, or an
/// expected error): a harness entry that checks nothing is a mistake.
inline int& cases_checked() {
  static int n = 0;
  return n;
}

// f on the CPU stream and on the GPU stream, both evaluated, with the same
// dtype and shape; nothing when the op rejects its arguments (the same rule
// on both devices) or when a check failed (recorded).
inline std::optional<std::pair<Array, Array>> run_both(
    const std::function<Array(StreamOrDevice)>& f, const std::string& what) {
  Array c = f(kCpu);
  if (c.is_failed()) return std::nullopt;
  ++cases_checked();
  Array g = f(Device::gpu);
  if (g.is_failed()) {
    ADD_FAILURE() << what << ": " << g.error()->what();
    return std::nullopt;
  }
  try {
    g.eval();
  } catch (const Error& e) {
    ADD_FAILURE() << what << ": " << e.what();
    return std::nullopt;
  }
  if (!(c.dtype() == g.dtype()) || c.shape() != g.shape()) {
    ADD_FAILURE() << what << ": dtype or shape differs from the CPU's";
    return std::nullopt;
  }
  return std::make_pair(c, g);
}

// The GPU gives the CPU's bits.
inline void expect_same(const std::function<Array(StreamOrDevice)>& f,
                        const std::string& what) {
  if (auto r = run_both(f, what)) {
    EXPECT_EQ(bits_of(r->first), bits_of(r->second)) << what;
  }
}

// Evaluating `x` fails with a message that contains `text`.
inline void expect_eval_error(const Array& x, const std::string& text) {
  ++cases_checked();
  try {
    x.eval();
    ADD_FAILURE() << "evaluated, expected an error with: " << text;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

// Close within tolerances for floating results (another summation order);
// bit for bit otherwise; and the GPU result is the same when run again.
inline void expect_close(const std::function<Array(StreamOrDevice)>& f,
                         double rtol, const std::string& what) {
  auto r = run_both(f, what);
  if (!r) return;
  const auto& [c, g] = *r;
  EXPECT_EQ(bits_of(g), bits_of(f(Device::gpu)))
      << what << ": not deterministic";
  DType wide = c.dtype() == complex64 ? complex64 : float64;
  if (is_inexact(c.dtype()))
    EXPECT_TRUE(ops::allclose(ops::astype(c, wide, kCpu),
                              ops::astype(g, wide, kCpu), rtol, rtol, true,
                              kCpu)
                    .item<bool>())
        << what;
  else
    EXPECT_EQ(bits_of(c), bits_of(g)) << what;
}

inline double tolerance(DType d) {
  return d == float64 ? 1e-12 : (d == float16 || d == bfloat16) ? 2e-2 : 1e-4;
}

}  // namespace nuvec::testing
