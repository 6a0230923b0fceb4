// Sorting, partitioning, scans and concatenation along one axis.
#pragma once

#include "nuvec/primitives/params.h"
#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// Sort, ArgSort, Partition and ArgPartition along `axis` (non-negative).
/// NaN orders after every number (as MLX). Sort and ArgSort are stable;
/// the partitions put the element of rank `kth` (non-negative, < size) at
/// position kth, smaller-or-equal elements before it and the rest after,
/// in the order std::nth_element leaves them (MLX's CPU order). The arg
/// forms give uint32 indices.
template <PrimitiveId Id>
class SortPrimitive : public PrimitiveBase<Id> {
 public:
  static constexpr bool is_arg =
      Id == PrimitiveId::ArgSort || Id == PrimitiveId::ArgPartition;
  static constexpr bool is_partition =
      Id == PrimitiveId::Partition || Id == PrimitiveId::ArgPartition;
  explicit SortPrimitive(int axis, int kth = 0) : axis_(axis), kth_(kth) {}
  int axis() const { return axis_; }
  int kth() const { return kth_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override {
    auto& r = static_cast<const SortPrimitive&>(o);
    return r.axis_ == axis_ && r.kth_ == kth_;
  }
  size_t params_hash() const override {
    return params::combine(size_t(axis_), size_t(kth_));
  }

 private:
  int axis_;
  int kth_;
};
using Sort = SortPrimitive<PrimitiveId::Sort>;
using ArgSort = SortPrimitive<PrimitiveId::ArgSort>;
using Partition = SortPrimitive<PrimitiveId::Partition>;
using ArgPartition = SortPrimitive<PrimitiveId::ArgPartition>;

/// Cumulative reduction along `axis` (non-negative). `reverse` runs from
/// the end; an exclusive scan starts from the identity (0, 1, the lowest or
/// highest value, -inf) and leaves out the element itself.
class Scan : public PrimitiveBase<PrimitiveId::Scan> {
 public:
  enum class Type { sum, prod, max, min, logaddexp };
  Scan(Type type, int axis, bool reverse, bool inclusive)
      : type_(type), axis_(axis), reverse_(reverse), inclusive_(inclusive) {}
  Type type() const { return type_; }
  int axis() const { return axis_; }
  bool reverse() const { return reverse_; }
  bool inclusive() const { return inclusive_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override {
    auto& r = static_cast<const Scan&>(o);
    return r.type_ == type_ && r.axis_ == axis_ && r.reverse_ == reverse_ &&
           r.inclusive_ == inclusive_;
  }
  size_t params_hash() const override {
    return params::combine(
        params::combine(size_t(type_), size_t(axis_)),
        size_t(reverse_) * 2 + size_t(inclusive_));
  }
  void print_params(std::ostream& os) const override;

 private:
  Type type_;
  int axis_;
  bool reverse_, inclusive_;
};

/// The output dtype of a scan, as MLX: cumsum of bool is int32, cumprod,
/// cummax and cummin keep the dtype, logcumsumexp of bool and integers is
/// float32. (Unlike sum, cumsum keeps small integer dtypes.)
constexpr DType scan_output_dtype(Scan::Type t, DType in) {
  if (t == Scan::Type::sum && in == bool_) return int32;
  if (t == Scan::Type::logaddexp && !is_inexact(in)) return float32;
  return in;
}

/// Joins inputs of one dtype and rank along `axis` (non-negative); the
/// other dimensions must match.
class Concatenate : public PrimitiveBase<PrimitiveId::Concatenate> {
 public:
  explicit Concatenate(int axis) : axis_(axis) {}
  int axis() const { return axis_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override {
    return static_cast<const Concatenate&>(o).axis_ == axis_;
  }
  size_t params_hash() const override { return size_t(axis_); }

 private:
  int axis_;
};

}  // namespace nuvec
