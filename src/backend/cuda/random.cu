// Random bits (Threefry-2x32 in MLX's counter layout, the CPU's
// kernels::threefry2x32, so the same bits as the CPU and MLX), with the
// unit-uniform epilogue.
#include <cuda_runtime.h>

#include <string>

#include "backend/cuda/cuda.h"
#include "nuvec/kernels/functors.h"
#include "nuvec/kernels/threefry.h"
#include "nuvec/primitives/random.h"

namespace nuvec::cuda {

namespace {

using kernels::U32Pair;

void check_launch(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) (Error(ErrorKind::backend, std::string(what) + ": " + cudaGetErrorString(e))).raise();
}

// Word w of key k's block of `bytes` bytes, the last one truncated.
__device__ __forceinline__ void put_word(unsigned char* block, int64_t bytes, int64_t w, unsigned v) {
  int64_t n = bytes - 4 * w;
  if (n >= 4 && ((reinterpret_cast<uintptr_t>(block) + 4 * w) % 4 == 0)) {
    *reinterpret_cast<unsigned*>(block + 4 * w) = v;
  } else {
    for (int64_t b = 0; b < n && b < 4; ++b) block[4 * w + b] = static_cast<unsigned char>(v >> (8 * b));
  }
}

// Thread i handles pair j = i % (half + odd) of key i / (half + odd): the
// words j and j + second from counter (j, j + second); for odd word counts
// the extra "pair" j = half writes word half from counter (half, 0).
__global__ void bits_kernel(const unsigned* keys, int64_t key_stride, int64_t key_word_stride,
                            unsigned char* out, int64_t num_keys, int64_t bytes) {
  const int64_t words = (bytes + 3) / 4, half = words / 2, odd = words % 2;
  const int64_t second = half + odd, per_key = half + odd;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= num_keys * per_key) return;
  int64_t k = i / per_key, j = i % per_key;
  U32Pair key{keys[k * key_stride], keys[k * key_stride + key_word_stride]};
  unsigned char* block = out + k * bytes;
  if (j < half) {
    U32Pair r = kernels::threefry2x32(key, {static_cast<unsigned>(j), static_cast<unsigned>(j + second)});
    put_word(block, bytes, j, r.x0);
    put_word(block, bytes, j + second, r.x1);
  } else {
    put_word(block, bytes, half, kernels::threefry2x32(key, {static_cast<unsigned>(half), 0u}).x0);
  }
}

template <class T>
__global__ void uniform_kernel(const unsigned* keys, int64_t key_stride, int64_t key_word_stride, T* out,
                               int64_t num_keys, int64_t count, float upper) {
  const int64_t half = count / 2, odd = count % 2, second = half + odd, per_key = half + odd;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= num_keys * per_key) return;
  int64_t k = i / per_key, j = i % per_key;
  U32Pair key{keys[k * key_stride], keys[k * key_stride + key_word_stride]};
  auto store = [&](int64_t w, unsigned v) {
    float f = kernels::Divide{}(kernels::Cast<float>{}(v), 4294967295.0f);
    out[k * count + w] = kernels::Cast<T>{}(kernels::Minimum{}(f, upper));
  };
  if (j < half) {
    U32Pair r = kernels::threefry2x32(key, {static_cast<unsigned>(j), static_cast<unsigned>(j + second)});
    store(j, r.x0);
    store(j + second, r.x1);
  } else {
    store(half, kernels::threefry2x32(key, {static_cast<unsigned>(half), 0u}).x0);
  }
}

unsigned blocks(int64_t n) { return static_cast<unsigned>((n + 255) / 256); }

}  // namespace

void launch_random_bits(const RandomBits& p, const Array& keys, Array& out, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  int64_t num_keys = keys.size() / 2;
  if (out.size() == 0 || num_keys == 0) return;
  // Keys are rows of (num_keys, 2); a dense batch, or one key, is needed.
  const auto& st = keys.strides();
  int64_t word_stride = st.back();
  int64_t key_stride = keys.ndim() >= 2 ? st[keys.ndim() - 2] : 0;
  if (keys.ndim() > 2 && !keys.desc()->row_contiguous)
    (Error(ErrorKind::backend, "GPU random bits need a dense batch of keys")).raise();
  const unsigned* kp = static_cast<const unsigned*>(keys.desc()->data->ptr) + keys.desc()->offset;
  int64_t count = out.size() / num_keys;
  if (p.unit_uniform()) {
    int64_t threads = num_keys * (count / 2 + count % 2);
    float upper = p.unit_uniform()->upper;
    DType d = p.unit_uniform()->dtype;
    if (d == float32)
      uniform_kernel<float><<<blocks(threads), 256, 0, s>>>(kp, key_stride, word_stride, static_cast<float*>(out.desc()->data->ptr), num_keys, count, upper);
    else if (d == float16)
      uniform_kernel<float16_t><<<blocks(threads), 256, 0, s>>>(kp, key_stride, word_stride, static_cast<float16_t*>(out.desc()->data->ptr), num_keys, count, upper);
    else
      uniform_kernel<bfloat16_t><<<blocks(threads), 256, 0, s>>>(kp, key_stride, word_stride, static_cast<bfloat16_t*>(out.desc()->data->ptr), num_keys, count, upper);
    return check_launch("uniform");
  }
  int64_t bytes = count * p.width();
  int64_t words = (bytes + 3) / 4;
  int64_t threads = num_keys * (words / 2 + words % 2);
  bits_kernel<<<blocks(threads), 256, 0, s>>>(kp, key_stride, word_stride,
                                              static_cast<unsigned char*>(out.desc()->data->ptr), num_keys, bytes);
  check_launch("random bits");
}

}  // namespace nuvec::cuda
