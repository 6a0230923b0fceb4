// Fused element-wise regions on the CPU: the generated kernel once compile
// has built it (src/compile/jit.cpp), else a chunked interpreter. Each
// interpreter chunk of a few thousand elements runs the region's primitives
// one after the other through their ordinary kernels, with intermediates in
// small buffers that stay in cache (each in its own dtype, so the bits equal
// the unfused graph's); only the region's inputs and outputs touch memory.
#include <algorithm>
#include <cstring>

#include "backend/backend.h"
#include "backend/cpu/cpu.h"
#include "core/thread_pool.h"
#include "nuvec/core/graph.h"
#include "nuvec/primitives/fused.h"

namespace nuvec::cpu {

namespace {

constexpr long long kChunk = 1 << 14;  // elements per chunk

std::shared_ptr<Data> borrowed(void* ptr, size_t nbytes) {
  auto d = std::make_shared<Data>();
  d->ptr = ptr;
  d->nbytes = nbytes;
  d->capacity = nbytes;
  return d;
}

// A view of `a` restricted to rows [r0, r1) of axis 0, or, in flat mode, to
// elements [r0, r1) of an array that is dense or a broadcast scalar.
Array part(const Array& a, long long r0, long long r1, bool flat) {
  auto d = std::make_shared<ArrayDesc>();
  const auto& s = *a.desc();
  d->dtype = s.dtype;
  d->data = s.data;
  if (flat) {
    bool dense = s.row_contiguous;
    d->shape = {static_cast<int>(r1 - r0)};
    d->strides = {dense ? 1 : 0};
    d->offset = s.offset + (dense ? r0 : 0);
    d->row_contiguous = dense;
  } else {
    d->shape = s.shape;
    d->shape[0] = static_cast<int>(r1 - r0);
    d->strides = s.strides;
    d->offset = s.offset + r0 * s.strides[0];
    d->row_contiguous = is_row_contiguous(d->shape, d->strides);
  }
  d->size = shape_size(d->shape);
  return Array(std::move(d));
}

// A dense array of `shape` over caller-owned memory.
Array dense(const Shape& shape, DType dtype, void* ptr) {
  auto d = std::make_shared<ArrayDesc>();
  d->shape = shape;
  d->strides = row_major_strides(shape);
  d->size = shape_size(shape);
  d->dtype = dtype;
  d->data = borrowed(ptr, static_cast<size_t>(d->size) * dtype.size());
  return Array(std::move(d));
}

bool all_zero(const Strides& s) {
  for (auto v : s)
    if (v != 0) return false;
  return true;
}

// `a` seen at `shape` (its broadcast): zero strides on the new and the
// stretched axes.
Array broadcast_view(const Array& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  auto d = std::make_shared<ArrayDesc>(*a.desc());
  d->node = nullptr;
  int n = static_cast<int>(shape.size()), m = a.ndim();
  d->strides.assign(n, 0);
  for (int i = 0; i < m; ++i)
    if (a.shape()[i] == shape[n - m + i]) d->strides[n - m + i] = a.strides()[i];
  d->shape = shape;
  d->size = shape_size(shape);
  d->row_contiguous = is_row_contiguous(d->shape, d->strides);
  return Array(std::move(d));
}

const char* element(const Array& a, int64_t i) {
  return static_cast<const char*>(a.desc()->data->ptr) + (a.desc()->offset + i) * a.itemsize();
}
char* element(Array& a, int64_t i) {
  return static_cast<char*>(a.desc()->data->ptr) + (a.desc()->offset + i) * a.itemsize();
}

// Every input dense or one value: chunks of kChunk elements through the
// contiguous kernel (or its streaming variant for outputs beyond the cache); a one-value input is read from a chunk-long buffer of
// copies (so the kernel's loop sees only dense operands and vectorizes).
void run_contig(const Fused& p, const FusedCpuKernel& k, const Arrays& in, Arrays& out,
                int64_t size) {
  const size_t n_in = in.size(), n_out = out.size();
  int64_t fill = std::min<int64_t>(size, kChunk);
  std::vector<bool> literal(n_in, false);  // the kernel does not read these
  for (const auto& l : p.literals()) literal[l.input] = true;
  std::vector<std::vector<char>> copies(n_in);
  for (size_t i = 0; i < n_in; ++i) {
    if (in[i].desc()->row_contiguous || literal[i]) continue;
    size_t w = static_cast<size_t>(in[i].itemsize());
    copies[i].resize(static_cast<size_t>(fill) * w);
    for (int64_t e = 0; e < fill; ++e) std::memcpy(copies[i].data() + e * w, element(in[i], 0), w);
  }
  long long out_bytes = 0;
  for (const auto& o : out) out_bytes += size * o.itemsize();
  bool stream = k.stream && out_bytes > nuvec::detail::stream_min_bytes();
  if (stream) nuvec::detail::streamed_runs().fetch_add(1, std::memory_order_relaxed);
  auto kernel = stream ? k.stream : k.contig;
  parallel_for(size, kChunk, [&](long long b, long long e) {
    std::vector<const void*> ip(n_in);
    std::vector<void*> op(n_out);
    for (size_t i = 0; i < n_in; ++i)
      ip[i] = !copies[i].empty() ? copies[i].data()
              : literal[i]       ? nullptr
                                 : static_cast<const void*>(element(in[i], b));
    for (size_t j = 0; j < n_out; ++j) op[j] = element(out[j], b);
    kernel(ip.data(), op.data(), static_cast<long>(e - b));
  });
}

// Otherwise rows of the collapsed shape through the strided kernel.
void run_strided(const FusedCpuKernel& k, const Arrays& in, Arrays& out, const Shape& shape) {
  const size_t n_in = in.size(), n_out = out.size();
  // Merge adjacent axes that every input steps through evenly, drop 1s.
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> st(n_in);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t i = 0; i < n_in && merge; ++i) merge = st[i].back() == in[i].strides()[d] * shape[d];
    if (merge) {
      dims.back() *= shape[d];
      for (size_t i = 0; i < n_in; ++i) st[i].back() = in[i].strides()[d];
    } else {
      dims.push_back(shape[d]);
      for (size_t i = 0; i < n_in; ++i) st[i].push_back(in[i].strides()[d]);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (auto& s : st) s.push_back(0);
  }
  const int64_t inner = dims.back();
  const int64_t rows = shape_size(shape) / inner;
  const size_t outer = dims.size() - 1;
  std::vector<long> inner_strides(n_in);
  for (size_t i = 0; i < n_in; ++i) inner_strides[i] = static_cast<long>(st[i].back());
  parallel_for(rows, std::max<int64_t>(1, kChunk / inner), [&](long long r0, long long r1) {
    std::vector<const void*> ip(n_in);
    std::vector<void*> op(n_out);
    for (long long r = r0; r < r1; ++r) {
      std::vector<int64_t> off(n_in, 0);
      long long rest = r;
      for (size_t d = outer; d-- > 0;) {
        int64_t c = rest % dims[d];
        rest /= dims[d];
        for (size_t i = 0; i < n_in; ++i) off[i] += c * st[i][d];
      }
      for (size_t i = 0; i < n_in; ++i) ip[i] = element(in[i], off[i]);
      for (size_t j = 0; j < n_out; ++j) op[j] = element(out[j], r * inner);
      k.strided(ip.data(), op.data(), inner_strides.data(), static_cast<long>(inner));
    }
  });
}

// Runs the generated kernel; false when there is none for these inputs.
bool run_generated(const Fused& p, const Arrays& in, Arrays& out, int64_t size) {
  auto k = p.cpu_kernel();
  if (!k || k->input_dtypes.size() != in.size()) return false;
  for (size_t i = 0; i < in.size(); ++i)
    if (!(k->input_dtypes[i] == in[i].dtype())) return false;
  bool flat = true;
  for (const auto& a : in) flat = flat && (a.desc()->row_contiguous || all_zero(a.strides()));
  if (flat) run_contig(p, *k, in, out, size);
  else run_strided(*k, in, out, out[0].shape());
  nuvec::detail::fused_runs(true).fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace

void eval(const Fused& p, const Arrays& raw_in, Arrays& out) {
  const Shape& shape = out[0].shape();
  Arrays in;
  for (const auto& a : raw_in) in.push_back(broadcast_view(a, shape));
  long long size = shape_size(shape);
  if (size == 0) return;
  if (run_generated(p, in, out, size)) return;
  nuvec::detail::fused_runs(false).fetch_add(1, std::memory_order_relaxed);
  // Flat mode when every input is dense or one broadcast value: chunks of
  // elements; otherwise chunks of rows of axis 0 (inputs read through their
  // strides).
  bool flat = true;
  for (const auto& a : in) flat = flat && (a.desc()->row_contiguous || all_zero(a.strides()));
  long long row = shape.empty() ? 1 : size / std::max(1, shape[0]);
  long long rows = flat || shape.empty() ? size : shape[0];
  long long per = flat ? kChunk : std::max<long long>(1, kChunk / std::max<long long>(row, 1));
  if (shape.empty()) flat = true;
  const int n_in = p.num_inputs();
  std::vector<int> output_of(n_in + p.ops().size(), -1);
  for (size_t j = 0; j < p.outputs().size(); ++j) output_of[p.outputs()[j]] = static_cast<int>(j);

  parallel_for(rows, per, [&](long long r0, long long r1) {
    long long count = flat ? r1 - r0 : (r1 - r0) * row;
    Shape part_shape = flat ? Shape{static_cast<int>(r1 - r0)} : shape;
    if (!flat) part_shape[0] = static_cast<int>(r1 - r0);
    std::vector<Array> values;
    values.reserve(n_in + p.ops().size());
    for (const auto& a : in) values.push_back(part(a, r0, r1, flat));
    // Intermediates live in one per-thread buffer, reused chunk after chunk
    // (fresh zeroed buffers per chunk cost more than the arithmetic).
    size_t need = 0;
    for (size_t k = 0; k < p.ops().size(); ++k)
      if (output_of[n_in + k] < 0) need += (static_cast<size_t>(count) * p.ops()[k].dtype.size() + 63) & ~size_t(63);
    thread_local std::vector<unsigned char> scratch;
    if (scratch.size() < need + 64) scratch.resize(need + 64);
    unsigned char* next_free = reinterpret_cast<unsigned char*>(
        (reinterpret_cast<uintptr_t>(scratch.data()) + 63) & ~uintptr_t(63));
    for (size_t k = 0; k < p.ops().size(); ++k) {
      const FusedOp& op = p.ops()[k];
      int v = n_in + static_cast<int>(k);
      Array dst;
      if (output_of[v] >= 0) {
        const Array& o = out[output_of[v]];
        auto* base = static_cast<unsigned char*>(o.desc()->data->ptr) +
                     (o.desc()->offset + (flat ? r0 : r0 * row)) * o.itemsize();
        dst = dense(part_shape, op.dtype, base);
      } else {
        dst = dense(part_shape, op.dtype, next_free);
        next_free += (static_cast<size_t>(count) * op.dtype.size() + 63) & ~size_t(63);
      }
      std::vector<Array> args;
      for (int a : op.args) args.push_back(values[a]);
      std::vector<Array> outs{dst};
      backend::eval_cpu(*op.primitive, args, outs);
      values.push_back(std::move(dst));
    }
    // An output that is an input of the region unchanged (rare): copy it.
    for (size_t j = 0; j < p.outputs().size(); ++j) {
      int v = p.outputs()[j];
      if (v >= n_in) continue;
      const Array& o = out[j];
      auto* base = static_cast<unsigned char*>(o.desc()->data->ptr) +
                   (o.desc()->offset + (flat ? r0 : r0 * row)) * o.itemsize();
      Array dst = dense(part_shape, o.dtype(), base);
      std::vector<Array> outs{dst};
      backend::eval_cpu(Copy(), {values[v]}, outs);
    }
  });
}

}  // namespace nuvec::cpu
