// Tokenizer::from_json / from_dir: tokenizer.json (model, added tokens,
// normalizer, pre-tokenizer, post-processor, decoder) and
// tokenizer_config.json (special tokens, add_bos_token, chat template).
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tokenizer/pipeline.h"

namespace nuvec::lm {

using tok::fail;
using tok::Json;
using tok::json_bool;
using tok::json_member;
using tok::json_string;

namespace {

Json parse(const std::string& text, const std::string& what) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    fail(what + " is not valid JSON: " + e.what(), ErrorKind::io);
  }
}

constexpr size_t kMaxHoles = 1 << 16;

int json_id(const Json& v, const std::string& what) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
      v.get<int64_t>() > (1 << 30))
    fail(what + " is not a token id", ErrorKind::io);
  return v.get<int>();
}

void load_model(Tokenizer::Impl& im, const Json& m) {
  if (!m.is_object())
    fail("tokenizer.json: \"model\" is not an object", ErrorKind::io);
  std::string type =
      m.contains("type") ? json_string(m, "type", "model") : "BPE";
  if (type != "BPE")
    fail("model type \"" + type + "\" is not supported", ErrorKind::io);
  const Json& vocab = json_member(m, "vocab", "model");
  if (!vocab.is_object())
    fail("model: \"vocab\" is not an object", ErrorKind::io);
  auto& bpe = im.bpe;
  int max_id = -1;
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    int id = json_id(it.value(), "model.vocab[\"" + it.key() + "\"]");
    bpe.vocab[it.key()] = id;
    max_id = std::max(max_id, id);
  }
  // Ids may leave holes, but a file cannot make us allocate for ids far
  // past its vocabulary.
  if (static_cast<size_t>(max_id) >= vocab.size() + kMaxHoles)
    fail("model: id " + std::to_string(max_id) + " is far past the " +
             std::to_string(vocab.size()) + " tokens of the vocabulary",
         ErrorKind::io);
  im.id_to_token.assign(max_id + 1, "");
  im.has_id.assign(max_id + 1, 0);
  for (auto& [t, id] : bpe.vocab) {
    if (im.has_id[id])
      fail("model: id " + std::to_string(id) + " is given twice",
           ErrorKind::io);
    im.id_to_token[id] = t, im.has_id[id] = 1;
  }
  im.vocab_size = max_id + 1;
  if (m.contains("dropout") && !m["dropout"].is_null() &&
      !(m["dropout"].is_number() && m["dropout"].get<double>() == 0.0))
    fail("BPE dropout is not supported", ErrorKind::io);
  auto opt_string = [&](const char* key) {
    if (!m.contains(key) || m[key].is_null()) return std::string();
    return json_string(m, key, "model");
  };
  bpe.continuing_subword_prefix = opt_string("continuing_subword_prefix");
  bpe.end_of_word_suffix = opt_string("end_of_word_suffix");
  std::string unk = opt_string("unk_token");
  if (!unk.empty()) {
    auto it = bpe.vocab.find(unk);
    if (it == bpe.vocab.end())
      fail("model: unk_token \"" + unk + "\" is not in the vocabulary",
           ErrorKind::io);
    bpe.unk = it->second;
  }
  bpe.fuse_unk = json_bool(m, "fuse_unk", false, "model");
  bpe.byte_fallback = json_bool(m, "byte_fallback", false, "model");
  bpe.ignore_merges = json_bool(m, "ignore_merges", false, "model");
  bpe.init_bytes();
  const Json& merges = m.contains("merges") ? m["merges"] : Json::array();
  if (!merges.is_array())
    fail("model: \"merges\" is not an array", ErrorKind::io);
  bpe.merges.reserve(merges.size());
  for (const Json& mg : merges) {
    if (mg.is_string()) {
      const std::string s = mg.get<std::string>();
      size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        fail("merge \"" + s + "\" is not two tokens separated by a space",
             ErrorKind::io);
      bpe.add_merge(s.substr(0, sp), s.substr(sp + 1));
    } else if (mg.is_array() && mg.size() == 2 && mg[0].is_string() &&
               mg[1].is_string()) {
      bpe.add_merge(mg[0].get<std::string>(), mg[1].get<std::string>());
    } else {
      fail("a merge is neither \"a b\" nor [\"a\", \"b\"]", ErrorKind::io);
    }
  }
}

