// The *_flat forms over positional arrays.
#include <algorithm>
#include <set>
#include <sstream>

#include "nuvec/ops/ops.h"
#include "nuvec/transforms/flat.h"
#include "nuvec/transforms/mlx.h"

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
    (Error(ErrorKind::transform, "value_and_grad: the function returned no outputs")).raise();
  const Array& loss = outputs[0];
  if (loss.size() != 1) {
    std::ostringstream os;
    os << "value_and_grad: the function must return a scalar loss, got shape " << loss.shape();
    (Error(ErrorKind::transform, os.str())).raise();
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

FlatFunction vmap_flat(FlatFunction f, VmapInAxes in_axes, std::vector<int> out_axes) {
  return [f = std::move(f), in_axes = std::move(in_axes),
          out_axes = std::move(out_axes)](const std::vector<Array>& args) {
    if (!in_axes.empty() && in_axes.size() != args.size())
      (Error(ErrorKind::transform, "vmap: " + std::to_string(in_axes.size()) +
                                            " in_axes for " + std::to_string(args.size()) +
                                            " arguments")).raise();
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
        (Error(ErrorKind::transform, "vmap: in_axis " + std::to_string(*a) +
                                              " is out of range for argument " + std::to_string(i) +
                                              " with " + std::to_string(nd) + " dimensions")).raise();
      axes.push_back(n);
    }
    auto outs = [&](const std::vector<Array>& unbatched) {
      if (!out_axes.empty() && out_axes.size() != unbatched.size())
        (Error(ErrorKind::transform, "vmap: " + std::to_string(out_axes.size()) +
                                              " out_axes for " + std::to_string(unbatched.size()) +
                                              " outputs")).raise();
      std::vector<int> r;
      for (size_t i = 0; i < unbatched.size(); ++i) {
        int a = out_axes.empty() ? 0 : out_axes[i];
        int nd = unbatched[i].ndim() + 1;
        int n = a < 0 ? a + nd : a;
        if (n < 0 || n >= nd)
          (Error(ErrorKind::transform, "vmap: out_axis " + std::to_string(a) +
                                                " is out of range for output " + std::to_string(i))).raise();
        r.push_back(n);
      }
      return r;
    };
    return detail::vmap(f, args, axes, outs);
  };
}

// MLX's forms (nuvec/transforms/mlx.h).

std::pair<std::vector<Array>, std::vector<Array>> vjp(const FlatFunction& fun,
                                                      const std::vector<Array>& primals,
                                                      const std::vector<Array>& cotangents) {
  return vjp_flat(fun, primals, cotangents);
}

std::pair<Array, Array> vjp(const UnaryFunction& fun, const Array& primal,
                            const Array& cotangent) {
  FlatFunction f = [&fun](const std::vector<Array>& in) { return std::vector<Array>{fun(in[0])}; };
  auto [outs, vjps] = vjp_flat(f, {primal}, {cotangent});
  return {outs[0], vjps[0]};
}

std::pair<std::vector<Array>, std::vector<Array>> jvp(const FlatFunction& fun,
                                                      const std::vector<Array>& primals,
                                                      const std::vector<Array>& tangents) {
  return jvp_flat(fun, primals, tangents);
}

std::pair<Array, Array> jvp(const UnaryFunction& fun, const Array& primal, const Array& tangent) {
  FlatFunction f = [&fun](const std::vector<Array>& in) { return std::vector<Array>{fun(in[0])}; };
  auto [outs, jvps] = jvp_flat(f, {primal}, {tangent});
  return {outs[0], jvps[0]};
}

namespace {

// MLX's argnums rule: negative ones count from the end; no repeats; all in
// range; the gradients come in increasing order.
std::vector<int> mlx_argnums(const std::vector<int>& argnums, size_t n) {
  std::set<int> args;
  for (int a : argnums) args.insert(a < 0 ? a + static_cast<int>(n) : a);
  if (args.size() != argnums.size())
    (Error(ErrorKind::transform, "[grad] repeated argument numbers are not allowed")).raise();
  if (*args.begin() < 0 || *args.rbegin() >= static_cast<int>(n))
    (Error(ErrorKind::transform, "[grad] invalid argument number for a function of " +
                                     std::to_string(n) + " inputs")).raise();
  return {args.begin(), args.end()};
}

}  // namespace

