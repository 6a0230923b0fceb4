// Fused element-wise regions on the GPU (cuda.h: launch_fused). With the
// generated kernels compile built (NVRTC, src/compile/jit_cuda.cpp), one
// launch runs the region: the contiguous kernel when every input is dense
// at the output's shape, a single value or a dense row repeated, the
// pointers allow aligned packs, and each input the trace saw at the
// output's shape is dense (FusedGpuKernel::dense), else the strided kernel
// over a collapsed layout. Without
// them (jit off, no NVRTC, a compile error), each operation runs as its
// eager kernel on temporaries: the same bits, more memory traffic.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "backend/cpu/loops.h"
#include "backend/cuda/cuda.h"
#include "backend/cuda/module.h"
#include "nuvec/core/shape.h"
#include "nuvec/kernels/fastdiv.h"

namespace nuvec::cuda {

namespace {

constexpr int kThreads = 256;  // the strided and table kernels
constexpr int kMaxDims = 8;
constexpr size_t kMaxInputs = 16;  // the strided layout's collapse

// Threads per block of the contiguous kernel: 128. Measured on the H200
// (2^26 elements, back to back, two runs each, ms, 256 / 128 threads):
// bfloat16 Adam 0.247-0.254 / 0.240-0.243, scale-bias-relu 0.074-0.075 /
// 0.072-0.073, the sin/cos chain 0.072 / 0.070, GELU 0.071-0.072 /
// 0.070-0.071; float32 GELU (tanh) 0.135 / 0.132-0.134, scale-bias-relu
// 0.135 / 0.133; x*x+1, SwiGLU and float32 Adam level. 64 threads were
// level with 128 where a thread takes two packs and 20-25% slower on
// x*x+1 (one pack: too little work per block). NUVEC_GPU_BLOCK=64, 128
// or 256 forces one, for tuning; read once (the kernels allow 256).
int contig_threads() {
  static const int threads = [] {
    const char* e = std::getenv("NUVEC_GPU_BLOCK");
    int t = e ? std::atoi(e) : 0;
    return t == 64 || t == 256 ? t : 128;
  }();
  return threads;
}

// The region's kernels, looked up once (the strided one built on first
// need; null when its build failed).
const void* contig_function(const FusedGpuKernel& k) {
  std::lock_guard<std::mutex> lock(k.mu);
  if (!k.contig_fn) k.contig_fn = module_kernel(*k.module, k.contig);
  return k.contig_fn;
}
const void* strided_function(const FusedGpuKernel& k) {
  std::lock_guard<std::mutex> lock(k.mu);
  if (!k.strided_fn) {
    auto m = k.strided_module ? k.strided_module() : nullptr;
    if (m) k.strided_fn = module_kernel(*m, k.strided);
  }
  return k.strided_fn;
}

// `a` seen at `shape`: zero strides on new and stretched axes.
Strides broadcast_strides(const Array& a, const Shape& shape) {
  size_t n = shape.size(), m = a.shape().size();
  Strides st(n, 0);
  for (size_t i = 0; i < m; ++i)
    if (a.shape()[i] == shape[n - m + i]) st[n - m + i] = a.strides()[i];
  return st;
}

Array broadcast_view(const Array& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  auto d = std::make_shared<ArrayDesc>(*a.desc());
  d->node = nullptr;
  d->strides = broadcast_strides(a, shape);
  d->shape = shape;
  d->size = shape_size(shape);
  d->row_contiguous = is_row_contiguous(d->shape, d->strides);
  return Array(std::move(d));
}

const char* at(const Array& a) {
  return static_cast<const char*>(a.desc()->data->ptr) + a.desc()->offset * a.itemsize();
}

// How the contiguous kernel reads input `x` at the output's shape: 0
// dense, 1 one value, L a dense row of L values repeated over the leading
// axes; -1 when it cannot (then the strided kernel runs).
long long row_mode(const Array& x, const Shape& shape, int per_thread) {
  if (x.size() == 1) return 1;
  auto aligned = [&] { return reinterpret_cast<uintptr_t>(at(x)) % (per_thread * x.itemsize()) == 0; };
  if (x.desc()->row_contiguous && x.shape() == shape) return aligned() ? 0 : -1;
  Strides st = broadcast_strides(x, shape);
  long long len = 1;
  int d = static_cast<int>(shape.size()) - 1;
  for (; d >= 0 && st[d] == len; --d) len *= shape[d];  // the dense suffix
  for (int e = d; e >= 0; --e)
    if (st[e] != 0 && shape[e] != 1) return -1;  // leading axes must repeat it
  return len % per_thread == 0 && aligned() ? len : -1;
}

constexpr long long kPatterns = 1 << 16;

// A table of 65536 entries of `size` bytes that `fill(patterns, table)`
// enqueues the writing of, given the 16-bit patterns in order; waited for,
// so that any stream may read it. Its own device memory (cudaFree
// synchronizes, so a lookup still queued when the trace goes never reads a
// reused buffer).
template <class Fill>
std::shared_ptr<void> make_table(int size, cudaStream_t cs, Stream s, const Fill& fill) {
  flush_launches(cs);
  auto patterns = allocate(kPatterns * 2, s);
  void* t = nullptr;
  check(cudaMalloc(&t, kPatterns * size), "cudaMalloc of a lookup table");
  std::shared_ptr<void> table(t, [](void* q) {
    flush();  // a held lookup launches before its table goes (never throws)
    cudaFree(q);
  });
  launch_all_patterns(patterns->ptr, cs);
  fill(patterns->ptr, t);
  check(cudaStreamSynchronize(cs), "a lookup table's build");
  return table;
}

// The tables of values the contiguous kernel looks up (FusedGpuKernel::tables),
// built on first use by their kernels.
std::vector<std::shared_ptr<void>> built_tables(const FusedGpuKernel& k, cudaStream_t cs, Stream s) {
  {
    std::lock_guard<std::mutex> lock(k.mu);
    if (k.built.size() == k.tables.size()) return k.built;
  }
  std::vector<std::shared_ptr<void>> built;
  for (const auto& t : k.tables) {
    const void* fn = module_kernel(*k.module, t.builder);
    built.push_back(make_table(t.value_size, cs, s, [&](const void* in, void* out) {
      void* args[] = {&in, &out};
      launch_module_kernel(fn, dim3(kPatterns / kThreads), dim3(kThreads), args, 0, cs, "a table's kernel");
    }));
  }
  std::lock_guard<std::mutex> lock(k.mu);
  if (k.built.size() != k.tables.size()) k.built = std::move(built);
  return k.built;
}

bool generated(const FusedGpuKernel& k, const std::vector<Array>& in, std::vector<Array>& out,
               cudaStream_t cs, Stream s) {
  if (k.params.size() > kMaxInputs) return false;
  const Shape& shape = out[0].shape();
  const long long n = out[0].size();
  if (n == 0) return true;
  std::vector<const void*> ptrs;
  std::vector<long long> rows;
  bool contig = true;
  for (size_t a = 0; a < k.params.size(); ++a) {
    const Array& x = in[k.params[a]];
    ptrs.push_back(at(x));
    rows.push_back(row_mode(x, shape, k.per_thread));
    contig = contig && rows.back() >= 0 && (rows.back() == 0 || a >= k.dense.size() || !k.dense[a]);
  }
  for (auto& o : out) {
    ptrs.push_back(o.desc()->data->ptr);
    contig = contig && reinterpret_cast<uintptr_t>(o.desc()->data->ptr) % (k.per_thread * o.itemsize()) == 0;
  }
  std::vector<void*> args;
  for (auto& p : ptrs) args.push_back(&p);
  long long count = n;
  args.push_back(&count);
  if (contig) {
    // NvRows: the lengths, then each length's kernels::FastDiv (row lengths
    // of 2 or more; others unused) in as many 8-byte slots.
    if (rows.empty()) rows.push_back(0);
    const size_t r = rows.size();
    rows.resize(2 * r, 0);
    for (size_t a = 0; a < r; ++a) {
      if (rows[a] < 2 || rows[a] >= (1ll << 31)) continue;
      kernels::FastDiv f = kernels::fast_div(static_cast<kernels::u32>(rows[a]));
      static_assert(sizeof f == sizeof(long long));
      std::memcpy(&rows[r + a], &f, sizeof f);
    }
    args.push_back(rows.data());
    std::vector<const void*> tables;  // after NvRows, in order
    if (!k.tables.empty()) {
      for (const auto& t : built_tables(k, cs, s)) tables.push_back(t.get());
      for (auto& t : tables) args.push_back(&t);
      nuvec::detail::table_runs().fetch_add(1, std::memory_order_relaxed);
    }
    const int threads = contig_threads();
    long long per_block = static_cast<long long>(threads) * k.per_thread;
    dim3 grid(static_cast<unsigned>((n + per_block - 1) / per_block));
    defer_module_kernel(contig_function(k), grid, dim3(threads), args.data(), 0, cs, "a generated kernel");
    return true;
  }
  const void* strided_fn = strided_function(k);
  if (!strided_fn) return false;
  std::vector<Strides> strides;
  for (int p : k.params) strides.push_back(broadcast_strides(in[p], shape));
  Strides zero(shape.size(), 0);
  std::array<const Strides*, kMaxInputs> st{};
  for (size_t a = 0; a < kMaxInputs; ++a) st[a] = a < strides.size() ? &strides[a] : &zero;
  auto c = cpu::collapse<kMaxInputs>(shape, st);
  if (c.shape.size() > kMaxDims) return false;
  size_t nrows = std::max<size_t>(k.params.size(), 1);
  // NvLayout: ndim, shape, strides, then each dimension's kernels::FastDiv
  // (one 8-byte slot each) and whether they are used (below 2^31 elements).
  const size_t divs = 1 + kMaxDims + nrows * kMaxDims;
  std::vector<long long> layout(divs + kMaxDims + 1, 0);
  layout[0] = static_cast<long long>(c.shape.size());
  for (size_t d = 0; d < c.shape.size(); ++d) {
    layout[1 + d] = c.shape[d];
    for (size_t a = 0; a < k.params.size(); ++a) layout[1 + kMaxDims + a * kMaxDims + d] = c.strides[a][d];
    if (d == 0 || c.shape[d] < 2) continue;
    kernels::FastDiv f = kernels::fast_div(static_cast<kernels::u32>(std::min<long long>(c.shape[d], 1ll << 30)));
    std::memcpy(&layout[divs + d], &f, sizeof f);
  }
  layout.back() = n < (1ll << 31);
  args.push_back(layout.data());
  long long per_block = static_cast<long long>(kThreads) * 4;
  dim3 grid(static_cast<unsigned>((n + per_block - 1) / per_block));
  launch_module_kernel(strided_fn, grid, dim3(kThreads), args.data(), 0, cs, "a generated kernel");
  return true;
}

// Each operation as its eager kernel; values that are outputs are written
// to the outputs' buffers.
void one_by_one(const Fused& p, const std::vector<Array>& in, std::vector<Array>& out, cudaStream_t cs,
                Stream s) {
  flush_launches(cs);  // the eager kernels launch directly
  const Shape& shape = out[0].shape();
  const int n_in = p.num_inputs();
  std::vector<Array> values;
  for (const auto& x : in) values.push_back(broadcast_view(x, shape));
  for (size_t j = 0; j < p.ops().size(); ++j) {
    const FusedOp& op = p.ops()[j];
    const int v = n_in + static_cast<int>(j);
    int target = -1;  // the output this value is, if any
    for (size_t o = 0; o < out.size() && target < 0; ++o)
      if (p.outputs()[o] == v) target = static_cast<int>(o);
    Array dst = target >= 0 ? out[target] : Array();
    if (target < 0) {
      auto d = std::make_shared<ArrayDesc>();
      d->shape = shape;
      d->strides = row_major_strides(shape);
      d->size = shape_size(shape);
      d->row_contiguous = true;
      d->dtype = op.dtype;
      d->data = allocate(static_cast<size_t>(d->size) * op.dtype.size(), s);
      dst = Array(std::move(d));
    }
    const auto& a = op.args;
    PrimitiveId id = op.primitive->id();
    switch (primitive_kind(id)) {
      case PrimitiveKind::unary: launch_unary(id, values[a[0]], dst, cs); break;
      case PrimitiveKind::binary: launch_binary(id, values[a[0]], values[a[1]], dst, cs); break;
      default:
        if (id == PrimitiveId::Select) launch_select(values[a[0]], values[a[1]], values[a[2]], dst, cs);
        else launch_cast(values[a[0]], dst, cs);  // AsType
    }
    values.push_back(dst);
  }
  // An output that is an input, or a value output twice: a copy.
  for (size_t o = 0; o < out.size(); ++o) {
    const Array& v = values[p.outputs()[o]];
    if (v.desc()->data != out[o].desc()->data) launch_cast(v, out[o], cs);
  }
}

}  // namespace

void launch_fused(const Fused& p, const std::vector<Array>& raw_in, std::vector<Array>& out, void* stream,
                  Stream s) {
  auto cs = static_cast<cudaStream_t>(stream);
  auto k = p.gpu_kernel();
  bool ok = k && k->input_dtypes.size() == raw_in.size();
  for (size_t i = 0; ok && i < raw_in.size(); ++i) ok = k->input_dtypes[i] == raw_in[i].dtype();
  // Generated kernels take no literal inputs: only the others are uploaded.
  std::vector<Array> in = raw_in;
  if (ok) {
    for (int i : k->params) in[i] = device_array(raw_in[i], stream, s);
    if (generated(*k, in, out, cs, s)) {
      detail::fused_runs(true).fetch_add(1);
      return;
    }
  }
  for (auto& a : in) a = device_array(a, stream, s);
  detail::fused_runs(false).fetch_add(1);
  one_by_one(p, in, out, cs, s);
}

}  // namespace nuvec::cuda
