// Normalizers, pre-tokenizers and decoders (internal), each as the
// `tokenizers` component of the same name behaves on the text (offsets are
// not tracked).
#include "tokenizer/pipeline.h"

#include <algorithm>

#include "tokenizer/text.h"

namespace nuvec::lm::tok {

namespace {
thread_local int nesting = 0;
}  // namespace

NestingGuard::NestingGuard(const std::string& what) {
  if (++nesting > 64) {
    nesting = 0;
    fail(what + ": Sequence components nest too deeply", ErrorKind::io);
  }
}
NestingGuard::~NestingGuard() {
  if (nesting > 0) --nesting;
}

std::string json_string(const Json& j, const char* key,
                        const std::string& what) {
  const Json& v = json_member(j, key, what);
  if (!v.is_string())
    fail(what + ": \"" + key + "\" is not a string", ErrorKind::io);
  return v.get<std::string>();
}

bool json_bool(const Json& j, const char* key, bool fallback,
               const std::string& what) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_boolean())
    fail(what + ": \"" + key + "\" is not a boolean", ErrorKind::io);
  return j[key].get<bool>();
}

const Json& json_member(const Json& j, const char* key,
                        const std::string& what) {
  if (!j.is_object()) fail(what + " is not a JSON object", ErrorKind::io);
  auto it = j.find(key);
  if (it == j.end()) fail(what + " has no \"" + key + "\"", ErrorKind::io);
  return *it;
}

void replace_all(std::string& s, const std::string& from,
                 const std::string& to) {
  if (from.empty()) return;
  std::string out;
  size_t i = 0;
  for (size_t k; (k = s.find(from, i)) != std::string::npos;
       i = k + from.size()) {
    out.append(s, i, k - i);
    out += to;
  }
  out.append(s, i);
  s = std::move(out);
}

Prepend3 parse_prepend(const Json& j, const std::string& what) {
  if (j.contains("prepend_scheme")) {
    std::string s = json_string(j, "prepend_scheme", what);
    if (s == "always") return Prepend3::always;
    if (s == "first") return Prepend3::first;
    if (s == "never") return Prepend3::never;
    fail(what + ": prepend_scheme \"" + s + "\" is not supported",
         ErrorKind::io);
  }
  return json_bool(j, "add_prefix_space", true, what) ? Prepend3::always
                                                      : Prepend3::never;
}

std::string metaspace_replacement(const Json& j, const std::string& what) {
  std::string r = json_string(j, "replacement", what);
  size_t n = 0;
  if (r.empty() || valid_utf8_prefix(r) != r.size() ||
      (next_char(r, 0, &n), n != r.size()))
    fail(what + ": replacement is not one character", ErrorKind::io);
  return r;
}

std::string type_of(const Json& j, const std::string& what) {
  if (!j.is_object()) fail(what + " is not a JSON object", ErrorKind::io);
  return json_string(j, "type", what);
}

const Json& json_array(const Json& j, const char* key,
                       const std::string& what) {
  const Json& v = json_member(j, key, what);
  if (!v.is_array())
    fail(what + ": \"" + key + "\" is not an array", ErrorKind::io);
  return v;
}

size_t json_size(const Json& j, const char* key, const std::string& what) {
  const Json& v = json_member(j, key, what);
  if (!v.is_number_unsigned())
    fail(what + ": \"" + key + "\" is not a count", ErrorKind::io);
  return v.get<size_t>();
}

