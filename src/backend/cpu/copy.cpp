// Copies and conversions with strides, and the small primitives built on
// them (views evaluated as copies, bit casts, arange, counts).
#include <cstring>

#include "backend/cpu/cpu.h"
#include "backend/cpu/loops.h"
#include "nuvec/kernels/binary.h"
#include "nuvec/kernels/cast.h"

namespace nuvec::cpu {

namespace {

template <class From, class To>
void copy_typed(const Array& in, Array& out) {
  const From* src = ptr<From>(in);
  To* dst = ptr<To>(out);
  if (in.desc()->row_contiguous) {
    for_each_block(in.size(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = kernels::Cast<To>{}(src[i]);
    });
    return;
  }
  // The output is dense in the input's logical order (its own shape may
  // differ: a reshape that could not be a view).
  Strides os = row_major_strides(in.shape());
  auto l = collapse<2>(in.shape(), {&in.strides(), &os});
  for_each_row(l, [&](const std::array<int64_t, 2>& off, int64_t n,
                      const std::array<int64_t, 2>& st) {
    for (int64_t i = 0; i < n; ++i) dst[off[1] + i] = kernels::Cast<To>{}(src[off[0] + i * st[0]]);
  });
}

}  // namespace

void copy_general(const Array& in, Array& out) {
  if (in.size() == 0) return;
  if (in.dtype() == out.dtype()) {
    // The same dtype: move the bits as unsigned words of the item size, so
    // any byte pattern (a bool made by view) is copied, never interpreted.
    switch (in.itemsize()) {
      case 1: return copy_typed<uint8_t, uint8_t>(in, out);
      case 2: return copy_typed<uint16_t, uint16_t>(in, out);
      case 4: return copy_typed<uint32_t, uint32_t>(in, out);
      default: return copy_typed<uint64_t, uint64_t>(in, out);
    }
  }
  dispatch_dtype(in.dtype(), [&](auto from) {
    dispatch_dtype(out.dtype(), [&](auto to) {
      copy_typed<typename decltype(from)::type, typename decltype(to)::type>(in, out);
    });
  });
}

Array dense_copy(const Array& x) {
  if (x.desc()->strides == row_major_strides(x.shape())) return x;
  auto d = std::make_shared<ArrayDesc>();
  d->shape = x.shape();
  d->strides = row_major_strides(d->shape);
  d->size = x.size();
  d->dtype = x.dtype();
  d->data = allocate_data(static_cast<size_t>(d->size) * x.itemsize());
  Array out(d);
  copy_general(x, out);
  return out;
}

void eval(const AsType&, const Arrays& in, Arrays& out) { copy_general(in[0], out[0]); }
void eval(const Copy&, const Arrays& in, Arrays& out) { copy_general(in[0], out[0]); }
void eval(const StopGradient&, const Arrays& in, Arrays& out) { copy_general(in[0], out[0]); }
void eval(const Reshape&, const Arrays& in, Arrays& out) { copy_general(in[0], out[0]); }
// A compile placeholder has no values: the traced function evaluated it.
void eval(const Placeholder&, const Arrays&, Arrays&) {
  (Error(ErrorKind::transform,
              "the function evaluated an array while compile traced it (values do not exist "
              "during the trace); evaluate outside the compiled function")).raise();
}
// A user's CUDA kernel has no CPU version (fast::CudaKernel).
void eval(const CudaKernel& p, const Arrays&, Arrays&) { (p.gpu_only()).raise(); }
// Custom's outputs are views of its trailing inputs; copied only if asked.
void eval(const Custom& p, const Arrays& in, Arrays& out) {
  for (size_t i = 0; i < out.size(); ++i) copy_general(in[p.num_primals() + i], out[i]);
}
// Views are normally shared by the evaluator; a dense copy is also correct.
void eval(const Transpose&, const Arrays& in, Arrays& out) { copy_general(in[0], out[0]); }
void eval(const Broadcast&, const Arrays& in, Arrays& out) { copy_general(in[0], out[0]); }
void eval(const Slice&, const Arrays& in, Arrays& out) { copy_general(in[0], out[0]); }
void eval(const Depends&, const Arrays& in, Arrays& out) { copy_general(in[0], out[0]); }

void eval(const BitCast&, const Arrays& in, Arrays& out) {
  // Make the bytes dense in the input's dtype, then reinterpret them.
  auto d = std::make_shared<ArrayDesc>();
  d->shape = in[0].shape();
  d->strides = row_major_strides(d->shape);
  d->size = in[0].size();
  d->dtype = in[0].dtype();
  d->data = out[0].desc()->data;
  Array dense(d);
  copy_general(in[0], dense);
}

// As MLX: the step in the dtype is T(start + step) - T(start), accumulated
// in the dtype (so arange(-3, 3, 0.75, int32) counts by 1, and float values
// carry the rounding of repeated addition).
void eval(const Arange& p, const Arrays&, Arrays& out) {
  dispatch_dtype(out[0].dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = ptr<T>(out[0]);
    T v = kernels::Cast<T>{}(p.start());
    T step = kernels::Subtract{}(kernels::Cast<T>{}(p.start() + p.step()), v);
    for (int64_t i = 0; i < out[0].size(); ++i) {
      dst[i] = v;
      v = kernels::Add{}(v, step);
    }
  });
}

void eval(const NumberOf& p, const Arrays& in, Arrays& out) {
  double n = 1;
  for (int a : p.axes()) n *= in[0].shape()[a];
  dispatch_dtype(out[0].dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    *ptr<T>(out[0]) = kernels::Cast<T>{}(n);
  });
}

}  // namespace nuvec::cpu
