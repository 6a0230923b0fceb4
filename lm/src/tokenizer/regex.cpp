// PCRE2 wrapper (internal).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex.h"

#include <pcre2.h>

#include "tokenizer/tokenizer_impl.h"

namespace nuvec::lm::tok {

struct Regex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

Regex::Regex(const std::string& pattern) {
  int err = 0;
  PCRE2_SIZE at = 0;
  auto c = std::make_shared<Code>();
  c->code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()),
                    pattern.size(), PCRE2_UTF | PCRE2_UCP, &err, &at, nullptr);
  if (!c->code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof(msg));
    fail("regex \"" + pattern + "\" does not compile at offset " +
         std::to_string(at) + ": " + reinterpret_cast<const char*>(msg));
  }
  pcre2_jit_compile(c->code,
                    PCRE2_JIT_COMPLETE);  // falls back to the interpreter
  code_ = std::move(c);
}

std::vector<std::pair<size_t, size_t>> Regex::find_all(
    std::string_view s) const {
  std::vector<std::pair<size_t, size_t>> out;
  std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> md(
      pcre2_match_data_create_from_pattern(code_->code, nullptr),
      pcre2_match_data_free);
  if (!md) fail("out of memory for regex match data", ErrorKind::out_of_memory);
  // A pattern from a file may backtrack without end: bound the work.
  std::unique_ptr<pcre2_match_context, void (*)(pcre2_match_context*)> mc(
      pcre2_match_context_create(nullptr), pcre2_match_context_free);
  if (!mc)
    fail("out of memory for a regex match context", ErrorKind::out_of_memory);
  pcre2_set_match_limit(mc.get(), 10000000);
  auto subject = reinterpret_cast<PCRE2_SPTR>(s.data());
  size_t pos = 0;
  while (pos <= s.size()) {
    int rc = pcre2_match(code_->code, subject, s.size(), pos,
                         PCRE2_NO_UTF_CHECK, md.get(), mc.get());
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT)
      fail("regex match gave up: the pattern backtracks too much on this text");
    if (rc < 0)
      fail("regex match failed (PCRE2 error " + std::to_string(rc) + ")");
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
    size_t b = ov[0], e = ov[1];
    if (e == b) {
      // An empty match: step over one character, as Rust's find_iter.
      if (b >= s.size()) break;
      size_t n = 1;
      while (b + n < s.size() &&
             (static_cast<unsigned char>(s[b + n]) & 0xC0) == 0x80)
        ++n;
      pos = b + n;
      continue;
    }
    out.emplace_back(b, e);
    pos = e;
  }
  return out;
}

std::string regex_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\^$.|?*+()[]{}/-#").find(c) !=
        std::string_view::npos)
      out += '\\';
    out += c;
  }
  return out;
}

}  // namespace nuvec::lm::tok