ValueAndGradFn value_and_grad(const FlatFunction& fun, const std::vector<int>& argnums) {
  if (argnums.empty())
    (Error(ErrorKind::transform, "[grad] at least one argument number is needed")).raise();
  // As MLX, the auxiliary outputs leave through stop_gradient: an outer
  // transform sees them as constants.
  FlatFunction with_aux = [fun](const std::vector<Array>& in) {
    std::vector<Array> outs = fun(in);
    for (size_t i = 1; i < outs.size(); ++i) outs[i] = ops::stop_gradient(outs[i]);
    return outs;
  };
  return [fun = std::move(with_aux), argnums](const std::vector<Array>& inputs) {
    std::vector<int> args = mlx_argnums(argnums, inputs.size());
    auto r = detail::vjp(fun, inputs, loss_seed, args);
    std::vector<Array> grads;
    for (int i : args) grads.push_back(r.grads[static_cast<size_t>(i)]);
    return std::make_pair(std::move(r.outputs), std::move(grads));
  };
}

ValueAndGradFn value_and_grad(const FlatFunction& fun, int argnum) {
  return value_and_grad(fun, std::vector<int>{argnum});
}

SimpleValueAndGradFn value_and_grad(const ArraysToArray& fun, const std::vector<int>& argnums) {
  FlatFunction f = [fun](const std::vector<Array>& in) { return std::vector<Array>{fun(in)}; };
  ValueAndGradFn vg = value_and_grad(f, argnums);
  return [vg = std::move(vg)](const std::vector<Array>& inputs) {
    auto [outs, grads] = vg(inputs);
    return std::make_pair(outs[0], std::move(grads));
  };
}

SimpleValueAndGradFn value_and_grad(const ArraysToArray& fun, int argnum) {
  return value_and_grad(fun, std::vector<int>{argnum});
}

FlatFunction grad(const ArraysToArray& fun, const std::vector<int>& argnums) {
  SimpleValueAndGradFn vg = value_and_grad(fun, argnums);
  return [vg = std::move(vg)](const std::vector<Array>& inputs) { return vg(inputs).second; };
}

FlatFunction grad(const ArraysToArray& fun, int argnum) {
  return grad(fun, std::vector<int>{argnum});
}

FlatFunction vmap(const FlatFunction& fun, const VmapInAxes& in_axes,
                  const std::vector<int>& out_axes) {
  // MLX's checks, made at once: it moves a batched output's axis only to a
  // non-negative position, and in axes must map something.
  for (int a : out_axes)
    if (a < 0)
      (Error(ErrorKind::transform, "[vmap] out axis " + std::to_string(a) +
                                       " is invalid: MLX's vmap takes out axes from 0 "
                                       "(vmap_flat counts negative ones from the end)")).raise();
  const auto& in = in_axes.axes();
  if (!in.empty() && std::none_of(in.begin(), in.end(), [](const auto& a) { return a.has_value(); }))
    (Error(ErrorKind::transform, "[vmap] the in axes map no input")).raise();
  return vmap_flat(fun, in_axes, out_axes);
}

UnaryFunction vmap(const UnaryFunction& fun, int in_axis, int out_axis) {
  FlatFunction f = [fun](const std::vector<Array>& in) { return std::vector<Array>{fun(in[0])}; };
  FlatFunction v = vmap(f, VmapInAxes{in_axis}, {out_axis});
  return [v = std::move(v)](const Array& x) { return v({x})[0]; };
}

BinaryFunction vmap(const BinaryFunction& fun, int in_axis_a, int in_axis_b, int out_axis) {
  FlatFunction f = [fun](const std::vector<Array>& in) {
    return std::vector<Array>{fun(in[0], in[1])};
  };
  FlatFunction v = vmap(f, VmapInAxes{in_axis_a, in_axis_b}, {out_axis});
  return [v = std::move(v)](const Array& a, const Array& b) { return v({a, b})[0]; };
}

}  // namespace nuvec
