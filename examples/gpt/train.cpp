// Trains a small character-level GPT on Debian's fortune cookie databases:
// the README's main job (docs/nn.md). Flags: --steps N, --device cpu|gpu,
// --resume, --out DIR, --batch B, --seed S, --data DIR (another directory
// of fortune-format files). Under mpirun (scripts/nuvec-run -n N) it trains
// data-parallel: each rank takes B / N windows of the global batch, the
// gradients are averaged (nn::average_gradients) and rank 0 prints and
// writes the checkpoint, which resumes on any number of ranks.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "corpus.h"
#include "model.h"
#include "progress.h"

using namespace nuvec;

namespace {

struct Options {
  int steps = 0;  // 0: the device's default
  int batch = 32;
  uint64_t seed = 0;
  std::string device;
  std::string out = "gpt-fortunes";
  std::string data = "/usr/share/games/fortunes";
  bool resume = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--steps") o.steps = std::stoi(value());
    else if (a == "--batch") o.batch = std::stoi(value());
    else if (a == "--seed") o.seed = std::stoull(value());
    else if (a == "--device") o.device = value();
    else if (a == "--out") o.out = value();
    else if (a == "--data") o.data = value();
    else if (a == "--resume") o.resume = true;
    else {
      std::fprintf(stderr, "usage: train_gpt [--steps N] [--device cpu|gpu] [--resume] [--out DIR] "
                           "[--batch B] [--seed S] [--data DIR]\n");
      std::exit(a == "--help" ? 0 : 2);
    }
  }
  return o;
}

/// The training state: what a compiled step reads and writes.
struct State {
  gpt::Gpt model;
  optim::AdamW opt;
};
NUVEC_TREE(State, model, opt)

/// B windows of context + 1 tokens at random offsets of `ids`.
std::pair<Array, Array> batch(const std::vector<int32_t>& ids, int B, int T, std::mt19937_64& rng) {
  std::vector<int32_t> x(size_t(B) * T), y(size_t(B) * T);
  std::uniform_int_distribution<size_t> pick(0, ids.size() - T - 2);
  for (int b = 0; b < B; ++b) {
    size_t at = pick(rng);
    for (int t = 0; t < T; ++t) {
      x[size_t(b) * T + t] = ids[at + t];
      y[size_t(b) * T + t] = ids[at + t + 1];
    }
  }
  return {array(x.data(), {B, T}), array(y.data(), {B, T})};
}

/// The loss averaged over the data-parallel ranks (itself on one).
Array ranks_mean(const Array& l, const distributed::Group& g) {
  return g.size() == 1 ? l : distributed::all_sum(l, g) / static_cast<float>(g.size());
}

double heldout_loss(const gpt::Gpt& model, const std::vector<int32_t>& ids, int T) {
  // Consecutive windows from the start of the held-out split: the same
  // text every run.
  int B = 16, windows = 0;
  double total = 0;
  for (size_t at = 0; at + size_t(B) * T + 1 <= ids.size() && windows < 8 * B; at += size_t(B) * T) {
    std::vector<int32_t> x(ids.begin() + at, ids.begin() + at + size_t(B) * T);
    std::vector<int32_t> y(ids.begin() + at + 1, ids.begin() + at + size_t(B) * T + 1);
    total += gpt::loss(model, array(x.data(), {B, T}), array(y.data(), {B, T})).item<float>();
    windows += B;
  }
  return total / (windows / B);
}

std::string sample(const gpt::Gpt& model, const gpt::Corpus& c, const std::string& prompt, int n) {
  std::vector<int32_t> ids = gpt::encode(c, prompt);
  for (int i = 0; i < n; ++i) {
    int T = model.config.context;
    size_t from = ids.size() > size_t(T) ? ids.size() - T : 0;
    std::vector<int32_t> ctx(ids.begin() + from, ids.end());
    Array logits = model(array(ctx.data(), {1, int(ctx.size())}));
    Array last = ops::slice(logits, {0, int(ctx.size()) - 1, 0}, {1, int(ctx.size()), model.config.vocab});
    ids.push_back(random::categorical(last.reshape({-1}) * (1.0 / 0.8)).item<int32_t>());
  }
  return gpt::decode(c, ids);
}

void write_config(const std::string& path, const gpt::Config& cfg, const gpt::Corpus& c, int step) {
  std::ofstream f(path);
  std::string chars;
  for (char ch : c.chars) {
    if (ch == '"' || ch == '\\') chars += '\\';
    if (ch == '\n') chars += "\\n";
    else chars += ch;
  }
  f << "{\n  \"model_type\": \"nuvec-char-gpt\",\n  \"vocab_size\": " << cfg.vocab << ",\n  \"hidden_size\": "
    << cfg.dims << ",\n  \"num_attention_heads\": " << cfg.heads << ",\n  \"num_hidden_layers\": " << cfg.layers
    << ",\n  \"context\": " << cfg.context << ",\n  \"step\": " << step << ",\n  \"chars\": \"" << chars
    << "\"\n}\n";
}

}  // namespace

