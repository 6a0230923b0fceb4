// Decoders (internal), each as the `tokenizers` decoder of the same name
// turns the list of token strings into text.
#include "tokenizer/pipeline.h"
#include "tokenizer/text.h"

namespace nuvec::lm::tok {

namespace {

struct ByteLevelDec : Decoder {
  void apply(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (auto& t : tokens) {
      size_t start = bytes.size();
      bool ok = true;
      for (size_t i = 0; i < t.size();) {
        size_t n = 0;
        int b = char_byte(next_char(t, i, &n));
        if (b < 0) {
          ok = false;
          break;
        }
        bytes += static_cast<char>(b);
        i += n;
      }
      if (!ok) {  // a token outside the byte alphabet stands for its bytes
        bytes.resize(start);
        bytes += t;
      }
    }
    tokens.assign(1, utf8_lossy(bytes));
  }
};

struct MetaspaceDec : Decoder {
  std::string rep;
  Prepend3 scheme = Prepend3::always;
  void apply(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      const std::string& t = tokens[i];
      for (size_t k = 0; k < t.size();) {
        if (t.compare(k, rep.size(), rep) == 0) {
          if (!(i == 0 && scheme != Prepend3::never)) out += ' ';
          k += rep.size();
        } else {
          out += t[k++];
        }
      }
      tokens[i] = std::move(out);
    }
  }
};

struct ReplaceDec : Decoder {
  Pattern pattern;
  std::string content;
  ReplaceDec(const Json& j, const std::string& what)
      : pattern(json_member(j, "pattern", what), what),
        content(json_string(j, "content", what)) {}
  void apply(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) pattern.replace(t, content);
  }
};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

struct ByteFallbackDec : Decoder {
  void apply(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    auto flush = [&] {
      if (pending.empty()) return;
      if (valid_utf8_prefix(pending) == pending.size())
        out.push_back(pending);
      else
        for (size_t k = 0; k < pending.size(); ++k)
          out.push_back("\xEF\xBF\xBD");
      pending.clear();
    };
    for (auto& t : tokens) {
      int hi = -1, lo = -1;
      if (t.size() == 6 && t.starts_with("<0x") && t[5] == '>') {
        hi = hex_digit(t[3]);
        lo = hex_digit(t[4]);
      }
      if (hi >= 0 && lo >= 0) {
        pending += static_cast<char>(hi * 16 + lo);
      } else {
        flush();
        out.push_back(t);
      }
    }
    flush();
    tokens = std::move(out);
  }
};

struct FuseDec : Decoder {
  void apply(std::vector<std::string>& tokens) const override {
    std::string all;
    for (auto& t : tokens) all += t;
    tokens.assign(1, std::move(all));
  }
};

struct StripDec : Decoder {
  std::string content;  // one character
  size_t start = 0, stop = 0;
  void apply(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) {
      std::vector<std::pair<size_t, size_t>> chars;  // begin, length
      for (size_t i = 0; i < t.size();) {
        size_t n = 0;
        next_char(t, i, &n);
        chars.emplace_back(i, n);
        i += n;
      }
      auto is_c = [&](size_t k) {
        return t.compare(chars[k].first, chars[k].second, content) == 0;
      };
      size_t b = 0;
      while (b < start && b < chars.size() && is_c(b)) ++b;
      size_t e = chars.size(), cut = 0;
      while (cut < stop && e > b && is_c(e - 1)) --e, ++cut;
      size_t from = b < chars.size() ? chars[b].first : t.size();
      size_t to = e < chars.size() ? chars[e].first : t.size();
      t = t.substr(from, to > from ? to - from : 0);
    }
  }
};

struct DecSequence : Decoder {
  std::vector<std::shared_ptr<const Decoder>> items;
  void apply(std::vector<std::string>& tokens) const override {
    for (auto& d : items) d->apply(tokens);
  }
};

}  // namespace

std::shared_ptr<const Decoder> make_decoder(const Json& j) {
  NestingGuard guard("decoder");
  if (j.is_null()) return nullptr;
  std::string t = type_of(j, "decoder");
  std::string what = "decoder " + t;
  if (t == "ByteLevel") return byte_level_decoder();
  if (t == "Metaspace") {
    auto m = std::make_shared<MetaspaceDec>();
    m->rep = metaspace_replacement(j, what);
    m->scheme = parse_prepend(j, what);
    return m;
  }
  if (t == "Replace") return std::make_shared<ReplaceDec>(j, what);
  if (t == "ByteFallback") return std::make_shared<ByteFallbackDec>();
  if (t == "Fuse") return std::make_shared<FuseDec>();
  if (t == "Strip") {
    auto s = std::make_shared<StripDec>();
    s->content = json_string(j, "content", what);
    size_t n = 0;
    if (s->content.empty() ||
        valid_utf8_prefix(s->content) != s->content.size() ||
        (next_char(s->content, 0, &n), n != s->content.size()))
      fail(what + ": content is not one character", ErrorKind::io);
    s->start = json_size(j, "start", what);
    s->stop = json_size(j, "stop", what);
    return s;
  }
  if (t == "Sequence") {
    auto s = std::make_shared<DecSequence>();
    for (auto& d : json_array(j, "decoders", what))
      if (auto q = make_decoder(d)) s->items.push_back(q);
    return s;
  }
  fail("decoder \"" + t + "\" is not supported", ErrorKind::io);
}

std::shared_ptr<const Decoder> byte_level_decoder() {
  return std::make_shared<ByteLevelDec>();
}

std::shared_ptr<const Decoder> sentencepiece_decoder(bool strip_space) {
  auto s = std::make_shared<DecSequence>();
  Json rep = {{"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}};
  s->items.push_back(std::make_shared<ReplaceDec>(rep, "decoder Replace"));
  s->items.push_back(std::make_shared<ByteFallbackDec>());
  s->items.push_back(std::make_shared<FuseDec>());
  if (strip_space) {
    auto st = std::make_shared<StripDec>();
    st->content.assign(1, ' ');
    st->start = 1;
    s->items.push_back(st);
  }
  return s;
}

}  // namespace nuvec::lm::tok
