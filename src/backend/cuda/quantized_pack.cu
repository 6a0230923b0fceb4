// Quantize and Dequantize on the GPU with the CPU's bits (the arithmetic of
// docs/quantization.md, through the scalar pieces of kernels/quant.h and
// nuvec's 16-bit types, compiled without contraction), the dequantized
// slabs the many-row products hand to cuBLAS, and cuBLAS pointer arrays.
// Quantize: one thread per group (two passes over its elements: the
// statistics, then the codes, packed into the group's own words, so no
// two threads write one word). Dequantize: one thread per element.
#include "backend/cuda/quantized.cuh"

namespace nuvec::cuda::quantk {

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float rint_of(float x) { return rintf(x); }
__device__ __forceinline__ double rint_of(double x) { return rint(x); }

// 2^e exactly (0 below the smallest subnormal, inf above the largest).
template <class C>
__device__ __forceinline__ C pow2(int e) {
  if constexpr (sizeof(C) == 4) {
    if (e > 127) return __int_as_float(0x7F800000);
    if (e < -149) return 0.0f;
    if (e < -126) return __int_as_float(1 << (e + 149));
    return __int_as_float((e + 127) << 23);
  } else {
    if (e > 1023) return __longlong_as_double(0x7FF0000000000000ll);
    if (e < -1074) return 0.0;
    if (e < -1022) return __longlong_as_double(1ll << (e + 1074));
    return __longlong_as_double(static_cast<long long>(e + 1023) << 52);
  }
}

// Writes codes of `bits` bits one after another into consecutive words.
struct BitWriter {
  u32* dst;
  unsigned long long acc = 0;
  int nb = 0;
  __device__ void put(u32 q, int bits) {
    acc |= static_cast<unsigned long long>(q) << nb;
    nb += bits;
    if (nb >= 32) {
      *dst++ = static_cast<u32>(acc);
      acc >>= 32;
      nb -= 32;
    }
  }
};

// The FP4 code nearest to v, in T's arithmetic: the first j minimizing
// |T(v - lut[j])| (ties to the lower index).
template <class T>
__device__ u32 fp4_code(acc_t<T> v) {
  using C = acc_t<T>;
  u32 best = 0;
  C bd = 0;
  for (u32 j = 0; j < 16; ++j) {
    C d = round_to<T>(v - C(qk::fp4_value(j)));
    d = d < C(0) ? -d : d;
    if (j == 0 || d < bd) {
      bd = d;
      best = j;
    }
  }
  return best;
}

template <class T>
__global__ void quantize_affine(const T* w, u32* wq, T* scales, T* biases, int64_t groups,
                                int group, int bits) {
  using C = acc_t<T>;
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= groups) return;
  const T* src = w + g * group;
  C wmax = C(src[0]), wmin = wmax;
  for (int i = 1; i < group; ++i) {
    C v = C(src[i]);
    wmax = v > wmax ? v : wmax;
    wmin = v < wmin ? v : wmin;
  }
  const C n_bins = C((1 << bits) - 1);
  C scale = (wmax - wmin) / n_bins;
  const C eps = C(1e-7f);
  scale = scale < eps ? eps : scale;
  C bias = wmin;
  if (bits > 1) {
    // As MLX (and the CPU): the grid moves so that the edge of larger
    // magnitude is exact; 1 bit keeps the minimum and the step.
    const bool mask = (wmin < C(0) ? -wmin : wmin) > (wmax < C(0) ? -wmax : wmax);
    scale = mask ? scale : -scale;
    const C edge = mask ? wmin : wmax;
    const C q0 = rint_of(edge / scale);
    bias = 0;
    if (q0 != C(0)) {
      scale = edge / q0;
      bias = edge;
    }
  }
  BitWriter out{wq + g * group * bits / 32};
  for (int i = 0; i < group; ++i) {
    C q = rint_of((C(src[i]) - bias) / scale);
    q = q < C(0) ? C(0) : (q > n_bins ? n_bins : q);
    out.put(u32(q), bits);
  }
  scales[g] = T(scale);
  biases[g] = T(bias);
}

// mxfp4, mxfp8 (E8M0 scales) and nvfp4 (FP8 scales), all in T's
// arithmetic (each step rounded to T).
template <class T>
__global__ void quantize_float(const T* w, u32* wq, u8* scales, int64_t groups, int group, int bits,
                               QuantMode mode) {
  using C = acc_t<T>;
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= groups) return;
  const T* src = w + g * group;
  C amax = 0;
  for (int i = 0; i < group; ++i) {
    C v = C(src[i]);
    v = v < C(0) ? -v : v;
    amax = i == 0 || v > amax ? v : amax;
  }
  C div;  // what each element is divided by
  if (mode == QuantMode::nvfp4) {
    const C s = round_to<T>(amax / C(6));
    const u8 code = qk::fp8_code(float(s));
    div = round_to<T>(C(qk::fp8_value(code)));
    scales[g] = code;
  } else {
    const C maxval = mode == QuantMode::mxfp8 ? C(448) : C(6);
    const C s = round_to<T>(amax / maxval);
    // The smallest power of two that keeps the group's largest value in
    // range, as the CPU and MLX: ceil of log2(s) rounded to T (log2 taken
    // in double and rounded, the correctly rounded value the C library's
    // log2f gives the CPU).
    int e = 0;
    if (s != C(0)) e = int(ceil(double(round_to<T>(C(log2(double(s)))))));
    div = round_to<T>(pow2<C>(e));
    scales[g] = static_cast<u8>(e + 127);
  }
  BitWriter out{wq + g * group * bits / 32};
  for (int i = 0; i < group; ++i) {
    const C v = round_to<T>(C(src[i]) / div);
    out.put(mode == QuantMode::mxfp8 ? u32(qk::fp8_code(float(v))) : fp4_code<T>(v), bits);
  }
}

