// Tokenizer: added tokens, encoding through the pipeline, decoding, and the
// streaming detokenizer.
#include "nuvec/lm/tokenizer.h"

#include <algorithm>

#include "tokenizer/text.h"
#include "tokenizer/tokenizer_impl.h"

namespace nuvec::lm {

namespace tok {
void fail(const std::string& message, ErrorKind kind) {
  Error(kind, "[tokenizer] " + message).raise();
}
}  // namespace tok

using tok::fail;

namespace {

struct Segment {
  size_t begin, end;
  int added = -1;  // index into Impl::added, or -1 for text
};

char32_t last_char(std::string_view s) {
  size_t k = s.size() - 1;
  while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
  size_t n = 0;
  return tok::next_char(s, k, &n);
}

// The added tokens (those with `normalized` == `normalized`) found in `s`,
// leftmost-longest and non-overlapping, with tokenizers' single_word,
// lstrip and rstrip rules; the text between them as text segments.
std::vector<Segment> split_added(const Tokenizer::Impl& im, std::string_view s,
                                 bool normalized) {
  std::vector<Segment> out;
  size_t start_offset = 0, pos = 0;
  while (pos < s.size()) {
    int best = -1;
    size_t best_len = 0;
    for (size_t k : im.added_by_first[static_cast<unsigned char>(s[pos])]) {
      const auto& a = im.added[k];
      if (a.normalized != normalized || a.match.size() <= best_len) continue;
      if (s.compare(pos, a.match.size(), a.match) == 0) {
        best = static_cast<int>(k);
        best_len = a.match.size();
      }
    }
    if (best < 0) {
      ++pos;
      continue;
    }
    const auto& a = im.added[best];
    size_t start = pos, stop = pos + best_len;
    pos = stop;
    if (a.single_word) {
      bool start_space =
          start == 0 || !tok::is_word_char(last_char(s.substr(0, start)));
      size_t n = 0;
      bool stop_space =
          stop == s.size() || !tok::is_word_char(tok::next_char(s, stop, &n));
      if (!start_space || !stop_space) continue;
    }
    if (a.lstrip) {
      size_t b = start;
      while (b > 0) {
        size_t k = b - 1;
        while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
        size_t n = 0;
        if (!tok::is_whitespace(tok::next_char(s, k, &n))) break;
        b = k;
      }
      start = std::max(b, start_offset);
    }
    if (a.rstrip) {
      while (stop < s.size()) {
        size_t n = 0;
        if (!tok::is_whitespace(tok::next_char(s, stop, &n))) break;
        stop += n;
      }
      pos = stop;
    }
    if (start_offset < start) out.push_back({start_offset, start, -1});
    out.push_back({start, stop, best});
    start_offset = stop;
  }
  if (start_offset < s.size()) out.push_back({start_offset, s.size(), -1});
  return out;
}

}  // namespace

void Tokenizer::Impl::finish_added() {
  added_by_id.clear();
  added_by_content.clear();
  added_by_first.assign(256, {});
  for (size_t k = 0; k < added.size(); ++k) {
    auto& a = added[k];
    if (a.content.empty()) fail("an added token is empty", ErrorKind::io);
    a.match = a.content;
    if (a.normalized && normalizer) normalizer->apply(a.match);
    if (a.match.empty()) a.normalized = false, a.match = a.content;
    added_by_id[a.id] = k;
    added_by_content[a.content] = k;
    added_by_first[static_cast<unsigned char>(a.match[0])].push_back(k);
    vocab_size = std::max(vocab_size, a.id + 1);
  }
}

bool Tokenizer::Impl::valid_id(int id) const {
  if (id < 0) return false;
  if (added_by_id.count(id)) return true;
  return static_cast<size_t>(id) < has_id.size() && has_id[id];
}

bool Tokenizer::Impl::is_byte_token(int id) const {
  if (id < 0 || static_cast<size_t>(id) >= id_to_token.size() ||
      added_by_id.count(id))
    return false;
  const std::string& t = id_to_token[id];
  return t.size() == 6 && t.starts_with("<0x") && t[5] == '>';
}

std::vector<int> Tokenizer::Impl::encode(std::string_view text,
                                         bool add_special) const {
  if (tok::valid_utf8_prefix(text) != text.size())
    fail("the text to encode is not valid UTF-8 (byte " +
         std::to_string(tok::valid_utf8_prefix(text)) + ")");
  std::vector<int> out;
  if (add_special) out = prefix_ids;
  bool prev_special = true;  // llama.cpp: a space before the first text
  for (const Segment& seg : split_added(*this, text, false)) {
    if (seg.added >= 0) {
      out.push_back(added[seg.added].id);
      prev_special = true;
      continue;
    }
    std::string norm(text.substr(seg.begin, seg.end - seg.begin));
    if (spm_escape) {
      if (spm_space_prefix && prev_special) norm.insert(norm.begin(), ' ');
      std::string esc;
      for (char c : norm) {
        if (c == ' ')
          esc += "\xE2\x96\x81";
        else
          esc += c;
      }
      bpe.tokenize(esc, out);
      prev_special = false;
      continue;
    }
    if (normalizer) normalizer->apply(norm);
    for (const Segment& sub : split_added(*this, norm, true)) {
      if (sub.added >= 0) {
        out.push_back(added[sub.added].id);
        continue;
      }
      std::vector<tok::Piece> pieces{
          {norm.substr(sub.begin, sub.end - sub.begin),
           seg.begin == 0 && sub.begin == 0}};
      if (pre_tokenizer) pre_tokenizer->apply(pieces);
      for (auto& p : pieces) bpe.tokenize(p.text, out);
    }
  }
  if (add_special) out.insert(out.end(), suffix_ids.begin(), suffix_ids.end());
  return out;
}

std::string Tokenizer::Impl::decode(std::span<const int> ids,
                                    bool skip_special) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int id : ids) {
    if (!valid_id(id))
      fail("id " + std::to_string(id) +
               " is out of range for a vocabulary of " +
               std::to_string(vocab_size),
           ErrorKind::out_of_range);
    auto it = added_by_id.find(id);
    if (it != added_by_id.end()) {
      if (skip_special && added[it->second].special) continue;
      tokens.push_back(added[it->second].content);
    } else {
      tokens.push_back(id_to_token[id]);
    }
  }
  if (!decoder) {
    std::string s;
    for (size_t k = 0; k < tokens.size(); ++k) s += (k ? " " : "") + tokens[k];
    return s;
  }
  decoder->apply(tokens);
  std::string s;
  for (auto& t : tokens) s += t;
  return s;
}

