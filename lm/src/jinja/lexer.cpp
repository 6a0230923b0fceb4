// Lexing as jinja2's lexer does it: the earliest "{{", "{%" or "{#" starts
// a tag; "-" strips the whitespace beside a tag, "+" keeps it; lstrip_blocks
// removes the indentation before a block or comment tag that starts its
// line, trim_blocks the newline after one.
#include "jinja/lexer.h"
#include "tokenizer/text.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "jinja/value.h"

namespace nuvec::lm::jinja {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

void append_utf8(std::string& out, std::uint32_t cp, int line) {
  if (cp > 0x10ffff) fail(line, "invalid unicode escape in string literal");
  tok::append_utf8(out, static_cast<char32_t>(cp));
}

// Python's "unicode-escape" decoding of a literal's body.
std::string unescape(const std::string& s, int line) {
  std::string out;
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (s[k] != '\\' || k + 1 == s.size()) {
      out += s[k];
      continue;
    }
    char c = s[++k];
    auto hex = [&](int n) {
      std::uint32_t v = 0;
      for (int j = 0; j < n; ++j) {
        if (k + 1 >= s.size()) fail(line, "truncated escape in string");
        char h = s[++k];
        int d = is_digit(h)              ? h - '0'
                : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                         : -1;
        if (d < 0) fail(line, "truncated escape in string");
        v = v * 16 + static_cast<std::uint32_t>(d);
      }
      return v;
    };
    switch (c) {
      case '\n':
        break;
      case '\\':
      case '\'':
      case '"':
        out += c;
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case 'x':
        append_utf8(out, hex(2), line);
        break;
      case 'u':
        append_utf8(out, hex(4), line);
        break;
      case 'U':
        append_utf8(out, hex(8), line);
        break;
      default:
        if (c >= '0' && c <= '7') {
          std::uint32_t v = static_cast<std::uint32_t>(c - '0');
          for (int j = 0;
               j < 2 && k + 1 < s.size() && s[k + 1] >= '0' && s[k + 1] <= '7';
               ++j)
            v = v * 8 + static_cast<std::uint32_t>(s[++k] - '0');
          append_utf8(out, v, line);
        } else {
          out += '\\';
          out += c;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string src) : src_(std::move(src)) {}

  std::vector<Token> run() {
    bool line_starting = true;
    while (pos_ < src_.size()) {
      std::size_t start = find_tag(pos_);
      if (start == std::string::npos) {
        emit_data(src_.substr(pos_));
        break;
      }
      std::string text = src_.substr(pos_, start - pos_);
      char kind = src_[start + 1];
      char sign = start + 2 < src_.size() &&
                          (src_[start + 2] == '-' || src_[start + 2] == '+')
                      ? src_[start + 2]
                      : 0;
      std::size_t raw_end = kind == '%' ? match_raw_begin(start) : 0;
      strip_text(text, sign, kind != '{', line_starting);
      emit_data(text);
      line_ += count_newlines(pos_, start);
      pos_ = start + 2 + (sign ? 1 : 0);
      if (raw_end) {
        pos_ = raw_end;
        line_starting = lex_raw();
      } else if (kind == '#') {
        line_starting = lex_comment();
      } else {
        line_starting = lex_tag(kind == '%');
      }
    }
    tokens_.push_back({Tok::eof, "", 0, 0, line_});
    return std::move(tokens_);
  }

 private:
  std::size_t find_tag(std::size_t from) const {
    for (std::size_t k = src_.find('{', from); k != std::string::npos;
         k = src_.find('{', k + 1)) {
      if (k + 1 < src_.size() &&
          (src_[k + 1] == '{' || src_[k + 1] == '%' || src_[k + 1] == '#'))
        return k;
    }
    return std::string::npos;
  }
  int count_newlines(std::size_t a, std::size_t b) const {
    int n = 0;
    for (std::size_t k = a; k < b && k < src_.size(); ++k) n += src_[k] == '\n';
    return n;
  }
  void emit_data(const std::string& text) {
    if (!text.empty()) tokens_.push_back({Tok::data, text, 0, 0, line_});
  }
  // jinja2's OptionalLStrip: "-" strips all whitespace before the tag;
  // lstrip_blocks strips the spaces that start the tag's line.
  static void strip_text(std::string& text, char sign, bool lstrip_ok,
                         bool line_starting) {
    if (sign == '-') {
      std::size_t e = text.size();
      while (e > 0 && is_space(text[e - 1])) --e;
      text.resize(e);
    } else if (sign != '+' && lstrip_ok) {
      std::size_t nl = text.rfind('\n');
      std::size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
      if (l_pos > 0 || line_starting) {
        bool all_ws = l_pos < text.size();
        for (std::size_t k = l_pos; k < text.size(); ++k)
          if (!is_space(text[k])) all_ws = false;
        if (all_ws) text.resize(l_pos);
      }
    }
  }
  // Matches "{%[-+]? raw [-]%}" at `start`; returns the end or 0.
  std::size_t match_raw_begin(std::size_t start) const {
    std::size_t k = start + 2;
    if (k < src_.size() && (src_[k] == '-' || src_[k] == '+')) ++k;
    while (k < src_.size() && is_space(src_[k])) ++k;
    if (src_.compare(k, 3, "raw") != 0) return 0;
    k += 3;
    while (k < src_.size() && is_space(src_[k])) ++k;
    if (src_.compare(k, 3, "-%}") == 0) {
      k += 3;
      while (k < src_.size() && is_space(src_[k])) ++k;
      return k;
    }
    if (src_.compare(k, 2, "%}") == 0) return k + 2;
    return 0;
  }
  // Consumes a tag end at pos_ ("+%}", "-%}" and whitespace, "%}" and one
  // newline); returns whether the consumed text ends with a newline.
  bool consume_end(std::size_t k, std::size_t close_len, char sign) {
    std::size_t e = k + close_len;
    if (sign == '-') {
      while (e < src_.size() && is_space(src_[e])) ++e;
    } else if (sign == 0 && e < src_.size() && src_[e] == '\n') {
      ++e;
    }
    line_ += count_newlines(pos_, e);
    pos_ = e;
    return src_[e - 1] == '\n';
  }
  bool lex_raw() {
    for (std::size_t k = src_.find("{%", pos_); k != std::string::npos;
         k = src_.find("{%", k + 1)) {
      std::size_t j = k + 2;
      char sign = 0;
      if (j < src_.size() && (src_[j] == '-' || src_[j] == '+'))
        sign = src_[j++];
      while (j < src_.size() && is_space(src_[j])) ++j;
      if (src_.compare(j, 6, "endraw") != 0) continue;
      j += 6;
      while (j < src_.size() && is_space(src_[j])) ++j;
      char esign = 0;
      if (j < src_.size() && (src_[j] == '-' || src_[j] == '+'))
        esign = src_[j++];
      if (src_.compare(j, 2, "%}") != 0) continue;
      std::string text = src_.substr(pos_, k - pos_);
      strip_text(text, sign, true, false);
      emit_data(text);
      line_ += count_newlines(pos_, k);
      pos_ = k;
      return consume_end(j - (esign ? 1 : 0), esign ? 3 : 2, esign);
    }
    fail(line_, "Missing end of raw directive");
  }
  bool lex_comment() {
    for (std::size_t k = pos_; k + 1 < src_.size(); ++k) {
      if ((src_[k] == '-' || src_[k] == '+') &&
          src_.compare(k + 1, 2, "#}") == 0)
        return consume_end(k, 3, src_[k]);
      if (src_.compare(k, 2, "#}") == 0) return consume_end(k, 2, 0);
    }
    fail(line_, "Missing end of comment tag");
  }
  void push(Tok t, std::string text) {
    tokens_.push_back({t, std::move(text), 0, 0, line_});
  }
  bool lex_tag(bool block) {
    push(block ? Tok::block_begin : Tok::var_begin, "");
    std::string stack;  // closing brackets expected
    const char* close = block ? "%}" : "}}";
    while (true) {
      while (pos_ < src_.size() && is_space(src_[pos_])) {
        line_ += src_[pos_] == '\n';
        ++pos_;
      }
      if (pos_ >= src_.size()) fail(line_, "unexpected end of template");
      if (stack.empty()) {
        std::size_t k = pos_;
        if ((src_[k] == '-' || (block && src_[k] == '+')) &&
            src_.compare(k + 1, 2, close) == 0) {
          push(block ? Tok::block_end : Tok::var_end, "");
          return consume_end(k, 3, block ? src_[k] : '-');
        }
        if (src_.compare(k, 2, close) == 0) {
          push(block ? Tok::block_end : Tok::var_end, "");
          return consume_end(k, 2, block ? 0 : '+');
        }
      }
      lex_token(stack);
    }
  }
  void lex_token(std::string& stack) {
    char c = src_[pos_];
    if (is_name_start(c)) {
      std::size_t e = pos_;
      while (e < src_.size() && is_name_char(src_[e])) ++e;
      push(Tok::name, src_.substr(pos_, e - pos_));
      pos_ = e;
    } else if (is_digit(c)) {
      lex_number();
    } else if (c == '\'' || c == '"') {
      std::size_t e = pos_ + 1;
      while (e < src_.size() && src_[e] != c) e += src_[e] == '\\' ? 2 : 1;
      if (e >= src_.size())
        fail(line_, "unexpected char '" + std::string(1, c) + "'");
      push(Tok::string, unescape(src_.substr(pos_ + 1, e - pos_ - 1), line_));
      line_ += count_newlines(pos_, e);
      pos_ = e + 1;
    } else {
      static const char* two[] = {"//", "**", "==", "!=", ">=", "<="};
      for (const char* op : two)
        if (src_.compare(pos_, 2, op) == 0) {
          push(Tok::op, op);
          pos_ += 2;
          return;
        }
      if (!std::strchr("+-/*%~<>=()[]{},.:|;", c) || c == 0)
        fail(line_, "unexpected char '" + std::string(1, c) + "'");
      if (c == '(' || c == '[' || c == '{') {
        stack += c == '(' ? ')' : (c == '[' ? ']' : '}');
      } else if (c == ')' || c == ']' || c == '}') {
        if (stack.empty() || stack.back() != c)
          fail(line_, "unexpected '" + std::string(1, c) + "'");
        stack.pop_back();
      }
      push(Tok::op, std::string(1, c));
      ++pos_;
    }
  }
  void lex_number() {
    auto digits = [&](std::size_t k) {  // digits with single underscores
      std::size_t e = k;
      while (e < src_.size() &&
             (is_digit(src_[e]) || (src_[e] == '_' && e + 1 < src_.size() &&
                                    is_digit(src_[e + 1]) && e > k)))
        ++e;
      return e;
    };
    std::size_t e = digits(pos_);
    bool is_float = false;
    if (e + 1 < src_.size() && src_[e] == '.' && is_digit(src_[e + 1])) {
      e = digits(e + 1);
      is_float = true;
    }
    if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
      std::size_t k = e + 1;
      if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
      if (k < src_.size() && is_digit(src_[k])) {
        e = digits(k);
        is_float = true;
      }
    }
    std::string text;
    for (std::size_t k = pos_; k < e; ++k)
      if (src_[k] != '_') text += src_[k];
    Token t{is_float ? Tok::floating : Tok::integer, text, 0, 0, line_};
    if (is_float) {
      t.f = std::strtod(text.c_str(), nullptr);
    } else {
      errno = 0;
      long long v = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == ERANGE) fail(line_, "integer literal out of range");
      t.i = v;
    }
    tokens_.push_back(std::move(t));
    pos_ = e;
  }

  std::string src_;
  std::size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> lex(const std::string& source) {
  std::string src;
  src.reserve(source.size());
  for (std::size_t k = 0; k < source.size(); ++k) {
    if (source[k] == '\r') {
      src += '\n';
      if (k + 1 < source.size() && source[k + 1] == '\n') ++k;
    } else {
      src += source[k];
    }
  }
  if (!src.empty() && src.back() == '\n') src.pop_back();
  return Lexer(std::move(src)).run();
}

}  // namespace nuvec::lm::jinja
