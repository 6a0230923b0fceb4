// load(): a checkpoint folder (mlx-lm / Hugging Face layout) or a GGUF file
// into a model, its tokenizer and its end-of-sequence ids.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "config.h"
#include "gguf_map.h"
#include "models/decoder.h"
#include "nuvec/io.h"
#include "nuvec/lm/model.h"

namespace nuvec::lm {

using detail::Config;
using detail::fail;
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) fail(ErrorKind::io, p.string() + ": cannot be opened");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool is_gguf(const std::string& path) {
  return fs::is_regular_file(path) && path.size() > 5 && path.substr(path.size() - 5) == ".gguf";
}

// model.safetensors, or the shards model.safetensors.index.json lists (each
// file once; every tensor must be in the file the index names).
detail::WeightMap folder_weights(const fs::path& dir) {
  detail::WeightMap all;
  auto add = [&](const fs::path& file, const std::set<std::string>* expected) {
    auto [arrays, meta] = load_safetensors(file.string());
    for (auto& [name, a] : arrays) {
      if (expected && !expected->count(name))
        fail(ErrorKind::io, file.string() + ": tensor " + name + " is not listed for this file in the index");
      if (!all.emplace(name, a).second) fail(ErrorKind::io, file.string() + ": tensor " + name + " appears twice");
    }
  };
  const fs::path index = dir / "model.safetensors.index.json";
  if (fs::exists(index)) {
    Config idx = Config::parse(read_text(index), index.string());
    const auto& map = idx.json().contains("weight_map") ? idx.json()["weight_map"] : nlohmann::json();
    if (!map.is_object()) fail(ErrorKind::io, index.string() + ": \"weight_map\" must be an object");
    std::map<std::string, std::set<std::string>> by_file;
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it.value().is_string()) fail(ErrorKind::io, index.string() + ": weight_map values must be file names");
      std::string f = it.value().get<std::string>();
      if (f.find('/') != std::string::npos || f.find("..") != std::string::npos)
        fail(ErrorKind::io, index.string() + ": shard name \"" + f + "\" is not a plain file name");
      by_file[f].insert(it.key());
    }
    for (const auto& [f, names] : by_file) add(dir / f, &names);
    for (const auto& [f, names] : by_file)
      for (const auto& n : names)
        if (!all.count(n)) fail(ErrorKind::io, index.string() + ": tensor " + n + " is not in " + f);
    return all;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".safetensors") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) fail(ErrorKind::io, dir.string() + ": no .safetensors weights");
  for (const auto& f : files) add(f, nullptr);
  return all;
}

std::vector<int> merged_eos(const Tokenizer& tok, const std::vector<int>& extra) {
  std::vector<int> out = tok.eos_token_ids();
  for (int id : extra)
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  return out;
}

struct Parts {
  std::shared_ptr<Model> model;
  std::string config_json;
  std::vector<int> eos;
  std::optional<Tokenizer> tokenizer;
};

Parts load_parts(const std::string& path, const LoadConfig& opts, bool want_tokenizer) {
  Parts p;
  detail::WeightMap weights;
  Config cfg;
  bool gguf = is_gguf(path);
  if (gguf) {
    auto g = detail::read_gguf(path, opts.gguf_unpermute);
    weights = std::move(g.weights);
    cfg = Config::parse(g.config_json, path + " (config from metadata)");
    p.config_json = g.config_json;
    if (want_tokenizer) p.tokenizer = Tokenizer::from_gguf(gguf_vocab(g.meta));
  } else {
    if (!fs::is_directory(path)) fail(ErrorKind::io, path + ": neither a checkpoint folder nor a .gguf file");
    const fs::path dir(path);
    p.config_json = read_text(dir / "config.json");
    cfg = Config::parse(p.config_json, (dir / "config.json").string());
    weights = folder_weights(dir);
    if (want_tokenizer) p.tokenizer = Tokenizer::from_dir(path);
    if (fs::exists(dir / "generation_config.json")) {
      Config gen = Config::parse(read_text(dir / "generation_config.json"),
                                 (dir / "generation_config.json").string());
      p.eos = gen.int_list("eos_token_id");
    }
  }
  auto eos_cfg = cfg.int_list("eos_token_id");
  p.eos.insert(p.eos.end(), eos_cfg.begin(), eos_cfg.end());
  const std::string type = cfg.get_string("model_type", "");
  if (type.empty()) fail(ErrorKind::io, cfg.source() + ": missing \"model_type\"");
  detail::Builder build = detail::find_builder(type);
  detail::Weights w(std::move(weights), path);
  p.model = build(cfg, w);
  // GGUF's quantized scales are float16; the default compute dtype there is
  // float32 (docs/lm.md).
  std::optional<DType> dtype = opts.dtype;
  if (!dtype && gguf) dtype = float32;
  const bool dequant = opts.dtype.has_value();
  detail::convert_model(*p.model, dtype, dequant, opts.quantize_bits, opts.quantize_group_size, opts.device);
  return p;
}

}  // namespace

Loaded load(const std::string& path, const LoadConfig& config) {
  Parts p = load_parts(path, config, true);
  Loaded out{p.model, std::move(*p.tokenizer), p.config_json, {}};
  out.eos_token_ids = merged_eos(out.tokenizer, p.eos);
  return out;
}

std::shared_ptr<Model> load_model(const std::string& path, const LoadConfig& config) {
  return load_parts(path, config, false).model;
}

void save_checkpoint(const Model& model, const std::string& config_json, const std::string& out_dir,
                     const std::string& source_dir) {
  fs::create_directories(out_dir);
  Config cfg = Config::parse(config_json, "config");
  nlohmann::json j = cfg.json();
  j.erase("quantization");
  j.erase("quantization_config");
  const ModelInfo& info = model.info();
  if (info.quant_bits) j["quantization"] = {{"group_size", *info.quant_group_size}, {"bits", *info.quant_bits}};
  {
    std::ofstream o(fs::path(out_dir) / "config.json");
    o << j.dump(4) << "\n";
    if (!o) fail(ErrorKind::io, out_dir + "/config.json: cannot be written");
  }
  std::unordered_map<std::string, Array> arrays;
  for (auto& [name, a] : model.weights()) arrays.emplace(name, a);
  save_safetensors((fs::path(out_dir) / "model.safetensors").string(), arrays, {{"format", "mlx"}});
  if (source_dir.empty() || !fs::is_directory(source_dir)) return;
  for (const char* f : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                        "generation_config.json", "chat_template.jinja"}) {
    fs::path src = fs::path(source_dir) / f;
    if (fs::exists(src)) fs::copy_file(src, fs::path(out_dir) / f, fs::copy_options::overwrite_existing);
  }
}

}  // namespace nuvec::lm
