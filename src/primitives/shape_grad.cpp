// vjp and jvp rules of the view and shape primitives. Views are linear, so
// their jvp applies the same view to the tangent and their vjp is the
// adjoint view (inverse permutation, sum over broadcast axes, zeros around
// a slice).
#include "nuvec/ops/ops.h"
#include "nuvec/primitives/shape_ops.h"
#include "primitives/grad_util.h"
#include "primitives/rules.h"

namespace nuvec {

Arrays Reshape::vjp(const Arrays& primals, const Arrays& cotangents,
                    const std::vector<int>&, const Arrays&) const {
  return {ops::reshape(cotangents[0], primals[0].shape())};
}

Arrays Reshape::jvp(const Arrays&, const Arrays& tangents,
                    const std::vector<int>&) const {
  return {ops::reshape(tangents[0], shape_)};
}

Arrays Transpose::vjp(const Arrays&, const Arrays& cotangents,
                      const std::vector<int>&, const Arrays&) const {
  std::vector<int> inverse(perm_.size());
  for (size_t i = 0; i < perm_.size(); ++i)
    inverse[perm_[i]] = static_cast<int>(i);
  return {ops::transpose(cotangents[0], inverse)};
}

Arrays Transpose::jvp(const Arrays&, const Arrays& tangents,
                      const std::vector<int>&) const {
  return {ops::transpose(tangents[0], perm_)};
}

// The extra inputs of a relative broadcast lend only their shapes: zero.
Arrays Broadcast::vjp(const Arrays& primals, const Arrays& cotangents,
                      const std::vector<int>& argnums, const Arrays&) const {
  Arrays out;
  for (int a : argnums)
    out.push_back(a == 0 ? rules::sum_to_shape(cotangents[0], primals[0].shape())
                         : rules::zeros_of(primals[a]));
  return out;
}

Arrays Broadcast::jvp(const Arrays& primals, const Arrays& tangents,
                      const std::vector<int>& argnums) const {
  Shape out = rules::rebuild(*this, primals)[0].shape();
  for (size_t i = 0; i < argnums.size(); ++i)
    if (argnums[i] == 0) return {ops::broadcast_to(tangents[i], out)};
  return {ops::zeros(out, primals[0].dtype())};
}

Arrays Slice::vjp(const Arrays& primals, const Arrays& cotangents,
                  const std::vector<int>&, const Arrays&) const {
  return {
      rules::unslice(cotangents[0], primals[0].shape(), start_, size_, step_)};
}

Arrays Slice::jvp(const Arrays&, const Arrays& tangents,
                  const std::vector<int>&) const {
  return rules::rebuild(*this, {tangents[0]});
}

// Transforms see stop_gradient's output as a constant.
Arrays StopGradient::vjp(const Arrays& primals, const Arrays&,
                         const std::vector<int>&, const Arrays&) const {
  return {rules::zeros_of(primals[0])};
}

Arrays StopGradient::jvp(const Arrays& primals, const Arrays&,
                         const std::vector<int>&) const {
  return {rules::zeros_of(primals[0])};
}

Arrays Copy::vjp(const Arrays&, const Arrays& cotangents,
                 const std::vector<int>&, const Arrays&) const {
  return {cotangents[0]};
}

Arrays Copy::jvp(const Arrays&, const Arrays& tangents,
                 const std::vector<int>&) const {
  return {tangents[0]};
}

// Reinterpreted bits have no derivative.
Arrays BitCast::vjp(const Arrays& primals, const Arrays&,
                    const std::vector<int>&, const Arrays&) const {
  return {rules::zeros_of(primals[0])};
}

Arrays BitCast::jvp(const Arrays& primals, const Arrays&,
                    const std::vector<int>&) const {
  auto spec = output_specs(primals);
  if (!spec) return {ops::zeros(primals[0].shape(), dtype_)};
  return {ops::zeros(spec->at(0).shape, dtype_)};
}

// The output is input 0; the other inputs only order the evaluation.
Arrays Depends::vjp(const Arrays& primals, const Arrays& cotangents,
                    const std::vector<int>& argnums, const Arrays&) const {
  Arrays out;
  for (int arg : argnums)
    out.push_back(arg == 0 ? cotangents[0] : rules::zeros_of(primals[arg]));
  return out;
}

Arrays Depends::jvp(const Arrays& primals, const Arrays& tangents,
                    const std::vector<int>& argnums) const {
  for (size_t i = 0; i < argnums.size(); ++i)
    if (argnums[i] == 0) return {tangents[i]};
  return {rules::zeros_of(primals[0])};
}

}  // namespace nuvec
