// GGUF vocabularies: gguf_vocab (the tokenizer.ggml.* metadata) and
// Tokenizer::from_gguf (byte-level BPE for "gpt2" with llama.cpp's
// pre-tokenizer regexes, llama.cpp's SentencePiece BPE for "llama").
#include <set>

#include "tokenizer/pipeline.h"
#include "tokenizer/text.h"

namespace nuvec::lm {

using tok::fail;

namespace {

using Meta = std::unordered_map<std::string, io::GGUFMetaData>;

const io::GGUFMetaData* find(const Meta& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

std::optional<std::string> meta_string(const Meta& m, const std::string& key) {
  auto v = find(m, key);
  if (!v) return std::nullopt;
  if (auto s = std::get_if<std::string>(v)) return *s;
  fail("GGUF metadata \"" + key + "\" is not a string", ErrorKind::io);
}

const Array* meta_array(const Meta& m, const std::string& key, int ndim) {
  auto v = find(m, key);
  if (!v) return nullptr;
  auto a = std::get_if<Array>(v);
  if (!a || a->ndim() != ndim)
    fail("GGUF metadata \"" + key + "\" is not " +
             (ndim ? "an array of numbers" : "a number"),
         ErrorKind::io);
  return a;
}

std::optional<int> meta_id(const Meta& m, const std::string& key) {
  auto a = meta_array(m, key, 0);
  if (!a) return std::nullopt;
  if (is_floating(a->dtype()))
    fail("GGUF metadata \"" + key + "\" is not an integer", ErrorKind::io);
  int64_t v = a->item<int64_t>();
  if (v < 0 || v > (1 << 30))
    fail("GGUF metadata \"" + key + "\" is out of range", ErrorKind::io);
  return static_cast<int>(v);
}

std::optional<bool> meta_bool(const Meta& m, const std::string& key) {
  auto a = meta_array(m, key, 0);
  if (!a) return std::nullopt;
  return a->item<int64_t>() != 0;
}

const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
const char* kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// llama.cpp's regexes for a "pre" name, applied one after the other.
std::vector<std::string> pre_regexes(const std::string& pre) {
  if (pre == "default" || pre.empty())
    return {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"};
  if (pre == "gpt2" || pre == "gpt-2") return {kGpt2};
  if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3")
    return {kLlama3};
  if (pre == "qwen2" || pre == "deepseek-r1-qwen") return {kQwen2};
  if (pre == "smollm") return {R"(\p{N})", kGpt2};
  fail("GGUF pre-tokenizer \"" + pre +
           "\" is not supported (supported: default, gpt2, llama-bpe, llama3, "
           "qwen2, smollm)",
       ErrorKind::io);
}

}  // namespace

GgufVocab gguf_vocab(
    const std::unordered_map<std::string, io::GGUFMetaData>& meta) {
  GgufVocab v;
  auto model = meta_string(meta, "tokenizer.ggml.model");
  if (!model)
    fail("GGUF metadata has no \"tokenizer.ggml.model\"", ErrorKind::io);
  v.model = *model;
  v.pre = meta_string(meta, "tokenizer.ggml.pre").value_or("default");
  auto strings = [&](const char* key, bool required) {
    auto p = find(meta, key);
    if (!p) {
      if (required)
        fail(std::string("GGUF metadata has no \"") + key + "\"",
             ErrorKind::io);
      return std::vector<std::string>();
    }
    auto s = std::get_if<std::vector<std::string>>(p);
    if (!s) {
      // An empty array loads as a 1-d array of no numbers.
      auto a = std::get_if<Array>(p);
      if (a && a->ndim() == 1 && a->size() == 0)
        return std::vector<std::string>();
      fail(std::string("GGUF metadata \"") + key +
               "\" is not an array of strings",
           ErrorKind::io);
    }
    return *s;
  };
  v.tokens = strings("tokenizer.ggml.tokens", true);
  v.merges = strings("tokenizer.ggml.merges", false);
  if (auto a = meta_array(meta, "tokenizer.ggml.scores", 1))
    v.scores = a->to_vector<float>();
  if (auto a = meta_array(meta, "tokenizer.ggml.token_type", 1)) {
    if (is_floating(a->dtype()))
      fail("GGUF metadata \"tokenizer.ggml.token_type\" is not integers",
           ErrorKind::io);
    v.token_types = a->to_vector<int>();
  }
  v.bos = meta_id(meta, "tokenizer.ggml.bos_token_id");
  v.eos = meta_id(meta, "tokenizer.ggml.eos_token_id");
  v.unk = meta_id(meta, "tokenizer.ggml.unknown_token_id");
  v.pad = meta_id(meta, "tokenizer.ggml.padding_token_id");
  bool spm = v.model == "llama";
  // llama.cpp's defaults: SentencePiece vocabularies add BOS and a space.
  v.add_bos = meta_bool(meta, "tokenizer.ggml.add_bos_token").value_or(spm);
  v.add_eos = meta_bool(meta, "tokenizer.ggml.add_eos_token").value_or(false);
  v.add_space_prefix =
      meta_bool(meta, "tokenizer.ggml.add_space_prefix").value_or(spm);
  v.chat_template = meta_string(meta, "tokenizer.chat_template").value_or("");
  return v;
}

Tokenizer Tokenizer::from_gguf(const GgufVocab& v) {
  const size_t n = v.tokens.size();
  if (n == 0) fail("the GGUF vocabulary has no tokens", ErrorKind::io);
  if (n > (1u << 30)) fail("the GGUF vocabulary is too large", ErrorKind::io);
  if (!v.token_types.empty() && v.token_types.size() != n)
    fail("GGUF token_type has " + std::to_string(v.token_types.size()) +
             " entries for " + std::to_string(n) + " tokens",
         ErrorKind::io);
  for (auto id : {v.bos, v.eos, v.unk, v.pad})
    if (id && static_cast<size_t>(*id) >= n)
      fail("a GGUF special token id (" + std::to_string(*id) +
               ") is out of range",
           ErrorKind::io);
  auto im = std::make_shared<Impl>();
  const bool byte_level = v.model == "gpt2";
  if (!byte_level && v.model != "llama")
    fail("GGUF tokenizer model \"" + v.model +
             "\" is not supported (gpt2, llama)",
         ErrorKind::io);
  if (!byte_level && v.scores.size() != n)
    fail("GGUF scores has " + std::to_string(v.scores.size()) +
             " entries for " + std::to_string(n) + " tokens",
         ErrorKind::io);
  im->id_to_token = v.tokens;
  im->has_id.assign(n, 1);
  im->vocab_size = static_cast<int>(n);
  auto& bpe = im->bpe;
  bpe.vocab.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string key = v.tokens[i];
    if (byte_level) {
      // A token outside the byte alphabet is spelled in it (transformers).
      bool in_alphabet = tok::valid_utf8_prefix(key) == key.size();
      for (size_t k = 0; in_alphabet && k < key.size();) {
        size_t len = 0;
        in_alphabet = tok::char_byte(tok::next_char(key, k, &len)) >= 0;
        k += len;
      }
      if (!in_alphabet) {
        std::string spelled;
        for (unsigned char c : key) spelled += tok::byte_char(c);
        key = spelled;
      }
    }
    bpe.vocab[key] = static_cast<int>(i);
  }
  bpe.init_bytes();
  if (byte_level) {
    for (const std::string& m : v.merges) {
      size_t sp = m.find(' ');
      if (sp == std::string::npos || m.find(' ', sp + 1) != std::string::npos)
        fail("GGUF merge \"" + m + "\" is not two tokens separated by a space",
             ErrorKind::io);
      bpe.add_merge(m.substr(0, sp), m.substr(sp + 1));
    }
    im->pre_tokenizer = tok::regex_byte_level_pre_tokenizer(pre_regexes(v.pre));
    im->decoder = tok::byte_level_decoder();
  } else {
    bpe.scores = v.scores;
    bpe.unk = v.unk;
    im->spm_escape = true;
    im->spm_space_prefix = v.add_space_prefix;
    im->decoder = tok::sentencepiece_decoder(v.add_space_prefix);
  }
  for (size_t i = 0; i < v.token_types.size(); ++i) {
    int t = v.token_types[i];
    bool control = t == 3 || (t == 2 && !byte_level);
    if (!control && t != 4) continue;
    const std::string& s = v.tokens[i];
    if (s.empty() || tok::valid_utf8_prefix(s) != s.size()) continue;
    if (byte_level && control) {
      bool ok = true;  // a control token outside the alphabet is a mislabel
      for (size_t k = 0; ok && k < s.size();) {
        size_t len = 0;
        ok = tok::char_byte(tok::next_char(s, k, &len)) >= 0;
        k += len;
      }
      if (!ok) continue;
    }
    tok::AddedToken a;
    a.content = s;
    a.id = static_cast<int>(i);
    a.special = control;
    im->added.push_back(a);
  }
  im->finish_added();
  if (v.add_bos) {
    if (!v.bos)
      fail("the GGUF vocabulary adds BOS but has no bos_token_id",
           ErrorKind::io);
    im->prefix_ids = {*v.bos};
  }
  if (v.add_eos) {
    if (!v.eos)
      fail("the GGUF vocabulary adds EOS but has no eos_token_id",
           ErrorKind::io);
    im->suffix_ids = {*v.eos};
  }
  im->bos_id = v.bos;
  if (v.bos) im->bos_token = v.tokens[*v.bos];
  if (v.eos) {
    im->eos_ids = {*v.eos};
    im->eos_token = v.tokens[*v.eos];
  }
  im->chat_template = v.chat_template;
  return Tokenizer(im);
}

}  // namespace nuvec::lm
