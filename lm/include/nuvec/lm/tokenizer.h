// Tokenizers of language models, in C++ (docs/lm.md, "Tokenizers"):
// tokenizer.json's byte-level BPE (GPT-2, Llama 3, Qwen, SmolLM) and
// SentencePiece-style BPE with byte fallback (Llama 2, Mistral), with their
// normalizers, pre-tokenizers, added and special tokens and decoders, and the
// vocabulary a GGUF file carries in its metadata. Ids and decoded text equal
// the `tokenizers` Python package's.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nuvec/gguf.h"

namespace nuvec::lm {

/// A GGUF file's vocabulary (its tokenizer.ggml.* metadata), taken out of
/// the metadata map by the caller.
struct GgufVocab {
  std::string model;  ///< "gpt2" (byte-level BPE) or "llama" (SentencePiece)
  std::string pre;    ///< pre-tokenizer name: "default", "llama-bpe", "qwen2", "smollm", "gpt2", ...
  std::vector<std::string> tokens;
  std::vector<std::string> merges;  ///< "left right", byte-level models
  std::vector<float> scores;        ///< SentencePiece models
  std::vector<int> token_types;     ///< 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte
  std::optional<int> bos, eos, unk, pad;
  bool add_bos = false, add_eos = false, add_space_prefix = false;
  std::string chat_template;
};

/// The vocabulary in a GGUF file's metadata (as load_gguf returns it); a
/// missing or mistyped key throws nuvec::Error naming the key.
GgufVocab gguf_vocab(const std::unordered_map<std::string, io::GGUFMetaData>& meta);

class Tokenizer {
 public:
  /// From the text of tokenizer.json and, optionally, of
  /// tokenizer_config.json (special tokens, add_bos_token, chat template).
  /// A malformed or unsupported file throws nuvec::Error (kind io or
  /// invalid_argument) naming what is wrong ("[tokenizer] model type
  /// \"Unigram\" is not supported").
  static Tokenizer from_json(const std::string& tokenizer_json,
                             const std::string& tokenizer_config_json = "");
  /// From a checkpoint folder: tokenizer.json and tokenizer_config.json.
  static Tokenizer from_dir(const std::string& dir);
  /// From a GGUF file's vocabulary.
  static Tokenizer from_gguf(const GgufVocab& vocab);

  /// The ids of `text`, with the post-processor's special tokens (BOS) when
  /// `add_special_tokens`; special and added tokens in the text are matched
  /// whole, as the `tokenizers` package does.
  std::vector<int> encode(std::string_view text, bool add_special_tokens = true) const;
  /// The text of `ids`; ids out of range throw nuvec::Error.
  std::string decode(std::span<const int> ids, bool skip_special_tokens = false) const;

  /// The number of ids: the largest id of the vocabulary and the added
  /// tokens, plus one.
  int vocab_size() const;
  /// The id of a vocabulary entry or added token, spelled as stored ("Ġthe"
  /// for byte-level vocabularies); nullopt when there is none.
  std::optional<int> token_to_id(std::string_view token) const;
  /// The vocabulary entry of `id` (its raw form, "Ġthe" for byte-level).
  std::string id_to_token(int id) const;
  /// Whether `id` is a special added token (what skip_special_tokens drops).
  bool is_special(int id) const;
  /// The id of the config's bos_token (GGUF: bos_token_id), if any.
  std::optional<int> bos_token_id() const;
  /// The end-of-sequence ids (the config's eos_token; a caller may add
  /// generation_config.json's).
  std::vector<int> eos_token_ids() const;
  /// The text of the BOS / EOS token, empty when there is none.
  std::string bos_token() const;
  std::string eos_token() const;
  /// The chat template (Jinja text), empty when there is none.
  const std::string& chat_template() const;

  Tokenizer(const Tokenizer&);
  Tokenizer& operator=(const Tokenizer&);
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  /// The internal representation (lm/src/tokenizer/tokenizer_impl.h).
  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

/// Turns a stream of ids into text as they come, never cutting a UTF-8
/// character (or a SentencePiece space) in two: add() returns the text that
/// is complete so far and not returned before.
class StreamingDetokenizer {
 public:
  /// Keeps a reference to `tokenizer`, which must outlive it.
  explicit StreamingDetokenizer(const Tokenizer& tokenizer);
  /// Adds one id; returns the text it completes (possibly empty).
  std::string add(int id);
  /// The rest (an incomplete character becomes U+FFFD, as decode does).
  std::string finalize();
  /// Forgets the ids added so far.
  void reset();
  /// All the text of the ids added since the last reset.
  std::string text() const;

 private:
  const Tokenizer* tok_;
  std::vector<int> ids_;
  std::string emitted_;
};

}  // namespace nuvec::lm
