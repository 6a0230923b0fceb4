// Rule cases of the primitives that are not element-wise: layout, reductions,
// products, gathers and scatters, linear algebra, random bits, sorting,
// scans, joins and convolutions (see rule_cases.h).
#include "ops/builder.h"
#include "support/rule_cases.h"

#include <utility>

namespace nuvec::rulecases {

namespace {

using Fn1 = std::function<Array(const Array&)>;
using Fn2 = std::function<Array(const Array&, const Array&)>;
using Arrays = std::vector<Array>;

FlatFunction one(Fn1 op) {
  return [op = std::move(op)](const Arrays& in) { return Arrays{op(in[0])}; };
}
FlatFunction two(Fn2 op) {
  return [op = std::move(op)](const Arrays& in) { return Arrays{op(in[0], in[1])}; };
}

Array ints(const Array& x) { return x.astype(int32); }

// The factorizations read one triangle (cholesky, eigh): probing them on
// sym(x) keeps every perturbation symmetric, so the finite differences
// agree with a rule whatever convention it takes for the other triangle.
Array sym(const Array& x) { return (x + ops::swapaxes(x, -1, -2)) * 0.5; }

const char* const kIndices = "integer indices: not differentiable";

}  // namespace

RuleCase Case<PrimitiveId::BitCast>::make(std::mt19937&) {
  // Reinterpreting bits has no derivative; the float64 -> uint32 view
  // doubles the last axis (the vmap rule must keep the batch axis apart).
  const char* why = "bit reinterpretation: not differentiable";
  return {{probe("float64 as int64", one([](const Array& x) { return x.view(int64); }), {{2, 3}})
               .zero_grad(why),
           probe("float64 as uint32", one([](const Array& x) { return x.view(uint32); }), {{3}})
               .zero_grad(why)}};
}

RuleCase Case<PrimitiveId::Copy>::make(std::mt19937&) {
  Fn1 copy = [](const Array& x) { return ops::copy(x); };
  return {{probe("1-D", one(copy), {{4}}), probe("2-D", one(copy), {{2, 3}})}};
}

RuleCase Case<PrimitiveId::StopGradient>::make(std::mt19937&) {
  const char* why = "stop_gradient: zero by definition, whatever the values do";
  return {{probe("2-D", one([](const Array& x) { return ops::stop_gradient(x); }), {{2, 3}})
               .zero_grad(why)}};
}

RuleCase Case<PrimitiveId::Reshape>::make(std::mt19937&) {
  // On transposed views the reshape copies; on the others it is a view.
  return {{probe("(2,3,2) to (3,4)", one([](const Array& x) { return x.reshape({3, 4}); }),
                 {{2, 3, 2}}),
           probe("flatten", one([](const Array& x) { return x.flatten(); }), {{3, 2}}),
           probe("(1,1) to 0-d", one([](const Array& x) { return x.reshape({}); }), {{1, 1}})}};
}

RuleCase Case<PrimitiveId::Transpose>::make(std::mt19937&) {
  return {{probe("perm (2,0,1)", one([](const Array& x) { return x.transpose({2, 0, 1}); }),
                 {{2, 3, 4}}),
           probe("swapaxes", one([](const Array& x) { return x.swapaxes(0, 1); }), {{3, 2}})}};
}

RuleCase Case<PrimitiveId::Broadcast>::make(std::mt19937&) {
  return {{probe("(3,1) to (2,3,4)", one([](const Array& x) { return x.broadcast_to({2, 3, 4}); }),
                 {{3, 1}}),
           probe("0-d to (2,3)", one([](const Array& x) { return x.broadcast_to({2, 3}); }), {{}})}};
}

RuleCase Case<PrimitiveId::Slice>::make(std::mt19937&) {
  return {{probe("steps of 2", one([](const Array& x) {
                   return ops::slice(x, {1, 0}, {4, 5}, {2, 2});
                 }),
                 {{4, 5}}),
           probe("reversed", one([](const Array& x) { return x.i(slice({}, {}, -1)); }), {{5}}),
           probe("negative step and a range", one([](const Array& x) {
                   return x.i(slice(2, 0, -1), slice(1, 3));
                 }),
                 {{3, 4}})}};
}

RuleCase Case<PrimitiveId::Reduce>::make(std::mt19937&) {
  const char* why = "bool output: not differentiable";
  return {{probe("sum of all", one([](const Array& x) { return x.sum(); }), {{2, 3}}),
           probe("sum over axes (0,2), keepdims", one([](const Array& x) {
                   return x.sum({0, 2}, true);
                 }),
                 {{2, 3, 2}}),
           probe("prod over axis 1", one([](const Array& x) { return x.prod(1); }), {{2, 3}},
                 {dom::nonzero}),
           // The derivative at a zero factor is the product of the others
           // (a rule dividing the product by x gets NaN there).
           probe("prod with a zero factor", one([](const Array& x) { return x.prod(); }), {{4}},
                 {dom::with_zero}),
           probe("max of all", one([](const Array& x) { return x.max(); }), {{2, 3}},
                 {dom::distinct}),
           probe("max over axis 0", one([](const Array& x) { return x.max(0); }), {{3, 2}},
                 {dom::distinct}),
           probe("min over axis 1, keepdims", one([](const Array& x) {
                   return x.min({1}, true);
                 }),
                 {{2, 3}}, {dom::distinct}),
           // (logsumexp over the last axis alone is the LogSumExp primitive.)
           probe("logsumexp over axis 0", one([](const Array& x) { return x.logsumexp(0); }),
                 {{2, 3}}),
           probe("all", one([](const Array& x) { return x.all(1); }), {{2, 3}},
                 {dom::fractional})
               .zero_grad(why),
           probe("any", one([](const Array& x) { return x.any(); }), {{2, 3}}, {dom::fractional})
               .zero_grad(why)}};
}

RuleCase Case<PrimitiveId::ArgReduce>::make(std::mt19937&) {
  return {{probe("argmax over axis 1", one([](const Array& x) { return x.argmax(1); }),
                 {{2, 3}}, {dom::distinct})
               .zero_grad(kIndices),
           probe("argmin of all", one([](const Array& x) { return x.argmin(); }), {{3, 2}},
                 {dom::distinct})
               .zero_grad(kIndices)}};
}

RuleCase Case<PrimitiveId::NumberOf>::make(std::mt19937&) {
  // No op returns NumberOf alone: mean divides by it and var subtracts
  // from it. Their finite differences are right only if NumberOf
  // contributes no derivative (its value depends on the shape only).
  return {{probe("mean over axis 1", one([](const Array& x) { return x.mean(1); }), {{2, 3}}),
           probe("var of all, ddof 1", one([](const Array& x) { return x.var({0, 1}, false, 1); }),
                 {{2, 3}})}};
}

RuleCase Case<PrimitiveId::Matmul>::make(std::mt19937&) {
  Fn2 mm = [](const Array& a, const Array& b) { return ops::matmul(a, b); };
  return {{probe("(3,4) @ (4,2)", two(mm), {{3, 4}, {4, 2}}),
           probe("vector @ matrix", two(mm), {{4}, {4, 3}}),
           probe("matrix @ vector", two(mm), {{3, 4}, {4}}),
           probe("batch (2,3,4) @ broadcast (4,2)", two(mm), {{2, 3, 4}, {4, 2}})}};
}

RuleCase Case<PrimitiveId::AddMM>::make(std::mt19937&) {
  // Inputs (a, b, c) or, where c comes first, (c, a, b): the harness's
  // "first input unbatched" vmap variant then leaves a or c unbatched.
  auto abc = [](float alpha, float beta) -> FlatFunction {
    return [=](const Arrays& in) { return Arrays{ops::addmm(in[2], in[0], in[1], alpha, beta)}; };
  };
  auto cab = [](float alpha, float beta) -> FlatFunction {
    return [=](const Arrays& in) { return Arrays{ops::addmm(in[0], in[1], in[2], alpha, beta)}; };
  };
  return {{probe("(3,4) @ (4,2) + c (3,2), alpha 0.5, beta -2", abc(0.5f, -2.0f),
                 {{3, 4}, {4, 2}, {3, 2}}),
           probe("bias row c (2,) first", cab(1.0f, 1.0f), {{2}, {3, 4}, {4, 2}}),
           probe("column c (3,1), beta 0.5", cab(-2.0f, 0.5f), {{3, 1}, {3, 4}, {4, 2}}),
           probe("vector @ matrix + c (3,)", abc(1.0f, 0.5f), {{4}, {4, 3}, {3}}),
           probe("matrix @ vector + c (3,)", abc(2.0f, 1.0f), {{3, 4}, {4}, {3}}),
           probe("batch (2,3,4) @ broadcast (4,2) + scalar c", abc(1.0f, -2.0f),
                 {{2, 3, 4}, {4, 2}, {}}),
           probe("batched c (2,3,2) first", cab(0.5f, 1.0f), {{2, 3, 2}, {2, 3, 4}, {4, 2}})}};
}

RuleCase Case<PrimitiveId::Arange>::make(std::mt19937&) {
  // Arange has no inputs, so it is never on a tape and its own rules cannot
  // be reached; the probe checks it as a constant of a traced function
  // (derivatives through the product, vmap broadcasting it).
  return {{probe("x * arange", one([](const Array& x) {
                   return x * ops::arange(0.0, 2.5, 0.5, float64);
                 }),
                 {{5}})
               .with_note("no inputs: checked as a constant of the trace")}};
}

RuleCase Case<PrimitiveId::Take>::make(std::mt19937&) {
  // The indices are float inputs cast to int32, so that vmap batches them
  // too; their derivative is zero.
  return {{probe("axis 0", two([](const Array& x, const Array& i) {
                   return ops::take(x, ints(i), 0);
                 }),
                 {{4, 3}, {5}}, {dom::real, dom::index(4)}),
           probe("2-D indices along axis 1", two([](const Array& x, const Array& i) {
                   return ops::take(x, ints(i), 1);
                 }),
                 {{3, 4}, {2, 2}}, {dom::real, dom::index(4)}),
           probe("flattened", two([](const Array& x, const Array& i) {
                   return ops::take(x, ints(i));
                 }),
                 {{2, 3}, {4}}, {dom::real, dom::index(6)}),
           probe("take_along_axis", two([](const Array& x, const Array& i) {
                   return ops::take_along_axis(x, ints(i), 1);
                 }),
                 {{3, 4}, {3, 2}}, {dom::real, dom::index(4)})}};
}

RuleCase Case<PrimitiveId::Scatter>::make(std::mt19937&) {
  // Indices in a small range repeat: accumulation (add, multiply) and the
  // last write winning (set) are both exercised.
  auto upd = [](auto method) {
    return [method](const Arrays& in) {
      return Arrays{method(in[0].at(ints(in[1])), in[2])};
    };
  };
  return {{probe("put_along_axis (set)", [](const Arrays& in) {
                   return Arrays{ops::put_along_axis(in[0], ints(in[1]), in[2], 1)};
                 },
                 {{3, 4}, {3, 2}, {3, 2}}, {dom::real, dom::index(4), dom::real}),
           probe("scatter_add_along_axis", [](const Arrays& in) {
                   return Arrays{ops::scatter_add_along_axis(in[0], ints(in[1]), in[2], 0)};
                 },
                 {{3, 2}, {4, 2}, {4, 2}}, {dom::real, dom::index(3), dom::real}),
           probe("at.set rows", upd([](const At& a, const Array& v) { return a.set(v); }),
                 {{4, 3}, {3}, {3, 3}}, {dom::real, dom::index(4), dom::real}),
           probe("at.multiply", upd([](const At& a, const Array& v) { return a.multiply(v); }),
                 {{5}, {4}, {4}}, {dom::real, dom::index(5), dom::real}),
           probe("at.maximum", upd([](const At& a, const Array& v) { return a.maximum(v); }),
                 {{5}, {4}, {4}}, {dom::distinct, dom::index(5), dom::distinct}),
           probe("at.minimum", upd([](const At& a, const Array& v) { return a.minimum(v); }),
                 {{5}, {4}, {4}}, {dom::distinct, dom::index(5), dom::distinct})}};
}

RuleCase Case<PrimitiveId::Linalg>::make(std::mt19937&) {
  // Eigenvectors and singular vectors are unique up to sign: the probes
  // return their squares, which are not.
  auto qr = [](const Arrays& in) {
    auto [q, r] = linalg::qr(in[0]);
    return Arrays{q, r};
  };
  auto svd = [](const Arrays& in) {
    auto usv = linalg::svd(in[0]);
    return Arrays{usv[1], ops::square(usv[0]), ops::square(usv[2])};
  };
  auto eigh = [](const std::string& uplo) {
    return [uplo](const Arrays& in) {
      auto [w, v] = linalg::eigh(sym(in[0]), uplo);
      return Arrays{w, ops::square(v)};
    };
  };
  Fn2 solve = [](const Array& a, const Array& b) { return linalg::solve(a, b); };
  const Domain m = dom::matrix;
  return {{probe("inv", one([](const Array& x) { return linalg::inv(x); }), {{3, 3}}, {m}),
           probe("inv, batched", one([](const Array& x) { return linalg::inv(x); }), {{2, 3, 3}},
                 {m}),
           probe("cholesky", one([](const Array& x) { return linalg::cholesky(sym(x)); }),
                 {{3, 3}}, {m}),
           probe("cholesky, upper", one([](const Array& x) {
                   return linalg::cholesky(sym(x), true);
                 }),
                 {{2, 3, 3}}, {m}),
           probe("qr, square", qr, {{3, 3}}, {m}),
           probe("qr, tall", qr, {{4, 3}}, {m}),
           probe("svd (S, U^2, Vt^2)", svd, {{3, 3}}, {m}),
           probe("svd values, (3,2)", one([](const Array& x) {
                   return linalg::svd(x, false)[0];
                 }),
                 {{3, 2}}, {m}),
           probe("eigh (w, V^2)", eigh("L"), {{3, 3}}, {m}),
           probe("eigh, upper, batched", eigh("U"), {{2, 3, 3}}, {m}),
           probe("eigvalsh", one([](const Array& x) { return linalg::eigvalsh(sym(x)); }),
                 {{3, 3}}, {m}),
           probe("solve, matrix rhs", two(solve), {{3, 3}, {3, 2}}, {m, dom::real}),
           probe("solve, vector rhs", two(solve), {{3, 3}, {3}}, {m, dom::real}),
           probe("solve, batched", two(solve), {{2, 3, 3}, {2, 3, 2}}, {m, dom::real})}};
}

RuleCase Case<PrimitiveId::RandomBits>::make(std::mt19937&) {
  // The only input of RandomBits is a uint32 key: no derivative reaches
  // it. The probes take keys as float64 integers (cast to uint32), so that
  // vmap batches over keys; the loop draws with one key at a time.
  const char* why = "uint32 key input: not differentiable";
  return {{probe("bits, width 4", one([](const Array& k) {
                   return random::bits({2, 3}, 4, k.astype(uint32));
                 }),
                 {{2}}, {dom::key})
               .zero_grad(why),
           probe("bits, width 1", one([](const Array& k) {
                   return random::bits({5}, 1, k.astype(uint32));
                 }),
                 {{2}}, {dom::key})
               .zero_grad(why),
           probe("x + normal(key)", two([](const Array& k, const Array& x) {
                   return x + random::normal({3}, float64, std::nullopt, std::nullopt,
                                             k.astype(uint32));
                 }),
                 {{2}, {3}}, {dom::key, dom::real})
               .with_note("differentiable in x, through the sum; the key's derivative is zero")}};
}

RuleCase Case<PrimitiveId::Depends>::make(std::mt19937&) {
  return {{probe("x after d", two([](const Array& x, const Array& d) {
                   return ops::depends({x}, {d})[0];
                 }),
                 {{2, 3}, {4}})}};
}

RuleCase Case<PrimitiveId::Sort>::make(std::mt19937&) {
  return {{probe("axis 1", one([](const Array& x) { return ops::sort(x, 1); }), {{3, 4}},
                 {dom::distinct}),
           probe("axis 0", one([](const Array& x) { return ops::sort(x, 0); }), {{3, 2}},
                 {dom::distinct}),
           probe("flattened", one([](const Array& x) { return ops::sort(x); }), {{2, 3}},
                 {dom::distinct})}};
}

RuleCase Case<PrimitiveId::ArgSort>::make(std::mt19937&) {
  // Through a gather, the function is differentiable again: the gradient
  // flows through take_along_axis, argsort contributes zero.
  return {{probe("argsort", one([](const Array& x) { return ops::argsort(x, 1); }), {{3, 4}},
                 {dom::distinct})
               .zero_grad(kIndices),
           probe("take_along_axis(x, argsort(x))", one([](const Array& x) {
                   return ops::take_along_axis(x, ops::argsort(x, 0), 0);
                 }),
                 {{4, 2}}, {dom::distinct})}};
}

RuleCase Case<PrimitiveId::Partition>::make(std::mt19937& rng) {
  int kth = std::uniform_int_distribution<int>(0, 4)(rng);
  return {{probe("1-D, kth " + std::to_string(kth),
                 one([kth](const Array& x) { return ops::partition(x, kth); }), {{5}},
                 {dom::distinct}),
           probe("axis 1, kth -1", one([](const Array& x) { return ops::partition(x, -1, 1); }),
                 {{3, 4}}, {dom::distinct})}};
}

RuleCase Case<PrimitiveId::ArgPartition>::make(std::mt19937& rng) {
  int kth = std::uniform_int_distribution<int>(0, 3)(rng);
  return {{probe("axis 1, kth " + std::to_string(kth),
                 one([kth](const Array& x) { return ops::argpartition(x, kth, 1); }), {{3, 4}},
                 {dom::distinct})
               .zero_grad(kIndices),
           probe("argpartition through a gather", one([](const Array& x) {
                   return ops::take_along_axis(x, ops::argpartition(x, 2), 0);
                 }),
                 {{5}}, {dom::distinct})}};
}

RuleCase Case<PrimitiveId::Scan>::make(std::mt19937&) {
  return {{probe("cumsum, axis 1", one([](const Array& x) { return ops::cumsum(x, 1); }),
                 {{3, 4}}),
           probe("cumsum, reverse exclusive, axis 0", one([](const Array& x) {
                   return ops::cumsum(x, 0, true, false);
                 }),
                 {{3, 2}}),
           probe("cumprod, flattened", one([](const Array& x) { return ops::cumprod(x); }),
                 {{2, 3}}, {dom::nonzero}),
           probe("cumprod, reverse exclusive", one([](const Array& x) {
                   return ops::cumprod(x, 1, true, false);
                 }),
                 {{2, 4}}, {dom::nonzero}),
           probe("cumprod with a zero factor", one([](const Array& x) { return ops::cumprod(x); }),
                 {{4}}, {dom::with_zero}),
           probe("cummax, axis 1", one([](const Array& x) { return ops::cummax(x, 1); }),
                 {{3, 4}}, {dom::distinct}),
           probe("cummin, reverse", one([](const Array& x) {
                   return ops::cummin(x, 0, true, true);
                 }),
                 {{4, 2}}, {dom::distinct}),
           probe("logcumsumexp, axis 1", one([](const Array& x) {
                   return ops::logcumsumexp(x, 1);
                 }),
                 {{2, 4}})}};
}

RuleCase Case<PrimitiveId::Concatenate>::make(std::mt19937&) {
  return {{probe("axis 1", two([](const Array& a, const Array& b) {
                   return ops::concatenate({a, b}, 1);
                 }),
                 {{2, 3}, {2, 1}}),
           probe("three, flattened", [](const Arrays& in) {
                   return Arrays{ops::concatenate({in[0], in[1], in[2]})};
                 },
                 {{2, 2}, {3}, {1, 2}}),
           probe("stack, axis 1", two([](const Array& a, const Array& b) {
                   return ops::stack({a, b}, 1);
                 }),
                 {{2, 3}, {2, 3}})}};
}

RuleCase Case<PrimitiveId::Im2Col>::make(std::mt19937&) {
  // Convolutions are Im2Col and a Matmul; the weight is an input of Im2Col
  // for its shape only (its derivative there is zero).
  return {{probe("conv1d, padding 1", two([](const Array& x, const Array& w) {
                   return ops::conv1d(x, w, 1, 1);
                 }),
                 {{1, 5, 2}, {3, 3, 2}}),
           probe("conv1d, stride 2, dilation 2", two([](const Array& x, const Array& w) {
                   return ops::conv1d(x, w, 2, 0, 2);
                 }),
                 {{2, 7, 1}, {2, 2, 1}}),
           probe("conv2d, stride 2, padding 1, groups 2", two([](const Array& x, const Array& w) {
                   return ops::conv2d(x, w, 2, 1, 1, 2);
                 }),
                 {{1, 4, 4, 2}, {2, 3, 3, 1}}),
           probe("conv_transpose1d, stride 2", two([](const Array& x, const Array& w) {
                   return ops::conv_transpose1d(x, w, 2);
                 }),
                 {{1, 3, 2}, {2, 3, 2}})}};
}

RuleCase Case<PrimitiveId::Custom>::make(std::mt19937&) {
  // f(x, y) = (x * y, exp(x)): without rules (transforms fall back to f),
  // with all three rules given, and checkpointed.
  FlatFunction f = [](const Arrays& in) { return Arrays{in[0] * in[1], ops::exp(in[0])}; };
  auto vjp = [](const Arrays& p, const Arrays& c, const Arrays& out) {
    return Arrays{c[0] * p[1] + c[1] * out[1], c[0] * p[0]};
  };
  auto jvp = [](const Arrays& p, const Arrays& t) {
    return Arrays{t[0] * p[1] + p[0] * t[1], t[0] * ops::exp(p[0])};
  };
  // Element-wise with equal shapes: batch axes to the front, and the
  // unbatched operand broadcasts from the right.
  auto vmap = [f](const Arrays& in, const std::vector<int>& axes) {
    Arrays front;
    for (size_t i = 0; i < 2; ++i)
      front.push_back(axes[i] < 0 ? in[i] : ops::moveaxis(in[i], axes[i], 0));
    return std::make_pair(f(front), std::vector<int>{0, axes[0] < 0 ? -1 : 0});
  };
  auto custom = custom_function_flat(f);
  auto ruled = custom_function_flat(f).with_vjp(vjp).with_jvp(jvp).with_vmap(vmap);
  FlatFunction checkpointed = checkpoint_flat(f);
  return {{probe("no rules", [custom](const Arrays& in) { return custom(in); }, {{2, 3}, {2, 3}}),
           probe("vjp, jvp and vmap rules", [ruled](const Arrays& in) { return ruled(in); },
                 {{2, 3}, {2, 3}}),
           probe("checkpoint", checkpointed, {{4}, {4}})}};
}

RuleCase Case<PrimitiveId::CudaKernel>::make(std::mt19937&) {
  // A user's CUDA kernel (fast::CudaKernel) has no transform rules, as
  // MLX's: each transform must fail naming the kernel. The call is on the
  // GPU stream (a CPU stream refuses it); building the node needs no GPU.
  fast::CudaKernel kernel("axpy", {"a", "b"}, {"out"},
                          "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                          "if (i < a_shape[0] * a_shape[1]) out[i] = a[i] * b[i] + a[i];\n");
  FlatFunction f = [kernel](const Arrays& in) {
    return kernel(in, {.output_shapes = {in[0].shape()},
                       .output_dtypes = {in[0].dtype()},
                       .grid = {static_cast<int>(in[0].size()), 1, 1},
                       .threadgroup = {32, 1, 1},
                       .stream = Device::gpu});
  };
  RuleCase c{{probe("a * b + a", f, {{2, 3}, {2, 3}})}};
  c.no_rules = "fast::CudaKernel \"axpy\"";
  return c;
}

RuleCase Case<PrimitiveId::Placeholder>::make(std::mt19937&) {
  // The probe is a compiled function: called plainly it replays its trace
  // (the finite differences and the loop), inside a transform it runs f.
  auto compiled = std::make_shared<Compiled<FlatFunction>>(compile_flat(
      [](const Arrays& in) { return Arrays{ops::sin(in[0]) * in[1] + in[1]}; }));
  return {{probe("compiled sin(x) * y + y",
                 [compiled](const Arrays& in) { return (*compiled)(in); }, {{2, 3}, {2, 3}})},
          "placeholders stand for the inputs of compile's trace only; a compiled function "
          "called inside a transform runs f itself, and its replays hold the real inputs"};
}

RuleCase Case<PrimitiveId::Fused>::make(std::mt19937&) {
  // Fused nodes exist only in compile's replays; the probe applies the
  // primitive of one (exp(x) * y + y fused into one kernel) to its inputs.
  auto compiled = compile_flat(
      [](const Arrays& in) { return Arrays{ops::exp(in[0]) * in[1] + in[1]}; });
  Array r = compiled(Arrays{ops::ones({2, 3}, float64), ops::ones({2, 3}, float64)})[0];
  std::shared_ptr<const Primitive> fused = r.desc()->node->primitive;
  return {{probe("fused exp(x) * y + y",
                 [fused](const Arrays& in) {
                   return ops::impl::build(fused, in, {}, "fused", Location::none());
                 },
                 {{2, 3}, {2, 3}})}};
}

}  // namespace nuvec::rulecases

namespace nuvec::rulecases {

RuleCase Case<PrimitiveId::FusedReduce>::make(std::mt19937&) {
  // A FusedReduce node exists only in compile's replays: the probe applies
  // the primitive of a hand-written softmax over rows (one region) to its
  // input.
  auto compiled = compile_flat([](const Arrays& in) {
    Array e = ops::exp(in[0] - ops::max(in[0], {-1}, true));
    return Arrays{e / ops::sum(e, {-1}, true)};
  });
  Array r = compiled(Arrays{ops::ones({2, 3}, float64)})[0];
  std::shared_ptr<const Primitive> fused = r.desc()->node->primitive;
  return {{probe("fused softmax over rows",
                 [fused](const Arrays& in) {
                   return ops::impl::build(fused, in, {}, "fused rows", Location::none());
                 },
                 {{2, 3}})}};
}

}  // namespace nuvec::rulecases
