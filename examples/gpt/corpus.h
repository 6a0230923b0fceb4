// The training text: the fortune cookie databases of Debian's `fortunes`
// package, read at run time from /usr/share/games/fortunes (nothing is
// downloaded or committed), as characters mapped to token ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpt {

struct Corpus {
  std::string chars;             // the vocabulary, sorted; token i is chars[i]
  std::vector<int32_t> train;    // the first 90% of the text
  std::vector<int32_t> heldout;  // the last 10%
  double unigram_entropy = 0;    // nats per character, of the training split
  std::string source;            // where the text came from
};

/// Reads every plain fortune file under `dir` (sorted by name; "%" lines
/// between fortunes become blank lines), keeps printable ASCII and
/// newlines, and splits 90/10. Throws std::runtime_error when no text is
/// found, naming the package to install.
Corpus load_fortunes(const std::string& dir = "/usr/share/games/fortunes");

/// The text of token ids.
std::string decode(const Corpus& c, const std::vector<int32_t>& ids);
/// The ids of `text` (characters outside the vocabulary are dropped).
std::vector<int32_t> encode(const Corpus& c, const std::string& text);

}  // namespace gpt
