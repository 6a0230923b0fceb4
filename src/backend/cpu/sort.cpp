// Sort, ArgSort, Partition and ArgPartition. Each row along the axis is
// gathered into a buffer, ordered, and written to the row-major output.
// Sorts are stable, so their result is unique; the partitions call
// std::nth_element with MLX's comparators on the same sequence, which
// reproduces MLX's CPU order (libstdc++'s introselect).
#include <algorithm>
#include <memory>
#include <numeric>
#include <vector>

#include "backend/cpu/cpu.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/scratch.h"
#include "core/strided.h"
#include "nuvec/kernels/binary.h"

namespace nuvec::cpu {

namespace {

template <class T>
constexpr bool has_nan = !kernels::is_int_v<T> && !kernels::is_bool_v<T>;

// a < b with NaN after every number (MLX's nan_aware_less).
template <class T>
bool nan_less(T a, T b) {
  if constexpr (has_nan<T>) {
    if (kernels::any_nan(a)) return false;
    if (kernels::any_nan(b)) return true;
  }
  return kernels::less_than(a, b);
}

// Base offsets of every row along `axis` of (shape, strides), row-major
// over the other axes.
Scratch<int64_t> row_offsets(const Shape& shape, const Strides& strides, int axis,
                             int64_t base) {
  Shape s = shape;
  Strides st = strides;
  s.erase(s.begin() + axis);
  st.erase(st.begin() + axis);
  Scratch<int64_t> out(shape_size(s));
  int64_t k = 0;
  for_each_offset(s, st, base, [&](int64_t o) { out[k++] = o; });
  return out;
}

// Stable sort of n elements. A long row is cut into a fixed number of
// chunks sorted in parallel and merged pairwise (stable merges), so the
// result is the same as one stable sort.
template <class E, class Less>
void stable_sort_row(E* data, int64_t n, Less less) {
  constexpr int64_t kChunks = 8, kMin = int64_t(1) << 16;
  if (n < kMin) {
    std::stable_sort(data, data + n, less);
    return;
  }
  int64_t bounds[kChunks + 1];
  for (int64_t c = 0; c <= kChunks; ++c) bounds[c] = n * c / kChunks;
  parallel_for(kChunks, 1, [&](long long b, long long e) {
    for (long long c = b; c < e; ++c) std::stable_sort(data + bounds[c], data + bounds[c + 1], less);
  });
  Scratch<E> tmp(n);
  E* src = data;
  E* dst = tmp.data();
  for (int64_t w = 1; w < kChunks; w *= 2) {
    int64_t pairs = (kChunks + 2 * w - 1) / (2 * w);
    parallel_for(pairs, 1, [&](long long b, long long e) {
      for (long long p = b; p < e; ++p) {
        int64_t lo = bounds[std::min<int64_t>(kChunks, 2 * w * p)];
        int64_t mid = bounds[std::min<int64_t>(kChunks, 2 * w * p + w)];
        int64_t hi = bounds[std::min<int64_t>(kChunks, 2 * w * p + 2 * w)];
        std::merge(src + lo, src + mid, src + mid, src + hi, dst + lo, less);
      }
    });
    std::swap(src, dst);
  }
  if (src != data) std::copy(src, src + n, data);
}

template <PrimitiveId Id, class T>
void sort_typed(const SortPrimitive<Id>& p, const Array& in, Array& out) {
  using P = SortPrimitive<Id>;
  using O = std::conditional_t<P::is_arg, uint32_t, T>;
  int axis = p.axis();
  int64_t n = in.shape()[axis];
  if (in.size() == 0) return;
  auto in_rows = row_offsets(in.shape(), in.strides(), axis, 0);
  auto out_rows = row_offsets(out.shape(), out.strides(), axis, 0);
  int64_t in_st = in.strides()[axis], out_st = out.strides()[axis];
  const T* src = ptr<T>(in);
  O* dst = ptr<O>(out);
  int64_t rows = in_rows.size();
  long long grain = std::max<long long>(1, kGrain / std::max<int64_t>(n, 1));
  auto do_rows = [&](long long r0, long long r1) {
    Scratch<T> vals(n);
    Scratch<uint32_t> idx;
    if constexpr (P::is_arg) idx.reset(n);
    for (long long r = r0; r < r1; ++r) {
      const T* row = src + in_rows[r];
      for (int64_t i = 0; i < n; ++i) vals[i] = row[i * in_st];
      O* orow = dst + out_rows[r];
      if constexpr (Id == PrimitiveId::Sort) {
        // NaNs to the end (stably), then a plain comparison: same result.
        T* mid = vals.data() + n;
        if constexpr (has_nan<T>)
          mid = std::stable_partition(vals.data(), mid, [](T a) { return !kernels::any_nan(a); });
        stable_sort_row(vals.data(), mid - vals.data(), kernels::less_than<T>);
      } else if constexpr (Id == PrimitiveId::Partition) {
        std::nth_element(vals.data(), vals.data() + p.kth(), vals.data() + n, nan_less<T>);
      } else {
        std::iota(idx.begin(), idx.end(), uint32_t(0));
        const T* v = vals.data();
        if constexpr (Id == PrimitiveId::ArgSort) {
          uint32_t* mid = idx.data() + n;
          if constexpr (has_nan<T>)
            mid = std::stable_partition(idx.data(), mid, [v](uint32_t a) { return !kernels::any_nan(v[a]); });
          stable_sort_row(idx.data(), mid - idx.data(),
                          [v](uint32_t a, uint32_t b) { return kernels::less_than(v[a], v[b]); });
        } else {
          // MLX's argpartition comparator: NaN last, ties by index.
          std::nth_element(idx.begin(), idx.begin() + p.kth(), idx.end(), [v](uint32_t a, uint32_t b) {
            T x = v[a], y = v[b];
            if constexpr (!kernels::is_int_v<T> && !kernels::is_bool_v<T>) {
              if (kernels::any_nan(x)) return false;
              if (kernels::any_nan(y)) return true;
            }
            return kernels::less_than(x, y) || (kernels::equal_to(x, y) && a < b);
          });
        }
      }
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (P::is_arg) orow[i * out_st] = idx[i];
        else orow[i * out_st] = vals[i];
      }
    }
  };
  // One row: run it here so that its own parallel chunks use the pool.
  if (rows == 1) do_rows(0, 1);
  else parallel_for(rows, grain, do_rows);
}

}  // namespace

template <PrimitiveId Id>
void eval(const SortPrimitive<Id>& p, const Arrays& in, Arrays& out) {
  dispatch_dtype(in[0].dtype(), [&](auto t) {
    sort_typed<Id, typename decltype(t)::type>(p, in[0], out[0]);
  });
}

template void eval(const Sort&, const Arrays&, Arrays&);
template void eval(const ArgSort&, const Arrays&, Arrays&);
template void eval(const Partition&, const Arrays&, Arrays&);
template void eval(const ArgPartition&, const Arrays&, Arrays&);

}  // namespace nuvec::cpu
