// Loops over arrays with strides: dimensions that are contiguous for every
// operand are merged, then rows of the last dimension run in an inner loop
// the compiler vectorizes. Work is split over the thread pool by rows.
#pragma once

#include <array>
#include <cstdint>

#include "core/thread_pool.h"
#include "nuvec/core/graph.h"

namespace nuvec::cpu {

/// Elements per parallel block (large enough to amortise the dispatch).
inline constexpr long long kGrain = 1 << 15;

template <size_t N>
struct Layout {
  std::vector<int64_t> shape;  // merged dimensions can pass 2^31
  std::array<Strides, N> strides;
};

/// Merges dimensions that are contiguous in every operand and drops size-1
/// dimensions (their stride does not matter). An empty array collapses to
/// one dimension of size 0 (its other dimensions may multiply past int64).
template <size_t N>
Layout<N> collapse(const Shape& shape, const std::array<const Strides*, N>& strides) {
  Layout<N> out;
  for (int d : shape) {
    if (d != 0) continue;
    out.shape.push_back(0);
    for (size_t k = 0; k < N; ++k) out.strides[k].push_back(0);
    return out;
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !out.shape.empty();
    for (size_t k = 0; k < N && merge; ++k)
      merge = out.strides[k].back() == (*strides[k])[d] * shape[d];
    if (merge) {
      out.shape.back() *= shape[d];
      for (size_t k = 0; k < N; ++k) out.strides[k].back() = (*strides[k])[d];
    } else {
      out.shape.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k) out.strides[k].push_back((*strides[k])[d]);
    }
  }
  if (out.shape.empty()) {
    out.shape.push_back(1);
    for (size_t k = 0; k < N; ++k) out.strides[k].push_back(0);
  }
  return out;
}

/// Calls row(offsets, count, inner_strides) for each row of the collapsed
/// layout, offsets being element offsets of each operand, in parallel blocks.
template <size_t N, class Row>
void for_each_row(const Layout<N>& l, Row&& row) {
  for (int64_t d : l.shape)
    if (d == 0) return;  // an empty array has no rows
  int nd = static_cast<int>(l.shape.size());
  int64_t inner = l.shape[nd - 1];
  int64_t rows = 1;
  for (int d = 0; d < nd - 1; ++d) rows *= l.shape[d];
  std::array<int64_t, N> inner_strides;
  for (size_t k = 0; k < N; ++k) inner_strides[k] = l.strides[k][nd - 1];
  long long grain = inner >= kGrain ? 1 : kGrain / inner;
  parallel_for(rows, grain, [&](long long r0, long long r1) {
    for (long long r = r0; r < r1; ++r) {
      std::array<int64_t, N> off{};
      long long rem = r;
      for (int d = nd - 2; d >= 0; --d) {
        int64_t i = rem % l.shape[d];
        rem /= l.shape[d];
        for (size_t k = 0; k < N; ++k) off[k] += i * l.strides[k][d];
      }
      row(off, inner, inner_strides);
    }
  });
}

/// Runs body(begin, end) over [0, n) in parallel blocks.
template <class Body>
void for_each_block(int64_t n, Body&& body) {
  parallel_for(n, kGrain, [&](long long b, long long e) { body(b, e); });
}

}  // namespace nuvec::cpu
