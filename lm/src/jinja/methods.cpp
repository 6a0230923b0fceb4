// Python methods of str, dict, list and tuple that templates call
// (`content.strip()`, `message.get('x')`).
#include <algorithm>
#include <ctime>

#include "jinja/interpreter.h"

namespace nuvec::lm::jinja {
namespace {

const char* const kStrMethods[] = {
    "strip",        "lstrip",       "rstrip",   "split",    "rsplit",
    "startswith",   "endswith",     "upper",    "lower",    "title",
    "capitalize",   "replace",      "find",     "rfind",    "index",
    "rindex",       "count",        "join",     "isdigit",  "isalpha",
    "isalnum",      "isspace",      "isupper",  "islower",  "splitlines",
    "center",       "ljust",        "rjust",    "zfill",    "format",
    "removeprefix", "removesuffix", "swapcase", "casefold", "partition",
    "rpartition"};
const char* const kDictMethods[] = {"get", "items", "keys", "values", "copy"};
const char* const kDictUnsafe[] = {"clear", "pop", "popitem", "setdefault",
                                   "update"};
const char* const kListMethods[] = {"count", "index", "copy"};
const char* const kListUnsafe[] = {"append", "clear",  "extend",  "insert",
                                   "pop",    "remove", "reverse", "sort"};

template <std::size_t N>
bool among(const char* const (&names)[N], const std::string& n) {
  for (const char* x : names)
    if (n == x) return true;
  return false;
}

const std::string& str_arg(const Args& a, std::size_t i, const char* name,
                           const char* method, int line) {
  const Value* v = a.get(i, name);
  if (!v || !v->is_string())
    fail(line, std::string(method) + "() argument must be str, not " +
                   (v ? type_name(*v) : std::string("nothing")));
  return v->s;
}

bool is_ws_char(const std::string& c) { return py_isspace(c); }

// strip/lstrip/rstrip over code points; `chars` null strips whitespace.
std::string strip(const std::string& s, const Value* chars, bool left,
                  bool right) {
  auto cs = utf8_chars(s);
  std::vector<std::string> set;
  bool ws = !chars || chars->is_none();
  if (!ws) set = utf8_chars(chars->s);
  auto drop = [&](const std::string& c) {
    return ws ? is_ws_char(c)
              : std::find(set.begin(), set.end(), c) != set.end();
  };
  std::size_t a = 0, b = cs.size();
  if (left)
    while (a < b && drop(cs[a])) ++a;
  if (right)
    while (b > a && drop(cs[b - 1])) --b;
  std::string out;
  for (std::size_t k = a; k < b; ++k) out += cs[k];
  return out;
}

Value split(const std::string& s, const Value* sep, std::int64_t maxsplit,
            bool from_right, int line) {
  List out;
  if (!sep || sep->is_none()) {
    auto cs = utf8_chars(s);
    std::vector<std::string> words;
    std::string w;
    std::vector<std::pair<std::size_t, std::size_t>> spans;  // [a, b) words
    for (std::size_t k = 0; k < cs.size();) {
      while (k < cs.size() && is_ws_char(cs[k])) ++k;
      if (k == cs.size()) break;
      std::size_t a = k;
      while (k < cs.size() && !is_ws_char(cs[k])) ++k;
      spans.emplace_back(a, k);
    }
    auto join = [&](std::size_t a, std::size_t b) {
      std::string t;
      for (std::size_t k = a; k < b; ++k) t += cs[k];
      return t;
    };
    std::size_t n = spans.size();
    if (maxsplit < 0 || static_cast<std::size_t>(maxsplit) + 1 >= n) {
      for (auto& [a, b] : spans) out.push_back(Value::string(join(a, b)));
    } else if (!from_right) {
      auto m = static_cast<std::size_t>(maxsplit);
      for (std::size_t k = 0; k < m; ++k)
        out.push_back(Value::string(join(spans[k].first, spans[k].second)));
      // the rest, from the next word to the end with trailing space removed
      out.push_back(Value::string(join(spans[m].first, spans[n - 1].second)));
    } else {
      auto m = static_cast<std::size_t>(maxsplit);
      out.push_back(
          Value::string(join(spans[0].first, spans[n - m - 1].second)));
      for (std::size_t k = n - m; k < n; ++k)
        out.push_back(Value::string(join(spans[k].first, spans[k].second)));
    }
    return Value::make_list(std::move(out));
  }
  if (!sep->is_string())
    fail(line, "must be str or None, not " + type_name(*sep));
  if (sep->s.empty()) fail(line, "empty separator");
  const std::string& d = sep->s;
  std::vector<std::string> parts;
  if (!from_right) {
    std::size_t p = 0;
    for (std::int64_t k = 0; maxsplit < 0 || k < maxsplit; ++k) {
      std::size_t q = s.find(d, p);
      if (q == std::string::npos) break;
      parts.push_back(s.substr(p, q - p));
      p = q + d.size();
    }
    parts.push_back(s.substr(p));
  } else {
    std::size_t e = s.size();
    for (std::int64_t k = 0; maxsplit < 0 || k < maxsplit; ++k) {
      if (e < d.size()) break;
      std::size_t q = s.rfind(d, e - d.size());
      if (q == std::string::npos) break;
      parts.insert(parts.begin(), s.substr(q + d.size(), e - q - d.size()));
      e = q;
    }
    parts.insert(parts.begin(), s.substr(0, e));
  }
  for (auto& p : parts) out.push_back(Value::string(std::move(p)));
  return Value::make_list(std::move(out));
}

bool starts_or_ends(const std::string& s, const Value& x, bool start,
                    int line) {
  if (x.is_sequence()) {
    for (const Value& v : *x.list)
      if (starts_or_ends(s, v, start, line)) return true;
    return false;
  }
  if (!x.is_string())
    fail(line, std::string(start ? "startswith" : "endswith") +
                   " first arg must be str or a tuple of str");
  if (x.s.size() > s.size()) return false;
  return start ? s.compare(0, x.s.size(), x.s) == 0
               : s.compare(s.size() - x.s.size(), x.s.size(), x.s) == 0;
}

bool cased(const std::string& c) {
  return py_upper(c) != c || py_lower(c) != c;
}

std::string py_title(const std::string& s) {
  std::string out;
  bool prev_cased = false;
  for (const auto& c : utf8_chars(s)) {
    bool cs = cased(c);
    out += cs ? (prev_cased ? py_lower(c) : py_upper(c)) : c;
    prev_cased = cs;
  }
  return out;
}

// A code-point index of a byte offset of `s`.
std::int64_t cp_index(const std::string& s, std::size_t byte) {
  return static_cast<std::int64_t>(
      utf8_length(std::string_view(s).substr(0, byte)));
}

std::string pad(const std::string& s, std::int64_t width, const Value* fill,
                int where) {  // where: -1 ljust, 0 center, 1 rjust
  std::string f = fill && fill->is_string() ? fill->s : " ";
  auto n = static_cast<std::int64_t>(utf8_length(s));
  if (width <= n) return s;
  std::int64_t total = width - n, left;
  if (where < 0) {
    left = 0;
  } else if (where > 0) {
    left = total;
  } else {  // Python puts the odd extra space on the left when n is odd
    left = total / 2 + (total & width & 1);
  }
  std::string out;
  for (std::int64_t k = 0; k < left; ++k) out += f;
  out += s;
  for (std::int64_t k = 0; k < total - left; ++k) out += f;
  return out;
}

// str.format with "{}", "{0}" and "{name}" fields (no format specs).
std::string format(const std::string& fmt, const Args& a, int line) {
  std::string out;
  std::size_t auto_index = 0;
  for (std::size_t k = 0; k < fmt.size(); ++k) {
    char c = fmt[k];
    if (c == '{' && k + 1 < fmt.size() && fmt[k + 1] == '{') {
      out += '{';
      ++k;
    } else if (c == '}' && k + 1 < fmt.size() && fmt[k + 1] == '}') {
      out += '}';
      ++k;
    } else if (c == '{') {
      std::size_t e = fmt.find('}', k);
      if (e == std::string::npos)
        fail(line, "Single '{' encountered in format string");
      std::string field = fmt.substr(k + 1, e - k - 1);
      if (field.find_first_of(":!.[") != std::string::npos)
        fail(line,
             "format specs and conversions in str.format are not supported");
      const Value* v = nullptr;
      if (field.empty()) {
        v = a.get(auto_index++, "");
        if (!v || auto_index > a.pos.size()) v = nullptr;
      } else if (std::all_of(field.begin(), field.end(), ::isdigit)) {
        std::size_t i = std::stoul(field);
        v = i < a.pos.size() ? &a.pos[i] : nullptr;
      } else {
        for (const auto& [kk, vv] : a.kw)
          if (kk == field) v = &vv;
      }
      if (!v)
        fail(line, "Replacement index or name '" + field + "' is missing");
      out += to_str(*v);
      k = e;
    } else if (c == '}') {
      fail(line, "Single '}' encountered in format string");
    } else {
      out += c;
    }
  }
  return out;
}

Value str_method(const std::string& s, const std::string& m, const Args& a,
                 int line) {
  auto S = [](std::string x) { return Value::string(std::move(x)); };
  auto B = [](bool x) { return Value::boolean(x); };
  auto I = [](std::int64_t x) { return Value::integer(x); };
  auto int_arg = [&](std::size_t i, const char* name, std::int64_t dflt) {
    const Value* v = a.get(i, name);
    if (!v || v->is_none()) return dflt;
    if (!v->is_integral()) fail(line, "an integer is required");
    return v->as_int();
  };
  if (m == "strip" || m == "lstrip" || m == "rstrip") {
    const Value* chars = a.get(0, "chars");
    if (chars && !chars->is_none() && !chars->is_string())
      fail(line, m + " arg must be None or str");
    return S(strip(s, chars, m != "rstrip", m != "lstrip"));
  }
  if (m == "split" || m == "rsplit")
    return split(s, a.get(0, "sep"), int_arg(1, "maxsplit", -1), m == "rsplit",
                 line);
  if (m == "startswith" || m == "endswith") {
    const Value* x = a.get(0, "prefix");
    if (!x) fail(line, m + "() takes at least 1 argument (0 given)");
    return B(starts_or_ends(s, *x, m == "startswith", line));
  }
  if (m == "upper") return S(py_upper(s));
  if (m == "lower" || m == "casefold") return S(py_lower(s));
  if (m == "title") return S(py_title(s));
  if (m == "capitalize") {
    auto cs = utf8_chars(s);
    std::string out = cs.empty() ? "" : py_upper(cs[0]);
    for (std::size_t k = 1; k < cs.size(); ++k) out += py_lower(cs[k]);
    return S(out);
  }
  if (m == "swapcase") {
    std::string out;
    for (const auto& c : utf8_chars(s))
      out += py_upper(c) != c ? py_upper(c) : py_lower(c);
    return S(out);
  }
  if (m == "replace") {
    const std::string& from = str_arg(a, 0, "old", "replace", line);
    const std::string& to = str_arg(a, 1, "new", "replace", line);
    std::int64_t count = int_arg(2, "count", -1);
    std::string out;
    if (from.empty()) {
      auto cs = utf8_chars(s);
      std::int64_t done = 0;
      for (std::size_t k = 0; k <= cs.size(); ++k) {
        if (count < 0 || done < count) out += to, ++done;
        if (k < cs.size()) out += cs[k];
        Interpreter::check_size(out.size(), line);
      }
      return S(out);
    }
    std::size_t p = 0;
    for (std::int64_t done = 0; count < 0 || done < count; ++done) {
      std::size_t q = s.find(from, p);
      if (q == std::string::npos) break;
      out.append(s, p, q - p);
      out += to;
      Interpreter::check_size(out.size(), line);
      p = q + from.size();
    }
    out.append(s, p, std::string::npos);
    return S(out);
  }
  if (m == "find" || m == "rfind" || m == "index" || m == "rindex") {
    const std::string& sub = str_arg(a, 0, "sub", m.c_str(), line);
    std::size_t q = m[0] == 'r' ? s.rfind(sub) : s.find(sub);
    if (q == std::string::npos) {
      if (m == "index" || m == "rindex") fail(line, "substring not found");
      return I(-1);
    }
    return I(cp_index(s, q));
  }
  if (m == "count") {
    const std::string& sub = str_arg(a, 0, "sub", "count", line);
    if (sub.empty()) return I(static_cast<std::int64_t>(utf8_length(s)) + 1);
    std::int64_t n = 0;
    for (std::size_t p = s.find(sub); p != std::string::npos;
         p = s.find(sub, p + sub.size()))
      ++n;
    return I(n);
  }
  if (m == "join") {
    const Value* seq = a.get(0, "iterable");
    if (!seq) fail(line, "join() takes exactly one argument (0 given)");
    std::string out;
    bool first = true;
    for (const Value& v : iterate(*seq, line)) {
      if (!v.is_string())
        fail(line, "sequence item: expected str instance, " + type_name(v) +
                       " found");
      if (!first) out += s;
      first = false;
      out += v.s;
      Interpreter::check_size(out.size(), line);
    }
    return S(out);
  }
  if (m == "isdigit" || m == "isalpha" || m == "isalnum" || m == "isspace" ||
      m == "isupper" || m == "islower") {
    if (s.empty()) return B(false);
    bool any_cased = false;
    for (const auto& c : utf8_chars(s)) {
      unsigned char b = static_cast<unsigned char>(c[0]);
      bool digit = c.size() == 1 && b >= '0' && b <= '9';
      bool alpha = cased(c);
      if (m == "isdigit" && !digit) return B(false);
      if (m == "isalpha" && !alpha) return B(false);
      if (m == "isalnum" && !alpha && !digit) return B(false);
      if (m == "isspace" && !py_isspace(c)) return B(false);
      if (m == "isupper" && alpha && py_upper(c) != c) return B(false);
      if (m == "islower" && alpha && py_lower(c) != c) return B(false);
      any_cased = any_cased || alpha;
    }
    return B((m != "isupper" && m != "islower") || any_cased);
  }
  if (m == "splitlines") {
    List out;
    std::string cur;
    for (std::size_t k = 0; k < s.size(); ++k) {
      if (s[k] == '\n' || s[k] == '\r') {
        out.push_back(S(cur));
        cur.clear();
        if (s[k] == '\r' && k + 1 < s.size() && s[k + 1] == '\n') ++k;
      } else {
        cur += s[k];
      }
    }
    if (!cur.empty()) out.push_back(S(cur));
    return Value::make_list(std::move(out));
  }
  if (m == "center" || m == "ljust" || m == "rjust") {
    return S(pad(s, int_arg(0, "width", 0), a.get(1, "fillchar"),
                 m == "ljust"   ? -1
                 : m == "rjust" ? 1
                                : 0));
  }
  if (m == "zfill") {
    std::int64_t w = int_arg(0, "width", 0);
    auto n = static_cast<std::int64_t>(utf8_length(s));
    if (w <= n) return S(s);
    std::size_t at = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
    std::string out = s;
    out.insert(at, static_cast<std::size_t>(w - n), '0');
    return S(out);
  }
  if (m == "format") return S(format(s, a, line));
  if (m == "removeprefix" || m == "removesuffix") {
    const std::string& x = str_arg(a, 0, "prefix", m.c_str(), line);
    if (m == "removeprefix")
      return S(s.compare(0, x.size(), x) == 0 ? s.substr(x.size()) : s);
    bool ends = x.size() <= s.size() &&
                s.compare(s.size() - x.size(), x.size(), x) == 0;
    return S(ends && !x.empty() ? s.substr(0, s.size() - x.size()) : s);
  }
  if (m == "partition" || m == "rpartition") {
    const std::string& x = str_arg(a, 0, "sep", m.c_str(), line);
    if (x.empty()) fail(line, "empty separator");
    std::size_t q = m == "partition" ? s.find(x) : s.rfind(x);
    if (q == std::string::npos)
      return m == "partition" ? Value::make_list({S(s), S(""), S("")}, true)
                              : Value::make_list({S(""), S(""), S(s)}, true);
    return Value::make_list(
        {S(s.substr(0, q)), S(x), S(s.substr(q + x.size()))}, true);
  }
  fail(line, "'str' object has no attribute '" + m + "'");
}

}  // namespace

Value Interpreter::method_value(const Value& obj, const std::string& name,
                                int) {
  bool safe = false, unsafe = false;
  switch (obj.type) {
    case Type::string:
      safe = among(kStrMethods, name);
      break;
    case Type::dict:
      safe = among(kDictMethods, name);
      unsafe = among(kDictUnsafe, name);
      break;
    case Type::list:
      safe = among(kListMethods, name);
      unsafe = among(kListUnsafe, name);
      break;
    case Type::tuple:
      safe = name == "count" || name == "index";
      break;
    default:
      break;
  }
  if (unsafe)
    return Value::undefined("access to attribute '" + name + "' of '" +
                            type_name(obj) + "' object is unsafe.");
  if (!safe) return Value::undefined("");
  Value self = obj;
  return Value::callable(
      name, [self, name](Interpreter& in, const Args& a, int line) {
        return in.method(self, name, a, line);
      });
}

Value Interpreter::method(const Value& obj, const std::string& m, const Args& a,
                          int line) {
  if (obj.is_string()) return str_method(obj.s, m, a, line);
  if (obj.type == Type::dict) {
    if (m == "get") {
      const Value* k = a.get(0, "key");
      if (!k) fail(line, "get expected at least 1 argument, got 0");
      if (const Value* v = obj.dict->find(*k)) return *v;
      const Value* d = a.get(1, "default");
      return d ? *d : Value::none();
    }
    if (m == "copy") return Value::make_dict(*obj.dict);
    List out;
    for (const auto& [k, v] : obj.dict->items) {
      if (m == "keys") {
        out.push_back(k);
      } else if (m == "values") {
        out.push_back(v);
      } else {
        out.push_back(Value::make_list({k, v}, true));
      }
    }
    return Value::make_list(std::move(out));
  }
  // list and tuple: count, index, copy
  const Value* x = a.get(0, "value");
  if (m == "copy") return Value::make_list(*obj.list);
  if (!x) fail(line, m + "() takes exactly one argument (0 given)");
  std::int64_t n = 0;
  for (std::size_t k = 0; k < obj.list->size(); ++k) {
    if (equal((*obj.list)[k], *x)) {
      if (m == "index") return Value::integer(static_cast<std::int64_t>(k));
      ++n;
    }
  }
  if (m == "index") fail(line, repr(*x) + " is not in list");
  return Value::integer(n);
}

}  // namespace nuvec::lm::jinja