Tokenizer::Tokenizer(std::shared_ptr<const Impl> impl)
    : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(const Tokenizer&) = default;
Tokenizer& Tokenizer::operator=(const Tokenizer&) = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

std::vector<int> Tokenizer::encode(std::string_view text,
                                   bool add_special_tokens) const {
  return impl_->encode(text, add_special_tokens);
}

std::string Tokenizer::decode(std::span<const int> ids,
                              bool skip_special_tokens) const {
  return impl_->decode(ids, skip_special_tokens);
}

int Tokenizer::vocab_size() const { return impl_->vocab_size; }

std::optional<int> Tokenizer::token_to_id(std::string_view token) const {
  auto a = impl_->added_by_content.find(std::string(token));
  if (a != impl_->added_by_content.end()) return impl_->added[a->second].id;
  auto it = impl_->bpe.vocab.find(std::string(token));
  if (it != impl_->bpe.vocab.end()) return it->second;
  return std::nullopt;
}

std::string Tokenizer::id_to_token(int id) const {
  if (!impl_->valid_id(id))
    fail("id " + std::to_string(id) + " is out of range",
         ErrorKind::out_of_range);
  auto it = impl_->added_by_id.find(id);
  if (it != impl_->added_by_id.end()) return impl_->added[it->second].content;
  return impl_->id_to_token[id];
}

bool Tokenizer::is_special(int id) const {
  auto it = impl_->added_by_id.find(id);
  return it != impl_->added_by_id.end() && impl_->added[it->second].special;
}

std::optional<int> Tokenizer::bos_token_id() const { return impl_->bos_id; }
std::vector<int> Tokenizer::eos_token_ids() const { return impl_->eos_ids; }
std::string Tokenizer::bos_token() const { return impl_->bos_token; }
std::string Tokenizer::eos_token() const { return impl_->eos_token; }
const std::string& Tokenizer::chat_template() const {
  return impl_->chat_template;
}

// ---- StreamingDetokenizer ----

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer)
    : tok_(&tokenizer) {}

namespace {
// The length of `s` without its trailing U+FFFD characters: they may be an
// incomplete character that the next ids complete.
size_t without_trailing_replacement(const std::string& s) {
  size_t n = s.size();
  while (n >= 3 && s.compare(n - 3, 3, "\xEF\xBF\xBD") == 0) n -= 3;
  return n;
}
}  // namespace

std::string StreamingDetokenizer::add(int id) {
  ids_.push_back(id);
  const auto& im = tok_->impl();
  // A run of byte-fallback tokens at the end may still turn into U+FFFD
  // per byte when the next byte makes it ill-formed (ByteFallback's rule),
  // so it waits for the next other token (or finalize).
  size_t n = ids_.size();
  if (im.bpe.byte_fallback || !im.bpe.scores.empty())
    while (n > 0 && im.is_byte_token(ids_[n - 1])) --n;
  std::string full = tok_->decode(std::span<const int>(ids_.data(), n));
  size_t ready = without_trailing_replacement(full);
  if (ready <= emitted_.size() ||
      full.compare(0, emitted_.size(), emitted_) != 0)
    return {};
  std::string piece = full.substr(emitted_.size(), ready - emitted_.size());
  emitted_.append(piece);
  return piece;
}

std::string StreamingDetokenizer::finalize() {
  std::string full = tok_->decode(ids_);
  if (full.size() <= emitted_.size() ||
      full.compare(0, emitted_.size(), emitted_) != 0)
    return {};
  std::string piece = full.substr(emitted_.size());
  emitted_ = full;
  return piece;
}

void StreamingDetokenizer::reset() {
  ids_.clear();
  emitted_.clear();
}

std::string StreamingDetokenizer::text() const { return tok_->decode(ids_); }

}  // namespace nuvec::lm
