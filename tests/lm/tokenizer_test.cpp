// Tokenizers against the `tokenizers` Python package and transformers' GGUF
// conversion (references recorded by tools/record_tokenizers.py into
// tests/refs/lm_tokenizers/), malformed inputs, round trips and streaming.
#include "nuvec/lm/tokenizer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "lm/support/lm_refs.h"
#include "nuvec/core/error.h"
#include "nuvec/gguf.h"

using nlohmann::json;
using nuvec::lm::StreamingDetokenizer;
using nuvec::lm::Tokenizer;

namespace {

const std::string kDir = std::string(NUVEC_REFS_DIR) + "lm_tokenizers/";

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f) << "cannot read " << path;
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const json& refs() {
  static const json j = json::parse(read_text(kDir + "refs.json"));
  return j;
}

std::vector<int> ids_of(const json& j) { return j.get<std::vector<int>>(); }

// The recorded fields; the script leaves out one that equals the field
// before it (ids_no_special -> ids, decoded -> text, decoded_skip ->
// decoded).
std::vector<int> ids_no_special(const json& c) {
  return ids_of(c.contains("ids_no_special") ? c["ids_no_special"] : c["ids"]);
}
std::string decoded(const json& c) {
  return c.contains("decoded") ? c["decoded"] : c["text"];
}
std::string decoded_skip(const json& c) {
  return c.contains("decoded_skip") ? c["decoded_skip"].get<std::string>()
                                    : decoded(c);
}

// Whether `s` is valid UTF-8 (checked here independently of the tokenizer).
bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = s[i];
    size_t n = c < 0x80         ? 1
               : (c >> 5) == 6  ? 2
               : (c >> 4) == 14 ? 3
               : (c >> 3) == 30 ? 4
                                : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

void check_cases(const Tokenizer& tok, const json& cases,
                 const std::string& name) {
  for (const json& c : cases) {
    const std::string text = c["text"];
    SCOPED_TRACE(name + ": " + json(text).dump());
    EXPECT_EQ(tok.encode(text, true), ids_of(c["ids"]));
    EXPECT_EQ(tok.encode(text, false), ids_no_special(c));
    std::vector<int> ids = ids_of(c["ids"]);
    EXPECT_EQ(tok.decode(ids, false), decoded(c));
    EXPECT_EQ(tok.decode(ids, true), decoded_skip(c));
  }
}

const char* kNames[] = {"gpt2",   "llama3", "qwen2",
                        "smollm", "llama2", "mistral"};

template <class F>
void expect_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning \"" << needle << "\"";
  } catch (const nuvec::Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << e.what();
  }
}

std::string streamed(const Tokenizer& tok, const std::vector<int>& ids) {
  StreamingDetokenizer d(tok);
  std::string out;
  for (int id : ids) {
    std::string piece = d.add(id);
    EXPECT_TRUE(valid_utf8(piece)) << "a piece splits a character";
    out += piece;
  }
  out += d.finalize();
  EXPECT_EQ(d.text(), tok.decode(ids));
  return out;
}

}  // namespace

TEST(Tokenizer, MatchesTokenizersPackage) {
  ASSERT_EQ(refs()["tokenizers_version"], "0.23.3");
  for (const char* name : kNames) {
    Tokenizer tok = Tokenizer::from_dir(kDir + name);
    const json& r = refs()["tokenizers"][name];
    EXPECT_EQ(tok.vocab_size(), r["vocab_size"].get<int>()) << name;
    check_cases(tok, r["cases"], name);
    for (const json& d : r["decodes"]) {
      std::vector<int> ids = ids_of(d["ids"]);
      EXPECT_EQ(tok.decode(ids, false), d["text"].get<std::string>())
          << name << " " << d["ids"];
      EXPECT_EQ(tok.decode(ids, true), d["text_skip"].get<std::string>())
          << name << " " << d["ids"];
    }
  }
}

