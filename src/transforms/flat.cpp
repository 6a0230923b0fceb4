// The *_flat forms over positional arrays.
#include <sstream>

#include "nuvec/ops/ops.h"
#include "nuvec/transforms/flat.h"

namespace nuvec {

namespace {

std::vector<std::string> numbered(const char* what, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(std::string(what) + " " + std::to_string(i));
  return out;
}

std::vector<int> all_indices(size_t n) {
  std::vector<int> out;
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<int>(i));
  return out;
}

// value_and_grad's seed: the loss (first output) must be a scalar.
std::vector<Array> loss_seed(const std::vector<Array>& outputs) {
  if (outputs.empty())
    throw Error(ErrorKind::transform, "value_and_grad: the function returned no outputs");
  const Array& loss = outputs[0];
  if (loss.size() != 1) {
    std::ostringstream os;
    os << "value_and_grad: the function must return a scalar loss, got shape " << loss.shape();
    throw Error(ErrorKind::transform, os.str());
  }
  return {ops::ones_like(loss)};
}

}  // namespace

std::pair<std::vector<Array>, std::vector<Array>> vjp_flat(const FlatFunction& f,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& cotangents) {
  auto seeds = [&](const std::vector<Array>& outputs) {
    detail::check_like("vjp cotangents", outputs, cotangents, numbered("output", outputs.size()));
    return cotangents;
  };
  auto r = detail::vjp(f, primals, seeds, all_indices(primals.size()));
  return {std::move(r.outputs), std::move(r.grads)};
}

std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const FlatFunction& f,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents) {
  detail::check_like("jvp tangents", primals, tangents, numbered("primal", primals.size()));
  auto r = detail::jvp(f, primals, tangents, all_indices(primals.size()));
  return {std::move(r.outputs), std::move(r.grads)};
}

std::function<std::pair<std::vector<Array>, std::vector<Array>>(const std::vector<Array>&)>
value_and_grad_flat(FlatFunction f, std::vector<int> argnums) {
  return [f = std::move(f), argnums = std::move(argnums)](const std::vector<Array>& args) {
    auto r = detail::vjp(f, args, loss_seed, argnums);
    std::vector<Array> grads;
    for (int i : argnums) grads.push_back(r.grads.at(i));
    return std::make_pair(std::move(r.outputs), std::move(grads));
  };
}

FlatFunction grad_flat(FlatFunction f, std::vector<int> argnums) {
  auto vg = value_and_grad_flat(std::move(f), std::move(argnums));
  return [vg = std::move(vg)](const std::vector<Array>& args) { return vg(args).second; };
}

FlatFunction vmap_flat(FlatFunction f, std::vector<std::optional<int>> in_axes,
                       std::vector<int> out_axes) {
  return [f = std::move(f), in_axes = std::move(in_axes),
          out_axes = std::move(out_axes)](const std::vector<Array>& args) {
    if (!in_axes.empty() && in_axes.size() != args.size())
      throw Error(ErrorKind::transform, "vmap: " + std::to_string(in_axes.size()) +
                                            " in_axes for " + std::to_string(args.size()) +
                                            " arguments");
    std::vector<int> axes;
    for (size_t i = 0; i < args.size(); ++i) {
      std::optional<int> a = in_axes.empty() ? std::optional<int>(0) : in_axes[i];
      if (!a) {
        axes.push_back(-1);
        continue;
      }
      int nd = args[i].ndim();
      int n = *a < 0 ? *a + nd : *a;
      if (n < 0 || n >= nd)
        throw Error(ErrorKind::transform, "vmap: in_axis " + std::to_string(*a) +
                                              " is out of range for argument " + std::to_string(i) +
                                              " with " + std::to_string(nd) + " dimensions");
      axes.push_back(n);
    }
    auto outs = [&](const std::vector<Array>& unbatched) {
      if (!out_axes.empty() && out_axes.size() != unbatched.size())
        throw Error(ErrorKind::transform, "vmap: " + std::to_string(out_axes.size()) +
                                              " out_axes for " + std::to_string(unbatched.size()) +
                                              " outputs");
      std::vector<int> r;
      for (size_t i = 0; i < unbatched.size(); ++i) {
        int a = out_axes.empty() ? 0 : out_axes[i];
        int nd = unbatched[i].ndim() + 1;
        int n = a < 0 ? a + nd : a;
        if (n < 0 || n >= nd)
          throw Error(ErrorKind::transform, "vmap: out_axis " + std::to_string(a) +
                                                " is out of range for output " + std::to_string(i));
        r.push_back(n);
      }
      return r;
    };
    return detail::vmap(f, args, axes, outs);
  };
}

}  // namespace nuvec
