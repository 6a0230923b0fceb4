// The convolution gather: im2col.
#pragma once

#include <vector>

#include "nuvec/primitives/params.h"
#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// Input 0 [N, S..., C] (channels last), input 1 the weight [O, K..., C/groups]
/// (read for its shape only). Gives the patches [N, Out..., K..., C]: for each
/// output position and kernel tap, the input row at
/// (out * stride + tap * kernel_dilation - padding_lo) in the input dilated by
/// input_dilation, or zeros where that falls in padding or a dilation hole.
/// Its rule validates every convolution argument (MLX's checks and messages).
class Im2Col : public PrimitiveBase<PrimitiveId::Im2Col> {
 public:
  Im2Col(std::vector<int> stride, std::vector<int> padding_lo, std::vector<int> padding_hi,
         std::vector<int> kernel_dilation, std::vector<int> input_dilation, int groups)
      : stride_(std::move(stride)),
        lo_(std::move(padding_lo)),
        hi_(std::move(padding_hi)),
        kdil_(std::move(kernel_dilation)),
        idil_(std::move(input_dilation)),
        groups_(groups) {}
  const std::vector<int>& stride() const { return stride_; }
  const std::vector<int>& padding_lo() const { return lo_; }
  const std::vector<int>& padding_hi() const { return hi_; }
  const std::vector<int>& kernel_dilation() const { return kdil_; }
  const std::vector<int>& input_dilation() const { return idil_; }
  int groups() const { return groups_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool shape_polymorphic() const override { return false; }
  bool params_equal(const Primitive& o) const override {
    auto& p = static_cast<const Im2Col&>(o);
    return p.stride_ == stride_ && p.lo_ == lo_ && p.hi_ == hi_ && p.kdil_ == kdil_ &&
           p.idil_ == idil_ && p.groups_ == groups_;
  }
  size_t params_hash() const override {
    size_t h = params::combine(params::hash_vector(stride_), params::hash_vector(lo_));
    h = params::combine(h, params::hash_vector(hi_));
    h = params::combine(h, params::hash_vector(kdil_));
    h = params::combine(h, params::hash_vector(idil_));
    return params::combine(h, size_t(groups_));
  }

 private:
  std::vector<int> stride_, lo_, hi_, kdil_, idil_;
  int groups_;
};

}  // namespace nuvec
