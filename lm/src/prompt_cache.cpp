// Prompt caches in safetensors, in mlx-lm's save_prompt_cache layout: the
// arrays of layer i's state as "i.j"; metadata "0.i..." each layer's meta
// state, "1.<key>" the caller's metadata, "2.i" each layer's class name.
#include <filesystem>

#include "config.h"
#include "nuvec/io.h"
#include "nuvec/lm/cache.h"

namespace nuvec::lm {

using detail::fail;

namespace {
std::vector<std::string> meta_state(const LayerCache& c) {
  const std::string off = std::to_string(c.offset());
  if (c.kind() == "RotatingKVCache") return {"0", std::to_string(c.window()), off, "0"};
  if (auto* q = dynamic_cast<const QuantizedKVCache*>(&c))
    return {off, std::to_string(q->group_size()), std::to_string(q->bits())};
  if (auto* r = dynamic_cast<const ArraysCache*>(&c)) return {off, std::to_string(r->size())};
  return {off};
}

int to_int(const std::string& s, const std::string& what) {
  size_t used = 0;
  long v = 0;
  try {
    v = std::stol(s, &used);
  } catch (...) {
    used = 0;
  }
  if (used != s.size() || s.empty() || v < 0 || v > (1L << 30))
    fail(ErrorKind::io, "[load_prompt_cache] " + what + " is not a valid count: \"" + s + "\"");
  return static_cast<int>(v);
}
}  // namespace

void save_prompt_cache(const std::string& file, const PromptCache& cache,
                       const std::unordered_map<std::string, std::string>& metadata) {
  std::unordered_map<std::string, Array> arrays;
  std::unordered_map<std::string, std::string> meta;
  for (size_t i = 0; i < cache.size(); ++i) {
    auto st = cache[i]->state();
    for (size_t j = 0; j < st.size(); ++j) arrays.emplace(std::to_string(i) + "." + std::to_string(j), st[j]);
    auto ms = meta_state(*cache[i]);
    for (size_t j = 0; j < ms.size(); ++j) meta["0." + std::to_string(i) + "." + std::to_string(j)] = ms[j];
    meta["2." + std::to_string(i)] = cache[i]->kind();
  }
  for (const auto& [k, v] : metadata) meta["1." + k] = v;
  save_safetensors(file, arrays, meta);
}

PromptCache load_prompt_cache(const std::string& file, std::unordered_map<std::string, std::string>* metadata) {
  auto [arrays, meta] = load_safetensors(file);
  PromptCache out;
  for (size_t i = 0;; ++i) {
    auto kind_it = meta.find("2." + std::to_string(i));
    if (kind_it == meta.end()) break;
    const std::string& kind = kind_it->second;
    auto m = [&](size_t j) {
      auto it = meta.find("0." + std::to_string(i) + "." + std::to_string(j));
      if (it == meta.end())
        fail(ErrorKind::io, file + ": layer " + std::to_string(i) + " lacks its meta state " + std::to_string(j));
      return it->second;
    };
    std::vector<Array> st;
    for (size_t j = 0;; ++j) {
      auto it = arrays.find(std::to_string(i) + "." + std::to_string(j));
      if (it == arrays.end()) break;
      st.push_back(it->second);
    }
    std::unique_ptr<LayerCache> c;
    int offset = 0;
    if (kind == "KVCache") {
      c = std::make_unique<KVCache>();
      offset = to_int(m(0), "an offset");
    } else if (kind == "RotatingKVCache") {
      c = std::make_unique<RotatingKVCache>(std::max(1, to_int(m(1), "max_size")));
      offset = to_int(m(2), "an offset");
    } else if (kind == "QuantizedKVCache") {
      c = std::make_unique<QuantizedKVCache>(to_int(m(1), "group_size"), to_int(m(2), "bits"));
      offset = to_int(m(0), "an offset");
    } else if (kind == "ArraysCache") {
      const int size = to_int(m(1), "a slot count");
      if (size < static_cast<int>(st.size()) || size > 64)
        fail(ErrorKind::io, file + ": layer " + std::to_string(i) + " has " + std::to_string(st.size()) +
                                " arrays for " + std::to_string(size) + " slots");
      c = std::make_unique<ArraysCache>(size);
      offset = to_int(m(0), "an offset");
    } else {
      fail(ErrorKind::io, file + ": layer " + std::to_string(i) + " has unknown cache kind \"" + kind + "\"");
    }
    c->set_state(std::move(st), offset);
    out.push_back(std::move(c));
  }
  if (out.empty()) fail(ErrorKind::io, file + ": not a prompt cache (no layers)");
  if (metadata) {
    metadata->clear();
    for (const auto& [k, v] : meta)
      if (k.rfind("1.", 0) == 0) (*metadata)[k.substr(2)] = v;
  }
  return out;
}

}  // namespace nuvec::lm
