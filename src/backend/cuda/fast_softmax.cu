// Softmax, LogSumExp, CrossEntropy and its gradient on the GPU
// (fast_kernels.h), through the row machinery of fast_rows.cuh.
//
// Rows up to 16384 elements (32768 for the 16-bit types but the float16
// gradient) are held in registers: read once, the max, the terms e^(x - max)
// and their sum from the registers, the outputs (softmax, the gradient) written
// once. Longer rows: a block per row keeps an online (max, sum) per thread,
// rescaled when a batch raises the max (logsumexp and cross entropy read the
// row once; softmax and the gradient twice, the second pass mostly L2 hits).
//
// Exponentials (fast_rows.cuh): exp_shifted for the sums of logsumexp and
// cross entropy and for the 16-bit outputs of softmax and the gradient,
// exp_accurate for their float32 outputs. The quotients are products by
// the reciprocal of the row's sum (one IEEE division per row: 1 ulp more
// than a division at most).
#include "backend/cuda/fast_rows.cuh"

namespace nuvec::cuda::fastk {

namespace {

// The thread's max of xs (the row's elements, -inf past its end).
template <int N>
__device__ __forceinline__ float max_of(const float (&xs)[N]) {
  float m = -kInf;
#pragma unroll
  for (int i = 0; i < N; ++i) m = fmaxf(m, xs[i]);
  return m;
}

// xs[i] = e(xs[i]); returns their sum (past the end: e(-inf) = +0).
template <class E, int N>
__device__ __forceinline__ float terms_sum(const E& e, float (&xs)[N]) {
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    xs[i] = e(xs[i]);
    s = s + xs[i];
  }
  return s;
}

// Raw rows (logsumexp and the cross entropies keep the chunks, 16 bits an
// element, instead of floats): elements past the row's end become -inf.
template <class T>
__device__ __forceinline__ u32 neg_inf_word() {  // a 32-bit word of -inf
  if constexpr (std::is_same_v<T, float>)
    return 0xff800000u;
  else if constexpr (std::is_same_v<T, kn::bfloat16_t>)
    return 0xff80ff80u;
  else
    return 0xfc00fc00u;
}
template <class T>
__device__ __forceinline__ T bit_pad() {  // one element of -inf
  if constexpr (std::is_same_v<T, float>)
    return -kInf;
  else
    return T::from_bits(static_cast<unsigned short>(neg_inf_word<T>()));
}
template <class T, class C, bool VEC>
__device__ __forceinline__ void pad_chunks(Chunk<T> (&p)[C::K],
                                           const RowAt& at) {
#pragma unroll
  for (int k = 0; k < C::K; ++k) {
    if constexpr (VEC) {  // whole chunks
      u32 w[4];
      memcpy(w, &p[k], 16);
      const bool in = at.has<C, T, VEC>(k * kVec<T>);
#pragma unroll
      for (int j = 0; j < 4; ++j) w[j] = in ? w[j] : neg_inf_word<T>();
      memcpy(&p[k], w, 16);
    } else {
      const T pad = bit_pad<T>();
#pragma unroll
      for (int v = 0; v < kVec<T>; ++v)
        if (!at.has<C, T, VEC>(k * kVec<T> + v)) p[k].v[v] = pad;
    }
  }
}
// max of two pairs of 16-bit values (fmaxf's rule: a NaN loses).
template <class T>
__device__ __forceinline__ u32 max2(u32 a, u32 b) {
  u32 d;
  if constexpr (std::is_same_v<T, kn::bfloat16_t>)
    asm("max.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  else
    asm("max.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
// The max of a thread's chunks (16-bit: pairs at a time, exact).
template <class T, int K>
__device__ __forceinline__ float chunks_max(const Chunk<T> (&p)[K]) {
  if constexpr (kHalf<T>) {
    u32 m = neg_inf_word<T>();
#pragma unroll
    for (int k = 0; k < K; ++k) {
      u32 w[4];
      memcpy(w, &p[k], 16);
#pragma unroll
      for (int j = 0; j < 4; ++j) m = max2<T>(m, w[j]);
    }
    Chunk<T> c;
    u32 w[4] = {m, m, m, m};
    memcpy(&c, w, 16);
    float f[kVec<T>];
    widen_chunk<T>(c, f);
    return fmaxf(f[0], f[1]);
  } else {
    float m = -kInf;
#pragma unroll
    for (int k = 0; k < K; ++k) {
#pragma unroll
      for (int v = 0; v < 4; ++v) m = fmaxf(m, p[k].v[v]);
    }
    return m;
  }
}
template <class T, int K, class E>
__device__ __forceinline__ float chunks_terms_sum(const E& e,
                                                  const Chunk<T> (&p)[K]) {
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    float f[kVec<T>];
    widen_chunk<T>(p[k], f);
#pragma unroll
    for (int v = 0; v < kVec<T>; ++v) s = s + e(f[v]);
  }
  return s;
}

// A max and a sum, reduced together (cross entropy with smoothing).
struct MaxSum {
  float m, sx;
};
struct MaxSumOp {
  __device__ MaxSum operator()(const MaxSum& a, const MaxSum& b) const {
    return {fmaxf(a.m, b.m), a.sx + b.sx};
  }
};

template <class T>
struct SoftmaxOp {
  static constexpr int kSources = 1, kParams = 0;
  using Aux = int;
  const T* x;
  T* out;
  template <class C>
  struct Shared {
    float v[2][C::RPB][C::W];
  };
  __device__ const T* src(int) const { return x; }
  __device__ const T* param(int) const { return nullptr; }
  __device__ Aux aux(int64_t, int64_t) const { return 0; }
  template <class C, bool VEC>
  __device__ void row(Chunk<T> (&p)[1][C::K], Aux, const RowAt& at,
                      Shared<C>& sh, const Chunk<T>*) const {
    constexpr int N = C::K * kVec<T>, V = kVec<T>;
    pad_chunks<T, C, VEC>(p[0], at);
    const float m = group_all<C::TPR>(chunks_max(p[0]), sh.v[0][at.g], Max{});
    float xs[N];
#pragma unroll
    for (int k = 0; k < C::K; ++k) widen_chunk<T>(p[0][k], &xs[k * V]);
    const float s =
        group_all<C::TPR>(terms_sum(OutTerms<T>(m), xs), sh.v[1][at.g], Sum{});
    const float inv = kn::Divide{}(1.0f, s);
    T* const o = opaque(out + at.off);
#pragma unroll
    for (int k = 0; k < C::K; ++k) {
      float f[V];
#pragma unroll
      for (int v = 0; v < V; ++v) f[v] = xs[k * V + v] * inv;
      store_chunk(o, at.chunk<C, T>(k), at.len, VEC, narrow_chunk<T>(f));
    }
  }
};

template <class T>
struct LogSumExpOp {
  static constexpr int kSources = 1, kParams = 0;
  using Aux = int;
  const T* x;
  T* out;
  template <class C>
  struct Shared {
    float v[2][C::RPB][C::W];
  };
  __device__ const T* src(int) const { return x; }
  __device__ const T* param(int) const { return nullptr; }
  __device__ Aux aux(int64_t, int64_t) const { return 0; }
  template <class C, bool VEC>
  __device__ void row(Chunk<T> (&p)[1][C::K], Aux, const RowAt& at,
                      Shared<C>& sh, const Chunk<T>*) const {
    pad_chunks<T, C, VEC>(p[0], at);
    const float m =
        shift_of(group_all<C::TPR>(chunks_max(p[0]), sh.v[0][at.g], Max{}));
    const float s = group_all<C::TPR>(chunks_terms_sum(Terms<false>(m), p[0]),
                                      sh.v[1][at.g], Sum{});
    if (at.lt == 0 && at.active) out[at.r] = narrow<T>(kn::Log{}(s) + m);
  }
};

struct CeArgs {
  const int32_t* targets;
  float* out;  // the losses (forward)
  int n;
  float smoothing, keep, inv_n;
  bool has_ignore;
  int ignore;
  __device__ float loss(float lse, float picked, float sx) const {
    if (!(smoothing > 0.0f)) return lse - picked;
    return (lse - picked * keep) - (sx * inv_n) * smoothing;
  }
  // Whether the row gets a constant: ignored, or its target outside [0, n).
  __device__ bool skipped(int t) const {
    return (has_ignore && t == ignore) || t < 0 || t >= n;
  }
  __device__ float skipped_value(int t) const {
    return has_ignore && t == ignore ? 0.0f : __builtin_nanf("");
  }
};

template <class T>
struct CrossEntropyOp {
  static constexpr int kSources = 1, kParams = 0;
  using Aux = int;
  const T* logits;
  CeArgs a;
  template <class C>
  struct Shared {
    float v[2][C::RPB][C::W];
    MaxSum ms[C::RPB][C::W];
  };
  __device__ const T* src(int) const { return logits; }
  __device__ const T* param(int) const { return nullptr; }
  __device__ Aux aux(int64_t r, int64_t rows) const {
    return r < rows ? a.targets[r] : 0;
  }
  template <class C, bool VEC>
  __device__ void row(Chunk<T> (&p)[1][C::K], Aux t, const RowAt& at,
                      Shared<C>& sh, const Chunk<T>*) const {
    // The thread whose chunks hold the target reads its logit again (an
    // L2 hit, in flight through the reductions) and writes the loss.
    const bool skip = a.skipped(t),
               mine = at.active && !skip && (t / kVec<T>) % C::TPR == at.lt;
    const float picked = mine ? widen(logits[at.off + t]) : 0.0f;
    float m, sx = 0.0f;
    pad_chunks<T, C, VEC>(p[0], at);
    if (a.smoothing > 0.0f) {
#pragma unroll
      for (int k = 0; k < C::K; ++k) {
        float f[kVec<T>];
        widen_chunk<T>(p[0][k], f);
#pragma unroll
        for (int v = 0; v < kVec<T>; ++v)
          sx = sx + (at.has<C, T, VEC>(k * kVec<T> + v) ? f[v] : 0.0f);
      }
      const MaxSum ms = group_all<C::TPR>(MaxSum{chunks_max(p[0]), sx},
                                          sh.ms[at.g], MaxSumOp{});
      m = ms.m, sx = ms.sx;
    } else {
      m = group_all<C::TPR>(chunks_max(p[0]), sh.v[0][at.g], Max{});
    }
    m = shift_of(m);
    const float s = group_all<C::TPR>(chunks_terms_sum(Terms<false>(m), p[0]),
                                      sh.v[1][at.g], Sum{});
    if (mine)
      a.out[at.r] = a.loss(kn::Log{}(s) + m, picked, sx);
    else if (skip && at.active && at.lt == 0)
      a.out[at.r] = a.skipped_value(t);
  }
};

// The gradient's per-row inputs: the target and the cotangent.
struct GradAux {
  int t;
  float g;
};

template <class T>
struct CrossEntropyGradOp {
  static constexpr int kSources = 1, kParams = 0;
  using Aux = GradAux;
  const T* logits;
  T* dl;
  const float* g;
  CeArgs a;
  float per_class;  // smoothing / n, as the CPU's
  template <class C>
  struct Shared {
    float v[2][C::RPB][C::W];
  };
  __device__ const T* src(int) const { return logits; }
  __device__ const T* param(int) const { return nullptr; }
  __device__ Aux aux(int64_t r, int64_t rows) const {
    return r < rows ? GradAux{a.targets[r], g[r]} : GradAux{0, 0.0f};
  }
  // d = g (p - per_class), p the row's softmax (the target's own term
  // subtracts keep first).
  __device__ float grad(float p, float gr) const {
    return gr * (a.smoothing > 0.0f ? p - per_class : p);
  }
  template <class C, bool VEC>
  __device__ void row(Chunk<T> (&p)[1][C::K], Aux ag, const RowAt& at,
                      Shared<C>& sh, const Chunk<T>*) const {
    constexpr int V = kVec<T>;
    const int t = ag.t;
    const bool skip = a.skipped(t),
               mine = at.active && !skip && (t / V) % C::TPR == at.lt;
    // The target's logit again (an L2 hit, in flight through the
    // reductions): its thread rewrites that element after its chunks.
    const float xt = mine ? widen(logits[at.off + t]) : 0.0f;
    // The raw chunks stay (the terms are computed again for the outputs:
    // registers are scarcer than ex2 here).
    pad_chunks<T, C, VEC>(p[0], at);
    const float m = group_all<C::TPR>(chunks_max(p[0]), sh.v[0][at.g], Max{});
    const OutTerms<T> e(m);
    const float s =
        group_all<C::TPR>(chunks_terms_sum(e, p[0]), sh.v[1][at.g], Sum{});
    if (!at.active) return;
    T* const o = opaque(dl + at.off);
    if (skip) {
      const Chunk<T> c = splat_chunk<T>(a.skipped_value(t));
#pragma unroll
      for (int k = 0; k < C::K; ++k)
        store_chunk(o, at.chunk<C, T>(k), at.len, VEC, c);
      return;
    }
    const float inv = kn::Divide{}(1.0f, s);
#pragma unroll
    for (int k = 0; k < C::K; ++k) {
      float f[V];
      widen_chunk<T>(p[0][k], f);
#pragma unroll
      for (int v = 0; v < V; ++v) f[v] = grad(e(f[v]) * inv, ag.g);
      store_chunk(o, at.chunk<C, T>(k), at.len, VEC, narrow_chunk<T>(f));
    }
    if (mine) o[t] = narrow<T>(grad(e(xt) * inv - a.keep, ag.g));
  }
};

// ---- Longer rows: one block of kST threads per row ----

// A thread's (or group's) running max m, sum s of the terms shifted by
// shift_of(m), and sum sx of x. Combining rescales each sum to the larger
// max (a sum of 0, from no finite element, stays 0: no 0 * inf).
struct Online {
  float m, s, sx;
};
template <bool ACC>
struct OnlineOp {
  __device__ Online operator()(const Online& a, const Online& b) const {
    const float m = fmaxf(a.m, b.m), mt = shift_of(m);
    const float sa =
        a.s == 0.0f ? 0.0f : a.s * Terms<ACC>::scale(shift_of(a.m), mt);
    const float sb =
        b.s == 0.0f ? 0.0f : b.s * Terms<ACC>::scale(shift_of(b.m), mt);
    return {m, sa + sb, a.sx + b.sx};
  }
};

// One pass over a row: each thread's Online state (its max raised a batch
// at a time, the sum rescaled then), combined over the block. `with_sum`:
// also the sum of x.
template <bool ACC, class T, bool VEC>
__device__ __forceinline__ Online online_row(const Walk<T, VEC, 1>& walk,
                                             bool with_sum, Online* sh) {
  constexpr int V = kVec<T>, N = kChunks<T> * kVec<T>;
  Online st{-kInf, 0.0f, 0.0f};
  walk([&](int64_t i, auto& p) {
    float xs[N];
#pragma unroll
    for (int j = 0; j < kChunks<T>; ++j) widen_chunk<T>(p[0][j], &xs[j * V]);
#pragma unroll
    for (int e = 0; e < N; ++e) xs[e] = walk.has(i, e) ? xs[e] : -kInf;
    const float bm = max_of(xs);
    if (with_sum) {
#pragma unroll
      for (int e = 0; e < N; ++e)
        st.sx = st.sx + (walk.has(i, e) ? xs[e] : 0.0f);
    }
    if (bm > st.m) {
      if (st.s != 0.0f)
        st.s = st.s * Terms<ACC>::scale(shift_of(st.m), shift_of(bm));
      st.m = bm;
    }
    st.s = st.s + terms_sum(Terms<ACC>(shift_of(st.m)), xs);
  });
  return group_all<kST>(st, sh, OnlineOp<ACC>{});
}

// The second pass of softmax and the gradient: f(i, e) for each element's
// term e^(x - m) / s, stored rounded.
template <class T, bool VEC, class F>
__device__ __forceinline__ void write_terms(const Walk<T, VEC, 1>& walk, T* out,
                                            const Online& st, F&& f) {
  constexpr int V = kVec<T>;
  // A non-finite max makes every output NaN, as exp(x - max) does on
  // the CPU (inf - inf, or a NaN sum).
  const float m = st.m,
              inv = kn::Divide{}(1.0f,
                                 kn::IsFinite{}(m) ? st.s : __builtin_nanf(""));
  const OutTerms<T> e(m);
  walk([&](int64_t i, auto& p) {
#pragma unroll
    for (int j = 0; j < kChunks<T>; ++j) {
      float x[V];
      widen_chunk<T>(p[0][j], x);
#pragma unroll
      for (int v = 0; v < V; ++v) x[v] = f(e(x[v]) * inv);
      store_chunk(out, i + j * walk.kStep, walk.n, VEC, narrow_chunk<T>(x));
    }
  });
}

template <class T, bool VEC>
__global__ void __launch_bounds__(kST, kSMinBlocks)
    softmax_stream(const SoftmaxOp<T> op, int64_t rows, int64_t n) {
  constexpr bool ACC = std::is_same_v<T, float>;
  __shared__ Online sh[kSW];
  NUVEC_WALK_SLOTS(1);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t off = r * n;
    const Walk<T, VEC, 1> walk{slots, {op.x + off}, n};
    const Online st = online_row<ACC>(walk, false, sh);
    write_terms(walk, op.out + off, st, [](float q) { return q; });
    if (r + gridDim.x < rows) __syncthreads();
  }
}

template <class T, bool VEC>
__global__ void __launch_bounds__(kST, kSMinBlocks)
    logsumexp_stream(const LogSumExpOp<T> op, int64_t rows, int64_t n) {
  __shared__ Online sh[kSW];
  NUVEC_WALK_SLOTS(1);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const Walk<T, VEC, 1> walk{slots, {op.x + r * n}, n};
    const Online st = online_row<false>(walk, false, sh);
    if (threadIdx.x == 0)
      op.out[r] = narrow<T>(kn::Log{}(st.s) + shift_of(st.m));
    if (r + gridDim.x < rows) __syncthreads();
  }
}

template <class T, bool VEC>
__global__ void __launch_bounds__(kST, kSMinBlocks)
    ce_stream(const CrossEntropyOp<T> op, int64_t rows, int64_t n) {
  __shared__ Online sh[kSW];
  NUVEC_WALK_SLOTS(1);
  const CeArgs& a = op.a;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int t = a.targets[r];
    // A skipped row touches no shared memory (the whole block skips it).
    if (a.skipped(t)) {
      if (threadIdx.x == 0) a.out[r] = a.skipped_value(t);
      continue;
    }
    const T* row = op.logits + r * n;
    // The thread whose chunks hold the target reads its logit (in flight
    // through the pass) and writes the loss.
    const bool mine = (t / kVec<T>) % kST == int(threadIdx.x);
    const float picked = mine ? widen(row[t]) : 0.0f;
    const Online st = online_row<false>(Walk<T, VEC, 1>{slots, {row}, n},
                                        a.smoothing > 0.0f, sh);
    if (mine)
      a.out[r] = a.loss(kn::Log{}(st.s) + shift_of(st.m), picked, st.sx);
    if (r + gridDim.x < rows) __syncthreads();
  }
}