TEST(Tokenizer, PipelineVariants) {
  // Split behaviours and invert, grouped Digits, Whitespace(Split),
  // normalizers and Metaspace schemes, patched into the trained files.
  int n = 0;
  for (const json& v : refs()["variants"]) {
    json j = json::parse(
        read_text(kDir + v["base"].get<std::string>() + "/tokenizer.json"));
    j["normalizer"] = v["normalizer"];
    j["pre_tokenizer"] = v["pre_tokenizer"];
    j["decoder"] = v["decoder"];
    Tokenizer tok = Tokenizer::from_json(j.dump());
    std::string name =
        "variant " + std::to_string(n++) + " " + v["pre_tokenizer"].dump();
    for (const json& c : v["cases"]) {
      SCOPED_TRACE(name + ": " + c["text"].dump());
      EXPECT_EQ(tok.encode(c["text"].get<std::string>(), false),
                ids_of(c["ids"]));
      EXPECT_EQ(tok.decode(ids_of(c["ids"])), decoded(c));
    }
  }
  EXPECT_EQ(n, 13);
}

TEST(Tokenizer, ConfigQueries) {
  Tokenizer gpt2 = Tokenizer::from_dir(kDir + "gpt2");
  EXPECT_EQ(gpt2.bos_token(), "<|endoftext|>");
  EXPECT_EQ(gpt2.eos_token_ids(),
            std::vector<int>{*gpt2.token_to_id("<|endoftext|>")});
  EXPECT_TRUE(gpt2.is_special(*gpt2.token_to_id("<|endoftext|>")));
  EXPECT_FALSE(gpt2.is_special(*gpt2.token_to_id("custom_tok")));
  EXPECT_EQ(gpt2.chat_template(),
            "{% for m in messages %}{{ m['content'] }}{% endfor %}");
  EXPECT_EQ(gpt2.id_to_token(*gpt2.token_to_id("Ġthe")), "Ġthe");
  EXPECT_FALSE(gpt2.token_to_id("no such token").has_value());

  Tokenizer qwen = Tokenizer::from_dir(kDir + "qwen2");
  EXPECT_FALSE(qwen.bos_token_id().has_value());
  EXPECT_EQ(qwen.eos_token(), "<|im_end|>");  // given as {"content": ...}
  EXPECT_EQ(qwen.eos_token_ids(),
            std::vector<int>{*qwen.token_to_id("<|im_end|>")});
  EXPECT_EQ(
      qwen.chat_template().rfind("{% for m in messages %}<|im_start|>", 0), 0u);

  Tokenizer llama2 = Tokenizer::from_dir(kDir + "llama2");
  EXPECT_EQ(llama2.bos_token_id(), 1);
  EXPECT_EQ(llama2.bos_token(), "<s>");
  EXPECT_EQ(llama2.eos_token_ids(), std::vector<int>{2});
  EXPECT_EQ(llama2.id_to_token(3), "<0x00>");
  EXPECT_TRUE(llama2.chat_template().empty());

  Tokenizer llama3 = Tokenizer::from_dir(kDir + "llama3");
  EXPECT_EQ(llama3.bos_token(), "<|begin_of_text|>");
  EXPECT_EQ(llama3.eos_token(), "<|eot_id|>");
  EXPECT_NE(llama3.chat_template().find("<|start_header_id|>"),
            std::string::npos);

  // from_json with the config text gives what from_dir gives.
  Tokenizer j =
      Tokenizer::from_json(read_text(kDir + "llama2/tokenizer.json"),
                           read_text(kDir + "llama2/tokenizer_config.json"));
  EXPECT_EQ(j.encode("Hello world"), llama2.encode("Hello world"));
}

