// UTF-8 code points and the case mappings of Python's str.upper/lower for
// the scripts chat templates meet most (ASCII, Latin-1, Latin Extended-A,
// Greek, Cyrillic); other code points keep their case (docs).
#include <algorithm>
#include <cstdint>

#include "jinja/value.h"
#include "tokenizer/text.h"

namespace nuvec::lm::jinja {

static std::size_t char_len(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c >> 5) == 0x6) return 2;
  if ((c >> 4) == 0xe) return 3;
  if ((c >> 3) == 0x1e) return 4;
  return 1;  // a stray byte counts as one character
}

std::vector<std::string> utf8_chars(std::string_view s) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < s.size();) {
    std::size_t n =
        std::min(char_len(static_cast<unsigned char>(s[k])), s.size() - k);
    out.emplace_back(s.substr(k, n));
    k += n;
  }
  return out;
}

std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t k = 0; k < s.size(); ++n)
    k += char_len(static_cast<unsigned char>(s[k]));
  return n;
}

bool is_ascii(std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

static std::uint32_t decode(std::string_view c) {
  auto b = [&](std::size_t k) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(c[k]));
  };
  switch (c.size()) {
    case 2:
      return ((b(0) & 0x1f) << 6) | (b(1) & 0x3f);
    case 3:
      return ((b(0) & 0x0f) << 12) | ((b(1) & 0x3f) << 6) | (b(2) & 0x3f);
    case 4:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3f) << 12) |
             ((b(2) & 0x3f) << 6) | (b(3) & 0x3f);
    default:
      return b(0);
  }
}

static void encode(std::string& out, std::uint32_t cp) { tok::append_utf8(out, static_cast<char32_t>(cp)); }

// Latin Extended-A pairs an upper case letter with the next code point,
// from an even one in U+0100..U+0137 and U+014A..U+0177, from an odd one in
// U+0139..U+0148 and U+0179..U+017E.
static bool ext_a_upper(std::uint32_t cp) {
  if ((cp >= 0x100 && cp <= 0x137) || (cp >= 0x14a && cp <= 0x177))
    return cp % 2 == 0;
  if ((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17e))
    return cp % 2 == 1;
  return false;
}
static bool ext_a_lower(std::uint32_t cp) {
  return cp >= 0x101 && cp <= 0x17e && cp != 0x130 && cp != 0x131 &&
         cp != 0x138 && cp != 0x149 && !ext_a_upper(cp);
}

static std::uint32_t upper_cp(std::uint32_t cp) {
  if (cp >= 'a' && cp <= 'z') return cp - 32;
  if (cp >= 0xe0 && cp <= 0xfe && cp != 0xf7) return cp - 32;
  if (cp == 0xff) return 0x178;
  if (cp == 0xb5) return 0x39c;
  if (ext_a_lower(cp)) return cp - 1;
  if (cp == 0x131) return 'I';
  if (cp >= 0x3b1 && cp <= 0x3cb && cp != 0x3c2) return cp - 32;
  if (cp == 0x3c2) return 0x3a3;
  if (cp >= 0x3ac && cp <= 0x3af) {
    static const std::uint32_t t[] = {0x386, 0x388, 0x389, 0x38a};
    return t[cp - 0x3ac];
  }
  if (cp >= 0x430 && cp <= 0x44f) return cp - 32;
  if (cp >= 0x450 && cp <= 0x45f) return cp - 80;
  return cp;
}

static std::uint32_t lower_cp(std::uint32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + 32;
  if (cp >= 0xc0 && cp <= 0xde && cp != 0xd7) return cp + 32;
  if (cp == 0x178) return 0xff;
  if (ext_a_upper(cp)) return cp + 1;
  if (cp >= 0x391 && cp <= 0x3ab && cp != 0x3a2) return cp + 32;
  if (cp == 0x386) return 0x3ac;
  if (cp >= 0x388 && cp <= 0x38a) return cp + 37;
  if (cp >= 0x410 && cp <= 0x42f) return cp + 32;
  if (cp >= 0x400 && cp <= 0x40f) return cp + 80;
  return cp;
}

std::string py_upper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  if (is_ascii(s)) {
    for (char c : s) out += (c >= 'a' && c <= 'z') ? char(c - 32) : c;
    return out;
  }
  for (const auto& c : utf8_chars(s)) {
    std::uint32_t cp = decode(c);
    if (cp == 0xdf) {
      out += "SS";  // Python upper-cases sharp s to two letters
    } else if (cp == 0x149) {
      out += "\xca\xbcN";
    } else {
      encode(out, upper_cp(cp));
    }
  }
  return out;
}

std::string py_lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  if (is_ascii(s)) {
    for (char c : s) out += (c >= 'A' && c <= 'Z') ? char(c + 32) : c;
    return out;
  }
  auto cs = utf8_chars(s);
  auto is_cased = [](std::uint32_t cp) {
    return upper_cp(cp) != cp || lower_cp(cp) != cp;
  };
  for (std::size_t k = 0; k < cs.size(); ++k) {
    std::uint32_t cp = decode(cs[k]);
    if (cp == 0x130) {
      out += "i\xcc\x87";  // I with dot above lowers to i + combining dot
    } else if (cp == 0x3a3 && k > 0 && is_cased(decode(cs[k - 1])) &&
               !(k + 1 < cs.size() && is_cased(decode(cs[k + 1])))) {
      out += "\xcf\x82";  // a capital sigma that ends a word: final sigma
    } else {
      encode(out, lower_cp(cp));
    }
  }
  return out;
}

bool py_isspace(std::string_view ch) {
  std::uint32_t cp = decode(ch);
  return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) ||
         cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

}  // namespace nuvec::lm::jinja