template <class T, bool VEC>
__global__ void __launch_bounds__(kST, kSMinBlocks)
    ce_grad_stream(const CrossEntropyGradOp<T> op, int64_t rows, int64_t n) {
  constexpr bool ACC = std::is_same_v<T, float>;
  constexpr int V = kVec<T>;
  __shared__ Online sh[kSW];
  NUVEC_WALK_SLOTS(1);
  const CeArgs& a = op.a;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int t = a.targets[r];
    T* const o = op.dl + r * n;
    // A skipped row touches no shared memory (the whole block skips it).
    if (a.skipped(t)) {
      const Chunk<T> c = splat_chunk<T>(a.skipped_value(t));
      for (int64_t i = int64_t(threadIdx.x) * V; i < n; i += int64_t(kST) * V)
        store_chunk(o, i, n, VEC, c);
      continue;
    }
    const T* row = op.logits + r * n;
    const float gr = op.g[r];
    const bool mine = (t / V) % kST == int(threadIdx.x);
    const float xt = mine ? widen(row[t]) : 0.0f;
    const Walk<T, VEC, 1> walk{slots, {row}, n};
    const Online st = online_row<ACC>(walk, false, sh);
    write_terms(walk, o, st, [&](float q) { return op.grad(q, gr); });
    if (mine) {
      const float inv =
          kn::Divide{}(1.0f, kn::IsFinite{}(st.m) ? st.s : __builtin_nanf(""));
      o[t] = narrow<T>(op.grad(OutTerms<T>(st.m)(xt) * inv - a.keep, gr));
    }
    if (r + gridDim.x < rows) __syncthreads();
  }
}

