// Reductions. Each output element reduces its row: the elements of the
// reduced axes in row-major order of those axes as they appear in the input
// (the logical order, not the memory order). The arithmetic applied to a row
// depends only on its length and dtype, never on the number of outputs, the
// layout, the thread count or the buffer alignment (DESIGN.md section 10):
// a transposed view, a contiguous copy of it and a batch of rows all give the
// bits of the row reduced alone.
//
// The fixed arithmetic: a row is cut into blocks of kBlock elements
// (index-based; the last may be shorter). A block of fewer than W elements is
// folded left to right; a longer one goes to W interleaved accumulators
// (element i to accumulator i % W) over its whole groups of W, folded in a
// fixed tree, then its leftover elements are folded in left to right. Block
// results are combined in a fixed pairwise tree. Only the work split varies:
// over (rows, blocks) in parallel, with the same per-block arithmetic.
#include <algorithm>
#include <memory>
#include <optional>

#include "backend/cpu/cpu.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/reduce_row.h"
#include "backend/cpu/scratch.h"
#include "backend/reduce_op.h"
#include "core/strided.h"
#include "nuvec/kernels/binary.h"
#include "nuvec/kernels/cast.h"

namespace nuvec::cpu {

namespace {

using RT = Reduce::Type;
using namespace reduce_row;

constexpr int kTile = 16;                  // strided rows gathered together
constexpr int64_t kPiece = 512;            // gathered elements per row (multiple of W)

template <class In, class Out>
using acc_t = backend::reduce_acc_t<In, Out>;

// A block whose elements arrive in order, in pieces whose sizes are
// multiples of W except the last; how the block is cut never changes its bits.
template <RT type, class A>
class BlockAcc {
 public:
  void start(int64_t len) {
    seen_ = 0;
    groups_end_ = groups_end(len);
  }
  template <class In>
  void feed(const In* x, int64_t n) {
    int64_t j = 0;  // elements of x taken so far
    if (seen_ == 0 && groups_end_ == 0) {
      r_ = kernels::Cast<A>{}(x[0]);
      j = 1;
    } else if (seen_ == 0) {
      for (int k = 0; k < W; ++k) acc_[k] = kernels::Cast<A>{}(x[k]);
      j = W;
    }
    int64_t g = std::clamp<int64_t>(groups_end_ - seen_, 0, n);  // to the accumulators
    if (g > j) add_groups<type>(acc_, x + j, g - j);
    if (g > 0 && seen_ + g == groups_end_) r_ = fold_tree<type>(acc_);
    j = std::max(j, g);
    r_ = fold_left<type>(r_, x + j, n - j);
    seen_ += n;
  }
  A result() const { return r_; }

 private:
  A acc_[W];
  A r_{};
  int64_t seen_ = 0, groups_end_ = 0;
};

// Element offsets of a collapsed strided shape in row-major order, walked
// from any position (so parallel blocks start where they are).
class Walker {
 public:
  explicit Walker(const Layout<1>& l) : shape_(l.shape), st_(l.strides[0]), idx_(l.shape.size()) {}
  void seek(int64_t flat) {
    off_ = 0;
    for (int d = static_cast<int>(shape_.size()) - 1; d >= 0; --d) {
      idx_[d] = flat % shape_[d];
      flat /= shape_[d];
      off_ += idx_[d] * st_[d];
    }
  }
  // Writes the offsets of the next n elements and moves past them.
  void fill(int64_t n, int64_t* out) {
    int last = static_cast<int>(shape_.size()) - 1;
    while (n > 0) {
      int64_t run = std::min<int64_t>(n, shape_[last] - idx_[last]);
      for (int64_t i = 0; i < run; ++i) out[i] = off_ + i * st_[last];
      out += run;
      n -= run;
      idx_[last] += run;
      off_ += run * st_[last];
      if (idx_[last] < shape_[last]) continue;
      off_ -= shape_[last] * st_[last];
      idx_[last] = 0;
      for (int d = last - 1; d >= 0; --d) {
        off_ += st_[d];
        if (++idx_[d] < shape_[d]) break;
        off_ -= st_[d] * shape_[d];
        idx_[d] = 0;
      }
    }
  }

