// Collective: one primitive for the distributed operations (all_sum,
// all_max, all_min, all_gather, reduce_scatter, send, recv). Each node is a
// message exchange, so no two are ever merged by CSE.
#pragma once

#include <memory>

#include "nuvec/primitives/primitive.h"

namespace nuvec::distributed::detail {
class GroupImpl;
}

namespace nuvec {

enum class CollectiveOp : uint8_t { all_sum, all_max, all_min, all_gather, reduce_scatter, send, recv };
const char* collective_name(CollectiveOp op);

class Collective : public PrimitiveBase<PrimitiveId::Collective> {
 public:
  /// `peer`: send's destination or recv's source; `shape`, `dtype`: recv's
  /// output.
  Collective(CollectiveOp op, std::shared_ptr<distributed::detail::GroupImpl> group, int peer = -1,
             Shape shape = {}, DType dtype = float32)
      : op_(op), group_(std::move(group)), peer_(peer), shape_(std::move(shape)), dtype_(dtype) {}
  CollectiveOp op() const { return op_; }
  const std::shared_ptr<distributed::detail::GroupImpl>& group() const { return group_; }
  int peer() const { return peer_; }
  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool shape_polymorphic() const override { return false; }
  bool params_equal(const Primitive&) const override { return false; }
  void print_params(std::ostream& os) const override;

 private:
  CollectiveOp op_;
  std::shared_ptr<distributed::detail::GroupImpl> group_;
  int peer_;
  Shape shape_;
  DType dtype_;
};

}  // namespace nuvec