void load_added(Tokenizer::Impl& im, const Json& j) {
  if (j.is_null()) return;
  if (!j.is_array())
    fail("tokenizer.json: \"added_tokens\" is not an array", ErrorKind::io);
  for (const Json& a : j) {
    tok::AddedToken t;
    t.id = json_id(json_member(a, "id", "added token"), "added token id");
    if (static_cast<size_t>(t.id) >=
        im.id_to_token.size() + j.size() + kMaxHoles)
      fail("added token id " + std::to_string(t.id) +
               " is far past the vocabulary",
           ErrorKind::io);
    t.content = json_string(a, "content", "added token");
    t.special = json_bool(a, "special", false, "added token");
    t.lstrip = json_bool(a, "lstrip", false, "added token");
    t.rstrip = json_bool(a, "rstrip", false, "added token");
    t.single_word = json_bool(a, "single_word", false, "added token");
    t.normalized = json_bool(a, "normalized", !t.special, "added token");
    im.added.push_back(std::move(t));
  }
}

void add_post(Tokenizer::Impl& im, const Json& p, std::vector<int>& prefix,
              std::vector<int>& suffix) {
  if (p.is_null()) return;
  tok::NestingGuard guard("post_processor");
  std::string type = json_string(p, "type", "post_processor");
  std::string what = "post_processor " + type;
  if (type == "ByteLevel") return;
  if (type == "Sequence") {
    const Json& ps = json_member(p, "processors", what);
    if (!ps.is_array())
      fail(what + ": \"processors\" is not an array", ErrorKind::io);
    for (const Json& q : ps) add_post(im, q, prefix, suffix);
    return;
  }
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    auto id_of = [&](const char* key) {
      const Json& v = json_member(p, key, what);
      if (!v.is_array() || v.size() != 2)
        fail(what + ": \"" + key + "\" is not [token, id]", ErrorKind::io);
      return json_id(v[1], what + " " + key);
    };
    prefix.insert(prefix.begin(), id_of("cls"));
    suffix.push_back(id_of("sep"));
    return;
  }
  if (type == "TemplateProcessing") {
    const Json& single = json_member(p, "single", what);
    const Json& specials = json_member(p, "special_tokens", what);
    if (!single.is_array() || !specials.is_object())
      fail(what + ": \"single\" or \"special_tokens\" has the wrong type",
           ErrorKind::io);
    std::vector<int> pre, post;
    bool seen_sequence = false;
    for (const Json& item : single) {
      if (item.is_object() && item.contains("Sequence")) {
        seen_sequence = true;
        continue;
      }
      if (!item.is_object() || !item.contains("SpecialToken"))
        fail(what +
                 ": an item of \"single\" is neither Sequence nor SpecialToken",
             ErrorKind::io);
      std::string name =
          json_string(item["SpecialToken"], "id", what + " SpecialToken");
      if (!specials.contains(name))
        fail(what + ": special token \"" + name + "\" is not in special_tokens",
             ErrorKind::io);
      const Json& ids = json_member(specials[name], "ids", what + " " + name);
      if (!ids.is_array())
        fail(what + ": ids of \"" + name + "\" is not an array", ErrorKind::io);
      for (const Json& v : ids)
        (seen_sequence ? post : pre).push_back(json_id(v, what));
    }
    prefix.insert(prefix.begin(), pre.begin(), pre.end());
    suffix.insert(suffix.end(), post.begin(), post.end());
    return;
  }
  fail("post_processor \"" + type + "\" is not supported", ErrorKind::io);
}

// A special token of tokenizer_config.json: a string, {content: ...} or null.
std::string config_token(const Json& c, const char* key) {
  if (!c.contains(key) || c[key].is_null()) return {};
  const Json& v = c[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object())
    return json_string(v, "content", std::string("tokenizer_config ") + key);
  fail(std::string("tokenizer_config: \"") + key +
           "\" is neither a string nor an object",
       ErrorKind::io);
}