TEST(Tokenizer, AddBosFromConfig) {
  // add_bos_token / add_eos_token in tokenizer_config.json decide what
  // add_special_tokens adds (transformers' rule), whatever the template.
  std::string tj = read_text(kDir + "llama2/tokenizer.json");
  Tokenizer none =
      Tokenizer::from_json(tj, R"({"bos_token": "<s>", "eos_token": "</s>",
                                              "add_bos_token": false})");
  Tokenizer both =
      Tokenizer::from_json(tj, R"({"bos_token": "<s>", "eos_token": "</s>",
                                              "add_bos_token": true, "add_eos_token": true})");
  Tokenizer plain = Tokenizer::from_json(tj);
  std::vector<int> body = plain.encode("Hello", false);
  EXPECT_EQ(none.encode("Hello", true), body);
  std::vector<int> expect = {1};
  expect.insert(expect.end(), body.begin(), body.end());
  EXPECT_EQ(plain.encode("Hello", true), expect);  // the template's BOS
  expect.push_back(2);
  EXPECT_EQ(both.encode("Hello", true), expect);
}

TEST(Tokenizer, RoundTripByteLevel) {
  // Byte-level tokenizers lose nothing: decode(encode(s)) == s (the corpus
  // is NFC already, so Qwen's normalizer changes nothing).
  for (const char* name : {"gpt2", "llama3", "qwen2", "smollm"}) {
    Tokenizer tok = Tokenizer::from_dir(kDir + name);
    for (const json& line : refs()["corpus"]) {
      std::string s = line;
      EXPECT_EQ(tok.decode(tok.encode(s, false)), s)
          << name << ": " << json(s).dump();
    }
  }
}

TEST(Tokenizer, StreamingEqualsDecode) {
  std::mt19937 rng(123);
  for (const char* name : kNames) {
    Tokenizer tok = Tokenizer::from_dir(kDir + name);
    const json& r = refs()["tokenizers"][name];
    for (const json& c : r["cases"]) {
      std::vector<int> ids = ids_of(c["ids"]);
      EXPECT_EQ(streamed(tok, ids), tok.decode(ids))
          << name << ": " << c["text"].dump();
    }
    // Random id sequences, cut into random runs of ids, with incomplete
    // UTF-8 bytes inside.
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<int> ids;
      int n = 1 + static_cast<int>(rng() % 24);
      for (int k = 0; k < n; ++k)
        ids.push_back(static_cast<int>(rng() % tok.vocab_size()));
      EXPECT_EQ(streamed(tok, ids), tok.decode(ids))
          << name << " trial " << trial;
    }
  }
  // Reset starts over.
  Tokenizer tok = Tokenizer::from_dir(kDir + "gpt2");
  StreamingDetokenizer d(tok);
  for (int id : tok.encode("first", false)) d.add(id);
  d.reset();
  std::string out;
  for (int id : tok.encode("second 😀", false)) out += d.add(id);
  out += d.finalize();
  EXPECT_EQ(out, "second 😀");
  EXPECT_EQ(d.text(), "second 😀");
}

