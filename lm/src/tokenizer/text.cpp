// UTF-8 and Unicode helpers (internal), on ICU.
#include "tokenizer/text.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include <array>
#include <vector>

#include "tokenizer/tokenizer_impl.h"

namespace nuvec::lm::tok {

char32_t next_char(std::string_view s, size_t i, size_t* len) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char c = b(0);
  if (c < 0x80) {
    *len = 1;
    return c;
  }
  if (c < 0xE0) {
    *len = 2;
    return ((c & 0x1F) << 6) | (b(1) & 0x3F);
  }
  if (c < 0xF0) {
    *len = 3;
    return ((c & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  }
  *len = 4;
  return ((c & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) |
         (b(3) & 0x3F);
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

namespace {
// The length of the well-formed sequence at s[i], or -(bytes of its maximal
// ill-formed subpart) (Unicode's "maximal subpart" rule, table 3-7).
long sequence_at(std::string_view s, size_t i) {
  auto u = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = u(i);
  if (c < 0x80) return 1;
  int need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return -1;
  }
  size_t k = 1;
  for (; k <= static_cast<size_t>(need); ++k) {
    if (i + k >= s.size()) return -static_cast<long>(k);
    unsigned char d = u(i + k);
    bool ok = k == 1 ? (d >= lo && d <= hi) : (d >= 0x80 && d <= 0xBF);
    if (!ok) return -static_cast<long>(k);
  }
  return need + 1;
}
}  // namespace

size_t valid_utf8_prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    long n = sequence_at(s, i);
    if (n < 0) break;
    i += n;
  }
  return i;
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    long n = sequence_at(bytes, i);
    if (n > 0) {
      out.append(bytes.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      i += -n;
    }
  }
  return out;
}

bool is_whitespace(char32_t c) {
  return u_isUWhiteSpace(static_cast<UChar32>(c));
}

bool is_numeric(char32_t c) {
  int t = u_charType(static_cast<UChar32>(c));
  return t == U_DECIMAL_DIGIT_NUMBER || t == U_LETTER_NUMBER ||
         t == U_OTHER_NUMBER;
}

bool is_alphanumeric(char32_t c) {
  return u_isUAlphabetic(static_cast<UChar32>(c)) || is_numeric(c);
}

bool is_word_char(char32_t c) {
  auto u = static_cast<UChar32>(c);
  int t = u_charType(u);
  return u_isUAlphabetic(u) || t == U_NON_SPACING_MARK ||
         t == U_COMBINING_SPACING_MARK || t == U_ENCLOSING_MARK ||
         t == U_DECIMAL_DIGIT_NUMBER || t == U_CONNECTOR_PUNCTUATION ||
         c == 0x200C || c == 0x200D;
}

namespace {
std::vector<UChar> to_utf16(std::string_view s) {
  std::vector<UChar> out(s.size() + 1);
  int32_t n = 0;
  UErrorCode st = U_ZERO_ERROR;
  u_strFromUTF8(out.data(), static_cast<int32_t>(out.size()), &n, s.data(),
                static_cast<int32_t>(s.size()), &st);
  if (U_FAILURE(st)) fail("text is not valid UTF-8");
  out.resize(n);
  return out;
}

std::string to_utf8(const std::vector<UChar>& s) {
  std::string out(s.size() * 3 + 1, '\0');
  int32_t n = 0;
  UErrorCode st = U_ZERO_ERROR;
  u_strToUTF8(out.data(), static_cast<int32_t>(out.size()), &n, s.data(),
              static_cast<int32_t>(s.size()), &st);
  if (U_FAILURE(st))
    fail("ICU could not convert text to UTF-8", ErrorKind::internal);
  out.resize(n);
  return out;
}
}  // namespace

std::string unicode_normalize(std::string_view s, const std::string& form) {
  UErrorCode st = U_ZERO_ERROR;
  const UNormalizer2* n = nullptr;
  if (form == "NFC")
    n = unorm2_getNFCInstance(&st);
  else if (form == "NFD")
    n = unorm2_getNFDInstance(&st);
  else if (form == "NFKC")
    n = unorm2_getNFKCInstance(&st);
  else if (form == "NFKD")
    n = unorm2_getNFKDInstance(&st);
  if (!n || U_FAILURE(st))
    fail("ICU has no normalizer " + form, ErrorKind::internal);
  auto in = to_utf16(s);
  std::vector<UChar> out(in.size() * 4 + 16);
  for (int attempt = 0; attempt < 2; ++attempt) {
    st = U_ZERO_ERROR;
    int32_t len =
        unorm2_normalize(n, in.data(), static_cast<int32_t>(in.size()),
                         out.data(), static_cast<int32_t>(out.size()), &st);
    if (st == U_BUFFER_OVERFLOW_ERROR) {
      out.resize(len + 1);
      continue;
    }
    if (U_FAILURE(st))
      fail("ICU normalization " + form + " failed", ErrorKind::internal);
    out.resize(len);
    return to_utf8(out);
  }
  fail("ICU normalization " + form + " failed", ErrorKind::internal);
}

std::string unicode_lowercase(std::string_view s) {
  auto in = to_utf16(s);
  std::vector<UChar> out(in.size() * 2 + 16);
  for (int attempt = 0; attempt < 2; ++attempt) {
    UErrorCode st = U_ZERO_ERROR;
    int32_t len =
        u_strToLower(out.data(), static_cast<int32_t>(out.size()), in.data(),
                     static_cast<int32_t>(in.size()), "", &st);
    if (st == U_BUFFER_OVERFLOW_ERROR) {
      out.resize(len + 1);
      continue;
    }
    if (U_FAILURE(st)) fail("ICU lowercase failed", ErrorKind::internal);
    out.resize(len);
    return to_utf8(out);
  }
  fail("ICU lowercase failed", ErrorKind::internal);
}

namespace {
struct ByteTable {
  std::array<std::string, 256> chars;
  std::array<char32_t, 256> code;
  std::array<int16_t, 324> inverse;
  ByteTable() {
    inverse.fill(-1);
    // Printable Latin-1 bytes stand for themselves; the others take the
    // code points from 256 upwards, in byte order (GPT-2's table).
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable =
          (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      code[b] =
          printable ? static_cast<char32_t>(b) : static_cast<char32_t>(next++);
      append_utf8(chars[b], code[b]);
      inverse[code[b]] = static_cast<int16_t>(b);
    }
  }
};
const ByteTable& table() {
  static const ByteTable t;
  return t;
}
}  // namespace

const std::string& byte_char(uint8_t b) { return table().chars[b]; }

int char_byte(char32_t c) { return c < 324 ? table().inverse[c] : -1; }

}  // namespace nuvec::lm::tok
