// Scatter on the GPU with the CPU's bits, deterministically (no atomics).
// The CPU copies x and then applies the updates one after the other in
// row-major order (src/backend/cpu/scatter.cpp), so with repeated positions
// `set` keeps the last update and the others fold in update order. Here:
//   1. copy x into the output;
//   2. one thread per update: its destination (the CPU's wrap-then-clamp)
//      as the key and its position in update order as the value;
//   3. a stable radix sort of the pairs by destination (CUB): within one
//      destination the updates stay in update order;
//   4. one thread per destination: `set` writes the update at the end of
//      its run; the others fold the run in order with the CPU's functor.
// A destination hit by many updates is folded by one thread (serially).
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>
#include <vector>

#include "backend/cuda/data.h"
#include "backend/cuda/elementwise.cuh"
#include "backend/cuda/launch.cuh"
#include "nuvec/kernels/binary.h"

namespace nuvec::cuda::data {

namespace {

using ew::Layout;
using ST = Scatter::Type;

// Operand 0 of `l` is the positions array, operand 1 the updates (same shape).
template <class I>
__global__ void keys_kernel(const I* pos, uint64_t* keys, uint64_t* order,
                            int64_t u, int64_t n, Layout l) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < u; k += step) {
    int64_t v = static_cast<int64_t>(pos[ew::at(l, 0, k)]);
    if (v < 0) v += n;
    keys[k] = static_cast<uint64_t>(v < 0 ? 0 : (v >= n ? n - 1 : v));
    order[k] = static_cast<uint64_t>(k);
  }
}

// The last update of each run of equal destinations wins (bits as words).
template <class W>
__global__ void set_kernel(const uint64_t* keys, const uint64_t* order,
                           const W* upd, W* o, int64_t u, Layout l) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < u; i += step) {
    uint64_t key = keys[i];
    if (i + 1 < u && keys[i + 1] == key) continue;
    o[key] = upd[ew::at(l, 1, static_cast<int64_t>(order[i]))];
  }
}

template <ST type, class T>
__device__ __forceinline__ void fold(T& d, T v) {
  if constexpr (type == ST::add)
    d = kernels::Add{}(d, v);
  else if constexpr (type == ST::multiply)
    d = kernels::Multiply{}(d, v);
  else if constexpr (type == ST::maximum)
    d = kernels::Maximum{}(d, v);
  else
    d = kernels::Minimum{}(d, v);
}

// The first thread of each run folds the run in update order.
template <ST type, class T>
__global__ void fold_kernel(const uint64_t* keys, const uint64_t* order,
                            const T* upd, T* o, int64_t u, Layout l) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < u; i += step) {
    uint64_t key = keys[i];
    if (i > 0 && keys[i - 1] == key) continue;
    T d = o[key];
    for (int64_t j = i; j < u && keys[j] == key; ++j)
      fold<type, T>(d, upd[ew::at(l, 1, static_cast<int64_t>(order[j]))]);
    o[key] = d;
  }
}

template <ST type>
void fold_typed(const Array& upd, Array& out, const uint64_t* keys,
                const uint64_t* order, int64_t u, const Layout& l,
                cudaStream_t s) {
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    fold_kernel<type, T><<<grid_for(u), kThreads, 0, s>>>(
        keys, order, static_cast<const T*>(upd.desc()->data->ptr),
        static_cast<T*>(out.desc()->data->ptr) + out.desc()->offset, u, l);
  });
}

// A set whose destinations are an affine block of distinct positions:
// destination of update i = base + sum_d idx_d(i) * step[d] over the
// positions' shape (row-major). No keys, no sort: one thread per update.
struct BlockMap {
  int nd = 0;
  int64_t base = 0;
  int64_t shape[ew::kMaxDims] = {};
  int64_t step[ew::kMaxDims] = {};
};

template <class W>
__global__ void block_set_kernel(const W* upd, W* o, int64_t u, BlockMap m, Layout l) {
  enter_held_kernel();
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < u; i += stride) {
    int64_t r = i, dst = m.base;
    for (int d = m.nd - 1; d >= 0; --d) {
      const int64_t x = r % m.shape[d];
      r /= m.shape[d];
      dst += x * m.step[d];
    }
    o[dst] = upd[ew::at(l, 1, i)];
  }
}