TEST(Tokenizer, StreamingHoldsIncompleteCharacter) {
  // "😀" is four bytes; in byte fallback each is a token <0xNN>: nothing
  // comes out until a token that is not a byte (a fifth byte could still
  // make the run ill-formed, four U+FFFD).
  Tokenizer tok = Tokenizer::from_dir(kDir + "llama2");
  std::vector<int> ids;
  for (unsigned char b : std::string("\xF0\x9F\x98\x80")) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    ids.push_back(*tok.token_to_id(name));
  }
  StreamingDetokenizer d(tok);
  EXPECT_EQ(d.add(ids[0]), "");
  EXPECT_EQ(d.add(ids[1]), "");
  EXPECT_EQ(d.add(ids[2]), "");
  EXPECT_EQ(d.add(ids[3]), "");
  EXPECT_EQ(d.add(*tok.token_to_id("\xE2\x96\x81")), "😀 ");  // "▁"
  EXPECT_EQ(d.finalize(), "");
  StreamingDetokenizer f(tok);
  for (int id : ids) f.add(id);
  EXPECT_EQ(f.finalize(), "😀");
  // An incomplete tail is U+FFFD per byte at the end, as decode gives it.
  StreamingDetokenizer e(tok);
  e.add(ids[0]);
  e.add(ids[1]);
  EXPECT_EQ(e.finalize(), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(Tokenizer, EncodesLargeTextFast) {
  std::string text;
  while (text.size() < 100000)
    for (const json& line : refs()["corpus"])
      text += line.get<std::string>() + "\n";
  for (const char* name : kNames) {
    Tokenizer tok = Tokenizer::from_dir(kDir + name);
    auto t0 = std::chrono::steady_clock::now();
    std::vector<int> ids = tok.encode(text, false);
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    EXPECT_LT(s, 1.0) << name << ": " << text.size() << " bytes took " << s
                      << " s";
    if (std::string(name) != "llama2" && std::string(name) != "mistral")
      EXPECT_EQ(tok.decode(ids), text) << name;
    // Long runs of one class stay linear in the regexes (no match limit).
    for (std::string run : {std::string(200000, ' ') + "x", std::string(200000, 'a'),
                            std::string(100000, '7'), std::string(50000, '\n') + " \t"}) {
      t0 = std::chrono::steady_clock::now();
      std::vector<int> r = tok.encode(run, false);
      s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      EXPECT_LT(s, 1.0) << name << ": a run of " << run.size() << " took " << s << " s";
      if (std::string(name) != "llama2" && std::string(name) != "mistral")
        EXPECT_EQ(tok.decode(r), run) << name;
    }
  }
}

TEST(Tokenizer, MalformedJsonIsAnError) {
  std::string good = read_text(kDir + "gpt2/tokenizer.json");
  expect_error([&] { Tokenizer::from_json(good.substr(0, good.size() / 2)); },
               "not valid JSON");
  expect_error([] { Tokenizer::from_json("[1, 2]"); }, "not a JSON object");
  expect_error([] { Tokenizer::from_json("{}"); }, "no \"model\"");
  json j = json::parse(good);
  auto with = [&](auto edit) {
    json k = j;
    edit(k);
    return k.dump();
  };
  expect_error(
      [&] {
        Tokenizer::from_json(
            with([](json& k) { k["model"]["type"] = "Unigram"; }));
      },
      "model type \"Unigram\" is not supported");
  expect_error(
      [&] {
        Tokenizer::from_json(
            with([](json& k) { k["model"]["vocab"] = json::array(); }));
      },
      "\"vocab\" is not an object");
  expect_error(
      [&] {
        Tokenizer::from_json(
            with([](json& k) { k["model"]["vocab"]["x"] = "seven"; }));
      },
      "is not a token id");
  expect_error(
      [&] {
        Tokenizer::from_json(with([](json& k) { k["model"]["merges"] = 5; }));
      },
      "\"merges\" is not an array");
  expect_error(
      [&] {
        Tokenizer::from_json(
            with([](json& k) { k["model"]["merges"].push_back("zzqq Ġthe"); }));
      },
      "missing from the vocabulary");
  expect_error(
      [&] {
        Tokenizer::from_json(with([](json& k) {
          k["model"]["merges"].push_back(json::array({"Ġ", 3}));
        }));
      },
      "neither");
  expect_error(
      [&] {
        Tokenizer::from_json(with([](json& k) {
          k["normalizer"] = {{"type", "BertNormalizer"}};
        }));
      },
      "normalizer \"BertNormalizer\" is not supported");
  expect_error(
      [&] {
        Tokenizer::from_json(with([](json& k) {
          k["pre_tokenizer"] = {{"type", "Punctuation"}};
        }));
      },
      "pre_tokenizer \"Punctuation\" is not supported");
  expect_error(
      [&] {
        Tokenizer::from_json(with([](json& k) {
          k["decoder"] = {{"type", "WordPiece"}};
        }));
      },
      "decoder \"WordPiece\" is not supported");
  expect_error(
      [&] {
        Tokenizer::from_json(with([](json& k) {
          k["post_processor"] = {{"type", "Nope"}};
        }));
      },
      "post_processor \"Nope\" is not supported");
  expect_error(
      [&] {
        Tokenizer::from_json(
            with([](json& k) { k["added_tokens"][0]["content"] = 12; }));
      },
      "\"content\" is not a string");
  expect_error(
      [&] {
        Tokenizer::from_json(with([](json& k) {
          k["pre_tokenizer"] = {{"type", "Split"},
                                {"pattern", {{"Regex", "(unclosed"}}},
                                {"behavior", "Isolated"}};
        }));
      },
      "does not compile");
  expect_error([&] { Tokenizer::from_json(good, "{\"bos_token\": 3}"); },
               "neither a string nor an object");
  expect_error(
      [&] { Tokenizer::from_json(good, "{\"bos_token\": \"<nope>\"}"); },
      "not in the vocabulary");
  expect_error([&] { Tokenizer::from_json(good, "{\"chat_template\": 1}"); },
               "chat_template");
  expect_error([] { Tokenizer::from_dir("/nonexistent/dir"); }, "cannot read");
  // Untrusted sizes and nesting.
  expect_error(
      [&] {
        Tokenizer::from_json(
            with([](json& k) { k["model"]["vocab"]["far"] = 1 << 29; }));
      },
      "far past");
  expect_error(
      [&] {
        Tokenizer::from_json(
            with([](json& k) { k["added_tokens"][0]["id"] = 1 << 29; }));
      },
      "far past");
  expect_error(
      [&] {
        Tokenizer::from_json(with([](json& k) {
          json d = {{"type", "Fuse"}};
          for (int i = 0; i < 200; ++i)
            d = {{"type", "Sequence"}, {"decoders", {d}}};
          k["decoder"] = d;
        }));
      },
      "nest too deeply");
  expect_error(
      [&] {
        // A catastrophically backtracking pattern gives up with an error.
        Tokenizer t = Tokenizer::from_json(with([](json& k) {
          k["pre_tokenizer"] = {{"type", "Split"},
                                {"pattern", {{"Regex", "(a+)+$"}}},
                                {"behavior", "Isolated"}};
        }));
        t.encode(std::string(40, 'a') + "!");
      },
      "backtracks");
}

TEST(Tokenizer, BadIdsAndTextAreErrors) {
  Tokenizer tok = Tokenizer::from_dir(kDir + "gpt2");
  std::vector<int> bad = {tok.vocab_size()};
  expect_error([&] { tok.decode(bad); }, "out of range");
  std::vector<int> neg = {-1};
  expect_error([&] { tok.decode(neg); }, "out of range");
  expect_error([&] { tok.id_to_token(tok.vocab_size()); }, "out of range");
  expect_error([&] { tok.encode("ab\xFF"); }, "not valid UTF-8");
  try {
    tok.decode(bad);
  } catch (const std::invalid_argument&) {
    SUCCEED();  // out_of_range errors are std::invalid_argument (MLX's class)
  }
}

namespace {
void check_gguf_cases(const Tokenizer& tok, const json& r, bool only_agreeing) {
  for (const json& c : r["cases"]) {
    if (only_agreeing && !c["llama_cpp_agrees"].get<bool>()) continue;
    const std::string text = c["text"];
    SCOPED_TRACE(json(text).dump());
    EXPECT_EQ(tok.encode(text, true), ids_of(c["ids"]));
    EXPECT_EQ(tok.encode(text, false), ids_no_special(c));
    std::vector<int> ids = ids_of(c["ids"]);
    EXPECT_EQ(tok.decode(ids, true), decoded_skip(c));
  }
}
}  // namespace

TEST(Tokenizer, GgufSentencePiece) {
  // The Llama 2 style vocabulary as a GGUF file (tokenizer metadata only).
  auto [tensors, meta] = nuvec::load_gguf(kDir + "llama2_spm.gguf");
  nuvec::lm::GgufVocab v = nuvec::lm::gguf_vocab(meta);
  EXPECT_EQ(v.model, "llama");
  EXPECT_TRUE(v.add_bos);
  EXPECT_TRUE(v.add_space_prefix);
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.token_types[3], 6);  // <0x00>: a byte token
  Tokenizer tok = Tokenizer::from_gguf(v);
  json r = json::parse(read_text(kDir + "llama2_spm_refs.json"));
  EXPECT_EQ(tok.vocab_size(), r["vocab_size"].get<int>());
  check_gguf_cases(tok, r, true);
  // llama.cpp puts a space before the text after a special token, as the
  // Prepend normalizer of the tokenizer.json form does.
  Tokenizer json_form = Tokenizer::from_dir(kDir + "llama2");
  for (std::string s : {"a <s> b </s> c", "<s>hello", "x</s>"})
    EXPECT_EQ(tok.encode(s), json_form.encode(s)) << s;
  EXPECT_EQ(tok.bos_token(), "<s>");
  EXPECT_EQ(tok.eos_token_ids(), std::vector<int>{2});
  EXPECT_TRUE(tok.is_special(1));
  EXPECT_NE(tok.chat_template().find("[INST]"), std::string::npos);
}

