// The BPE model (internal): tokenizers' merge loop (lowest rank first,
// leftmost on ties) with unknown-token fusing and byte fallback, and
// llama.cpp's SentencePiece loop (highest-scoring pair first).
#include <optional>
#include <queue>

#include "tokenizer/text.h"
#include "tokenizer/tokenizer_impl.h"

namespace nuvec::lm::tok {

namespace {
uint64_t pair_key(int a, int b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) |
         static_cast<uint32_t>(b);
}

const char* hex_byte(uint8_t b) {
  static char names[256][7];
  static bool done = [] {
    const char* hex = "0123456789ABCDEF";
    for (int i = 0; i < 256; ++i) {
      names[i][0] = '<', names[i][1] = '0', names[i][2] = 'x';
      names[i][3] = hex[i >> 4], names[i][4] = hex[i & 15], names[i][5] = '>';
      names[i][6] = 0;
    }
    return true;
  }();
  (void)done;
  return names[b];
}
}  // namespace

void Bpe::add_merge(const std::string& a, const std::string& b) {
  auto ia = vocab.find(a), ib = vocab.find(b);
  if (ia == vocab.end() || ib == vocab.end())
    fail("merge \"" + a + " " + b +
             "\" names a token missing from the vocabulary",
         ErrorKind::io);
  std::string joined = a;
  if (!continuing_subword_prefix.empty() &&
      b.starts_with(continuing_subword_prefix))
    joined += b.substr(continuing_subword_prefix.size());
  else
    joined += b;
  auto ij = vocab.find(joined);
  if (ij == vocab.end())
    fail("merge \"" + a + " " + b + "\" makes \"" + joined +
             "\", which is missing from the vocabulary",
         ErrorKind::io);
  int rank = static_cast<int>(merges.size());
  merges.emplace(pair_key(ia->second, ib->second),
                 std::make_pair(rank, ij->second));
}

void Bpe::init_bytes() {
  for (int b = 0; b < 256; ++b) {
    auto it = vocab.find(hex_byte(static_cast<uint8_t>(b)));
    byte_ids[b] = it == vocab.end() ? -1 : it->second;
  }
}

// The initial symbols of `word`: one per character (with the subword
// prefix and suffix), byte tokens where a character is missing and byte
// fallback is on, else the unknown token (fused when fuse_unk).
void Bpe::symbol_ids(std::string_view word, std::vector<int>& ids,
                     std::vector<int>& lens) const {
  std::optional<std::pair<int, int>> pending_unk;
  auto flush_unk = [&] {
    if (pending_unk) {
      ids.push_back(pending_unk->first);
      lens.push_back(pending_unk->second);
      pending_unk.reset();
    }
  };
  std::string key;
  size_t i = 0;
  while (i < word.size()) {
    size_t n = 0;
    next_char(word, i, &n);
    key.clear();
    if (i > 0 && !continuing_subword_prefix.empty())
      key = continuing_subword_prefix;
    key.append(word.substr(i, n));
    if (i + n == word.size() && !end_of_word_suffix.empty())
      key += end_of_word_suffix;
    auto it = vocab.find(key);
    if (it != vocab.end()) {
      flush_unk();
      ids.push_back(it->second);
      lens.push_back(static_cast<int>(n));
    } else {
      bool bytes_ok = byte_fallback;
      for (size_t k = 0; bytes_ok && k < n; ++k)
        bytes_ok = byte_ids[static_cast<unsigned char>(word[i + k])] >= 0;
      if (bytes_ok) {
        for (size_t k = 0; k < n; ++k) {
          ids.push_back(byte_ids[static_cast<unsigned char>(word[i + k])]);
          lens.push_back(1);
        }
      } else if (unk) {
        if (pending_unk && fuse_unk) {
          pending_unk->second += static_cast<int>(n);
        } else {
          flush_unk();
          pending_unk = std::make_pair(*unk, static_cast<int>(n));
        }
      }
    }
    i += n;
  }
  flush_unk();
}

namespace {
struct Sym {
  int id, prev, next, len;
};
struct Cand {
  int rank, pos, id;
  bool operator<(const Cand& o) const {  // a max-heap: lowest rank, then pos
    return rank != o.rank ? rank > o.rank : pos > o.pos;
  }
};
}  // namespace

