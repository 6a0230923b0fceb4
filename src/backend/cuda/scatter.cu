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
#include <cub/device/device_radix_sort.cuh>

#include "backend/cuda/data.h"
#include "backend/cuda/elementwise.cuh"
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

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    (Error(ErrorKind::backend,
                std::string("scatter: ") + what + ": " + cudaGetErrorString(e))).raise();
}

}  // namespace

void scatter(const Scatter& p, const Array& x, const Array& positions,
             const Array& updates, Array& out, cudaStream_t s, Stream st) {
  if (out.desc()->data != x.desc()->data) copy_into(x, out, s);  // else donated
  const int64_t u = positions.size();
  const int64_t n = x.size();
  if (u == 0 || n == 0) return;  // (the rule refuses updates of an empty array)
  if (out.shape() != x.shape() || !out.desc()->row_contiguous)
    (Error(ErrorKind::internal, "scatter: the output must be dense")).raise();
  Layout l = ew::layout_of({&positions, &updates}, positions.shape());

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
