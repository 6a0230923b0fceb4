// Element-wise primitives: unary and binary families (expanded from the
// registry), select, casts and divmod.
#pragma once

#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// Which input dtypes a unary primitive accepts and what it returns.
enum class UnaryRule {
  abs,             // numeric; complex gives float32
  signed_numeric,  // numeric but bool
  numeric,         // any dtype, same out
  inexact,         // floating or complex (ops convert integers first)
  floating,        // floating only
  real_numeric,    // anything but complex
  to_bool,         // any dtype, bool out
  integer,         // integers and bool
  complex_part,    // complex in, float32 out
};

/// Which operand dtype a binary primitive accepts and what it returns.
enum class BinaryRule {
  any,           // any dtype, same out
  numeric,       // anything but bool
  inexact,       // floating or complex
  real_numeric,  // anything but complex
  compare,       // any dtype, bool out
  logical,       // any dtype, bool out
  integer,       // integers and bool
  floating,      // floating only
};

Expected<DType> unary_output_dtype(UnaryRule rule, DType in);
Expected<DType> binary_output_dtype(BinaryRule rule, DType in);

/// Checks n inputs of one shape for an element-wise primitive.
Expected<std::vector<OutputSpec>> elementwise_specs(
    const std::vector<Array>& inputs, size_t n, DType out, int outputs = 1);

template <PrimitiveId Id, UnaryRule Rule>
class UnaryPrimitive : public PrimitiveBase<Id> {
 public:
  static constexpr UnaryRule rule = Rule;
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override {
    if (inputs.size() != 1) return op_error(ErrorKind::internal, "expected one input");
    auto d = unary_output_dtype(Rule, inputs[0].dtype());
    if (!d) return d.error();
    return elementwise_specs(inputs, 1, *d);
  }
  NUVEC_TRANSFORM_RULES
};

template <PrimitiveId Id, BinaryRule Rule>
class BinaryPrimitive : public PrimitiveBase<Id> {
 public:
  static constexpr BinaryRule rule = Rule;
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override {
    if (inputs.size() != 2 || !(inputs[0].dtype() == inputs[1].dtype()))
      return op_error(ErrorKind::internal, "expected two inputs of one dtype");
    auto d = binary_output_dtype(Rule, inputs[0].dtype());
    if (!d) return d.error();
    return elementwise_specs(inputs, 2, *d);
  }
  NUVEC_TRANSFORM_RULES
};

// The rules are instantiated once, in src/primitives/elementwise_grad.cpp.
#define NUVEC_DEFINE_UNARY(Name, rule) \
  using Name = UnaryPrimitive<PrimitiveId::Name, UnaryRule::rule>; \
  extern template class UnaryPrimitive<PrimitiveId::Name, UnaryRule::rule>;
NUVEC_UNARY_PRIMITIVES(NUVEC_DEFINE_UNARY)
#undef NUVEC_DEFINE_UNARY
#define NUVEC_DEFINE_BINARY(Name, rule) \
  using Name = BinaryPrimitive<PrimitiveId::Name, BinaryRule::rule>; \
  extern template class BinaryPrimitive<PrimitiveId::Name, BinaryRule::rule>;
NUVEC_BINARY_PRIMITIVES(NUVEC_DEFINE_BINARY)
#undef NUVEC_DEFINE_BINARY

/// where(cond, x, y): cond is bool, x and y share a dtype; one shape.
class Select : public PrimitiveBase<PrimitiveId::Select> {
 public:
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
};

/// Converts to another dtype (kernels::Cast).
class AsType : public PrimitiveBase<PrimitiveId::AsType> {
 public:
  explicit AsType(DType dtype) : dtype_(dtype) {}
  DType dtype() const { return dtype_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override {
    return static_cast<const AsType&>(o).dtype_ == dtype_;
  }
  size_t params_hash() const override { return size_t(dtype_.index()); }
  void print_params(std::ostream& os) const override { os << dtype_; }

 private:
  DType dtype_;
};

/// Floor division and remainder in one pass: two outputs.
class DivMod : public PrimitiveBase<PrimitiveId::DivMod> {
 public:
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
};

}  // namespace nuvec
