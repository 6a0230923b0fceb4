// The strict JSON reader of json.h. Recursion (in skip_value only) is
// bounded by max_depth, so a hostile header cannot overflow the stack.
#include "io/json.h"

namespace nuvec::io::detail {

namespace {

// Length of the UTF-8 sequence starting at s[i], or 0 when it is invalid
// (overlong, surrogate, above U+10FFFF, truncated, stray continuation).
size_t utf8_sequence(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp, min;
  if ((c & 0xE0) == 0xC0) {
    n = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() - i < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

JsonReader::JsonReader(std::string_view text, int max_depth)
    : s_(text), max_depth_(max_depth) {}

void JsonReader::fail(const std::string& what) const {
  throw JsonError(what, pos_);
}

void JsonReader::skip_ws() {
  while (!at_end() && (current() == ' ' || current() == '\t' ||
                       current() == '\n' || current() == '\r'))
    ++pos_;
}

size_t JsonReader::offset() {
  skip_ws();
  return pos_;
}

void JsonReader::expect(char c) {
  if (at_end() || current() != c) fail(std::string("expected '") + c + "'");
  ++pos_;
}

void JsonReader::literal(std::string_view word) {
  if (s_.substr(pos_, word.size()) != word) fail("invalid literal");
  pos_ += word.size();
}

JsonReader::Kind JsonReader::peek() {
  skip_ws();
  if (at_end()) fail("unexpected end of JSON");
  char c = current();
  if (c == '{') return Kind::object;
  if (c == '[') return Kind::array;
  if (c == '"') return Kind::string;
  if (c == 't' || c == 'f') return Kind::boolean;
  if (c == 'n') return Kind::null;
  if (c == '-' || is_digit(c)) return Kind::number;
  fail("unexpected character");
}

void JsonReader::enter(char open) {
  skip_ws();
  if (at_end() || current() != open)
    fail(std::string("expected '") + open + "'");
  if (first_.size() >= static_cast<size_t>(max_depth_))
    fail("nesting deeper than " + std::to_string(max_depth_) + " levels");
  ++pos_;
  first_.push_back(true);
}

void JsonReader::begin_object() { enter('{'); }
void JsonReader::begin_array() { enter('['); }

// Before an element: ']' or '}' ends the level; otherwise a ',' separates
// it from the previous one.
bool JsonReader::next(char close) {
  skip_ws();
  bool first = first_.back();
  if (!at_end() && current() == close) {
    ++pos_;
    first_.pop_back();
    return false;
  }
  if (!first) {
    if (at_end() || current() != ',')
      fail(std::string("expected '") + close + "'");
    ++pos_;
    skip_ws();
  }
  first_.back() = false;
  return true;
}

bool JsonReader::next_member(std::string& key) {
  if (!next('}')) return false;
  if (at_end() || current() != '"') fail("expected a string key");
  key_pos_ = pos_;
  key = string_value();
  skip_ws();
  expect(':');
  return true;
}

bool JsonReader::next_item() { return next(']'); }

void JsonReader::skip_value() {
  switch (peek()) {
    case Kind::object: {
      begin_object();
      std::string key;
      // Recursive per nesting level only, which enter() bounds.
      while (next_member(key)) skip_value();
      return;
    }
    case Kind::array:
      begin_array();
      while (next_item()) skip_value();
      return;
    case Kind::string:
      string_value();
      return;
    case Kind::number:
      number_value();
      return;
    case Kind::boolean:
      literal(current() == 't' ? "true" : "false");
      return;
    case Kind::null:
      literal("null");
      return;
  }
}

void JsonReader::finish() {
  skip_ws();
  if (!at_end()) fail("unexpected data after the JSON value");
}

uint32_t JsonReader::hex4() {
  if (s_.size() - pos_ < 4) fail("truncated \\u escape");
  uint32_t x = 0;
  for (int k = 0; k < 4; ++k) {
    char c = s_[pos_++];
    int d = is_digit(c)              ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                     : -1;
    if (d < 0) fail("invalid \\u escape");
    x = x * 16 + static_cast<uint32_t>(d);
  }
  return x;
}

std::string JsonReader::string_value() {
  skip_ws();
  expect('"');
  std::string out;
  for (;;) {
    if (at_end()) fail("unterminated string");
    unsigned char c = static_cast<unsigned char>(current());
    if (c == '"') {
      ++pos_;
      return out;
    }
    if (c < 0x20) fail("control character in a string");
    if (c == '\\') {
      escape(out);
      continue;
    }
    size_t n = utf8_sequence(s_, pos_);
    if (n == 0) fail("invalid UTF-8 in a string");
    out.append(s_.substr(pos_, n));
    pos_ += n;
  }
}

void JsonReader::escape(std::string& out) {
  ++pos_;  // '\\'
  if (at_end()) fail("unterminated string");
  char e = s_[pos_++];
  switch (e) {
    case '"':
      out += '"';
      return;
    case '\\':
      out += '\\';
      return;
    case '/':
      out += '/';
      return;
    case 'b':
      out += '\b';
      return;
    case 'f':
      out += '\f';
      return;
    case 'n':
      out += '\n';
      return;
    case 'r':
      out += '\r';
      return;
    case 't':
      out += '\t';
      return;
    case 'u':
      break;
    default:
      --pos_;
      fail("invalid escape");
  }
  uint32_t cp = hex4();
  if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate in a \\u escape");
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    // A high surrogate must be followed by a low one (else not UTF-8).
    if (s_.substr(pos_, 2) != "\\u")
      fail("lone high surrogate in a \\u escape");
    pos_ += 2;
    uint32_t lo = hex4();
    if (lo < 0xDC00 || lo > 0xDFFF) fail("lone high surrogate in a \\u escape");
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
  }
  append_utf8(out, cp);
}

std::string_view JsonReader::number_value() {
  skip_ws();
  size_t start = pos_;
  if (!at_end() && current() == '-') ++pos_;
  if (at_end() || !is_digit(current())) fail("invalid number");
  if (current() == '0') {
    ++pos_;  // a leading zero stands alone: "01" is two tokens, an error
  } else {
    while (!at_end() && is_digit(current())) ++pos_;
  }
  if (!at_end() && current() == '.') {
    ++pos_;
    if (at_end() || !is_digit(current())) fail("invalid number");
    while (!at_end() && is_digit(current())) ++pos_;
  }
  if (!at_end() && (current() == 'e' || current() == 'E')) {
    ++pos_;
    if (!at_end() && (current() == '+' || current() == '-')) ++pos_;
    if (at_end() || !is_digit(current())) fail("invalid number");
    while (!at_end() && is_digit(current())) ++pos_;
  }
  return s_.substr(start, pos_ - start);
}

std::optional<uint64_t> json_uint(std::string_view number) {
  if (number.empty()) return std::nullopt;
  uint64_t x = 0;
  for (char c : number) {
    if (!is_digit(c)) return std::nullopt;  // sign, fraction or exponent
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (x > (UINT64_MAX - d) / 10) return std::nullopt;
    x = x * 10 + d;
  }
  return x;
}

std::string json_quote(std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  out += '"';
  return out;
}

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_sequence(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace nuvec::io::detail
