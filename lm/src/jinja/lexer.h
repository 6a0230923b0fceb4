// The template lexer: text, tags and the tokens inside them, with jinja2's
// whitespace control as transformers configures it (trim_blocks and
// lstrip_blocks on, keep_trailing_newline off).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nuvec::lm::jinja {

enum class Tok {
  data,         // template text (raw blocks included)
  var_begin,    // {{
  var_end,      // }}
  block_begin,  // {%
  block_end,    // %}
  name,
  string,
  integer,
  floating,
  op,  // an operator or punctuation, text in `text`
  eof,
};

struct Token {
  Tok type;
  std::string text;  // data, name, decoded string, operator
  std::int64_t i = 0;
  double f = 0;
  int line = 1;
};

/// Splits `source` into tokens; throws nuvec::Error for an unterminated
/// tag, comment or string and for characters no token starts with.
std::vector<Token> lex(const std::string& source);

}  // namespace nuvec::lm::jinja
