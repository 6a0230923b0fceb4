// FusedReduce on the GPU (cuda.h: launch_fused_reduce): the row kernel
// compile generated (src/compile/emit_cuda_rows.cpp; a block or a warp per
// row, every stage in one launch) when each input it reads is a row stride and an
// element stride at the region's shape; else the members one by one through
// the eager kernels on temporaries (the same bits: the row kernel folds in
// the Reduce kernel's order, kernels/gpu_rows.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <optional>

#include "backend/cuda/cuda.h"
#include "backend/row_stride.h"
#include "backend/cuda/module.h"
#include "nuvec/primitives/fused_reduce.h"

namespace nuvec::cuda {

namespace {

constexpr int kRowThreads = 256;  // kernels::rows::kThreads (a device-side constant)

using backend::one_stride;

const char* at(const Array& a) {
  return static_cast<const char*>(a.desc()->data->ptr) + a.desc()->offset * a.itemsize();
}

const void* kernel_function(const FusedRowsGpuKernel& k) {
  std::lock_guard<std::mutex> lock(k.mu);
  if (!k.fn) k.fn = module_kernel(*k.module, k.name);
  return k.fn;
}

bool generated(const FusedReduce& p, const FusedRowsGpuKernel& k, const std::vector<Array>& raw_in,
               std::vector<Array>& out, cudaStream_t cs, Stream s) {
  const Shape& S = p.shape();
  const int n = static_cast<int>(S.size()), split = p.split();
  long long R = 1, m = 1;
  for (int d = 0; d < n; ++d) (d < split ? R : m) *= S[d];
  std::vector<Array> in;
  std::vector<const void*> ptrs;
  std::vector<long long> layout(2 * std::max<size_t>(k.params.size(), 1), 0);
  for (size_t a = 0; a < k.params.size(); ++a) {
    Array x = device_array(raw_in[k.params[a]], cs, s);
    const int xn = x.ndim();
    Strides st(n, 0);
    for (int i = 0; i < xn; ++i)
      if (x.shape()[i] == S[n - xn + i]) st[n - xn + i] = x.strides()[i];
    auto rs = one_stride(S, st, 0, split), el = one_stride(S, st, split, n);
    if (!rs || !el) return false;
    layout[a] = *rs;
    layout[layout.size() / 2 + a] = *el;
    ptrs.push_back(at(x));
    in.push_back(std::move(x));
  }
  const void* fn = kernel_function(k);
  if (!fn) return false;
  for (auto& o : out) ptrs.push_back(at(o));
  std::vector<void*> args;
  for (auto& q : ptrs) args.push_back(&q);
  args.push_back(&R);
  args.push_back(&m);
  args.push_back(layout.data());
  // A warp per row for rows of at most 1024 elements (kernels::rows::kStride:
  // one pack of each of the order's threads), kRowThreads / 32 rows a block;
  // else a block per row. The same bits either way (emit_cuda_rows.cpp).
  // H200, the GPT step's 16384 bfloat16 rows of 384: 125 -> 53 us a call.
  int lanes = m <= 4 * kRowThreads ? 32 : kRowThreads;
  args.push_back(&lanes);
  if (R == 0) return true;
  const long long per_block = kRowThreads / lanes;
  dim3 grid(static_cast<unsigned>(std::min<long long>((R + per_block - 1) / per_block, 1 << 20)));
  launch_module_kernel(fn, grid, dim3(kRowThreads), args.data(), 0, cs, "a generated row kernel");
  return true;
}

// Each member through the eager kernels; values that are outputs are
// written to the outputs' buffers.
void one_by_one(const FusedReduce& p, const std::vector<Array>& in, std::vector<Array>& out, cudaStream_t cs,
                Stream s) {
  std::vector<Array> values;
  for (const auto& x : in) values.push_back(device_array(x, cs, s));
  for (size_t m = 0; m < p.members().size(); ++m) {
    const RowMember& mb = p.members()[m];
    std::vector<Array> args;
    for (int a : mb.args) args.push_back(values[a]);
    std::vector<Array> made;
    const int first = p.first_value(static_cast<int>(m));
    const int count = mb.primitive->id() == PrimitiveId::Fused
                          ? static_cast<int>(static_cast<const Fused&>(*mb.primitive).outputs().size())
                          : 1;
    for (int v = first; v < first + count; ++v) {
      int target = -1;
      for (size_t o = 0; o < out.size() && target < 0; ++o)
        if (p.outputs()[o] == v) target = static_cast<int>(o);
      if (target >= 0) {
        made.push_back(out[target]);
        continue;
      }
      auto d = std::make_shared<ArrayDesc>();
      d->shape = p.row_scalar(v) ? p.reduced_shape() : p.shape();
      d->strides = row_major_strides(d->shape);
      d->size = shape_size(d->shape);
      d->row_contiguous = true;
      d->dtype = p.value_dtype(v);
      d->data = allocate(static_cast<size_t>(d->size) * d->dtype.size(), s);
      made.push_back(Array(std::move(d)));
    }
    if (mb.primitive->id() == PrimitiveId::Reduce) {
      flush_launches(cs);
      launch_reduce(static_cast<const Reduce&>(*mb.primitive), args[0], made[0], cs);
    } else {
      launch_fused(static_cast<const Fused&>(*mb.primitive), args, made, cs, s);
    }
    for (auto& a : made) values.push_back(std::move(a));
  }
}

}  // namespace

void launch_fused_reduce(const FusedReduce& p, const std::vector<Array>& in, std::vector<Array>& out,
                         void* stream, Stream s) {
  auto cs = static_cast<cudaStream_t>(stream);
  flush_launches(cs);
  if (auto k = p.gpu_kernel(); k && generated(p, *k, in, out, cs, s)) {
    detail::fused_runs(true).fetch_add(1);
    return;
  }
  detail::fused_runs(false).fetch_add(1);
  one_by_one(p, in, out, cs, s);
}

}  // namespace nuvec::cuda