int main(int argc, char** argv) try {
  Options o = parse(argc, argv);
  bool gpu = o.device.empty() ? is_available(Device::gpu) : o.device == "gpu";
  if (gpu && !is_available(Device::gpu)) {
    std::fprintf(stderr, "--device gpu: no GPU here\n");
    return 2;
  }
  const Device device = gpu ? Device::gpu : Device::cpu;
  set_default_device(device);
  gpt::Corpus corpus = gpt::load_fortunes(o.data);
  gpt::Config cfg;
  cfg.vocab = int(corpus.chars.size());
  if (gpu) cfg = gpt::Config{cfg.vocab, 384, 6, 6, 256};
  int steps = o.steps > 0 ? o.steps : (gpu ? 2000 : 1000);
  int B = gpu ? 64 : o.batch, T = cfg.context;
  // The ranks of mpirun (or of NUVEC_WORLD_SIZE); on GPUs their
  // collectives go through NCCL.
  auto world = distributed::init();
  if (gpu && world.size() > 1 && distributed::is_available("nccl")) world = distributed::init("nccl");
  const int ranks = world.size(), rank = world.rank();
  if (B % ranks != 0) {
    std::fprintf(stderr, "the batch (%d) must split evenly over %d ranks\n", B, ranks);
    return 2;
  }
  const int local_B = B / ranks;
  // Only rank 0 prints and writes files.
  const bool lead = rank == 0;
  if (!lead) std::freopen("/dev/null", "w", stdout);

  random::seed(o.seed);
  State state{gpt::Gpt(cfg), optim::AdamW(1e-3, {0.9, 0.99}, 1e-8, 0.1)};
  int start = 0;
  if (lead) std::filesystem::create_directories(o.out);
  std::string weights = o.out + "/model.safetensors", opt_file = o.out + "/optimizer.safetensors";
  state.opt.init(state.model);
  if (o.resume) {
    state.model.load_weights(weights);
    load_into(opt_file, state.opt);
    start = static_cast<int>(state.opt.step.value.item<uint64_t>());
    std::printf("resumed from step %d of %s\n", start, o.out.c_str());
  }
  std::printf("corpus: %s, vocabulary %d\nmodel: %d layers, d_model %d, %d heads, context %d: %zu parameters; "
              "batch %d, %d steps on the %s%s\n",
              corpus.source.c_str(), cfg.vocab, cfg.layers, cfg.dims, cfg.heads, cfg.context,
              state.model.num_parameters(), B, steps, gpu ? "GPU" : "CPU",
              ranks > 1 ? (", data-parallel over " + std::to_string(ranks) + " ranks").c_str() : "");

  // Mixed precision on the GPU: float32 parameters and optimizer state, a
  // bfloat16 copy for the forward and backward passes (the cast's gradient
  // brings float32 gradients back).
  DType compute = gpu ? bfloat16 : float32;
  auto loss_fn = [compute](const gpt::Gpt& m, const Array& x, const Array& y) {
    if (compute == float32) return gpt::loss(m, x, y);
    gpt::Gpt low = m;
    low.set_dtype(compute);
    return gpt::loss(low, x, y);
  };
  auto step = compile_mut([&loss_fn, world](State& s, const std::pair<Array, Array>& xy) {
    auto [l, grads] = nuvec::value_and_grad(loss_fn)(s.model, xy.first, xy.second);
    s.opt.update(s.model, nn::average_gradients(grads, world));
    return ranks_mean(l, world);
  });
  // Each rank draws its own windows: a stream per (seed, start, rank).
  std::mt19937_64 rng(o.seed + start + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(rank));
  gpt::Progress bar(steps);
  double tokens = 0, smoothed = 0;
  for (int i = start; i < start + steps; ++i) {
    Array l = step(state, batch(corpus.train, local_B, T, rng));
    eval(state);
    tokens += double(B) * T;
    double v = l.item<float>();
    smoothed = i == start ? v : 0.95 * smoothed + 0.05 * v;
    bar.update(i - start + 1, smoothed, tokens / bar.seconds(), get_peak_memory(device));
  }
  double rate = tokens / bar.seconds();
  if (lead) {
    state.model.save_weights(weights);
    save(opt_file, state.opt);
    write_config(o.out + "/config.json", cfg, corpus, start + steps);
  }
  state.model.eval();
  double held = heldout_loss(state.model, corpus.heldout, T);
  std::printf("checkpoint: %s (weights), %s (optimizer), %s/config.json\n", weights.c_str(), opt_file.c_str(),
              o.out.c_str());
  std::printf("samples (temperature 0.8):\n");
  for (const char* prompt : {"The ", "Q: "})
    std::printf("---\n%s\n", sample(state.model, corpus, prompt, 240).c_str());
  std::printf("---\nfinal: held-out loss %.3f, unigram entropy %.3f, %.0f tokens/s, peak memory %zu MiB\n", held,
              corpus.unigram_entropy, rate, get_peak_memory(device) >> 20);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "train_gpt: %s\n", e.what());
  return 1;
}
