// The strict JSON parser of json.h: recursive descent whose depth is bounded
// by max_depth, so a hostile header cannot overflow the stack.
#include "io/json.h"

#include <algorithm>

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

class Parser {
 public:
  Parser(std::string_view s, int max_depth) : s_(s), max_depth_(max_depth) {}

  JsonValue document() {
    skip_ws();
    JsonValue v = value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected data after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw JsonError(what, pos_);
  }

  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return s_[pos_]; }

  void skip_ws() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' ||
                         peek() == '\r'))
      ++pos_;
  }

  void expect(char c) {
    if (at_end() || peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  void literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) fail("invalid literal");
    pos_ += word.size();
  }

  JsonValue value(int depth) {
    if (at_end()) fail("unexpected end of JSON");
    JsonValue v;
    char c = peek();
    if (c == '{' || c == '[') {
      if (depth >= max_depth_)
        fail("nesting deeper than " + std::to_string(max_depth_) + " levels");
      if (c == '{')
        object(v, depth + 1);
      else
        array(v, depth + 1);
    } else if (c == '"') {
      v.type = JsonValue::Type::string;
      v.text = string();
    } else if (c == 't' || c == 'f') {
      v.type = JsonValue::Type::boolean;
      v.boolean = c == 't';
      literal(c == 't' ? "true" : "false");
    } else if (c == 'n') {
      literal("null");
    } else if (c == '-' || is_digit(c)) {
      v.type = JsonValue::Type::number;
      v.text = number();
    } else {
      fail("unexpected character");
    }
    return v;
  }

  void object(JsonValue& v, int depth) {
    v.type = JsonValue::Type::object;
    ++pos_;  // '{'
    skip_ws();
    if (!at_end() && peek() == '}') {
      ++pos_;
      return;
    }
    std::vector<size_t> key_pos;
    for (;;) {
      skip_ws();
      if (at_end() || peek() != '"') fail("expected a string key");
      key_pos.push_back(pos_);
      std::string key = string();
      skip_ws();
      expect(':');
      skip_ws();
      JsonValue child = value(depth);
      v.members.push_back({std::move(key), std::move(child)});
      skip_ws();
      if (!at_end() && peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      check_unique(v, key_pos);
      return;
    }
  }

  // Sorting keeps this O(n log n): a header may hold many thousand tensors.
  static void check_unique(const JsonValue& v, const std::vector<size_t>& pos) {
    std::vector<size_t> order(v.members.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto key = [&](size_t i) -> const std::string& { return v.members[i].key; };
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return key(a) != key(b) ? key(a) < key(b) : a < b;
    });
    for (size_t i = 1; i < order.size(); ++i)
      if (key(order[i]) == key(order[i - 1]))
        throw JsonError("duplicate key " + json_quote(key(order[i])),
                        pos[order[i]]);
  }

  void array(JsonValue& v, int depth) {
    v.type = JsonValue::Type::array;
    ++pos_;  // '['
    skip_ws();
    if (!at_end() && peek() == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      skip_ws();
      v.items.push_back(value(depth));
      skip_ws();
      if (!at_end() && peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return;
    }
  }

  uint32_t hex4() {
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

  std::string string() {
    ++pos_;  // '"'
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(peek());
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

  void escape(std::string& out) {
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
    if (cp >= 0xDC00 && cp <= 0xDFFF)
      fail("lone low surrogate in a \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      // A high surrogate must be followed by a low one (else not UTF-8).
      if (s_.substr(pos_, 2) != "\\u")
        fail("lone high surrogate in a \\u escape");
      pos_ += 2;
      uint32_t lo = hex4();
      if (lo < 0xDC00 || lo > 0xDFFF)
        fail("lone high surrogate in a \\u escape");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    append_utf8(out, cp);
  }

  std::string number() {
    size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (at_end() || !is_digit(peek())) fail("invalid number");
    if (peek() == '0') {
      ++pos_;
    } else {
      while (!at_end() && is_digit(peek())) ++pos_;
    }
    if (!at_end() && peek() == '.') {
      ++pos_;
      if (at_end() || !is_digit(peek())) fail("invalid number");
      while (!at_end() && is_digit(peek())) ++pos_;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      ++pos_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
      if (at_end() || !is_digit(peek())) fail("invalid number");
      while (!at_end() && is_digit(peek())) ++pos_;
    }
    return std::string(s_.substr(start, pos_ - start));
  }

  std::string_view s_;
  int max_depth_;
  size_t pos_ = 0;
};

}  // namespace

JsonValue parse_json(std::string_view text, int max_depth) {
  return Parser(text, max_depth).document();
}

std::optional<uint64_t> json_uint(const JsonValue& v) {
  if (v.type != JsonValue::Type::number || v.text.empty()) return std::nullopt;
  uint64_t x = 0;
  for (char c : v.text) {
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