// ---- Host side ----

CeArgs ce_args(const int32_t* targets, float* out, int n, float smoothing,
               bool has_ignore, int ignore) {
  return {targets,          out,        n,          smoothing,
          1.0f - smoothing, inv_len(n), has_ignore, ignore};
}

}  // namespace

void softmax(DType t, const void* x, void* out, int64_t rows, int n,
             void* stream) {
  if (rows <= 0 || n <= 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  with_type(t, "Softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const SoftmaxOp<T> op{static_cast<const T*>(x), static_cast<T*>(out)};
    launch_rows<T, 4>(op, rows, n, vec_ok<T>(n, {x, out}), s, [&](auto v) {
      softmax_stream<T, decltype(v)::value>
          <<<grid_of(rows), kST, 0, s>>>(op, rows, n);
    });
  });
  ew::check_launch("Softmax");
}

void logsumexp(DType t, const void* x, void* out, int64_t rows, int n,
               void* stream) {
  if (rows <= 0 || n <= 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  with_type(t, "LogSumExp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const LogSumExpOp<T> op{static_cast<const T*>(x), static_cast<T*>(out)};
    launch_rows<T, 4>(op, rows, n, vec_ok<T>(n, {x}), s, [&](auto v) {
      logsumexp_stream<T, decltype(v)::value>
          <<<grid_of(rows), kST, 0, s>>>(op, rows, n);
    });
  });
  ew::check_launch("LogSumExp");
}