 private:
  const std::vector<int64_t>& shape_;
  const Strides& st_;
  std::vector<int64_t> idx_;
  int64_t off_ = 0;
};

// Strided rows, up to kTile at a time: each block is gathered in pieces,
// reading the same element of neighbouring rows together (often adjacent in
// memory, as in a reduction over the first axis), and reduced as in memory.
template <RT type, class In, class A>
class Gatherer {
 public:
  Gatherer(const In* src, const Layout<1>& red)
      : src_(src), elems_(red), scratch_(new In[kTile * kPiece]) {}
  // Reduces the block of `len` elements from `start` of the rows at `base`,
  // calling emit(t, result) for each.
  template <class Emit>
  void block(const int64_t* base, int64_t n_rows, int64_t start, int64_t len, Emit&& emit) {
    In* sc = scratch_.get();
    for (int64_t t = 0; t < n_rows; ++t) acc_[t].start(len);
    elems_.seek(start);
    for (int64_t p = 0; p < len; p += kPiece) {
      int64_t n = std::min(kPiece, len - p);
      elems_.fill(n, roff_);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t t = 0; t < n_rows; ++t) sc[t * kPiece + i] = src_[base[t] + roff_[i]];
      for (int64_t t = 0; t < n_rows; ++t) acc_[t].feed(sc + t * kPiece, n);
    }
    for (int64_t t = 0; t < n_rows; ++t) emit(t, acc_[t].result());
  }

 private:
  const In* src_;
  Walker elems_;
  std::unique_ptr<In[]> scratch_;
  int64_t roff_[kPiece];
  BlockAcc<type, A> acc_[kTile];
};

template <RT type, class In, class Out>
void reduce_typed(const Array& in, Array& out, const std::vector<int>& axes) {
  using A = acc_t<In, Out>;
  Shape kept_shape, red_shape;
  Strides kept_st, red_st;
  for (int d = 0; d < in.ndim(); ++d) {
    bool r = std::find(axes.begin(), axes.end(), d) != axes.end();
    (r ? red_shape : kept_shape).push_back(in.shape()[d]);
    (r ? red_st : kept_st).push_back(in.strides()[d]);
  }
  int64_t m = shape_size(red_shape), n_out = out.size();
  Out* dst = ptr<Out>(out);
  const In* src = ptr<In>(in);
  if (n_out == 0) return;
  if (m == 0) {
    std::fill(dst, dst + n_out, kernels::Cast<Out>{}(Combine<type, A>{}.init()));
    return;
  }
  // Merging dimensions keeps the row-major order, so the row order is kept.
  Layout<1> kept = collapse<1>(kept_shape, {&kept_st});
  Layout<1> red = collapse<1>(red_shape, {&red_st});
  bool contig = red.shape.size() == 1 && (red.strides[0][0] == 1 || m == 1);
  // Strided rows are gathered kTile at a time into pieces (reading the
  // elements of neighbouring rows together) and reduced as contiguous ones;
  // short contiguous rows are grouped only to amortise the bookkeeping.
  int64_t rows_per_group = contig ? std::clamp<int64_t>(kGrain / m, 1, kTile)
                                  : std::min<int64_t>(kTile, n_out);
  int64_t groups = (n_out + rows_per_group - 1) / rows_per_group;
  int64_t nb = (m + kBlock - 1) / kBlock;
  // With one block a row's result is final; otherwise block results wait in
  // `part` (row-major: row, block) for the tree.
  Scratch<A> part(nb > 1 ? n_out * nb : 0);  // counted by the memory limit
  auto emit = [&](int64_t row, int64_t k, A v) {
    if (nb == 1) dst[row] = kernels::Cast<Out>{}(v);
    else part[row * nb + k] = v;
  };
  int64_t unit_elems = rows_per_group * std::min(m, kBlock);
  long long grain = std::max<long long>(1, kGrain / unit_elems);
  parallel_for(groups * nb, grain, [&](long long u0, long long u1) {
    Walker rows(kept);
    int64_t base[kTile];
    std::optional<Gatherer<type, In, A>> gather;
    if (!contig) gather.emplace(src, red);
    int64_t g_cur = -1, n_rows = 0;
    rows.seek(u0 / nb * rows_per_group);
    for (long long u = u0; u < u1; ++u) {
      int64_t g = u / nb, k = u % nb, row0 = g * rows_per_group;
      if (g != g_cur) {  // groups come in order: the next rows' offsets
        g_cur = g;
        n_rows = std::min(rows_per_group, n_out - row0);
        rows.fill(n_rows, base);
      }
      int64_t len = std::min(kBlock, m - k * kBlock);
      if (contig) {
        for (int64_t t = 0; t < n_rows; ++t)
          emit(row0 + t, k, reduce_run<type, A>(src + base[t] + k * kBlock, len));
      } else {
        gather->block(base, n_rows, k * kBlock, len, [&](int64_t t, A v) { emit(row0 + t, k, v); });
      }
    }
  });
  if (nb == 1) return;
  parallel_for(n_out, std::max<long long>(1, kGrain / nb), [&](long long b, long long e) {
    for (long long r = b; r < e; ++r)
      dst[r] = kernels::Cast<Out>{}(combine_blocks<type>(part.data() + r * nb, nb));
  });
}

template <RT type>
void reduce_dispatch(const Array& in, Array& out, const std::vector<int>& axes) {
  dispatch_dtype(in.dtype(), [&](auto ti) {
    using In = typename decltype(ti)::type;
    using Out = type_of_t<reduce_output_dtype(type, dtype_v<In>).val>;
    reduce_typed<type, In, Out>(in, out, axes);
  });
}

}  // namespace