// A set whose destinations (known distinct and inside the output) need no
// sort: update i goes to pos[i].
template <class I, class W>
__global__ void distinct_set_kernel(const I* pos, const W* upd, W* o, int64_t u, Layout l) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < u; i += stride)
    o[static_cast<int64_t>(pos[ew::at(l, 0, i)])] = upd[ew::at(l, 1, i)];
}

// Whether host positions p[0..u) are distinct and inside [0, n).
template <class I>
bool distinct_inside(const I* p, int64_t u, int64_t n) {
  std::vector<int64_t> v(p, p + u);
  std::sort(v.begin(), v.end());
  if (v.front() < 0 || v.back() >= n) return false;
  return std::adjacent_find(v.begin(), v.end()) == v.end();
}

// Whether host positions `p` [shape] (row-major, u of them) are an affine
// block of distinct destinations inside [0, n) (a slice_update's), and
// which: every position checked, so any other pattern takes the sort.
template <class I>
bool affine_block(const I* p, const Shape& shape, int64_t u, int64_t n, BlockMap& m) {
  if (static_cast<int>(shape.size()) > ew::kMaxDims) return false;
  m.nd = 0;
  m.base = static_cast<int64_t>(p[0]);
  int64_t unit = u;  // the row-major stride of dimension d
  int64_t lo = m.base, hi = m.base;
  std::vector<std::pair<int64_t, int64_t>> spans;  // (step, size) of each dimension > 1
  for (size_t d = 0; d < shape.size(); ++d) {
    unit /= shape[d];
    if (shape[d] == 1) continue;
    const int64_t step = static_cast<int64_t>(p[unit]) - m.base;
    if (step <= 0) return false;
    m.shape[m.nd] = shape[d];
    m.step[m.nd++] = step;
    spans.emplace_back(step, shape[d]);
    hi += step * (shape[d] - 1);
  }
  if (lo < 0 || hi >= n) return false;
  // Distinct: with the steps in increasing order, each exceeds the reach
  // of the smaller ones.
  std::sort(spans.begin(), spans.end());
  int64_t reach = 0;
  for (const auto& [step, size] : spans) {
    if (step <= reach) return false;
    reach += step * (size - 1);
  }
  // Every position, with the block's index advanced as an odometer.
  int64_t idx[ew::kMaxDims] = {}, dst = m.base;
  for (int64_t i = 0; i < u; ++i) {
    if (static_cast<int64_t>(p[i]) != dst) return false;
    for (int d = m.nd - 1; d >= 0; --d) {
      dst += m.step[d];
      if (++idx[d] < m.shape[d]) break;
      dst -= m.step[d] * m.shape[d];
      idx[d] = 0;
    }
  }
  return true;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    (Error(ErrorKind::backend,
                std::string("scatter: ") + what + ": " + cudaGetErrorString(e))).raise();
}

}  // namespace

