// Sort, ArgSort, Partition and ArgPartition on the GPU (sort_scan.h). Each
// element becomes an unsigned key of its width whose integer order is the
// CPU's order (kernels::less_than, NaN after every number), paired with its
// position in the row; CUB's stable radix sorts order the pairs, and the
// output takes the positions (arg forms) or the input's values at them.
// Equal keys keep their order, as the CPU's stable sort: so -0.0 and +0.0
// (one key) and NaNs (one key, the largest) stay in input order and keep
// their bits. The result is unique, hence bit for bit the CPU's Sort and
// ArgSort. Keys are 1, 2, 4 or 8 bytes: four CUB instantiations per sort.
#include <cuda_runtime.h>

#include <algorithm>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <string>

#include "backend/cuda/sort_scan.h"
#include "nuvec/kernels/functors.h"

namespace nuvec::cuda {

namespace {

constexpr int kThreads = 256;

template <size_t N>
struct key_of_size;
template <> struct key_of_size<1> { using type = uint8_t; };
template <> struct key_of_size<2> { using type = uint16_t; };
template <> struct key_of_size<4> { using type = uint32_t; };
template <> struct key_of_size<8> { using type = uint64_t; };
template <class T>
using key_t = typename key_of_size<sizeof(T)>::type;

// An IEEE value's bits (of its width) in total order, -0.0 made +0.0 so
// that equal values share a key. NaN is handled by the caller.
template <class K>
__device__ __forceinline__ K float_key(K b) {
  constexpr K sign = K(K(1) << (sizeof(K) * 8 - 1));
  if (K(b & K(~sign)) == 0) b = 0;
  return (b & sign) ? K(~b) : K(b | sign);
}

template <class T>
__device__ __forceinline__ key_t<T> key_of(T x) {
  using K = key_t<T>;
  if constexpr (kernels::is_bool_v<T>) {
    return x ? 1 : 0;
  } else if constexpr (kernels::is_int_v<T>) {
    K b = static_cast<K>(x);
    if constexpr (kernels::is_signed_int_v<T>) b ^= K(K(1) << (sizeof(K) * 8 - 1));
    return b;
  } else {
    if (kernels::any_nan(x)) return K(~K(0));  // above +inf, one key for every NaN
    if constexpr (kernels::is_complex_v<T>) {  // (re, im) lexicographic
      uint64_t re = float_key(kernels::bit_cast<uint32_t>(x.re));
      return (re << 32) | float_key(kernels::bit_cast<uint32_t>(x.im));
    } else {
      return float_key(kernels::bit_cast<K>(x));
    }
  }
}


// keys[e] and pos[e] of element e = r * n + j (rows contiguous).
template <class T>
__global__ void keys_kernel(const T* x, key_t<T>* keys, uint32_t* pos, RowLayout l, int64_t total) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    int64_t r = e / l.n, j = e - r * l.n;
    keys[e] = key_of(x[l.offset + row_offset(l, r) + j * l.axis_stride]);
    pos[e] = static_cast<uint32_t>(j);
  }
}

// Writes row r's sorted element j: its position, or the input's value there.
template <class T, bool Arg>
__global__ void output_kernel(const T* x, const uint32_t* pos, void* out, RowLayout l, int64_t total) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    int64_t r = e / l.n, j = e - r * l.n;
    int64_t o = l.inner == 1 ? e : (r / l.inner) * l.n * l.inner + r % l.inner + j * l.inner;
    uint32_t p = pos[e];
    if constexpr (Arg) static_cast<uint32_t*>(out)[o] = p;
    else static_cast<T*>(out)[o] = x[l.offset + row_offset(l, r) + p * l.axis_stride];
  }
}

__global__ void segment_offsets_kernel(int64_t* offs, int64_t rows, int64_t n) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i <= rows; i += step)
    offs[i] = i * n;
}

