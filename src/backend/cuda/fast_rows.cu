// RMSNorm, AddRMSNorm and LayerNorm on the GPU (fast_kernels.h), through
// the row machinery of fast_rows.cuh (layout, prefetch, determinism).
//
// Rows up to 16384 elements (32768 for 16-bit RMSNorm and LayerNorm) are
// held in registers: one read, the statistics from the registers (the
// mean, then the mean of squared deviations for LayerNorm), one write;
// the weight and bias come from the thread's shared-memory copy. Longer
// rows: a block per row, two passes (RMSNorm; AddRMSNorm writes h in the
// first and reads it back in the second) or three (LayerNorm: mean,
// centered variance, output), the later ones mostly L2 hits.
#include "backend/cuda/fast_rows.cuh"

namespace nuvec::cuda::fastk {

namespace {

// y = round(xs * r), then * w and + b in T where given (the parameters'
// slots 0 and 1); stored at the thread's chunks.
template <class T, class C, bool VEC>
__device__ __forceinline__ void store_scaled(T* out, const RowAt& at,
                                             const float (&xs)[C::K * kVec<T>],
                                             float r, const Chunk<T>* prm,
                                             bool has_w, bool has_b) {
  constexpr int V = kVec<T>;
  T* const o = opaque(out + at.off);
#pragma unroll
  for (int k = 0; k < C::K; ++k) {
    float f[V];
#pragma unroll
    for (int v = 0; v < V; ++v) f[v] = xs[k * V + v] * r;
    Chunk<T> y = narrow_chunk<T>(f);
    if (has_w) y = apply<kn::Multiply>(y, param_chunk<T, C>(prm, 0, k));
    if (has_b) y = apply<kn::Add>(y, param_chunk<T, C>(prm, 1, k));
    store_chunk(o, at.chunk<C, T>(k), at.len, VEC, y);
  }
}

template <class T, bool ADD>
struct RmsOp {
  static constexpr int kSources = ADD ? 2 : 1, kParams = 1;
  using Aux = int;
  const T *x, *res, *w;
  T *h, *out;
  float inv_n, eps;
  template <class C>
  struct Shared {
    float v[C::RPB][C::W];
  };
  __device__ const T* src(int s) const { return s == 0 ? x : res; }
  __device__ const T* param(int) const { return w; }
  __device__ Aux aux(int64_t, int64_t) const { return 0; }
  template <class C, bool VEC>
  __device__ void row(Chunk<T> (&p)[kSources][C::K], Aux, const RowAt& at,
                      Shared<C>& sh, const Chunk<T>* prm) const {
    if constexpr (ADD) {
      T* const hr = opaque(h + at.off);
#pragma unroll
      for (int k = 0; k < C::K; ++k) {
        p[0][k] = apply<kn::Add>(p[0][k], p[1][k]);
        store_chunk(hr, at.chunk<C, T>(k), at.len, VEC, p[0][k]);
      }
    }
    float xs[C::K * kVec<T>], acc = 0.0f;
    to_floats<T, C, VEC>(p[0], at, 0.0f, xs);
#pragma unroll
    for (int i = 0; i < C::K * kVec<T>; ++i) acc = acc + xs[i] * xs[i];
    const float r =
        kn::Rsqrt{}(group_all<C::TPR>(acc, sh.v[at.g], Sum{}) * inv_n + eps);
    store_scaled<T, C, VEC>(out, at, xs, r, prm, w != nullptr, false);
  }
};

template <class T>
struct LayerOp {
  static constexpr int kSources = 1, kParams = 2;
  using Aux = int;
  const T *x, *w, *b;
  T* out;
  float inv_n, eps;
  template <class C>
  struct Shared {
    float v[2][C::RPB][C::W];
  };
  __device__ const T* src(int) const { return x; }
  __device__ const T* param(int q) const { return q == 0 ? w : b; }
  __device__ Aux aux(int64_t, int64_t) const { return 0; }
  template <class C, bool VEC>
  __device__ void row(Chunk<T> (&p)[1][C::K], Aux, const RowAt& at,
                      Shared<C>& sh, const Chunk<T>* prm) const {
    float xs[C::K * kVec<T>], acc = 0.0f;
    to_floats<T, C, VEC>(p[0], at, 0.0f, xs);
#pragma unroll
    for (int i = 0; i < C::K * kVec<T>; ++i) acc = acc + xs[i];
    const float mu = group_all<C::TPR>(acc, sh.v[0][at.g], Sum{}) * inv_n;
    acc = 0.0f;
#pragma unroll
    for (int i = 0; i < C::K * kVec<T>; ++i) {
      xs[i] = at.has<C, T, VEC>(i) ? xs[i] - mu : 0.0f;
      acc = acc + xs[i] * xs[i];
    }
    const float r =
        kn::Rsqrt{}(group_all<C::TPR>(acc, sh.v[1][at.g], Sum{}) * inv_n + eps);
    store_scaled<T, C, VEC>(out, at, xs, r, prm, w != nullptr, b != nullptr);
  }
};

// ---- Longer rows ----

template <class T, bool ADD, bool VEC>
__global__ void __launch_bounds__(kST, kSMinBlocks)
    rms_stream(const RmsOp<T, ADD> op, int64_t rows, int64_t n) {
  enter_held_kernel();
  constexpr int V = kVec<T>, B = kChunks<T>;
  __shared__ float sh[kSW];
  NUVEC_WALK_SLOTS(ADD ? 2 : 1);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t off = r * n;
    float acc = 0.0f;
    Walk<T, VEC, ADD ? 2 : 1> first{slots, {op.x + off}, n};
    if constexpr (ADD) first.src[1] = op.res + off;
    first([&](int64_t i, auto& p) {
#pragma unroll
      for (int j = 0; j < B; ++j) {
        if constexpr (ADD) {
          p[0][j] = apply<kn::Add>(p[0][j], p[1][j]);
          store_chunk(op.h + off, i + j * first.kStep, n, VEC, p[0][j]);
        }
        float f[V];
        widen_chunk<T>(p[0][j], f);
#pragma unroll
        for (int v = 0; v < V; ++v) acc = acc + f[v] * f[v];
      }
    });
    // (The reduction's barrier also orders h's stores before the reads.)
    const float rr =
        kn::Rsqrt{}(group_all<kST>(acc, sh, Sum{}) * op.inv_n + op.eps);
    Walk<T, VEC, 1> second{slots, {(ADD ? op.h : op.x) + off}, n};
    second([&](int64_t i, auto& p) {
#pragma unroll
      for (int j = 0; j < B; ++j) {
        float f[V];
        widen_chunk<T>(p[0][j], f);
#pragma unroll
        for (int v = 0; v < V; ++v) f[v] = f[v] * rr;
        Chunk<T> y = narrow_chunk<T>(f);
        const int64_t e = i + j * second.kStep;
        if (op.w) y = apply<kn::Multiply>(y, load_chunk(op.w, e, n, VEC));
        store_chunk(op.out + off, e, n, VEC, y);
      }
    });
    if (r + gridDim.x < rows) __syncthreads();
  }
}

template <class T, bool VEC>
__global__ void __launch_bounds__(kST, kSMinBlocks)
    layer_stream(const LayerOp<T> op, int64_t rows, int64_t n) {
  enter_held_kernel();
  constexpr int V = kVec<T>, B = kChunks<T>;
  __shared__ float sh[2][kSW];
  NUVEC_WALK_SLOTS(1);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t off = r * n;
    const Walk<T, VEC, 1> walk{slots, {op.x + off}, n};
    float acc = 0.0f;
    walk([&](int64_t, auto& p) {
#pragma unroll
      for (int j = 0; j < B; ++j) {
        float f[V];
        widen_chunk<T>(p[0][j], f);
#pragma unroll
        for (int v = 0; v < V; ++v) acc = acc + f[v];
      }
    });
    const float mu = group_all<kST>(acc, sh[0], Sum{}) * op.inv_n;
    acc = 0.0f;
    walk([&](int64_t i, auto& p) {
#pragma unroll
      for (int j = 0; j < B; ++j) {
        float f[V];
        widen_chunk<T>(p[0][j], f);
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const float d = walk.has(i, j * V + v) ? f[v] - mu : 0.0f;
          acc = acc + d * d;
        }
      }
    });
    const float rr =
        kn::Rsqrt{}(group_all<kST>(acc, sh[1], Sum{}) * op.inv_n + op.eps);
    walk([&](int64_t i, auto& p) {
#pragma unroll
      for (int j = 0; j < B; ++j) {
        float f[V];
        widen_chunk<T>(p[0][j], f);
#pragma unroll
        for (int v = 0; v < V; ++v) f[v] = (f[v] - mu) * rr;
        Chunk<T> y = narrow_chunk<T>(f);
        const int64_t e = i + j * walk.kStep;
        if (op.w) y = apply<kn::Multiply>(y, load_chunk(op.w, e, n, VEC));
        if (op.b) y = apply<kn::Add>(y, load_chunk(op.b, e, n, VEC));
        store_chunk(op.out + off, e, n, VEC, y);
      }
    });
    if (r + gridDim.x < rows) __syncthreads();
  }
}

