// PCRE2 (UTF + UCP) regular expressions for Split pre-tokenizers and
// Replace normalizers and decoders (internal).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nuvec::lm::tok {

class Regex {
 public:
  /// Compiles `pattern` (JIT where available); a bad pattern throws naming
  /// it and PCRE2's message.
  explicit Regex(const std::string& pattern);
  /// The [begin, end) byte ranges of the successive non-overlapping
  /// matches in `s` (valid UTF-8); an empty match advances one character.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view s) const;

 private:
  struct Code;
  std::shared_ptr<const Code> code_;
};

/// `s` with every character of a regex escaped (a literal pattern).
std::string regex_escape(std::string_view s);

}  // namespace nuvec::lm::tok
