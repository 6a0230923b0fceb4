// The pieces of a Tokenizer (internal): normalizers, pre-tokenizers, the BPE
// model, decoders and the post-processor, each the counterpart of a
// component of the `tokenizers` package (docs/lm.md, "Tokenizers").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nuvec/core/error.h"
#include "nuvec/lm/tokenizer.h"
#include "tokenizer/regex.h"

namespace nuvec::lm::tok {

[[noreturn]] void fail(const std::string& message,
                       ErrorKind kind = ErrorKind::invalid_argument);

/// Rewrites a whole string (NFC, Prepend, Replace, ...).
struct Normalizer {
  virtual ~Normalizer() = default;
  virtual void apply(std::string& s) const = 0;
};

/// A piece of text between pre-tokenization steps; `at_start` marks the
/// piece that begins at offset 0 of the original text (Metaspace "first").
struct Piece {
  std::string text;
  bool at_start = false;
};

/// Splits pieces into smaller pieces (and may rewrite them).
struct PreTokenizer {
  virtual ~PreTokenizer() = default;
  virtual void apply(std::vector<Piece>& pieces) const = 0;
};

/// Turns the list of token strings into (fewer) strings, as tokenizers'
/// decode_chain; the results are concatenated at the end.
struct Decoder {
  virtual ~Decoder() = default;
  virtual void apply(std::vector<std::string>& tokens) const = 0;
};

/// The BPE model: ranked merges (tokenizer.json, GGUF "gpt2") or, for
/// GGUF "llama", llama.cpp's SentencePiece merging by token score.
struct Bpe {
  std::unordered_map<std::string, int> vocab;
  std::unordered_map<uint64_t, std::pair<int, int>> merges;  // pair -> rank, id
  std::vector<float> scores;  // SentencePiece mode when non-empty
  std::optional<int> unk;
  std::string continuing_subword_prefix, end_of_word_suffix;
  bool fuse_unk = false, byte_fallback = false, ignore_merges = false;
  int byte_ids[256];  // <0xNN> ids for byte fallback, -1 when absent

  /// Adds "a b" (or the pair) as the next merge; a part or the result
  /// missing from the vocabulary throws.
  void add_merge(const std::string& a, const std::string& b);
  void init_bytes();
  void tokenize(std::string_view word, std::vector<int>& out) const;

 private:
  void tokenize_spm(std::string_view word, std::vector<int>& out) const;
  void symbol_ids(std::string_view word, std::vector<int>& ids,
                  std::vector<int>& lens) const;
};

struct AddedToken {
  std::string content;  // as given
  std::string match;    // what is matched: content, normalized if normalized
  int id = 0;
  bool special = false, lstrip = false, rstrip = false, single_word = false,
       normalized = false;
};

}  // namespace nuvec::lm::tok

namespace nuvec::lm {

struct Tokenizer::Impl {
  std::vector<std::string> id_to_token;  // model vocabulary, "" for holes
  std::vector<uint8_t> has_id;           // whether the id is a token
  tok::Bpe bpe;
  std::vector<tok::AddedToken> added;
  std::unordered_map<int, size_t> added_by_id;
  std::unordered_map<std::string, size_t> added_by_content;
  std::vector<std::vector<size_t>> added_by_first;  // by first byte of match
  std::shared_ptr<const tok::Normalizer> normalizer;
  std::shared_ptr<const tok::PreTokenizer> pre_tokenizer;
  std::shared_ptr<const tok::Decoder> decoder;
  std::vector<int> prefix_ids, suffix_ids;  // post-processor, single sequence
  // llama.cpp's SentencePiece front end (GGUF "llama"): " " before the text
  // and after special tokens, spaces as U+2581.
  bool spm_space_prefix = false, spm_escape = false;
  std::optional<int> bos_id;
  std::vector<int> eos_ids;
  std::string bos_token, eos_token, chat_template;
  int vocab_size = 0;

  /// Registers the added tokens (after the normalizer is set).
  void finish_added();
  std::vector<int> encode(std::string_view text, bool add_special) const;
  std::string decode(std::span<const int> ids, bool skip_special) const;
  bool valid_id(int id) const;
  bool is_byte_token(int id) const;  // <0xNN>
};

}  // namespace nuvec::lm
