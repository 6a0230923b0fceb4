// nuvec-lm: generate, chat, convert and bench (docs/lm.md, "The tool").
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nuvec/lm.h"

using namespace nuvec;

namespace {

struct Args {
  std::string command;
  std::map<std::string, std::string> values;
  bool has(const std::string& k) const { return values.count(k) > 0; }
  std::string get(const std::string& k, const std::string& d = "") const {
    auto it = values.find(k);
    return it == values.end() ? d : it->second;
  }
  double num(const std::string& k, double d) const { return has(k) ? std::stod(get(k)) : d; }
};

const char* kUsage =
    "usage:\n"
    "  nuvec-lm generate --model DIR|FILE.gguf --prompt TEXT [--max-tokens N] [--temp T] [--top-p P]\n"
    "                    [--top-k K] [--min-p M] [--repetition-penalty R] [--seed S] [--chat]\n"
    "                    [--dtype float32|bfloat16|float16] [--device cpu|gpu] [--tensor-parallel]\n"
    "                    (--tensor-parallel: every rank of scripts/nuvec-run -n N holds 1/N of the model)\n"
    "  nuvec-lm chat --model DIR|FILE.gguf [--max-tokens N] [--temp T] [--seed S] [--device cpu|gpu]\n"
    "  nuvec-lm convert --model DIR|FILE.gguf --out DIR2 [--quantize --bits 4 --group-size 64 | --dtype bfloat16]\n"
    "  nuvec-lm bench --model DIR|FILE.gguf [--device cpu|gpu] [--dtype ...] [--quantize --bits B --group-size G]\n"
    "                 [--decode-tokens N] [--prompts 16,128,512,2048] [--batch 8,32]\n";

const std::vector<std::string> kFlags = {"--chat", "--quantize", "--tensor-parallel"};

Args parse(int argc, char** argv) {
  if (argc < 2) throw std::invalid_argument("no command");
  Args a;
  a.command = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string k = argv[i];
    if (k.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument " + k);
    if (std::find(kFlags.begin(), kFlags.end(), k) != kFlags.end()) {
      a.values[k.substr(2)] = "1";
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(k + " needs a value");
    a.values[k.substr(2)] = argv[++i];
  }
  return a;
}

std::optional<DType> parse_dtype(const std::string& s) {
  if (s.empty()) return std::nullopt;
  if (s == "float32") return float32;
  if (s == "bfloat16") return bfloat16;
  if (s == "float16") return float16;
  throw std::invalid_argument("--dtype must be float32, bfloat16 or float16, got " + s);
}

lm::LoadConfig load_config(const Args& a) {
  lm::LoadConfig c;
  c.dtype = parse_dtype(a.get("dtype"));
  if (a.has("quantize")) {
    c.quantize_bits = static_cast<int>(a.num("bits", 4));
    c.quantize_group_size = static_cast<int>(a.num("group-size", 64));
  }
  const std::string dev = a.get("device");
  if (dev == "gpu") {
    if (!is_available(Device::gpu)) throw std::invalid_argument("--device gpu: no GPU here");
    set_default_device(Device::gpu);
    c.device = Device::gpu;
  } else if (dev == "cpu" || dev.empty()) {
    if (dev == "cpu") set_default_device(Device::cpu);
    else if (is_available(Device::gpu)) {
      set_default_device(Device::gpu);
      c.device = Device::gpu;
    }
  } else {
    throw std::invalid_argument("--device must be cpu or gpu");
  }
  return c;
}

lm::GenerateOptions generate_options(const Args& a) {
  lm::GenerateOptions o;
  o.max_tokens = static_cast<int>(a.num("max-tokens", 256));
  o.sampler.temp = static_cast<float>(a.num("temp", 0.0));
  o.sampler.top_p = static_cast<float>(a.num("top-p", 0.0));
  o.sampler.top_k = static_cast<int>(a.num("top-k", 0));
  o.sampler.min_p = static_cast<float>(a.num("min-p", 0.0));
  if (a.has("repetition-penalty")) o.processors.repetition_penalty = static_cast<float>(a.num("repetition-penalty", 1));
  if (a.has("seed")) o.seed = static_cast<uint64_t>(std::stoull(a.get("seed")));
  return o;
}

void print_stats(const lm::GenerationResponse& r) {
  std::printf("\n==========\nPrompt: %d tokens, %.3f tokens-per-sec\nGeneration: %d tokens, %.3f tokens-per-sec\n"
              "Peak memory: %.3f GB\n",
              r.prompt_tokens, r.prompt_tps, r.generation_tokens, r.generation_tps, r.peak_memory_gb);
}

std::vector<int> prompt_ids(const lm::Loaded& m, const std::string& text, bool chat) {
  if (!chat) return m.tokenizer.encode(text, true);
  if (m.tokenizer.chat_template().empty()) throw std::invalid_argument("--chat: the checkpoint has no chat template");
  lm::ChatTemplate t(m.tokenizer.chat_template());
  return m.tokenizer.encode(t.apply({{"user", text}}, true, m.tokenizer.bos_token(), m.tokenizer.eos_token()), false);
}

int cmd_generate(const Args& a) {
  if (!a.has("model") || !a.has("prompt")) throw std::invalid_argument("generate needs --model and --prompt");
  auto m = lm::load(a.get("model"), load_config(a));
  auto o = generate_options(a);
  o.eos_token_ids = m.eos_token_ids;
  if (a.has("tensor-parallel")) {
    // Every rank the same model, prompt and seed; rank 0 prints.
    const bool gpu = a.get("device") == "gpu";
    auto g = distributed::init(false, gpu && distributed::is_available("nccl") ? "nccl" : "any");
    lm::shard_model(*m.model, g);
    if (!o.seed) o.seed = 0;
    if (g.rank() != 0) std::freopen("/dev/null", "w", stdout);
  }
  auto ids = prompt_ids(m, a.get("prompt"), a.has("chat"));
  auto r = lm::stream_generate(*m.model, m.tokenizer, ids, o, [](const lm::GenerationResponse& r) {
    std::fputs(r.text.c_str(), stdout);
    std::fflush(stdout);
    return true;
  });
  print_stats(r);
  return 0;
}

// The chat loop: the whole conversation is rendered each turn and only the
// tokens past what the cache holds are fed (the cache is trimmed back to
// the common prefix when the rendering of earlier turns differs).
int cmd_chat(const Args& a) {
  if (!a.has("model")) throw std::invalid_argument("chat needs --model");
  auto m = lm::load(a.get("model"), load_config(a));
  if (m.tokenizer.chat_template().empty()) throw std::invalid_argument("chat: the checkpoint has no chat template");
  lm::ChatTemplate tmpl(m.tokenizer.chat_template());
  auto o = generate_options(a);
  o.eos_token_ids = m.eos_token_ids;
  std::vector<lm::ChatMessage> messages;
  lm::PromptCache cache = m.model->make_cache();
  std::vector<int> cached;  // the tokens the cache holds
  std::printf("[nuvec-lm chat: type a message; an empty line or end of input quits]\n");
  std::string line;
  while (std::printf(">> "), std::fflush(stdout), std::getline(std::cin, line) && !line.empty()) {
    messages.push_back({"user", line});
    auto ids = m.tokenizer.encode(
        tmpl.apply(messages, true, m.tokenizer.bos_token(), m.tokenizer.eos_token()), false);
    size_t common = 0;
    while (common < cached.size() && common < ids.size() && cached[common] == ids[common]) ++common;
    if (common == ids.size()) --common;  // at least one token to feed
    bool trimmed = true;
    for (auto& c : cache) trimmed = trimmed && c->trim(static_cast<int>(cached.size() - common));
    if (!trimmed) {
      cache = m.model->make_cache();
      common = 0;
    }
    std::vector<int> rest(ids.begin() + static_cast<std::ptrdiff_t>(common), ids.end());
    cached.assign(ids.begin(), ids.end());
    std::string answer;
    std::vector<int> generated;
    auto r = lm::stream_generate(*m.model, m.tokenizer, rest, o,
                                 [&](const lm::GenerationResponse& r) {
                                   std::fputs(r.text.c_str(), stdout);
                                   std::fflush(stdout);
                                   answer += r.text;
                                   generated.push_back(r.step.token);
                                   return true;
                                 },
                                 &cache);
    // The cache holds every generated token but the last.
    if (!generated.empty()) cached.insert(cached.end(), generated.begin(), generated.end() - 1);
    std::printf("\n");
    (void)r;
    messages.push_back({"assistant", answer});
  }
  return 0;
}

int cmd_convert(const Args& a) {
  if (!a.has("model") || !a.has("out")) throw std::invalid_argument("convert needs --model and --out");
  lm::LoadConfig c = load_config(a);
  const std::filesystem::path src(a.get("model"));
  std::shared_ptr<lm::Model> model;
  std::string config;
  if (std::filesystem::is_directory(src) && !std::filesystem::exists(src / "tokenizer.json")) {
    // A folder of weights without a tokenizer: the model and its config.
    model = lm::load_model(src.string(), c);
    std::ifstream in(src / "config.json");
    config.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else {
    auto m = lm::load(src.string(), c);
    model = m.model;
    config = m.config_json;
  }
  lm::save_checkpoint(*model, config, a.get("out"), a.get("model"));
  std::printf("wrote %s (%zu parameters, %.1f MB)\n", a.get("out").c_str(), model->info().num_parameters,
              static_cast<double>(model->info().weight_bytes) / 1e6);
  return 0;
}

// The streaming read bandwidth of this machine in the same run, bytes/s:
// on the CPU two threads summing 64-bit words of 512 MiB (the floor a
// decode step, which reads every weight once, is measured against); on the
// GPU a copy of 1 GiB through nuvec (read + write).
double read_bandwidth() {
  if (default_device() == Device::gpu) {
    Array x = zeros({256 * 1024 * 1024}, float32);
    eval(x);
    Array y = x + 1.0f;
    eval(y);  // warm
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) eval(x + static_cast<float>(i));
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 5;
    return 2.0 * x.nbytes() / t;
  }
  const size_t n = (512u << 20) / 8;
  std::vector<uint64_t> buf(n, 1);
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    uint64_t sums[2] = {0, 0};
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> th;
    for (int t = 0; t < 2; ++t)
      th.emplace_back([&, t] {
        uint64_t acc = 0;
        for (size_t i = t * n / 2; i < (t + 1) * n / 2; ++i) acc += buf[i];
        sums[t] = acc;
      });
    for (auto& x : th) x.join();
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (sums[0] + sums[1] != n) return 0;
    best = std::max(best, n * 8.0 / dt);
  }
  return best;
}

int cmd_bench(const Args& a) {
  if (!a.has("model")) throw std::invalid_argument("bench needs --model");
  auto model = lm::load_model(a.get("model"), load_config(a));
  const auto& info = model->info();
  std::printf("model %s: %d layers, hidden %d, %zu parameters, %.1f MB of weights, %s\n", info.model_type.c_str(),
              info.num_layers, info.hidden_size, info.num_parameters, static_cast<double>(info.weight_bytes) / 1e6,
              default_device() == Device::gpu ? "gpu" : "cpu");
  // The allocator matters for host-bound steps (CMakeLists.txt, NUVEC_JEMALLOC).
  std::printf("malloc: %s\n", dlsym(RTLD_DEFAULT, "mallctl") ? "jemalloc" : "the C library's");
  const double bw = read_bandwidth();
  std::printf("read bandwidth (same run): %.1f GB/s; the decode floor reads %.1f MB per token: %.0f tokens/s\n",
              bw / 1e9, static_cast<double>(info.weight_bytes) / 1e6, bw / static_cast<double>(info.weight_bytes));
  std::printf("| prompt | prefill tok/s | time to first token (s) | decode tok/s | of the floor | peak memory (GB) |\n"
              "|---:|---:|---:|---:|---:|---:|\n");
  const int decode = static_cast<int>(a.num("decode-tokens", 64));
  std::vector<int> lens;
  {
    std::string list = a.get("prompts", "16,128,512,2048");
    for (size_t i = 0; i < list.size();) {
      size_t j = list.find(',', i);
      lens.push_back(std::stoi(list.substr(i, j == std::string::npos ? std::string::npos : j - i)));
      i = j == std::string::npos ? list.size() : j + 1;
    }
  }
  {  // Warm-up: kernels built, memory pools filled, outside the table.
    lm::PromptCache cache;
    lm::GenerateOptions o;
    o.max_tokens = 4;
    lm::TokenGenerator gen(*model, std::vector<int>(16, 1), cache, o);
    while (gen.next()) {
    }
  }
  for (int len : lens) {
    std::vector<int> ids(static_cast<size_t>(len));
    for (int i = 0; i < len; ++i) ids[static_cast<size_t>(i)] = (i * 7919 + 13) % info.vocab_size;
    lm::PromptCache cache;
    reset_peak_memory();
    if (default_device() == Device::gpu) reset_peak_memory(Device::gpu);
    lm::GenerateOptions o;
    o.max_tokens = decode + 1;
    lm::TokenGenerator gen(*model, ids, cache, o);
    auto t0 = std::chrono::steady_clock::now();
    gen.next();
    auto t1 = std::chrono::steady_clock::now();
    int n = 0;
    while (gen.next()) ++n;
    auto t2 = std::chrono::steady_clock::now();
    double ttft = std::chrono::duration<double>(t1 - t0).count();
    double dec = std::chrono::duration<double>(t2 - t1).count();
    const size_t peak = default_device() == Device::gpu ? get_peak_memory(Device::gpu) : get_peak_memory();
    const double floor_tps = bw / static_cast<double>(info.weight_bytes);
    std::printf("| %d | %.1f | %.3f | %.1f | %.0f%% | %.3f |\n", len, len / ttft, ttft, n / dec,
                100.0 * (n / dec) / floor_tps, static_cast<double>(peak) / 1e9);
    std::fflush(stdout);
  }
  // Batches (the paged cache): decode rate = B x N tokens over the time of
  // a run to N + 1 tokens minus that of a run to 1 token (the prefills).
  bool header = false;
  for (size_t start = 0; start < a.get("batch", "").size();) {
    const std::string list = a.get("batch");
    size_t j = list.find(',', start);
    const int B = std::stoi(list.substr(start, j == std::string::npos ? std::string::npos : j - start));
    start = j == std::string::npos ? list.size() : j + 1;
    if (B < 2) continue;
    if (!std::exchange(header, true))
      std::printf("\n| batch | prompt | decode tok/s (all rows) | per row |\n|---:|---:|---:|---:|\n");
    const int len = lens.front();
    std::vector<std::vector<int>> prompts(static_cast<size_t>(B));
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < len; ++i) prompts[b].push_back((i * 7919 + 13 + b * 101) % info.vocab_size);
    lm::GenerateOptions o;
    auto time_run = [&](int tokens) {
      o.max_tokens = tokens;
      auto t0 = std::chrono::steady_clock::now();
      lm::batch_generate_tokens(*model, prompts, o);
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    const double t1 = time_run(1), t2 = time_run(decode + 1);
    const double tps = B * decode / std::max(t2 - t1, 1e-9);
    std::printf("| %d | %d | %.1f | %.1f |\n", B, len, tps, tps / B);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Args a = parse(argc, argv);
    if (a.command == "generate") return cmd_generate(a);
    if (a.command == "chat") return cmd_chat(a);
    if (a.command == "convert") return cmd_convert(a);
    if (a.command == "bench") return cmd_bench(a);
    throw std::invalid_argument("unknown command " + a.command);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "nuvec-lm: %s\n%s", e.what(), kUsage);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nuvec-lm: %s\n", e.what());
    return 1;
  }
}
