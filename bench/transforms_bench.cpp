// The transforms' own overhead, and checkpoint's memory.
//  1. A 1,000-node graph of small arrays: building the forward graph alone
//     (baseline) against value_and_grad (forward + tape walk + backward
//     graph construction), and against evaluating the forward pass.
//  2. A 20-layer MLP: the peak memory of value_and_grad with and without
//     checkpoint around each layer (memory statistics API).
#include <cstdio>

#include <nuvec/nuvec.h>

#include "bench_util.h"

using namespace nuvec;

namespace {

Array chain(const Array& x, int nodes) {
  Array y = x;
  for (int i = 0; i < nodes / 4; ++i) y = ops::tanh(y * 1.001f + 0.01f) * y;
  return y.sum();
}

// The forward chain and its gradient written by hand with the ops the vjp
// rules build (multiply's rule: cotangent times the other operand; tanh's:
// cotangent times 1 - out^2; sum's: a broadcast of the cotangent): the
// derivative graph without any transform machinery.
std::pair<Array, Array> by_hand(const Array& x, int nodes) {
  // The scalar 1.001 as the forward's multiply sees it (a constant
  // broadcast to y's shape, as `y * 1.001f` builds it), kept for the
  // backward pass, whose rule multiplies by that same array.
  std::vector<Array> ys{x}, ts, cs;
  Array y = x;
  for (int i = 0; i < nodes / 4; ++i) {
    Array c = ops::broadcast_to(array(1.001f), y.shape());
    Array t = ops::tanh(y * c + 0.01f);
    cs.push_back(c);
    ts.push_back(t);
    y = t * y;
    ys.push_back(y);
  }
  Array loss = y.sum();
  Array g = ops::broadcast_to(ops::ones_like(loss), y.shape());
  for (int i = nodes / 4; i-- > 0;) {
    const Array& t = ts[i];
    const Array& yi = ys[i];
    Array du = (g * yi) * (1.0f - ops::square(t));
    g = g * t + du * cs[i];
  }
  return {loss, g};
}

void overhead() {
  const int nodes = 1000;
  Array x = random::normal({16}, random::key(1));
  x.eval();
  double build = bench::median_ms(21, [&] { (void)chain(x, nodes); });
  double forward = bench::median_ms(21, [&] { chain(x, nodes).eval(); });
  double vg_build = bench::median_ms(21, [&] {
    (void)value_and_grad([&](const Array& a) { return chain(a, nodes); })(x);
  });
  double vg_eval = bench::median_ms(21, [&] {
    auto [v, g] = value_and_grad([&](const Array& a) { return chain(a, nodes); })(x);
    nuvec::eval(std::tie(v, g));
  });
  double hand = bench::median_ms(21, [&] { (void)by_hand(x, nodes); });
  std::printf("\n1,000-node graph of 16-element arrays (ratios against building the forward graph)\n\n");
  bench::header();
  bench::row("forward: build graph", build, build);
  bench::row("forward: build + eval", forward, build);
  bench::row("value_and_grad: build (fwd + tape + bwd)", vg_build, build);
  bench::row("value_and_grad: build + eval", vg_eval, build);
  bench::row("forward + the same backward ops by hand", hand, build);
  std::printf("\ntape cost (value_and_grad build - forward build) / forward build: %.2f\n",
              (vg_build - build) / build);
  std::printf("transform machinery (value_and_grad build - forward and backward by hand) / forward build: %.2f\n",
              (vg_build - hand) / build);
  // The hand gradient is the same computation (checked once).
  auto [l1, g1] = by_hand(x, nodes);
  auto [l2, g2] = value_and_grad([&](const Array& a) { return chain(a, nodes); })(x);
  std::printf("hand gradient equals value_and_grad's: %s\n",
              ops::allclose(g1, g2, 1e-5, 1e-6).item<bool>() ? "yes" : "NO");
}

struct Mlp {
  std::vector<Array> w;
};
NUVEC_TREE(Mlp, w)

// Each layer is a residual block h + tanh(h W1) W2: its backward pass needs
// the block's intermediates (h W1 and its tanh), which checkpoint drops and
// recomputes one block at a time.
void checkpoint_memory() {
  const int layers = 20, width = 256, batch = 1024;
  Mlp m;
  for (int i = 0; i < 2 * layers; ++i)
    m.w.push_back(random::normal({width, width}, random::key(i)) * (1.0f / 16.0f));
  Array x = random::normal({batch, width}, random::key(99));
  nuvec::eval(m);
  x.eval();
  auto block = [](const std::tuple<Array, Array, Array>& p) {
    const auto& [h, w1, w2] = p;
    return h + ops::matmul(ops::tanh(ops::matmul(h, w1)), w2);
  };
  auto run = [&](bool cp, bool forward_only) {
    clear_cache();
    reset_peak_memory();
    size_t base = get_active_memory();
    auto [v, g] = value_and_grad([&](const Mlp& p) {
      Array h = x;
      for (int i = 0; i < layers; ++i) {
        auto args = std::make_tuple(h, p.w[2 * i], p.w[2 * i + 1]);
        h = cp ? checkpoint(block)(args) : block(args);
      }
      return (h * h).sum();
    })(m);
    if (forward_only) {
      v.eval();
    } else {
      v.eval();
      nuvec::eval(g);
    }
    return double(get_peak_memory() - base) / (1 << 20);
  };
  double plain = run(false, false), cp = run(true, false);
  double plain_f = run(false, true), cp_f = run(true, true);
  std::printf("\n20 residual blocks (%d x %d weights, batch %d), peak memory above the inputs\n\n",
              width, width, batch);
  std::printf("| %-28s | %14s | %16s |\n|------------------------------|----------------|------------------|\n",
              "", "forward MiB", "fwd + bwd MiB");
  std::printf("| %-28s | %14.1f | %16.1f |\n", "without checkpoint", plain_f, plain);
  std::printf("| %-28s | %14.1f | %16.1f |\n", "checkpoint around each block", cp_f, cp);
  std::printf("\nratio checkpoint / plain (fwd + bwd): %.2f\n", cp / plain);
}

}  // namespace

int main() {
  overhead();
  checkpoint_memory();
}
