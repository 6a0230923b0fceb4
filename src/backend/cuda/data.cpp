// GPU kernels of the data-movement primitives (cuda.h: launch_data): the
// dispatch to the kernels of data.h. Every one gives the CPU kernel's bits
// (docs/gpu-status.md). Linalg runs on the CPU only, as MLX's linalg;
// evaluating a compile Placeholder fails as on the CPU.
#include "backend/cuda/data.h"

#include <cstring>

#include "backend/cuda/cuda.h"
#include "backend/cuda/nccl.h"
#include "nuvec/kernels/cast.h"
#include "distributed/group.h"
#include "nuvec/primitives/custom.h"
#include "nuvec/primitives/distributed.h"
#include "nuvec/primitives/elementwise.h"
#include "nuvec/primitives/linalg.h"
#include "nuvec/primitives/shape_ops.h"
#include "nuvec/primitives/sort.h"

namespace nuvec::cuda {

namespace {

// NumberOf: the product of the sizes, converted as the CPU does (through
// double), written as one element.
void number_of(const NumberOf& p, const Array& x, Array& out, cudaStream_t s) {
  double n = 1;
  for (int a : p.axes()) n *= x.shape()[a];
  uint64_t bits = data::cast_bits(n, out.dtype());
  data::fill_elements(static_cast<char*>(out.desc()->data->ptr) +
                          out.desc()->offset * out.itemsize(),
                      bits, out.itemsize(), 1, s);
}

// BitCast: the input's bytes made dense in its own dtype, read as the output.
void bit_cast(const Array& x, Array& out, cudaStream_t s) {
  data::copy_elements(x, out.desc()->data->ptr, row_major_strides(x.shape()), 0,
                      s);
}

void concatenate(const Concatenate& p, const std::vector<Array>& in, Array& out,
                 cudaStream_t s) {
  if (out.size() == 0) return;
  const int axis = p.axis();
  int64_t start = 0;  // along the axis
  for (const Array& a : in) {
    data::copy_elements(a, out.desc()->data->ptr, out.strides(),
                        out.desc()->offset + start * out.strides()[axis], s);
    start += a.shape()[axis];
  }
}

}  // namespace

uint64_t data::cast_bits(double v, DType d) {
  uint64_t bits = 0;
  dispatch_dtype(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T c = kernels::Cast<T>{}(v);
    static_assert(sizeof(T) <= sizeof(bits));
    std::memcpy(&bits, &c, sizeof(T));
  });
  return bits;
}

bool launch_data(const Primitive& p, const std::vector<Array>& in,
                 std::vector<Array>& out, void* stream, Stream st) {
  auto s = static_cast<cudaStream_t>(stream);
  switch (p.id()) {
    case PrimitiveId::Take:
      data::take(static_cast<const Take&>(p), in[0], in[1], out[0], s);
      return true;
    case PrimitiveId::Scatter:
      data::scatter(static_cast<const Scatter&>(p), in[0], in[1], in[2], out[0],
                    s, st);
      return true;
    case PrimitiveId::Concatenate:
      concatenate(static_cast<const Concatenate&>(p), in, out[0], s);
      return true;
    case PrimitiveId::BitCast:
      bit_cast(in[0], out[0], s);
      return true;
    case PrimitiveId::DivMod:
      data::divmod(in[0], in[1], out[0], out[1], s);
      return true;
    case PrimitiveId::NumberOf:
      number_of(static_cast<const NumberOf&>(p), in[0], out[0], s);
      return true;
    // Views, normally shared by the evaluator; a copy is also correct.
    case PrimitiveId::Depends:
      data::copy_into(in[0], out[0], s);
      return true;
    // A group of one copies; the nccl backend runs here; the mpi backend
    // reads host memory, so its collectives are built on a CPU stream
    // (ops/distributed.cpp).
    case PrimitiveId::Collective: {
      auto& c = static_cast<const Collective&>(p);
      if (c.group()->on_gpu()) {
        launch_nccl(c, in, out, stream, st);
        return true;
      }
      if (c.group()->size() != 1 || c.op() == CollectiveOp::send || c.op() == CollectiveOp::recv)
        (Error(ErrorKind::backend, std::string(collective_name(c.op())) + " of the " + c.group()->backend() +
                                       " backend runs on a CPU stream")).raise();
      data::copy_into(in[0], out[0], s);
      return true;
    }
    case PrimitiveId::Custom: {
      int primals = static_cast<const Custom&>(p).num_primals();
      for (size_t i = 0; i < out.size(); ++i)
        data::copy_into(in[primals + i], out[i], s);
      return true;
    }
    case PrimitiveId::ArgReduce:
      data::arg_reduce(static_cast<const ArgReduce&>(p), in[0], out[0], s, st);
      return true;
    case PrimitiveId::Im2Col:
      data::im2col(static_cast<const Im2Col&>(p), in[0], out[0], s);
      return true;
    case PrimitiveId::Linalg:
      (Error(
          ErrorKind::backend,
          std::string("[linalg] ") +
              linalg_op_name(static_cast<const Linalg&>(p).op()) +
              " runs on the CPU only (as MLX's linalg): use a CPU stream, e.g. "
              "linalg::inv(x, Device::cpu)")).raise();
    case PrimitiveId::Placeholder:  // the CPU's message (cpu/copy.cpp)
      (Error(ErrorKind::transform,
                  "the function evaluated an array while compile traced it "
                  "(values do not exist "
                  "during the trace); evaluate outside the compiled function")).raise();
    default:
      return false;
  }
}

}  // namespace nuvec::cuda