void Bpe::tokenize(std::string_view word, std::vector<int>& out) const {
  if (word.empty()) return;
  if (!scores.empty()) return tokenize_spm(word, out);
  if (ignore_merges) {
    auto it = vocab.find(std::string(word));
    if (it != vocab.end()) {
      out.push_back(it->second);
      return;
    }
  }
  std::vector<int> ids, lens;
  symbol_ids(word, ids, lens);
  const int n = static_cast<int>(ids.size());
  std::vector<Sym> sym(n);
  for (int i = 0; i < n; ++i)
    sym[i] = {ids[i], i - 1, i + 1 < n ? i + 1 : -1, lens[i]};
  std::priority_queue<Cand> q;
  auto consider = [&](int pos) {
    int nx = sym[pos].next;
    if (nx < 0) return;
    auto it = merges.find(pair_key(sym[pos].id, sym[nx].id));
    if (it != merges.end()) q.push({it->second.first, pos, it->second.second});
  };
  for (int i = 0; i + 1 < n; ++i) consider(i);
  while (!q.empty()) {
    Cand c = q.top();
    q.pop();
    Sym& s = sym[c.pos];
    if (s.len == 0 || s.next < 0) continue;
    auto it = merges.find(pair_key(s.id, sym[s.next].id));
    if (it == merges.end() || it->second.second != c.id) continue;  // stale
    int nx = s.next;
    s.id = c.id;
    s.len += sym[nx].len;
    s.next = sym[nx].next;
    sym[nx].len = 0;
    if (s.next >= 0) sym[s.next].prev = c.pos;
    if (s.prev >= 0) consider(s.prev);
    consider(c.pos);
  }
  for (int i = 0; i < n; ++i)
    if (sym[i].len > 0) out.push_back(sym[i].id);
}

namespace {
struct Bigram {
  float score;
  int left, right, size;
  bool operator<(const Bigram& o) const {  // highest score, then leftmost
    return score != o.score ? score < o.score : left > o.left;
  }
};
}  // namespace

// llama.cpp's SentencePiece BPE: symbols are characters; the adjacent pair
// whose concatenation is a token with the highest score merges first; a
// final symbol that is no token becomes its bytes' <0xNN> tokens (or unk).
void Bpe::tokenize_spm(std::string_view word, std::vector<int>& out) const {
  struct S {
    int prev, next;
    size_t begin, len;
  };
  std::vector<S> sym;
  for (size_t i = 0; i < word.size();) {
    size_t n = 0;
    next_char(word, i, &n);
    int k = static_cast<int>(sym.size());
    sym.push_back({k - 1, -1, i, n});
    if (k > 0) sym[k - 1].next = k;
    i += n;
  }
  std::priority_queue<Bigram> q;
  std::string key;
  auto consider = [&](int l) {
    if (l < 0 || sym[l].next < 0) return;
    int r = sym[l].next;
    key.assign(word.substr(sym[l].begin, sym[l].len + sym[r].len));
    auto it = vocab.find(key);
    if (it == vocab.end() || it->second >= static_cast<int>(scores.size()))
      return;
    q.push({scores[it->second], l, r, static_cast<int>(key.size())});
  };
  for (size_t i = 1; i < sym.size(); ++i) consider(static_cast<int>(i) - 1);
  while (!q.empty()) {
    Bigram b = q.top();
    q.pop();
    S& l = sym[b.left];
    S& r = sym[b.right];
    if (l.len == 0 || r.len == 0 || l.next != b.right ||
        static_cast<int>(l.len + r.len) != b.size)
      continue;  // stale
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (l.next >= 0) sym[l.next].prev = b.left;
    consider(l.prev);
    consider(b.left);
  }
  for (int i = sym.empty() ? -1 : 0; i >= 0; i = sym[i].next) {
    std::string_view piece = word.substr(sym[i].begin, sym[i].len);
    auto it = vocab.find(std::string(piece));
    if (it != vocab.end()) {
      out.push_back(it->second);
      continue;
    }
    for (unsigned char c : piece) {
      if (byte_ids[c] >= 0)
        out.push_back(byte_ids[c]);
      else if (unk)
        out.push_back(*unk);
    }
  }
}

}  // namespace nuvec::lm::tok
