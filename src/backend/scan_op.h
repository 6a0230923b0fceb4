// The arithmetic of the scans, shared by the CPU kernel (cpu/scan.cpp) and
// the GPU's (cuda/scan.cu) so that both give the same bits: the combining
// functor of each scan type and the value an exclusive scan starts from.
#pragma once

#include <limits>

#include "nuvec/kernels/functors.h"
#include "nuvec/primitives/sort.h"

namespace nuvec::backend {

template <Scan::Type type>
struct ScanOp {
  template <class U>
  NUVEC_KERNEL_INLINE U operator()(U a, U b) const {
    using ST = Scan::Type;
    if constexpr (type == ST::sum) return kernels::Add{}(a, b);
    else if constexpr (type == ST::prod) return kernels::Multiply{}(a, b);
    else if constexpr (type == ST::max) return kernels::Maximum{}(a, b);
    else if constexpr (type == ST::min) return kernels::Minimum{}(a, b);
    else return kernels::LogAddExp{}(a, b);
  }
};

/// The value an exclusive scan starts from (complex: both parts, as MLX).
template <Scan::Type type, class U>
U scan_init() {
  using ST = Scan::Type;
  constexpr double inf = std::numeric_limits<double>::infinity();
  if constexpr (type == ST::sum) return kernels::Cast<U>{}(0);
  else if constexpr (type == ST::prod) return kernels::Cast<U>{}(1);
  else if constexpr (type == ST::logaddexp) return kernels::Cast<U>{}(-inf);
  else if constexpr (kernels::is_complex_v<U>) {
    U r;
    r.re = r.im = float(type == ST::max ? -inf : inf);
    return r;
  } else if constexpr (kernels::is_bool_v<U>) return type == ST::min;
  else if constexpr (kernels::is_int_v<U>)
    return type == ST::max ? std::numeric_limits<U>::lowest() : std::numeric_limits<U>::max();
  else return kernels::Cast<U>{}(type == ST::max ? -inf : inf);
}

}  // namespace nuvec::backend