namespace {

const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

enum class Behavior {
  removed,
  isolated,
  merged_with_previous,
  merged_with_next,
  contiguous
};

Behavior parse_behavior(const std::string& s) {
  if (s == "Removed") return Behavior::removed;
  if (s == "Isolated") return Behavior::isolated;
  if (s == "MergedWithPrevious") return Behavior::merged_with_previous;
  if (s == "MergedWithNext") return Behavior::merged_with_next;
  if (s == "Contiguous") return Behavior::contiguous;
  fail("split behavior \"" + s + "\" is not supported", ErrorKind::io);
}

struct Seg {
  size_t b, e;
  bool m;
};

// Splits `p` at `matches` (sorted, disjoint) as tokenizers' split() with
// `behavior`, appending the non-empty pieces to `out`.
void split_piece(const Piece& p,
                 const std::vector<std::pair<size_t, size_t>>& matches,
                 Behavior behavior, bool invert, std::vector<Piece>& out) {
  std::vector<Seg> segs;
  size_t prev = 0;
  for (auto [b, e] : matches) {
    if (b == e) continue;
    if (prev < b) segs.push_back({prev, b, invert});
    segs.push_back({b, e, !invert});
    prev = e;
  }
  if (prev < p.text.size()) segs.push_back({prev, p.text.size(), invert});
  std::vector<Seg> acc;
  bool prev_match = false;
  switch (behavior) {
    case Behavior::removed:
      for (auto& s : segs)
        if (!s.m) acc.push_back(s);
      break;
    case Behavior::isolated:
      acc = segs;
      break;
    case Behavior::merged_with_previous:
      for (auto& s : segs) {
        if (s.m && !prev_match && !acc.empty())
          acc.back().e = s.e;
        else
          acc.push_back(s);
        prev_match = s.m;
      }
      break;
    case Behavior::merged_with_next:
      for (size_t k = segs.size(); k-- > 0;) {
        const Seg& s = segs[k];
        if (s.m && !prev_match && !acc.empty())
          acc.back().b = s.b;
        else
          acc.push_back(s);
        prev_match = s.m;
      }
      std::reverse(acc.begin(), acc.end());
      break;
    case Behavior::contiguous:
      for (size_t k = 0; k < segs.size(); ++k) {
        const Seg& s = segs[k];
        if (k > 0 && s.m == prev_match)
          acc.back().e = s.e;
        else
          acc.push_back(s);
        prev_match = s.m;
      }
      break;
  }
  for (auto& s : acc)
    if (s.e > s.b)
      out.push_back({p.text.substr(s.b, s.e - s.b), p.at_start && s.b == 0});
}

template <class Pred>
std::vector<std::pair<size_t, size_t>> char_matches(const std::string& s,
                                                    Pred pred) {
  std::vector<std::pair<size_t, size_t>> m;
  for (size_t i = 0; i < s.size();) {
    size_t n = 0;
    char32_t c = next_char(s, i, &n);
    if (pred(c)) m.emplace_back(i, i + n);
    i += n;
  }
  return m;
}

// ---- normalizers ----

struct UnicodeForm : Normalizer {
  std::string form;
  explicit UnicodeForm(std::string f) : form(std::move(f)) {}
  void apply(std::string& s) const override { s = unicode_normalize(s, form); }
};

struct Lowercase : Normalizer {
  void apply(std::string& s) const override { s = unicode_lowercase(s); }
};

struct Prepend : Normalizer {
  std::string prefix;
  void apply(std::string& s) const override {
    if (!s.empty()) s = prefix + s;
  }
};

struct ReplaceNorm : Normalizer {
  Pattern pattern;
  std::string content;
  ReplaceNorm(const Json& j, const std::string& what)
      : pattern(json_member(j, "pattern", what), what),
        content(json_string(j, "content", what)) {}
  void apply(std::string& s) const override { pattern.replace(s, content); }
};

struct StripNorm : Normalizer {
  bool left = true, right = true;
  void apply(std::string& s) const override {
    size_t b = 0, e = s.size();
    if (left) {
      while (b < e) {
        size_t n = 0;
        if (!is_whitespace(next_char(s, b, &n))) break;
        b += n;
      }
    }
    if (right) {
      while (e > b) {
        size_t k = e - 1;
        while (k > b && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
        size_t n = 0;
        if (!is_whitespace(next_char(s, k, &n))) break;
        e = k;
      }
    }
    s = s.substr(b, e - b);
  }
};

struct NormSequence : Normalizer {
  std::vector<std::shared_ptr<const Normalizer>> items;
  void apply(std::string& s) const override {
    for (auto& n : items) n->apply(s);
  }
};

// ---- pre-tokenizers ----

struct ByteLevelPre : PreTokenizer {
  bool add_prefix_space = false;
  std::optional<Regex> regex;
  void apply(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    for (auto& p : pieces) {
      Piece q = p;
      if (add_prefix_space && !q.text.starts_with(' '))
        q.text.insert(q.text.begin(), ' ');
      size_t first = out.size();
      if (regex)
        split_piece(q, regex->find_all(q.text), Behavior::isolated, false, out);
      else if (!q.text.empty())
        out.push_back(q);
      for (size_t k = first; k < out.size(); ++k) {
        std::string mapped;
        mapped.reserve(out[k].text.size() * 2);
        for (unsigned char c : out[k].text) mapped += byte_char(c);
        out[k].text = std::move(mapped);
      }
    }
    pieces = std::move(out);
  }
};

struct SplitPre : PreTokenizer {
  std::optional<Pattern> pattern;
  Behavior behavior = Behavior::isolated;
  bool invert = false;
  void apply(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    for (auto& p : pieces)
      split_piece(p, pattern->find(p.text), behavior, invert, out);
    pieces = std::move(out);
  }
};

struct RegexSplits : PreTokenizer {  // Isolated, for GGUF vocabularies
  std::vector<Regex> regexes;
  void apply(std::vector<Piece>& pieces) const override {
    for (auto& r : regexes) {
      std::vector<Piece> out;
      for (auto& p : pieces)
        split_piece(p, r.find_all(p.text), Behavior::isolated, false, out);
      pieces = std::move(out);
    }
  }
};

struct DigitsPre : PreTokenizer {
  bool individual = false;
  void apply(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    for (auto& p : pieces)
      split_piece(p, char_matches(p.text, is_numeric),
                  individual ? Behavior::isolated : Behavior::contiguous, false,
                  out);
    pieces = std::move(out);
  }
};

struct WhitespaceSplitPre : PreTokenizer {
  void apply(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    for (auto& p : pieces)
      split_piece(p, char_matches(p.text, is_whitespace), Behavior::removed,
                  false, out);
    pieces = std::move(out);
  }
};

struct MetaspacePre : PreTokenizer {
  std::string rep;
  Prepend3 scheme = Prepend3::always;
  bool split = true;
  void apply(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    for (auto& p : pieces) {
      Piece q = p;
      replace_all(q.text, " ", rep);
      bool prepend = scheme == Prepend3::always ||
                     (scheme == Prepend3::first && q.at_start);
      if (prepend && !q.text.starts_with(rep)) q.text = rep + q.text;
      if (!split) {
        if (!q.text.empty()) out.push_back(q);
        continue;
      }
      std::vector<std::pair<size_t, size_t>> m;
      for (size_t k = q.text.find(rep); k != std::string::npos;
           k = q.text.find(rep, k + 1))
        m.emplace_back(k, k + rep.size());
      split_piece(q, m, Behavior::merged_with_next, false, out);
    }
    pieces = std::move(out);
  }
};

struct PreSequence : PreTokenizer {
  std::vector<std::shared_ptr<const PreTokenizer>> items;
  void apply(std::vector<Piece>& pieces) const override {
    for (auto& t : items) t->apply(pieces);
  }
};

}  // namespace

std::shared_ptr<const Normalizer> make_normalizer(const Json& j) {
  NestingGuard guard("normalizer");
  if (j.is_null()) return nullptr;
  std::string t = type_of(j, "normalizer");
  std::string what = "normalizer " + t;
  if (t == "NFC" || t == "NFD" || t == "NFKC" || t == "NFKD")
    return std::make_shared<UnicodeForm>(t);
  if (t == "Lowercase") return std::make_shared<Lowercase>();
  if (t == "Prepend") {
    auto p = std::make_shared<Prepend>();
    p->prefix = json_string(j, "prepend", what);
    return p;
  }
  if (t == "Replace") return std::make_shared<ReplaceNorm>(j, what);
  if (t == "Strip") {
    auto s = std::make_shared<StripNorm>();
    s->left = json_bool(j, "strip_left", true, what);
    s->right = json_bool(j, "strip_right", true, what);
    return s;
  }
  if (t == "Sequence") {
    auto s = std::make_shared<NormSequence>();
    for (auto& n : json_array(j, "normalizers", what))
      if (auto p = make_normalizer(n)) s->items.push_back(p);
    return s;
  }
  fail("normalizer \"" + t + "\" is not supported", ErrorKind::io);
}

std::shared_ptr<const PreTokenizer> make_pre_tokenizer(const Json& j) {
  NestingGuard guard("pre_tokenizer");
  if (j.is_null()) return nullptr;
  std::string t = type_of(j, "pre_tokenizer");
  std::string what = "pre_tokenizer " + t;
  if (t == "ByteLevel")
    return byte_level_pre_tokenizer(
        json_bool(j, "add_prefix_space", true, what),
        json_bool(j, "use_regex", true, what));
  if (t == "Split") {
    auto s = std::make_shared<SplitPre>();
    s->pattern.emplace(json_member(j, "pattern", what), what);
    s->behavior = parse_behavior(json_string(j, "behavior", what));
    s->invert = json_bool(j, "invert", false, what);
    return s;
  }
  if (t == "Digits") {
    auto d = std::make_shared<DigitsPre>();
    d->individual = json_bool(j, "individual_digits", false, what);
    return d;
  }
  if (t == "WhitespaceSplit") return std::make_shared<WhitespaceSplitPre>();
  if (t == "Whitespace") {
    auto s = std::make_shared<SplitPre>();
    // \w+|[^\w\s]+ with Rust regex's classes (\w includes Join_Control).
    const char* w = R"(\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D})";
    std::string re =
        std::string("[") + w + "]+|[^" + w + R"(\p{White_Space}]+)";
    s->pattern.emplace(Json{{"Regex", re}}, what);
    s->behavior = Behavior::removed;
    s->invert = true;
    return s;
  }
  if (t == "Metaspace") {
    auto m = std::make_shared<MetaspacePre>();
    m->rep = metaspace_replacement(j, what);
    m->scheme = parse_prepend(j, what);
    m->split = json_bool(j, "split", true, what);
    return m;
  }
  if (t == "Sequence") {
    auto s = std::make_shared<PreSequence>();
    for (auto& p : json_array(j, "pretokenizers", what))
      if (auto q = make_pre_tokenizer(p)) s->items.push_back(q);
    return s;
  }
  fail("pre_tokenizer \"" + t + "\" is not supported", ErrorKind::io);
}

std::shared_ptr<const PreTokenizer> byte_level_pre_tokenizer(
    bool add_prefix_space, bool use_regex) {
  auto b = std::make_shared<ByteLevelPre>();
  b->add_prefix_space = add_prefix_space;
  if (use_regex) b->regex.emplace(kGpt2Pattern);
  return b;
}

std::shared_ptr<const PreTokenizer> regex_byte_level_pre_tokenizer(
    const std::vector<std::string>& patterns) {
  auto r = std::make_shared<RegexSplits>();
  for (auto& p : patterns) r->regexes.emplace_back(p);
  auto s = std::make_shared<PreSequence>();
  s->items = {r, byte_level_pre_tokenizer(false, false)};
  return s;
}

}  // namespace nuvec::lm::tok