void scatter(const Scatter& p, const Array& x, const Array& host_or_device_positions,
             const Array& updates, Array& out, cudaStream_t s, Stream st) {
  // Only the block write is held (launch.cuh); everything else is enqueued
  // after what the stream holds.
  if (out.desc()->data != x.desc()->data) {  // else donated
    flush_launches(s);
    copy_into(x, out, s);
  }
  const int64_t u = host_or_device_positions.size();
  const int64_t n = x.size();
  if (u == 0 || n == 0) return;  // (the rule refuses updates of an empty array)
  if (out.shape() != x.shape() || !out.desc()->row_contiguous)
    (Error(ErrorKind::internal, "scatter: the output must be dense")).raise();
  // Positions still on the host (a slice_update's constant block): a set
  // onto an affine block of distinct destinations needs neither the upload
  // nor the sort, and gives the same bits (one update per destination).
  const auto& hd = host_or_device_positions.desc();
  if (p.type() == ST::set && hd->data && hd->data->device == Device::cpu && hd->row_contiguous) {
    BlockMap m;
    bool block = false;
    dispatch_dtype(host_or_device_positions.dtype(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>)
        block = affine_block(static_cast<const I*>(hd->data->ptr) + hd->offset, host_or_device_positions.shape(),
                             u, n, m);
    });
    if (block) {
      Layout l = ew::layout_of({&host_or_device_positions, &updates}, host_or_device_positions.shape());
      by_word("GPU scatter", out.itemsize(), [&](auto w) {
        using W = decltype(w);
        hold_launch(block_set_kernel<W>, grid_for(u), kThreads, 0, s, "Scatter (block)",
                    static_cast<const W*>(updates.desc()->data->ptr),
                    static_cast<W*>(out.desc()->data->ptr) + out.desc()->offset, u, m, l);
      });
      return;
    }
  }
  flush_launches(s);
  // Host positions that are not a block but distinct (a paged cache's
  // slots): uploaded, written without the sort.
  bool distinct = false;
  if (p.type() == ST::set && hd->data && hd->data->device == Device::cpu && hd->row_contiguous)
    dispatch_dtype(host_or_device_positions.dtype(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>)
        distinct = distinct_inside(static_cast<const I*>(hd->data->ptr) + hd->offset, u, n);
    });
  const Array positions = device_array(host_or_device_positions, s, st);
  Layout l = ew::layout_of({&positions, &updates}, positions.shape());
  if (distinct) {
    dispatch_dtype(positions.dtype(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>)
        by_word("GPU scatter", out.itemsize(), [&](auto w) {
          using W = decltype(w);
          distinct_set_kernel<I, W><<<grid_for(u), kThreads, 0, s>>>(
              static_cast<const I*>(positions.desc()->data->ptr), static_cast<const W*>(updates.desc()->data->ptr),
              static_cast<W*>(out.desc()->data->ptr) + out.desc()->offset, u, l);
        });
    });
    ew::check_launch("Scatter (distinct)");
    return;
  }

  Scratch keys_in(u * sizeof(uint64_t), st), order_in(u * sizeof(uint64_t), st);
  Scratch keys(u * sizeof(uint64_t), st), order(u * sizeof(uint64_t), st);
  dispatch_dtype(positions.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
      keys_kernel<I><<<grid_for(u), kThreads, 0, s>>>(
          static_cast<const I*>(positions.desc()->data->ptr),
          keys_in.as<uint64_t>(), order_in.as<uint64_t>(), u, n, l);
    } else {
      (Error(ErrorKind::unsupported_dtype,
                  "scatter: positions must be integers")).raise();
    }
  });
  ew::check_launch("Scatter (keys)");

  int bits = 1;  // enough bits for the destinations 0 .. n-1
  while (bits < 64 && (uint64_t(n - 1) >> bits) != 0) ++bits;
  size_t temp_bytes = 0;
  check(cub::DeviceRadixSort::SortPairs(
            nullptr, temp_bytes, keys_in.as<uint64_t>(), keys.as<uint64_t>(),
            order_in.as<uint64_t>(), order.as<uint64_t>(), u, 0, bits, s),
        "sort size");
  Scratch temp(temp_bytes, st);
  check(cub::DeviceRadixSort::SortPairs(
            temp.as<void>(), temp_bytes, keys_in.as<uint64_t>(),
            keys.as<uint64_t>(), order_in.as<uint64_t>(), order.as<uint64_t>(),
            u, 0, bits, s),
        "sort");

  const uint64_t* k = keys.as<uint64_t>();
  const uint64_t* o = order.as<uint64_t>();
  switch (p.type()) {
    case ST::set:
      by_word("GPU scatter", out.itemsize(), [&](auto w) {
        using W = decltype(w);
        set_kernel<W><<<grid_for(u), kThreads, 0, s>>>(
            k, o, static_cast<const W*>(updates.desc()->data->ptr),
            static_cast<W*>(out.desc()->data->ptr) + out.desc()->offset, u, l);
      });
      break;
    case ST::add:
      fold_typed<ST::add>(updates, out, k, o, u, l, s);
      break;
    case ST::multiply:
      fold_typed<ST::multiply>(updates, out, k, o, u, l, s);
      break;
    case ST::maximum:
      fold_typed<ST::maximum>(updates, out, k, o, u, l, s);
      break;
    case ST::minimum:
      fold_typed<ST::minimum>(updates, out, k, o, u, l, s);
      break;
  }
  ew::check_launch("Scatter");
}

}  // namespace nuvec::cuda::data
