// The CPU backend's kernels, one overload per primitive class. dispatch.cpp
// expands the registry into a table of these; a missing overload is a
// compile error.
#pragma once

#include <vector>

#include "nuvec/core/graph.h"
#include "nuvec/primitives/conv.h"
#include "nuvec/primitives/cuda_kernel.h"
#include "nuvec/primitives/custom.h"
#include "nuvec/primitives/distributed.h"
#include "nuvec/primitives/fast.h"
#include "nuvec/primitives/quantized.h"
#include "nuvec/primitives/fused.h"
#include "nuvec/primitives/fused_reduce.h"
#include "nuvec/primitives/elementwise.h"
#include "nuvec/primitives/indexing.h"
#include "nuvec/primitives/linalg.h"
#include "nuvec/primitives/random.h"
#include "nuvec/primitives/reduce.h"
#include "nuvec/primitives/shape_ops.h"
#include "nuvec/primitives/sort.h"

namespace nuvec::cpu {


template <PrimitiveId Id, UnaryRule R>
void eval(const UnaryPrimitive<Id, R>& p, const Arrays& in, Arrays& out);
template <PrimitiveId Id, BinaryRule R>
void eval(const BinaryPrimitive<Id, R>& p, const Arrays& in, Arrays& out);
void eval(const Select& p, const Arrays& in, Arrays& out);
void eval(const AsType& p, const Arrays& in, Arrays& out);
void eval(const DivMod& p, const Arrays& in, Arrays& out);
void eval(const BitCast& p, const Arrays& in, Arrays& out);
void eval(const Copy& p, const Arrays& in, Arrays& out);
void eval(const StopGradient& p, const Arrays& in, Arrays& out);
void eval(const Reshape& p, const Arrays& in, Arrays& out);
void eval(const Transpose& p, const Arrays& in, Arrays& out);
void eval(const Broadcast& p, const Arrays& in, Arrays& out);
void eval(const Slice& p, const Arrays& in, Arrays& out);
void eval(const Reduce& p, const Arrays& in, Arrays& out);
void eval(const ArgReduce& p, const Arrays& in, Arrays& out);
void eval(const NumberOf& p, const Arrays& in, Arrays& out);
void eval(const Matmul& p, const Arrays& in, Arrays& out);
void eval(const AddMM& p, const Arrays& in, Arrays& out);
void eval(const Arange& p, const Arrays& in, Arrays& out);
void eval(const Take& p, const Arrays& in, Arrays& out);
void eval(const Scatter& p, const Arrays& in, Arrays& out);
void eval(const Linalg& p, const Arrays& in, Arrays& out);
void eval(const RandomBits& p, const Arrays& in, Arrays& out);
void eval(const Depends& p, const Arrays& in, Arrays& out);
template <PrimitiveId Id>
void eval(const SortPrimitive<Id>& p, const Arrays& in, Arrays& out);
void eval(const Scan& p, const Arrays& in, Arrays& out);
void eval(const Concatenate& p, const Arrays& in, Arrays& out);
void eval(const Im2Col& p, const Arrays& in, Arrays& out);
void eval(const Custom& p, const Arrays& in, Arrays& out);
void eval(const CudaKernel& p, const Arrays& in, Arrays& out);
// The fast primitives (fast_norm.cpp, fast_softmax.cpp, fast_rope.cpp,
// fast_attention.cpp).
void eval(const RMSNorm& p, const Arrays& in, Arrays& out);
void eval(const LayerNorm& p, const Arrays& in, Arrays& out);
void eval(const AddRMSNorm& p, const Arrays& in, Arrays& out);
void eval(const RoPE& p, const Arrays& in, Arrays& out);
void eval(const Softmax& p, const Arrays& in, Arrays& out);
void eval(const LogSumExp& p, const Arrays& in, Arrays& out);
void eval(const CrossEntropy& p, const Arrays& in, Arrays& out);
void eval(const Attention& p, const Arrays& in, Arrays& out);
void eval(const CrossEntropyGrad& p, const Arrays& in, Arrays& out);
void eval(const AttentionGrad& p, const Arrays& in, Arrays& out);
void eval(const Placeholder& p, const Arrays& in, Arrays& out);
void eval(const Fused& p, const Arrays& in, Arrays& out);
void eval(const FusedReduce& p, const Arrays& in, Arrays& out);
// Quantization (quantize.cpp, qmm.cpp).
void eval(const Quantize& p, const Arrays& in, Arrays& out);
void eval(const Dequantize& p, const Arrays& in, Arrays& out);
void eval(const QuantizedMatmul& p, const Arrays& in, Arrays& out);
void eval(const GatherMM& p, const Arrays& in, Arrays& out);
void eval(const GatherQMM& p, const Arrays& in, Arrays& out);
// Distributed (distributed.cpp).
void eval(const Collective& p, const Arrays& in, Arrays& out);

/// Typed pointer to the first element of an available CPU array.
template <class T>
T* ptr(const Array& a) {
  return static_cast<T*>(a.desc()->data->ptr) + a.desc()->offset;
}

/// Copies `in` (any strides) into the row-major buffer of `out`, converting
/// the dtype with kernels::Cast.
void copy_general(const Array& in, Array& out);
/// `x` itself when row-major and dense, else a dense row-major copy.
Array dense_copy(const Array& x);

}  // namespace nuvec::cpu