TEST(Tokenizer, GgufVocabErrors) {
  auto [tensors, meta] = nuvec::load_gguf(kDir + "llama2_spm.gguf");
  auto m = meta;
  m.erase("tokenizer.ggml.tokens");
  expect_error([&] { nuvec::lm::gguf_vocab(m); }, "tokenizer.ggml.tokens");
  m = meta;
  m["tokenizer.ggml.model"] = std::vector<std::string>{"x"};
  expect_error([&] { nuvec::lm::gguf_vocab(m); },
               "\"tokenizer.ggml.model\" is not a string");
  m = meta;
  m["tokenizer.ggml.bos_token_id"] = std::string("one");
  expect_error([&] { nuvec::lm::gguf_vocab(m); },
               "tokenizer.ggml.bos_token_id");
  nuvec::lm::GgufVocab v = nuvec::lm::gguf_vocab(meta);
  auto w = v;
  w.scores.pop_back();
  expect_error([&] { Tokenizer::from_gguf(w); }, "scores");
  w = v;
  w.model = "bert";
  expect_error([&] { Tokenizer::from_gguf(w); }, "\"bert\" is not supported");
  w = v;
  w.bos = static_cast<int>(v.tokens.size());
  expect_error([&] { Tokenizer::from_gguf(w); }, "out of range");
  w = v;
  w.model = "gpt2";
  w.pre = "exotic";
  expect_error([&] { Tokenizer::from_gguf(w); }, "\"exotic\" is not supported");
}

