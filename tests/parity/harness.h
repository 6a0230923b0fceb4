// The macros of the parity cases (tests/parity/cases_*.inc). An includer
// first makes `NS` name its library's namespace (mlx::core or nuvec) and
// declares `parity::Value V(const T&)` for the result types the cases
// return (arrays, vectors and pairs of arrays, shapes, dtypes, numbers);
// then it includes the case files, each defining `void group_<name>(Sink&)`.
//
// A case is written in MLX's C++ idiom, so that it compiles against MLX as
// it is and means the same in nuvec:
//   CASE(arange_double, arange(10.5))
//   BEGIN_CASE(normal_with_key)
//     auto k = random::key(1);
//     return V(random::normal({4}, float32, k));
//   END_CASE
// CASE_NEAR(name, tol, expr) compares floating elements within tol * max(1,
// |reference|) instead of exactly (for results MLX computes with its own
// rounding, such as LAPACK or libm).
#pragma once

#include <functional>
#include <string>

#include "parity/value.h"

namespace parity {

class Sink {
 public:
  virtual ~Sink() = default;
  /// Records (or checks) the result of one case; tol 0 means exact.
  virtual void put(const char* name, double tol,
                   const std::function<Value()>& f) = 0;
};

}  // namespace parity

#define PARITY_GROUP(g) \
  inline void group_##g(::parity::Sink& sink) { \
    (void)sink;                                 \
    using namespace NS;
#define PARITY_GROUP_END }
#define CASE(name, ...) \
  sink.put(#name, 0.0, [&]() -> ::parity::Value { return V(__VA_ARGS__); });
#define CASE_NEAR(name, tol, ...) \
  sink.put(#name, tol, [&]() -> ::parity::Value { return V(__VA_ARGS__); });
#define BEGIN_CASE(name) sink.put(#name, 0.0, [&]() -> ::parity::Value {
#define BEGIN_CASE_NEAR(name, tol) sink.put(#name, tol, [&]() -> ::parity::Value {
#define END_CASE });

// The groups, in the order of the reference file: X(name) per case file
// tests/parity/cases_<name>.inc.
#define PARITY_GROUPS(X) \
  X(traps)               \
  X(creation)            \
  X(shape)               \
  X(indexing)            \
  X(math)                \
  X(random)              \
  X(dtypes)              \
  X(linalg)              \
  X(transforms)          \
  X(io)                  \
  X(errors)              \
  X(fast)