unsigned grid_for(int64_t work) {
  return static_cast<unsigned>(std::min<int64_t>((work + kThreads - 1) / kThreads, int64_t(1) << 20));
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();
    (Error(ErrorKind::backend, std::string("sort: ") + what + ": " + cudaGetErrorString(e))).raise();
  }
}

template <class T>
T* ptr(const std::shared_ptr<Data>& d) {
  return static_cast<T*>(d->ptr);
}

// Sorts the (key, position) pairs of every row: one device-wide radix sort
// per row when rows are few and long (the segmented sort gives each row one
// block), else the segmented sort. Both are stable.
template <class K>
void sort_pairs(const K* keys, K* keys_out, const uint32_t* pos, uint32_t* pos_out, const RowLayout& l,
                Stream st, cudaStream_t s) {
  size_t bytes = 0;
  if (l.n >= (1 << 16) && l.rows <= 64) {
    int n = static_cast<int>(l.n);
    check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, keys_out, pos, pos_out, n, 0,
                                          int(sizeof(K) * 8), s),
          "DeviceRadixSort");
    auto tmp = allocate(bytes, st);
    for (int64_t r = 0; r < l.rows; ++r) {
      int64_t at = r * l.n;
      check(cub::DeviceRadixSort::SortPairs(tmp->ptr, bytes, keys + at, keys_out + at, pos + at, pos_out + at, n, 0,
                                            int(sizeof(K) * 8), s),
            "DeviceRadixSort");
    }
    return;
  }
  auto offs = allocate(static_cast<size_t>(l.rows + 1) * sizeof(int64_t), st);
  segment_offsets_kernel<<<grid_for(l.rows + 1), kThreads, 0, s>>>(ptr<int64_t>(offs), l.rows, l.n);
  check(cudaGetLastError(), "segment offsets");
  const int64_t* begin = ptr<int64_t>(offs);
  int64_t total = l.rows * l.n;
  check(cub::DeviceSegmentedSort::StableSortPairs(nullptr, bytes, keys, keys_out, pos, pos_out, total, l.rows,
                                                  begin, begin + 1, s),
        "DeviceSegmentedSort");
  auto tmp = allocate(bytes, st);
  check(cub::DeviceSegmentedSort::StableSortPairs(tmp->ptr, bytes, keys, keys_out, pos, pos_out, total, l.rows,
                                                  begin, begin + 1, s),
        "DeviceSegmentedSort");
}

}  // namespace

void sort_rows(const Array& in, Array& out, const RowLayout& l, bool arg, Stream st, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  int64_t total = l.rows * l.n;
  if (total == 0) return;
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = key_t<T>;
    const T* x = static_cast<const T*>(in.desc()->data->ptr);
    auto keys = allocate(static_cast<size_t>(total) * sizeof(K), st);
    auto pos = allocate(static_cast<size_t>(total) * sizeof(uint32_t), st);
    keys_kernel<T><<<grid_for(total), kThreads, 0, s>>>(x, ptr<K>(keys), ptr<uint32_t>(pos), l, total);
    check(cudaGetLastError(), "key kernel");
    std::shared_ptr<Data> keys2, pos2;
    const uint32_t* sorted = ptr<uint32_t>(pos);
    if (l.n > 1) {  // rows of one element are sorted already
      keys2 = allocate(static_cast<size_t>(total) * sizeof(K), st);
      pos2 = allocate(static_cast<size_t>(total) * sizeof(uint32_t), st);
      sort_pairs<K>(ptr<K>(keys), ptr<K>(keys2), ptr<uint32_t>(pos), ptr<uint32_t>(pos2), l, st, s);
      sorted = ptr<uint32_t>(pos2);
    }
    void* o = static_cast<char*>(out.desc()->data->ptr) + out.desc()->offset * out.itemsize();
    if (arg) output_kernel<T, true><<<grid_for(total), kThreads, 0, s>>>(x, sorted, o, l, total);
    else output_kernel<T, false><<<grid_for(total), kThreads, 0, s>>>(x, sorted, o, l, total);
    check(cudaGetLastError(), "output kernel");
  });
}

}  // namespace nuvec::cuda