void cross_entropy(DType t, const void* logits, const int32_t* targets,
                   float* out, int64_t rows, int n, float smoothing,
                   bool has_ignore, int ignore, void* stream) {
  if (rows <= 0 || n < 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const CeArgs a = ce_args(targets, out, n, smoothing, has_ignore, ignore);
  with_type(t, "CrossEntropy", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const CrossEntropyOp<T> op{static_cast<const T*>(logits), a};
    launch_rows<T, 4>(op, rows, n, vec_ok<T>(n, {logits}), s, [&](auto v) {
      ce_stream<T, decltype(v)::value>
          <<<grid_of(rows), kST, 0, s>>>(op, rows, n);
    });
  });
  ew::check_launch("CrossEntropy");
}

void cross_entropy_backward(DType t, const void* logits, const int32_t* targets,
                            const float* g, void* dlogits, int64_t rows, int n,
                            float smoothing, bool has_ignore, int ignore,
                            void* stream) {
  if (rows <= 0 || n <= 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const CeArgs a = ce_args(targets, nullptr, n, smoothing, has_ignore, ignore);
  const float per_class = smoothing / float(n);  // as the CPU
  with_type(t, "CrossEntropyGrad", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const CrossEntropyGradOp<T> op{static_cast<const T*>(logits),
                                   static_cast<T*>(dlogits), g, a, per_class};
    // float16's conversions keep more values live: 16 elements a thread.
    constexpr int K = std::is_same_v<T, kn::float16_t> ? 2 : 4;
    launch_rows<T, K>(op, rows, n, vec_ok<T>(n, {logits, dlogits}), s,
                      [&](auto v) {
                        ce_grad_stream<T, decltype(v)::value>
                            <<<grid_of(rows), kST, 0, s>>>(op, rows, n);
                      });
  });
  ew::check_launch("CrossEntropyGrad");
}

}  // namespace nuvec::cuda::fastk