void eval(const Reduce& p, const Arrays& in, Arrays& out) {
  switch (p.type()) {
    case RT::sum: return reduce_dispatch<RT::sum>(in[0], out[0], p.axes());
    case RT::prod: return reduce_dispatch<RT::prod>(in[0], out[0], p.axes());
    case RT::max: return reduce_dispatch<RT::max>(in[0], out[0], p.axes());
    case RT::min: return reduce_dispatch<RT::min>(in[0], out[0], p.axes());
    case RT::all: return reduce_dispatch<RT::all>(in[0], out[0], p.axes());
    case RT::any: return reduce_dispatch<RT::any>(in[0], out[0], p.axes());
  }
}

void eval(const ArgReduce& p, const Arrays& in, Arrays& out) {
  const Array& x = in[0];
  int axis = p.axis();
  bool is_max = p.type() == ArgReduce::Type::argmax;
  Shape kept = x.shape();
  Strides kst = x.strides();
  kept.erase(kept.begin() + axis);
  kst.erase(kst.begin() + axis);
  int len = x.shape()[axis];
  int64_t st = x.strides()[axis];
  uint32_t* dst = ptr<uint32_t>(out[0]);
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = ptr<T>(x);
    int64_t i = 0;
    for_each_offset(kept, kst, 0, [&](int64_t base) {
      uint32_t best = 0;
      T bv = src[base];
      for (int k = 1; k < len && !kernels::any_nan(bv); ++k) {
        T v = src[base + k * st];
        bool better = kernels::any_nan(v) ||
                      (is_max ? kernels::less_than(bv, v) : kernels::less_than(v, bv));
        if (better) {
          best = static_cast<uint32_t>(k);
          bv = v;
        }
      }
      dst[i++] = best;
    });
  });
}

}  // namespace nuvec::cpu