void load_config(Tokenizer::Impl& im, const std::string& text,
                 const Tokenizer& self) {
  if (text.empty()) return;
  Json c = parse(text, "tokenizer_config.json");
  if (!c.is_object())
    fail("tokenizer_config.json is not a JSON object", ErrorKind::io);
  im.bos_token = config_token(c, "bos_token");
  im.eos_token = config_token(c, "eos_token");
  auto id_of = [&](const std::string& t,
                   const char* key) -> std::optional<int> {
    if (t.empty()) return std::nullopt;
    auto id = self.token_to_id(t);
    if (!id)
      fail(std::string("tokenizer_config: ") + key + " \"" + t +
               "\" is not in the vocabulary",
           ErrorKind::io);
    return id;
  };
  im.bos_id = id_of(im.bos_token, "bos_token");
  if (auto e = id_of(im.eos_token, "eos_token")) im.eos_ids = {*e};
  // add_bos_token / add_eos_token, where given, decide the BOS and EOS of
  // encode(add_special_tokens=true), as transformers rebuilds the template.
  if (c.contains("add_bos_token") && !c["add_bos_token"].is_null()) {
    bool on = json_bool(c, "add_bos_token", false, "tokenizer_config");
    if (on && !im.bos_id)
      fail("tokenizer_config: add_bos_token without a bos_token",
           ErrorKind::io);
    im.prefix_ids.clear();
    if (on) im.prefix_ids.push_back(*im.bos_id);
  }
  if (c.contains("add_eos_token") && !c["add_eos_token"].is_null()) {
    bool on = json_bool(c, "add_eos_token", false, "tokenizer_config");
    if (on && im.eos_ids.empty())
      fail("tokenizer_config: add_eos_token without an eos_token",
           ErrorKind::io);
    im.suffix_ids.clear();
    if (on) im.suffix_ids.push_back(im.eos_ids[0]);
  }
  if (c.contains("chat_template") && !c["chat_template"].is_null()) {
    const Json& t = c["chat_template"];
    if (t.is_string()) {
      im.chat_template = t.get<std::string>();
    } else if (t.is_array()) {
      for (const Json& e : t)
        if (json_string(e, "name", "chat_template entry") == "default")
          im.chat_template = json_string(e, "template", "chat_template entry");
    } else {
      fail("tokenizer_config: \"chat_template\" is neither a string nor a list",
           ErrorKind::io);
    }
  }
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) fail("cannot read " + p.string(), ErrorKind::io);
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) fail("cannot read " + p.string(), ErrorKind::io);
  return ss.str();
}

}  // namespace

Tokenizer Tokenizer::from_json(const std::string& tokenizer_json,
                               const std::string& tokenizer_config_json) {
  Json j = parse(tokenizer_json, "tokenizer.json");
  if (!j.is_object())
    fail("tokenizer.json is not a JSON object", ErrorKind::io);
  auto im = std::make_shared<Impl>();
  load_model(*im, json_member(j, "model", "tokenizer.json"));
  auto member = [&](const char* key) {
    return j.contains(key) ? j[key] : Json();
  };
  // "truncation" and "padding" apply to batches; encode() ignores them.
  im->normalizer = tok::make_normalizer(member("normalizer"));
  im->pre_tokenizer = tok::make_pre_tokenizer(member("pre_tokenizer"));
  im->decoder = tok::make_decoder(member("decoder"));
  load_added(*im, member("added_tokens"));
  im->finish_added();
  add_post(*im, member("post_processor"), im->prefix_ids, im->suffix_ids);
  for (int id : im->prefix_ids)
    if (!im->valid_id(id))
      fail("post_processor: id " + std::to_string(id) + " is not a token",
           ErrorKind::io);
  for (int id : im->suffix_ids)
    if (!im->valid_id(id))
      fail("post_processor: id " + std::to_string(id) + " is not a token",
           ErrorKind::io);
  Tokenizer t(im);
  load_config(*im, tokenizer_config_json, t);
  return t;
}

Tokenizer Tokenizer::from_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  fs::path d(dir);
  std::string config;
  if (fs::exists(d / "tokenizer_config.json"))
    config = read_file(d / "tokenizer_config.json");
  Tokenizer t = from_json(read_file(d / "tokenizer.json"), config);
  // Newer checkpoints keep the chat template in its own file.
  if (t.chat_template().empty() && fs::exists(d / "chat_template.jinja"))
    const_cast<Impl&>(*t.impl_).chat_template =
        read_file(d / "chat_template.jinja");
  return t;
}

}  // namespace nuvec::lm
