// FusedReduce: a region compile runs row by row (docs/compile.md, "Fusion
// into reductions"): element-wise programs over the rows of a shape S,
// reductions of them over S's trailing axes, and element-wise work on the
// reduced values (one per row) and after them along the same rows. Each
// reduction uses the eager kernel's arithmetic for a row of its length, so
// results equal the unfused graph's bit for bit.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nuvec/primitives/fused.h"
#include "nuvec/primitives/reduce.h"

namespace nuvec {

/// One step of the region as it was traced: a Fused program (element-wise)
/// or a Reduce over the trailing axes, reading earlier values (the inputs
/// first, then the members' outputs in order).
struct RowMember {
  std::shared_ptr<const Primitive> primitive;  // a Fused or a Reduce
  std::vector<int> args;
};

/// How a backend runs the region: stages in order, over blocks of rows.
/// `map`: an element-wise program over the rows' elements (its results are
/// the reduction that follows's input, or the region's outputs at S);
/// `scalars`: an element-wise program over the rows' reduced values;
/// `reduce`: the row reduction of the previous map's one result.
struct RowStage {
  enum class Kind { map, scalars, reduce };
  Kind kind = Kind::map;
  std::shared_ptr<const Fused> program;  // map, scalars
  std::vector<int> args;                 // the values read (program inputs in order)
  std::vector<int> results;              // the values made (program outputs in order)
  std::vector<DType> arg_dtypes;
  // map: per program input, whether it holds one value per row (a reduced
  // value, or an input of size 1 along the reduced axes).
  std::vector<bool> row_scalar;
  Reduce::Type type = Reduce::Type::sum;  // reduce
};

/// The generated GPU kernel of a region (src/compile/jit_cuda.cpp): a
/// block or a warp per row, every stage in one launch. Parameters: the
/// inputs `params` (pointers), the outputs, the row count, the row length,
/// NvRowLayout {rs[params], cs[params]} (64-bit integers), then the
/// threads per row (int: 256, or 32 for rows of at most 1024 elements).
struct FusedRowsGpuKernel {
  std::shared_ptr<const GpuModule> module;
  std::string name;
  std::vector<int> params;
  mutable std::mutex mu;  // guards fn
  mutable const void* fn = nullptr;
};

class FusedReduce : public PrimitiveBase<PrimitiveId::FusedReduce> {
 public:
  /// `shape` is S; the reductions are over its axes `split`..end. Values:
  /// the `num_inputs` inputs, then each member's outputs; `outputs` lists
  /// the values the node returns.
  FusedReduce(std::vector<Shape> input_shapes, std::vector<DType> input_dtypes, Shape shape,
              int split, std::vector<RowMember> members, std::vector<int> outputs);
  int num_inputs() const { return num_inputs_; }
  /// The first value member `m` makes.
  int first_value(int m) const { return first_[m]; }
  const Shape& shape() const { return shape_; }
  int split() const { return split_; }
  /// The reduced shape: S with its axes `split`.. set to 1.
  Shape reduced_shape() const;
  const std::vector<RowMember>& members() const { return members_; }
  const std::vector<int>& outputs() const { return outputs_; }
  const std::vector<RowStage>& stages() const { return stages_; }
  int num_values() const { return static_cast<int>(dtypes_.size()); }
  DType value_dtype(int v) const { return dtypes_[v]; }
  /// Whether value `v` holds one value per row (a reduction's result or
  /// work on such results; inputs: of size 1 along the reduced axes).
  bool row_scalar(int v) const { return scalar_[v]; }

  Expected<std::vector<OutputSpec>> output_specs(const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override;
  size_t params_hash() const override;
  void print_params(std::ostream& os) const override;
  /// The region as ordinary nodes (transforms use it).
  Arrays expand(const Arrays& inputs) const;
  /// The generated GPU kernel once compile built it (null: the CUDA
  /// backend runs the members one by one).
  std::shared_ptr<const FusedRowsGpuKernel> gpu_kernel() const;
  void set_gpu_kernel(std::shared_ptr<const FusedRowsGpuKernel> k) const;

 private:
  void plan();
  std::shared_ptr<const Fused> compose(const std::vector<int>& targets, std::vector<int>& args) const;

  int num_inputs_;
  std::vector<Shape> input_shapes_;
  Shape shape_;
  int split_;
  std::vector<RowMember> members_;
  std::vector<int> outputs_;
  std::vector<DType> dtypes_;  // per value
  std::vector<bool> scalar_;   // per value
  std::vector<int> maker_;     // per value: the member that makes it (-1: an input)
  std::vector<int> first_;     // per member
  std::vector<RowStage> stages_;
  struct Slot {
    std::mutex mu;
    std::shared_ptr<const FusedRowsGpuKernel> gpu;
  };
  std::shared_ptr<Slot> slot_ = std::make_shared<Slot>();
};

}  // namespace nuvec
