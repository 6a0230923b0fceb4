// Fused: a connected region of element-wise primitives that compile runs as
// one kernel (docs/compile.md). Each value keeps its own dtype, so fused
// results equal the unfused ones bit for bit.
#pragma once

#include <memory>
#include <vector>

#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// One operation of a fused program: an element-wise primitive applied to
/// earlier values (inputs first, then operations in order).
struct FusedOp {
  std::shared_ptr<const Primitive> primitive;
  std::vector<int> args;
  DType dtype;
};

class Fused : public PrimitiveBase<PrimitiveId::Fused> {
 public:
  Fused(int num_inputs, std::vector<FusedOp> ops, std::vector<int> outputs)
      : num_inputs_(num_inputs), ops_(std::move(ops)), outputs_(std::move(outputs)) {}
  int num_inputs() const { return num_inputs_; }
  const std::vector<FusedOp>& ops() const { return ops_; }
  /// The values (indices as in FusedOp::args) the node outputs.
  const std::vector<int>& outputs() const { return outputs_; }
  /// Every output has the broadcast shape of the inputs (the region's
  /// operands are read through broadcast strides).
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override;
  size_t params_hash() const override;
  void print_params(std::ostream& os) const override;
  /// The region as ordinary element-wise nodes (transforms use it).
  Arrays expand(const Arrays& inputs) const;

 private:
  int num_inputs_;
  std::vector<FusedOp> ops_;
  std::vector<int> outputs_;
};

}  // namespace nuvec
