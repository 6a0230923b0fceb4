// UTF-8 and Unicode helpers of the tokenizers (internal): character
// classes as Rust's char methods define them (via ICU), normalization
// forms, GPT-2's byte-to-character table, lossy UTF-8 decoding.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nuvec::lm::tok {

/// The code point at `s[i]` and its length in bytes (s valid UTF-8).
char32_t next_char(std::string_view s, size_t i, size_t* len);
void append_utf8(std::string& out, char32_t c);
/// The length of the longest valid UTF-8 prefix of `s`.
size_t valid_utf8_prefix(std::string_view s);
/// `bytes` as text, each maximal ill-formed subsequence replaced by U+FFFD
/// (Rust's String::from_utf8_lossy).
std::string utf8_lossy(std::string_view bytes);

bool is_whitespace(char32_t c);    // Rust char::is_whitespace
bool is_numeric(char32_t c);       // Rust char::is_numeric (Nd, Nl, No)
bool is_alphanumeric(char32_t c);  // Rust char::is_alphanumeric
bool is_word_char(char32_t c);     // Rust regex \w (Unicode)

/// "NFC", "NFD", "NFKC" or "NFKD" of `s`.
std::string unicode_normalize(std::string_view s, const std::string& form);
std::string unicode_lowercase(std::string_view s);

/// GPT-2's printable character of each byte, as UTF-8.
const std::string& byte_char(uint8_t b);
/// The byte of a byte-level character, -1 when `c` is not one.
int char_byte(char32_t c);

}  // namespace nuvec::lm::tok
