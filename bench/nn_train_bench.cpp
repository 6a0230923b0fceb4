// Training-step throughput of nuvec_nn: the GPT of the README's main job at
// the nn issue's sizes, and an MLP, printing one RESULT line per workload
// (tokens or samples per second, the first step's seconds, peak memory).
// tools/bench_train.sh runs this and tools/torch_train_bench.py in one go
// and prints the table (docs/performance.md).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "model.h"

using namespace nuvec;

namespace {

using clk = std::chrono::steady_clock;
double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }

double peak_mib(bool gpu) {
  if (gpu) return double(get_peak_memory(Device::gpu)) / (1 << 20);
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024;  // peak RSS, KiB -> MiB
}

struct GptState {
  gpt::Gpt model;
  optim::AdamW opt;
};
NUVEC_TREE(GptState, model, opt)

void gpt_step(const char* name, gpt::Config cfg, int batch, int steps, bool gpu, int warm = 3) {
  random::seed(0);
  GptState s{gpt::Gpt(cfg), optim::AdamW(1e-3, {0.9, 0.99}, 1e-8, 0.1)};
  s.opt.init(s.model);
  DType compute = gpu ? bfloat16 : float32;
  auto loss = [compute](const gpt::Gpt& m, const Array& x, const Array& y) {
    if (compute == float32) return gpt::loss(m, x, y);
    gpt::Gpt low = m;
    low.set_dtype(compute);
    return gpt::loss(low, x, y);
  };
  auto step = compile_mut([&loss](GptState& st, const std::pair<Array, Array>& xy) {
    auto [l, g] = value_and_grad(loss)(st.model, xy.first, xy.second);
    st.opt.update(st.model, g);
    return l;
  });
  Array x = random::randint(0, cfg.vocab, {batch, cfg.context}, int32, random::key(1));
  Array y = random::randint(0, cfg.vocab, {batch, cfg.context}, int32, random::key(2));
  std::pair<Array, Array> xy{x, y};
  eval(s);
  auto t0 = clk::now();
  Array l = step(s, xy);
  eval(s);
  l.item<float>();
  double first = since(t0);
  for (int i = 0; i < warm; ++i) {  // warm
    Array w = step(s, xy);
    eval(std::tie(w, s));
  }
  auto t1 = clk::now();
  for (int i = 0; i < steps; ++i) {
    Array li = step(s, xy);
    eval(s);
    li.item<float>();
  }
  double per = since(t1) / steps;
  std::printf("RESULT %s %.0f %.3f %.0f\n", name, batch * cfg.context / per, first, peak_mib(gpu));
}

struct Mlp : nn::Module<Mlp> {
  nn::Linear l1, l2, l3;
  Mlp() : l1(784, 512), l2(512, 512), l3(512, 10) {}
  Array operator()(const Array& x) const {
    return l3(ops::maximum(l2(ops::maximum(l1(x), 0)), 0));
  }
};
NUVEC_TREE(Mlp, l1, l2, l3)

struct MlpState {
  Mlp model;
  optim::SGD opt;
};
NUVEC_TREE(MlpState, model, opt)

void mlp_step(const char* name, int steps, bool gpu) {
  random::seed(0);
  MlpState s{Mlp(), optim::SGD(0.1, 0.9)};
  s.opt.init(s.model);
  auto step = compile_mut([](MlpState& st, const std::pair<Array, Array>& xy) {
    auto f = [](const Mlp& m, const Array& x, const Array& y) { return fast::cross_entropy(m(x), y).mean(); };
    auto [l, g] = value_and_grad(f)(st.model, xy.first, xy.second);
    st.opt.update(st.model, g);
    return l;
  });
  Array x = random::normal({256, 784});
  Array y = random::randint(0, 10, {256}, int32);
  std::pair<Array, Array> xy{x, y};
  auto t0 = clk::now();
  step(s, xy).item<float>();
  double first = since(t0);
  for (int i = 0; i < 3; ++i) {
    Array w = step(s, xy);
    eval(std::tie(w, s));
  }
  auto t1 = clk::now();
  for (int i = 0; i < steps; ++i) {
    Array li = step(s, xy);
    eval(s);
    li.item<float>();
  }
  std::printf("RESULT %s %.0f %.3f %.0f\n", name, 256 / (since(t1) / steps), first, peak_mib(gpu));
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = argc > 1 ? argv[1] : "cpu";
  bool profile = device == "gpu-profile";  // two GPT steps, for a kernel profiler
  if (profile) device = "gpu";
  bool gpu = device == "gpu";
  if (gpu && !is_available(Device::gpu)) {
    std::fprintf(stderr, "no GPU\n");
    return 2;
  }
  set_default_device(gpu ? Device::gpu : Device::cpu);
  if (profile) {
    gpt_step("gpt_6x384_seq256_b64_bf16", gpt::Config{96, 384, 6, 6, 256}, 64, 1, true, 0);
  } else if (gpu) {
    gpt_step("gpt_6x384_seq256_b64_bf16", gpt::Config{96, 384, 6, 6, 256}, 64, 20, true);
    mlp_step("mlp_784_512_512_10_b256", 50, true);
  } else {
    gpt_step("gpt_2x128_seq128_b32_f32", gpt::Config{96, 128, 4, 2, 128}, 32, 10, false);
    mlp_step("mlp_784_512_512_10_b256", 20, false);
  }
  return 0;
}
