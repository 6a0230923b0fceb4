// Custom: a function with its own transform rules (custom_function and
// checkpoint). Its inputs are the primals followed by the function's
// outputs, computed outside any trace (so nothing of the inner graph is kept
// for the backward pass); its outputs are views of those outputs.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// The function and the rules a user gave (empty rules fall back to
/// transforming `f` itself, which recomputes it).
struct CustomRules {
  std::function<Arrays(const Arrays&)> f;
  std::function<Arrays(const Arrays& primals, const Arrays& cotangents, const Arrays& outputs)> vjp;
  std::function<Arrays(const Arrays& primals, const Arrays& tangents)> jvp;
  /// MLX's jvp rule, used instead of jvp when set: tangents only of the
  /// differentiated primals, whose indices are `argnums`.
  std::function<Arrays(const Arrays& primals, const Arrays& tangents, const std::vector<int>& argnums)>
      jvp_argnums;
  std::function<std::pair<Arrays, std::vector<int>>(const Arrays& inputs, const std::vector<int>& axes)>
      vmap;
  std::string name = "custom_function";
};

class Custom : public PrimitiveBase<PrimitiveId::Custom> {
 public:
  Custom(std::shared_ptr<const CustomRules> rules, int num_primals)
      : rules_(std::move(rules)), num_primals_(num_primals) {}
  const CustomRules& rules() const { return *rules_; }
  int num_primals() const { return num_primals_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool shape_polymorphic() const override { return false; }
  bool params_equal(const Primitive& o) const override {
    auto& r = static_cast<const Custom&>(o);
    return r.rules_ == rules_ && r.num_primals_ == num_primals_;
  }
  size_t params_hash() const override { return std::hash<const void*>{}(rules_.get()); }

 private:
  std::shared_ptr<const CustomRules> rules_;
  int num_primals_;
};

/// An input of a compiled function while it is traced: it has a shape and a
/// dtype but no values, so evaluating anything that depends on it fails
/// with an error that says so.
class Placeholder : public PrimitiveBase<PrimitiveId::Placeholder> {
 public:
  Placeholder(Shape shape, DType dtype) : shape_(std::move(shape)), dtype_(dtype) {}
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  bool params_equal(const Primitive&) const override { return false; }  // each is distinct

 private:
  Shape shape_;
  DType dtype_;
};

}  // namespace nuvec