// One element's value, as Dequantize defines it, in dtype O.
template <class T, class O>
__device__ __forceinline__ O value_of(u32 code, const void* scales, const void* biases, int64_t g,
                                      QuantMode mode) {
  if (mode == QuantMode::affine) {
    using C = acc_t<T>;
    const C s = C(static_cast<const T*>(scales)[g]);
    const C b = C(static_cast<const T*>(biases)[g]);
    const T v1 = T(s * C(code));
    const T v = T(C(v1) + b);
    return kn::Cast<O>{}(v);
  }
  const u8 sc = static_cast<const u8*>(scales)[g];
  const float val = mode == QuantMode::mxfp8 ? qk::fp8_value(u8(code)) : qk::fp4_value(code);
  const float s = mode == QuantMode::nvfp4 ? qk::fp8_value(sc) : qk::e8m0_value(sc);
  return kn::Cast<O>{}(val * s);
}

template <class T, class O>
__global__ void dequantize_kernel(const u32* wq, const void* scales, const void* biases, O* out,
                                  int64_t total, int64_t k, int group, int bits, QuantMode mode) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int64_t r = i / k, c = i - r * k;
  const u32 code = qk::unpack(wq + r * (k * bits / 32), c, bits);
  out[i] = value_of<T, O>(code, scales, biases, r * (k / group) + c / group, mode);
}

// Slab element i of dtype T (the scales' dtype for affine).
template <class T>
__global__ void slab_kernel(Packed p, const uint32_t* rhs, int64_t i0, int64_t total,
                            bool transpose, int c0, int nc, T* out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int64_t per = int64_t(transpose ? nc : p.rows) * (transpose ? p.cols : nc);
  const int64_t j = i / per, e = i - j * per;
  const int inner = transpose ? p.cols : nc;
  int64_t r = e / inner, c = e - r * inner;
  if (transpose) r += c0;
  else c += c0;
  const int64_t mat = pick(rhs, i0 + j, p.count);
  const int bits = p.q.bits, group = p.q.group_size;
  const int64_t row = mat * p.rows + r;
  const u32 code = qk::unpack(p.w + row * (int64_t(p.cols) * bits / 32), c, bits);
  out[i] = value_of<T, T>(code, p.scales, p.biases, row * (p.cols / group) + c / group, p.q.mode);
}

__global__ void pointers_kernel(const char* base, int64_t stride, const uint32_t* idx,
                                int64_t count, int64_t i0, int n, const void** ptrs) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) ptrs[j] = base + pick(idx, i0 + j, count) * stride;
}

unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

}  // namespace

bool supports(DType t) { return t == float32 || t == float16 || t == bfloat16 || t == float64; }

void quantize(DType t, const QuantSpec& q, const void* w, uint32_t* wq, void* scales, void* biases,
              int64_t rows, int64_t k, void* stream) {
  const int64_t groups = rows * (k / q.group_size);
  if (groups == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  with_type(t, "Quantize", [&](auto tag) {
    using T = decltype(tag);
    if (q.mode == QuantMode::affine)
      quantize_affine<T><<<blocks(groups), kThreads, 0, s>>>(
          static_cast<const T*>(w), wq, static_cast<T*>(scales), static_cast<T*>(biases), groups,
          q.group_size, q.bits);
    else
      quantize_float<T><<<blocks(groups), kThreads, 0, s>>>(static_cast<const T*>(w), wq,
                                                            static_cast<u8*>(scales), groups,
                                                            q.group_size, q.bits, q.mode);
  });
  check_launch("Quantize");
}

void dequantize(DType t, DType out_t, const QuantSpec& q, const uint32_t* wq, const void* scales,
                const void* biases, void* out, int64_t rows, int64_t k, void* stream) {
  const int64_t total = rows * k;
  if (total == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  if (q.mode != QuantMode::affine) t = float32;  // unused: codes are uint8
  with_type(t, "Dequantize", [&](auto tt) {
    using T = decltype(tt);
    with_type(out_t, "Dequantize", [&](auto to) {
      using O = decltype(to);
      dequantize_kernel<T, O><<<blocks(total), kThreads, 0, s>>>(
          wq, scales, biases, static_cast<O*>(out), total, k, q.group_size, q.bits, q.mode);
    });
  });
  check_launch("Dequantize");
}

void dequantize_slab(DType t, const Packed& p, const uint32_t* rhs, int64_t i0, int items,
                     bool transpose, int c0, int nc, void* out, void* stream) {
  const int64_t total = int64_t(items) * nc * (transpose ? p.cols : p.rows);
  if (total == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  with_type(t, "QuantizedMatmul", [&](auto tag) {
    using T = decltype(tag);
    slab_kernel<T><<<blocks(total), kThreads, 0, s>>>(p, rhs, i0, total, transpose, c0, nc,
                                                      static_cast<T*>(out));
  });
  check_launch("QuantizedMatmul (dequantized slab)");
}

void gather_pointers(const void* base, int64_t stride, const uint32_t* idx, int64_t count,
                     int64_t i0, int n, const void** ptrs, void* stream) {
  if (n == 0) return;
  pointers_kernel<<<blocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const char*>(base), stride, idx, count, i0, n, ptrs);
  check_launch("gathered product (pointers)");
}

}  // namespace nuvec::cuda::quantk
