// The arithmetic of each reduction, shared by the CPU and CUDA kernels: the
// accumulator type, the combining step and the value of an empty reduction.
#pragma once

#include <type_traits>

#include "nuvec/kernels/functors.h"
#include "nuvec/primitives/reduce.h"

namespace nuvec::backend {

/// float for 16-bit float outputs; otherwise the output type (integer sums
/// and products wrap in it).
template <class In, class Out>
using reduce_acc_t = std::conditional_t<kernels::is_half_v<Out>, float, Out>;

template <Reduce::Type type, class A>
NUVEC_KERNEL_INLINE A reduce_combine(A a, A b) {
  using RT = Reduce::Type;
  if constexpr (type == RT::sum) return kernels::Add{}(a, b);
  else if constexpr (type == RT::prod) return kernels::Multiply{}(a, b);
  else if constexpr (type == RT::max) return kernels::Maximum{}(a, b);
  else if constexpr (type == RT::min) return kernels::Minimum{}(a, b);
  else if constexpr (type == RT::all) return A(a && b);
  else return A(a || b);
}

/// The result over no elements: 1 for prod and all, 0 otherwise (max and
/// min of nothing are rejected by the primitive's rule).
template <Reduce::Type type, class A>
NUVEC_KERNEL_INLINE A reduce_empty() {
  if constexpr (type == Reduce::Type::prod || type == Reduce::Type::all) return A(1);
  else return A(0);
}

}  // namespace nuvec::backend
