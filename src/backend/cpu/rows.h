// Rows of the last axis of a strided array, for the fast kernels: where row
// r starts, its stride, conversion into a dense row of the accumulation type
// and the parallel split over rows (fixed blocks, so a row's bits never
// depend on the batch or the thread count).
#pragma once

#include <cstdint>
#include <vector>

#include "backend/cpu/cpu.h"
#include "backend/cpu/loops.h"
#include "nuvec/kernels/cast.h"

namespace nuvec::cpu {

/// Rows of `a`'s last axis in row-major order of the leading axes.
class Rows {
 public:
  explicit Rows(const Array& a) : n_(a.ndim() ? a.shape().back() : 1) {
    for (int d = 0; d + 1 < a.ndim(); ++d) {
      lead_shape_.push_back(a.shape()[d]);
      lead_strides_.push_back(a.strides()[d]);
    }
    stride_ = a.ndim() ? a.strides().back() : 1;
    count_ = 1;
    for (int64_t s : lead_shape_) count_ *= s;
    offset_ = a.desc()->offset;
  }
  int64_t count() const { return count_; }
  int64_t length() const { return n_; }
  int64_t stride() const { return stride_; }
  /// Element offset of row r's first element from the buffer's start.
  int64_t start(int64_t r) const {
    int64_t off = offset_;
    for (int d = static_cast<int>(lead_shape_.size()) - 1; d >= 0; --d) {
      off += (r % lead_shape_[d]) * lead_strides_[d];
      r /= lead_shape_[d];
    }
    return off;
  }

 private:
  int64_t n_, stride_, count_, offset_;
  std::vector<int64_t> lead_shape_, lead_strides_;
};

/// The buffer of `a` from its start (offsets from Rows::start index it).
template <class T>
const T* base(const Array& a) {
  return static_cast<const T*>(a.desc()->data->ptr);
}

/// Row r of `a` (type T) converted into dst[0, n).
template <class A, class T>
void load_row(const Array& a, const Rows& rows, int64_t r, A* dst) {
  const T* src = base<T>(a) + rows.start(r);
  const int64_t n = rows.length(), st = rows.stride();
  kernels::Cast<A> cast;
  if (st == 1)
    NUVEC_INDEPENDENT_ITERATIONS
    for (int64_t i = 0; i < n; ++i) dst[i] = cast(src[i]);
  else
    for (int64_t i = 0; i < n; ++i) dst[i] = cast(src[i * st]);
}

/// fn(r0, r1) over blocks of rows; a block holds about kGrain elements.
template <class F>
void for_row_blocks(int64_t rows, int64_t n, F&& fn) {
  long long grain = n >= kGrain ? 1 : kGrain / (n > 0 ? n : 1);
  parallel_for(rows, grain, [&](long long r0, long long r1) { fn(int64_t(r0), int64_t(r1)); });
}

/// Calls f(tag) with tag::type the C++ type of floating dtype d.
template <class F>
void dispatch_floating(DType d, F&& f) {
  dispatch_dtype(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || kernels::is_half_v<T>) f(tag);
  });
}

}  // namespace nuvec::cpu