TEST(Tokenizer, GgufSmolLM2) {
  NUVEC_NEED_SMOLLM2(path);
  auto [tensors, meta] = nuvec::load_gguf(path);
  nuvec::lm::GgufVocab v = nuvec::lm::gguf_vocab(meta);
  EXPECT_EQ(v.model, "gpt2");
  EXPECT_EQ(v.pre, "smollm");
  Tokenizer tok = Tokenizer::from_gguf(v);
  json r = json::parse(read_text(kDir + "smollm2_refs.json"));
  EXPECT_EQ(tok.vocab_size(), r["vocab_size"].get<int>());
  EXPECT_EQ(tok.bos_token_id(), r["bos_token_id"].get<int>());
  EXPECT_EQ(tok.eos_token_ids(),
            std::vector<int>{r["eos_token_id"].get<int>()});
  EXPECT_EQ(tok.eos_token(), "<|im_end|>");
  EXPECT_NE(tok.chat_template().find("<|im_start|>"), std::string::npos);
  check_gguf_cases(tok, r, false);
  for (const json& c : r["cases"]) {
    std::vector<int> ids = ids_of(c["ids"]);
    EXPECT_EQ(tok.decode(ids), decoded(c)) << c["text"].dump();
    EXPECT_EQ(streamed(tok, ids), tok.decode(ids));
  }
}
