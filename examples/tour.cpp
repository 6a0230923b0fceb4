// A tour of what nuvec does today: lazy arrays, broadcasting, views, errors,
// reductions and matmul. Run with scripts/demo.sh.
#include <iostream>

#include <nuvec/nuvec.h>

using namespace nuvec;

// A tree: the parameters of a line, declared once for the transforms.
struct Line {
  Array w;
  Array b;
};
NUVEC_TREE(Line, w, b)

int main() {
  std::cout << "nuvec tour\n\n";

  // Lazy arrays: nothing runs until a value is read.
  Array x = array({{0.0, 1.0, 2.0}, {3.0, 4.0, 5.0}});
  Array col = array({10, 20}, {2, 1});  // int32 column, broadcasts over columns
  Array y = (x * 2.0 + col).t();    // float32 (weak scalar), a transposed view
  std::cout << "x =\n" << x << "\n";
  std::cout << "(x * 2 + col).T has shape " << y.shape() << ", dtype " << y.dtype()
            << " before evaluation\n";
  std::cout << y << "\n\n";

  // Views share the buffer: transpose, slicing with steps, broadcast.
  Array r = ops::arange(12).reshape({3, 4});
  std::cout << "arange(12).reshape(3, 4)[:, ::-2] = " << ops::slice(r, {0, 3}, {3, -5}, {1, -2})
            << "\n\n";

  // Indexing as x[...]: basic indices give views, index arrays gather, and
  // at(...) makes functional updates.
  std::cout << "r.i(1, slice({}, {}, -1)) = " << r.i(1, slice({}, {}, -1)) << "\n";
  std::cout << "r.i(array({0, 2}), newaxis, 3) = " << r.i(array({0, 2}), newaxis, 3) << "\n";
  std::cout << "r.at(array({0, 0}), 0).add(100) = " << r.at(array({0, 0}), 0).add(100) << "\n";
  std::cout << "sort / cumsum of [3, 1, 2]: " << ops::sort(array({3, 1, 2})) << ", "
            << ops::cumsum(array({3, 1, 2}), 0) << "\n\n";

  // Reductions.
  std::cout << "sum over axis 0: " << x.sum(0) << "\n";
  std::cout << "mean: " << x.mean() << ", var(ddof=1): " << ops::var(x, false, 1) << "\n";
  std::cout << "argmax of each row: " << x.argmax(1) << "\n";
  std::cout << "logsumexp: " << x.logsumexp(-1) << "\n";
  std::cout << "softmax of the first row: " << ops::softmax(ops::slice(x, {0}, {1}), -1) << "\n\n";

  // Matrix products (float32 through BLAS).
  Array a = array({{1.0, 2.0, 3.0}});
  std::cout << "a @ a.T = " << a.matmul(a.t()) << "\n";

  // Errors: an invalid call gives a failed array; nothing throws until read.
  Array bad = a.matmul(a).exp().sum(-1);
  try {
    bad.check();
  } catch (const Error& e) {
    std::cout << "a @ a failed as expected: " << e.what() << "\n";
    std::cout << "  op_name = " << e.op_name().value_or("?") << ", kind = "
              << error_kind_name(e.kind()) << "\n";
  }

  // Type promotion as MLX: uint8 + int8 -> int16, int32 * 2.5 -> float32.
  Array u = array<uint8_t>({200, 100});
  Array i8 = array<int8_t>({-1, 1});
  std::cout << "\nuint8 + int8 = " << (u + i8) << "\n";
  std::cout << "int32 * 2.5 = " << (array({1, 2}) * 2.5) << "\n";
  std::cout << "int32 // -2 (Python's rule) = " << ops::floor_divide(array({7, -7}), -2) << "\n";
  std::cout << "float16 exp: " << ops::exp(array({0.5, 1.0}).astype(float16)) << "\n";

  // Random numbers, bit for bit as MLX: explicit keys or the thread's sequence.
  Array k = random::key(0);
  std::cout << "\nuniform(key(0), 3) = " << random::uniform({3}, float32, k) << "\n";
  random::seed(42);
  std::cout << "after seed(42), normal((2, 2)) = " << random::normal({2, 2}) << "\n";

  // Transforms over trees: gradients of sum(x^3), of a struct's loss, and a
  // compiled training step (docs/transforms.md, docs/compile.md).
  auto cube = [](const Array& x) { return (x * x * x).sum(); };
  Array x2 = array({1.0, 2.0});
  std::cout << "\ngrad(sum(x^3)) at [1, 2] = " << grad(cube)(x2) << "\n";
  Line line{array({0.0}), array({0.0})};
  auto step = compile_mut([](Line& p, const std::pair<Array, Array>& xy) {
    auto [loss, g] = value_and_grad([&](const Line& q) {
      Array r = q.w * xy.first + q.b - xy.second;
      return (r * r).mean();
    })(p);
    p = tree_map(p, g, [](const Array& v, const Array& d) { return v - d * 0.1f; });
    return loss;
  });
  Array xs = array({0.0, 1.0, 2.0, 3.0});
  Array ys = xs * 2.0 + 1.0;
  for (int i = 0; i < 500; ++i) (void)step(line, std::make_pair(xs, ys));
  std::cout << "fit y = 2x + 1 with a compiled step: w = " << line.w << ", b = " << line.b
            << " (traced " << step.trace_count() << " time)\n";

  // Fused kernels of nuvec::fast (docs/fast.md): a transformer block's
  // normalizations, rotary embeddings, attention and the loss, one pass each.
  Array h = random::normal({2, 4, 8, 64}, random::key(1));   // [B, heads, T, D]
  Array scale_w = ops::ones({64});
  auto [resid, normed] = fast::add_rms_norm(h, h, scale_w, 1e-5f);
  Array qk = fast::rope(normed, 64, false, 10000.0f, 1.0f, 0);
  Array attn = fast::scaled_dot_product_attention(qk, qk, normed, 0.125f, "causal");
  std::cout << "\nattention output " << attn.shape() << " through the "
            << fast::plan_attention(qk, qk, normed, "causal").kernel << " kernel\n";
  Array logits = random::normal({3, 10}, random::key(2));
  std::cout << "per-row cross entropy: "
            << fast::cross_entropy(logits, array({1, 4, 9}), {.label_smoothing = 0.1f}) << "\n";
  (void)resid;
  return 0;
}
