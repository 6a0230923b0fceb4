// The fixed arithmetic of a reduction over one row (reduce.cpp's comment at
// its top describes it), shared by the Reduce kernels and the fast kernels
// (fast_norm.cpp, fast_softmax.cpp), so that a fast kernel's row statistics
// have the bits of the composite's reductions.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backend/reduce_op.h"
#include "nuvec/kernels/cast.h"

namespace nuvec::cpu::reduce_row {

using RT = Reduce::Type;

constexpr int W = 16;                      // interleaved accumulators in a block
constexpr int64_t kBlock = int64_t(1) << 16;  // row elements per block


template <RT type, class A>
struct Combine {
  // (max and min start from the first element instead.)
  A init() const { return backend::reduce_empty<type, A>(); }
  A operator()(A a, A b) const { return backend::reduce_combine<type, A>(a, b); }
};

// The steps of a block's fixed arithmetic (see the top of the file), shared
// by the in-memory and the gathered forms so that both give the same bits.
template <RT type, class A, class In>
A fold_left(A r, const In* x, int64_t n) {
  Combine<type, A> c;
  for (int64_t i = 0; i < n; ++i) r = c(r, kernels::Cast<A>{}(x[i]));
  return r;
}

// n is a multiple of W: element j goes to accumulator j % W.
template <RT type, class A, class In>
void add_groups(A (&acc)[W], const In* x, int64_t n) {
  Combine<type, A> c;
  A a[W];  // a local copy, so that the stores cannot alias x
  std::copy(acc, acc + W, a);
  for (int64_t j = 0; j < n; j += W)
    for (int k = 0; k < W; ++k) a[k] = c(a[k], kernels::Cast<A>{}(x[j + k]));
  std::copy(a, a + W, acc);
}

// Unrolled, so that the tree stays in registers (a loop stores and reloads
// narrower halves, which stalls store forwarding).
template <RT type, class A>
A fold_tree(const A (&acc)[W]) {
  Combine<type, A> c;
  A a[W];
  std::copy(acc, acc + W, a);
#pragma GCC unroll 16
  for (int w = W / 2; w > 0; w /= 2)
#pragma GCC unroll 16
    for (int k = 0; k < w; ++k) a[k] = c(a[k], a[k + w]);
  return a[0];
}

// Elements of a block of `len` that go to the accumulators (none when short).
inline int64_t groups_end(int64_t len) { return len < W ? 0 : len - len % W; }

// A block of `len` (1..kBlock) elements held in memory. Not inlined: in the
// caller's loop GCC keeps the accumulators on the stack, several times slower.
template <RT type, class A, class In>
[[gnu::noinline]] A reduce_run(const In* x, int64_t len) {
  kernels::Cast<A> cast;
  int64_t g = groups_end(len);
  if (g == 0) return fold_left<type>(cast(x[0]), x + 1, len - 1);
  A acc[W];
  for (int k = 0; k < W; ++k) acc[k] = cast(x[k]);
  add_groups<type>(acc, x + W, g - W);
  return fold_left<type>(fold_tree<type>(acc), x + g, len - g);
}

// The fixed pairwise tree over a row's block results.
template <RT type, class A>
A combine_blocks(A* part, int64_t nb) {
  Combine<type, A> c;
  for (int64_t w = 1; w < nb; w *= 2)
    for (int64_t k = 0; k + w < nb; k += 2 * w) part[k] = c(part[k], part[k + w]);
  return part[0];
}

/// A contiguous row of n >= 1 elements reduced with the fixed arithmetic:
/// blocks of kBlock, each as reduce_run, combined in the pairwise tree.
template <RT type, class A, class In>
A reduce_contiguous(const In* x, int64_t n) {
  if (n <= kBlock) return reduce_run<type, A>(x, n);
  int64_t nb = (n + kBlock - 1) / kBlock;
  A small[16];
  A* part = nb <= 16 ? small : new A[nb];
  for (int64_t b = 0; b < nb; ++b)
    part[b] = reduce_run<type, A>(x + b * kBlock, std::min(kBlock, n - b * kBlock));
  A r = combine_blocks<type>(part, nb);
  if (part != small) delete[] part;
  return r;
}

}  // namespace nuvec::cpu::reduce_row
