// Transform rule helpers, and the defaults of primitives without a rule.
#include "primitives/rules.h"

#include "ops/builder.h"

namespace nuvec {

Arrays Primitive::vjp(const Arrays&, const Arrays&, const std::vector<int>&, const Arrays&) const {
  rules::no_rule(*this, "vjp");
}
Arrays Primitive::jvp(const Arrays&, const Arrays&, const std::vector<int>&) const {
  rules::no_rule(*this, "jvp");
}
std::pair<Arrays, std::vector<int>> Primitive::vmap(const Arrays&, const std::vector<int>&) const {
  rules::no_rule(*this, "vmap");
}

namespace rules {

Arrays rebuild(const Primitive& p, Arrays inputs) {
  return ops::impl::build(p.shared_from_this(), std::move(inputs), {}, p.name(),
                            Location::none());
}

Array batch_front(const Array& x, int axis) {
  if (axis < 0) return ops::expand_dims(x, {0});
  return axis == 0 ? x : ops::moveaxis(x, axis, 0);
}

int batch_size(const Arrays& inputs, const std::vector<int>& axes) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (axes[i] >= 0) return inputs[i].shape(axes[i]);
  return 1;
}

Array front_sized(const Array& x, int axis, int size) {
  Array y = batch_front(x, axis);
  if (axis >= 0) return y;
  Shape s = y.shape();
  s[0] = size;
  return ops::broadcast_to(y, s);
}

std::pair<Arrays, std::vector<int>> elementwise_vmap(const Primitive& p, const Arrays& inputs,
                                                     const std::vector<int>& axes) {
  int size = batch_size(inputs, axes);
  Arrays ins;
  for (size_t i = 0; i < inputs.size(); ++i) ins.push_back(front_sized(inputs[i], axes[i], size));
  Arrays outs = rebuild(p, std::move(ins));
  return {outs, std::vector<int>(outs.size(), 0)};
}

Array zeros_of(const Array& x) { return ops::broadcast_to(ops::zeros({}, x.dtype()), x.shape()); }

void no_rule(const Primitive& p, const char* which) {
  (Error(ErrorKind::transform,
              std::string(which) + " of " + p.name() + " is not defined")).raise();
}

}  // namespace rules
}  // namespace nuvec
