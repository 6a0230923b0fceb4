// Convolutions and misc ops against MLX (tests/refs/conv_misc.ref, from
// tools/record_mlx_conv_misc.py).
#include <gtest/gtest.h>

#include <nuvec/nuvec.h>

#include "support/conformance.h"

namespace nuvec {
namespace {

namespace cf = conformance;

std::vector<Array> build(const refs::Case& c) {
  auto in = cf::make_inputs(c);
  if (c.op == "conv") {
    const std::string& kind = c.param("kind");
    auto st = c.param_ints("stride"), dil = c.param_ints("dil");
    int g = static_cast<int>(c.param_int("groups"));
    if (kind == "general")
      return {ops::conv_general(in[0], in[1], st, c.param_ints("lo"), c.param_ints("hi"), dil,
                                c.param_ints("idil"), g, c.param_bool("flip"))};
    auto pad = c.param_ints("pad");
    int d = static_cast<int>(st.size());
    if (kind == "conv") {
      if (d == 1) return {ops::conv1d(in[0], in[1], st[0], pad[0], dil[0], g)};
      if (d == 2) return {ops::conv2d(in[0], in[1], {st[0], st[1]}, {pad[0], pad[1]}, {dil[0], dil[1]}, g)};
      return {ops::conv3d(in[0], in[1], {st[0], st[1], st[2]}, {pad[0], pad[1], pad[2]},
                          {dil[0], dil[1], dil[2]}, g)};
    }
    auto op = c.param_ints("opad");
    if (d == 1) return {ops::conv_transpose1d(in[0], in[1], st[0], pad[0], dil[0], op[0], g)};
    if (d == 2)
      return {ops::conv_transpose2d(in[0], in[1], {st[0], st[1]}, {pad[0], pad[1]},
                                    {dil[0], dil[1]}, {op[0], op[1]}, g)};
    return {ops::conv_transpose3d(in[0], in[1], {st[0], st[1], st[2]}, {pad[0], pad[1], pad[2]},
                                  {dil[0], dil[1], dil[2]}, {op[0], op[1], op[2]}, g)};
  }
  if (c.op == "pad") {
    auto pw = c.param_ints("pw");
    std::vector<std::pair<int, int>> p;
    for (size_t i = 0; i + 1 < pw.size(); i += 2) p.emplace_back(pw[i], pw[i + 1]);
    return {ops::pad(in[0], p, array(c.param_double("cv"), float64), c.param("mode"))};
  }
  if (c.op == "diag") return {ops::diag(in[0], static_cast<int>(c.param_int("k")))};
  int off = c.has("off") ? static_cast<int>(c.param_int("off")) : 0;
  int a1 = c.has("a1") ? static_cast<int>(c.param_int("a1")) : 0;
  int a2 = c.has("a2") ? static_cast<int>(c.param_int("a2")) : 1;
  if (c.op == "diagonal") return {ops::diagonal(in[0], off, a1, a2)};
  if (c.op == "trace") {
    std::optional<DType> dt;
    if (c.has("dtype")) dt = cf::dtype_from_name(c.param("dtype"));
    return {ops::trace(in[0], off, a1, a2, dt)};
  }
  if (c.op == "kron") return {ops::kron(in[0], in[1])};
  if (c.op == "meshgrid") return ops::meshgrid(in, c.param_bool("sparse"), c.param("ix"));
  if (c.op == "tensordot") {
    if (c.has("axes")) return {ops::tensordot(in[0], in[1], static_cast<int>(c.param_int("axes")))};
    return {ops::tensordot(in[0], in[1], c.param_ints("axes_a"), c.param_ints("axes_b"))};
  }
  if (c.op == "einsum") return {ops::einsum(c.param("sub"), in)};
  if (c.op == "searchsorted")
    return {ops::searchsorted(in[0], in[1], c.param("side"))};
  if (c.op == "slice_dyn") return {ops::slice(in[0], in[1], c.param_ints("axes"), c.param_ints("size"))};
  if (c.op == "slice_update") return {ops::slice_update(in[0], in[1], in[2], c.param_ints("axes"))};
  throw std::runtime_error("no op " + c.op);
}

TEST(ConvMisc, MatchesMlx) {
  cf::FileHooks hooks;
  hooks.tolerance = [](const refs::Case& c) {
    if (c.op == "conv" || c.op == "tensordot" || c.op == "einsum") {
      double terms = 1, scale = 0;
      for (const auto& t : c.inputs) scale = std::max(scale, cf::max_abs(t));
      if (c.inputs.size() > 1) terms = static_cast<double>(c.inputs[1].shape.empty() ? 1 : 64);
      return cf::Tolerance::reduction(terms, scale * scale * 64);
    }
    return cf::Tolerance::exact();
  };
  cf::run_file("conv_misc.ref", build, hooks);
}

}  // namespace
}  // namespace nuvec