// ---- Host side ----

template <bool ADD>
void launch_rms(DType t, const void* x, const void* res, const void* w, void* h,
                void* out, int64_t rows, int n, float eps, cudaStream_t s) {
  with_type(t, ADD ? "AddRMSNorm" : "RMSNorm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const RmsOp<T, ADD> op{static_cast<const T*>(x),
                           static_cast<const T*>(res),
                           static_cast<const T*>(w),
                           static_cast<T*>(h),
                           static_cast<T*>(out),
                           inv_len(n),
                           eps};
    launch_rows<T, 4>(op, rows, n, vec_ok<T>(n, {x, res, w, h, out}), s,
                      [&](auto v) {
                        hold_launch(rms_stream<T, ADD, decltype(v)::value>, grid_of(rows), kST, 0, s,
                                    ADD ? "AddRMSNorm" : "RMSNorm", op, rows, n);
                      });
  });
  ew::check_launch(ADD ? "AddRMSNorm" : "RMSNorm");
}

}  // namespace

bool supports(DType t) { return t == float32 || t == float16 || t == bfloat16; }

void rms_norm(DType t, const void* x, const void* w, void* out, int64_t rows,
              int n, float eps, void* stream) {
  if (rows <= 0 || n <= 0) return;
  launch_rms<false>(t, x, nullptr, w, nullptr, out, rows, n, eps,
                    static_cast<cudaStream_t>(stream));
}

void add_rms_norm(DType t, const void* x, const void* residual, const void* w,
                  void* h, void* out, int64_t rows, int n, float eps,
                  void* stream) {
  if (rows <= 0 || n <= 0) return;
  launch_rms<true>(t, x, residual, w, h, out, rows, n, eps,
                   static_cast<cudaStream_t>(stream));
}

void layer_norm(DType t, const void* x, const void* w, const void* b, void* out,
                int64_t rows, int n, float eps, void* stream) {
  if (rows <= 0 || n <= 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  with_type(t, "LayerNorm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const LayerOp<T> op{static_cast<const T*>(x),
                        static_cast<const T*>(w),
                        static_cast<const T*>(b),
                        static_cast<T*>(out),
                        inv_len(n),
                        eps};
    launch_rows<T, 4>(op, rows, n, vec_ok<T>(n, {x, w, b, out}), s,
                      [&](auto v) {
                        hold_launch(layer_stream<T, decltype(v)::value>, grid_of(rows), kST, 0, s,
                                    "LayerNorm", op, rows, n);
                      });
  });
  ew::check_launch("LayerNorm");
}

}  // namespace nuvec::cuda::fastk
