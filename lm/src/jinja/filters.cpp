// jinja2's built-in filters and tests that chat templates use, with
// transformers' tojson. Filters that return generators in jinja2 (map,
// select, items, reverse, unique) return lists here: they print differently
// only when printed unconsumed, which prints an object address in Python.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "jinja/interpreter.h"

namespace nuvec::lm::jinja {
namespace {

bool arg_bool(const Args& a, std::size_t i, const char* name, bool dflt) {
  const Value* v = a.get(i, name);
  return v ? truthy(*v) : dflt;
}

std::int64_t arg_int(const Args& a, std::size_t i, const char* name,
                     std::int64_t dflt, int line) {
  const Value* v = a.get(i, name);
  if (!v || v->is_none()) return dflt;
  if (!v->is_integral()) fail(line, std::string(name) + " must be an integer");
  return v->as_int();
}

// soft_str: str() of anything, undefined as "".
std::string soft(const Value& v) { return to_str(v); }

// jinja2's make_attrgetter: "a.b.0" looks up a, then b, then item 0.
Value attr_path(Interpreter& in, Value v, const Value& attribute, int line) {
  if (!attribute.is_string()) return in.getitem(v, attribute, line);
  std::size_t p = 0;
  const std::string& s = attribute.s;
  while (true) {
    std::size_t q = s.find('.', p);
    std::string part = s.substr(p, q == std::string::npos ? q : q - p);
    Value key = Value::string(part);
    if (!part.empty() && std::all_of(part.begin(), part.end(), ::isdigit))
      key = Value::integer(std::stoll(part));
    v = in.getitem(v, key, line);
    if (q == std::string::npos) return v;
    p = q + 1;
  }
}

Value lower_if_string(const Value& v) {
  return v.is_string() ? Value::string(py_lower(v.s)) : v;
}

Value sorted(Interpreter& in, List items, bool reverse, bool case_sensitive,
             const Value* attribute, int line) {
  std::vector<std::string> attrs;
  if (attribute && attribute->is_string()) {
    std::size_t p = 0;
    while (true) {
      std::size_t q = attribute->s.find(',', p);
      attrs.push_back(
          attribute->s.substr(p, q == std::string::npos ? q : q - p));
      if (q == std::string::npos) break;
      p = q + 1;
    }
  }
  auto key = [&](const Value& v) {
    List ks;
    if (attrs.empty()) {
      ks.push_back(attribute && !attribute->is_none()
                       ? attr_path(in, v, *attribute, line)
                       : v);
    } else {
      for (const auto& a : attrs)
        ks.push_back(attr_path(in, v, Value::string(a), line));
    }
    if (!case_sensitive)
      for (auto& k : ks) k = lower_if_string(k);
    return ks.size() == 1 ? ks[0] : Value::make_list(std::move(ks));
  };
  std::vector<std::pair<Value, Value>> keyed;
  for (auto& v : items) keyed.emplace_back(key(v), v);
  std::stable_sort(keyed.begin(), keyed.end(), [&](auto& a, auto& b) {
    return reverse ? compare(b.first, a.first, line) < 0
                   : compare(a.first, b.first, line) < 0;
  });
  List out;
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return Value::make_list(std::move(out));
}

// select/reject/selectattr/rejectattr.
Value select(Interpreter& in, const Value& seq, const Args& a, bool by_attr,
             bool keep, int line) {
  std::size_t first = by_attr ? 1 : 0;
  if (by_attr && a.pos.empty())
    fail(line, "Missing parameter for attribute name");
  Args targs;
  std::string test;
  if (a.pos.size() > first) {
    if (!a.pos[first].is_string()) fail(line, "a test name must be a string");
    test = a.pos[first].s;
    targs.pos.assign(a.pos.begin() + static_cast<long>(first) + 1, a.pos.end());
    targs.kw = a.kw;
  }
  List out;
  for (const Value& item : iterate(seq, line)) {
    Value x = by_attr ? attr_path(in, item, a.pos[0], line) : item;
    bool r = test.empty() ? truthy(x) : in.test(test, x, targs, line);
    if (r == keep) out.push_back(item);
  }
  return Value::make_list(std::move(out));
}

std::string indent(const std::string& text, const Value* width, bool first,
                   bool blank) {
  std::string ind =
      width && width->is_string()
          ? width->s
          : std::string(width && width->is_integral()
                            ? static_cast<std::size_t>(
                                  std::max<std::int64_t>(0, width->as_int()))
                            : 4,
                        ' ');
  std::string s = text + "\n";
  std::vector<std::string> lines;  // str.splitlines on \n, \r\n, \r
  std::string cur;
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (s[k] == '\n' || s[k] == '\r') {
      lines.push_back(cur);
      cur.clear();
      if (s[k] == '\r' && k + 1 < s.size() && s[k + 1] == '\n') ++k;
    } else {
      cur += s[k];
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  std::string rv;
  if (blank) {
    for (std::size_t k = 0; k < lines.size(); ++k)
      rv += (k ? "\n" + ind : "") + lines[k];
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (std::size_t k = 1; k < lines.size(); ++k)
      rv += "\n" + (lines[k].empty() ? "" : ind + lines[k]);
  }
  return first ? ind + rv : rv;
}

// Python's round(x, n) for a float: correctly rounded, ties to even.
double py_round(double x, std::int64_t n) {
  if (!std::isfinite(x) || n > 300) return x;
  if (n < -300) return 0.0 * x;
  if (n >= 0) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(n), x);
    return std::strtod(buf, nullptr);
  }
  double p = std::pow(10.0, static_cast<double>(-n));
  return std::nearbyint(x / p) * p;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

Value parse_int(const std::string& s0, std::int64_t base, bool* ok) {
  std::string s;
  for (char c : s0)
    if (c != '_') s += c;
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  std::string t = s.substr(a, b - a);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(t.c_str(), &end, static_cast<int>(base));
  *ok = !t.empty() && end && *end == 0 && errno == 0;
  return Value::integer(v);
}

}  // namespace

Value Interpreter::filter(const std::string& name, const Value& in,
                          const Args& a, int line) {
  auto S = [](std::string s) { return Value::string(std::move(s)); };
  const std::string& n = name;
  if (n == "tojson") {
    const Value* ind = a.get(1, "indent");
    const Value* seps = a.get(2, "separators");
    int indent = -1;
    if (ind && !ind->is_none()) {
      if (!ind->is_integral()) fail(line, "tojson: indent must be an integer");
      indent = static_cast<int>(std::clamp<std::int64_t>(ind->as_int(), 0, 64));
    }
    std::string item_sep, key_sep;
    if (seps && !seps->is_none()) {
      List p = iterate(*seps, line);
      if (p.size() != 2 || !p[0].is_string() || !p[1].is_string())
        fail(line, "tojson: separators must be two strings");
      item_sep = p[0].s, key_sep = p[1].s;
    }
    std::string out = to_json(in, indent, item_sep, key_sep,
                              arg_bool(a, 3, "sort_keys", false), line);
    check_size(out.size(), line);
    return S(std::move(out));
  }
  if (n == "default" || n == "d") {
    const Value* d = a.get(0, "default_value");
    bool boolean = arg_bool(a, 1, "boolean", false);
    if (in.is_undefined() || (boolean && !truthy(in))) return d ? *d : S("");
    return in;
  }
  if (n == "safe" || n == "string") return in.is_string() ? in : S(soft(in));
  if (n == "e" || n == "escape" || n == "forceescape")
    return S(html_escape(soft(in)));
  if (n == "trim") {
    const Value* chars = a.get(0, "chars");
    return method(S(soft(in)), "strip", chars ? Args{{*chars}, {}} : Args{},
                  line);
  }
  if (n == "upper") return S(py_upper(soft(in)));
  if (n == "lower") return S(py_lower(soft(in)));
  if (n == "capitalize") return method(S(soft(in)), "capitalize", {}, line);
  if (n == "title") {
    // jinja2 starts a word after "-", whitespace or an opening bracket.
    std::string s = soft(in), out;
    bool start = true;
    for (const auto& c : utf8_chars(s)) {
      bool sep = c == "-" || c == "(" || c == "{" || c == "[" || c == "<" ||
                 py_isspace(c);
      out += sep ? c : (start ? py_upper(c) : py_lower(c));
      start = sep;
    }
    return S(out);
  }
  if (n == "replace") {
    Args r;
    r.pos = {S(a.pos.size() > 0 ? soft(a.pos[0]) : ""),
             S(a.pos.size() > 1 ? soft(a.pos[1]) : "")};
    if (const Value* c = a.get(2, "count")) r.pos.push_back(*c);
    if (a.pos.size() < 2) fail(line, "replace needs old and new");
    return method(S(soft(in)), "replace", r, line);
  }
  if (n == "length" || n == "count") {
    switch (in.type) {
      case Type::undefined:
        return Value::integer(0);
      case Type::string:
        return Value::integer(static_cast<std::int64_t>(utf8_length(in.s)));
      case Type::list:
      case Type::tuple:
        return Value::integer(static_cast<std::int64_t>(in.list->size()));
      case Type::dict:
        return Value::integer(static_cast<std::int64_t>(in.dict->items.size()));
      default:
        fail(line, "object of type '" + type_name(in) + "' has no len()");
    }
  }
  if (n == "list") return Value::make_list(iterate(in, line));
  if (n == "first" || n == "last") {
    List items = iterate(in, line);
    if (items.empty())
      return Value::undefined(std::string("No ") + n +
                              " item, sequence was empty.");
    return n == "first" ? items.front() : items.back();
  }
  if (n == "reverse") {
    if (in.is_string())
      return slice(in, Value::none(), Value::none(), Value::integer(-1), line);
    List items = iterate(in, line);
    std::reverse(items.begin(), items.end());
    return Value::make_list(std::move(items));
  }
  if (n == "join") {
    const Value* d = a.get(0, "d");
    const Value* attr = a.get(1, "attribute");
    std::string sep = d ? soft(*d) : "", out;
    bool first = true;
    for (const Value& v : iterate(in, line)) {
      if (!first) out += sep;
      first = false;
      out +=
          soft(attr && !attr->is_none() ? attr_path(*this, v, *attr, line) : v);
      check_size(out.size(), line);
    }
    return S(out);
  }
  if (n == "items") {
    if (in.is_undefined()) return Value::make_list();
    if (in.type != Type::dict)
      fail(line, "Can only get item pairs from a mapping.");
    return method(in, "items", {}, line);
  }
  if (n == "dictsort") {
    if (in.type != Type::dict)
      fail(line, "You can only sort by either \"key\" or \"value\"");
    const Value* by = a.get(1, "by");
    int pos = by && by->is_string() && by->s == "value" ? 1 : 0;
    List items = iterate(method(in, "items", {}, line), line);
    bool cs = arg_bool(a, 0, "case_sensitive", false);
    Value key = Value::integer(pos);
    return sorted(*this, std::move(items), arg_bool(a, 2, "reverse", false), cs,
                  &key, line);
  }
  if (n == "sort")
    return sorted(*this, iterate(in, line), arg_bool(a, 0, "reverse", false),
                  arg_bool(a, 1, "case_sensitive", false),
                  a.get(2, "attribute"), line);
  if (n == "unique") {
    bool cs = arg_bool(a, 0, "case_sensitive", false);
    const Value* attr = a.get(1, "attribute");
    List out, seen;
    for (const Value& v : iterate(in, line)) {
      Value k = attr && !attr->is_none() ? attr_path(*this, v, *attr, line) : v;
      if (!cs) k = lower_if_string(k);
      bool dup = false;
      for (const Value& s : seen) dup = dup || equal(s, k);
      if (!dup) seen.push_back(k), out.push_back(v);
    }
    return Value::make_list(std::move(out));
  }
  if (n == "min" || n == "max") {
    bool cs = arg_bool(a, 0, "case_sensitive", false);
    const Value* attr = a.get(1, "attribute");
    List items = iterate(in, line);
    if (items.empty())
      return Value::undefined("No aggregated item, sequence was empty.");
    Value best = items[0];
    auto key = [&](const Value& v) {
      Value k = attr && !attr->is_none() ? attr_path(*this, v, *attr, line) : v;
      return cs ? k : lower_if_string(k);
    };
    for (std::size_t k = 1; k < items.size(); ++k) {
      int c = compare(key(items[k]), key(best), line);
      if (n == "min" ? c < 0 : c > 0) best = items[k];
    }
    return best;
  }
  if (n == "sum") {
    const Value* attr = a.get(0, "attribute");
    const Value* start = a.get(1, "start");
    Value total = start ? *start : Value::integer(0);
    for (const Value& v : iterate(in, line))
      total = binary(
          "+", total,
          attr && !attr->is_none() ? attr_path(*this, v, *attr, line) : v,
          line);
    return total;
  }
  if (n == "map") {
    List out;
    const Value* attr = nullptr;
    const Value* dflt = nullptr;
    for (const auto& [k, v] : a.kw) {
      if (k == "attribute") attr = &v;
      if (k == "default") dflt = &v;
    }
    if (attr) {
      for (const Value& v : iterate(in, line)) {
        Value x = attr_path(*this, v, *attr, line);
        out.push_back(dflt && x.is_undefined() ? *dflt : x);
      }
      return Value::make_list(std::move(out));
    }
    if (a.pos.empty() || !a.pos[0].is_string())
      fail(line, "map requires a filter argument");
    Args rest{{a.pos.begin() + 1, a.pos.end()}, a.kw};
    for (const Value& v : iterate(in, line))
      out.push_back(filter(a.pos[0].s, v, rest, line));
    return Value::make_list(std::move(out));
  }
  if (n == "select" || n == "reject")
    return select(*this, in, a, false, n == "select", line);
  if (n == "selectattr" || n == "rejectattr")
    return select(*this, in, a, true, n == "selectattr", line);
  if (n == "attr") {
    const Value* nm = a.get(0, "name");
    if (!nm) fail(line, "attr requires a name");
    if (in.is_undefined()) fail(line, in.s);
    std::string key = soft(*nm);
    if (in.type == Type::ns)
      if (const Value* v = in.dict->find(S(key))) return *v;
    return method_value(in, key, line);
  }
  if (n == "int") {
    std::int64_t dflt = arg_int(a, 0, "default", 0, line);
    std::int64_t base = arg_int(a, 1, "base", 10, line);
    if (in.is_undefined()) fail(line, in.s);
    if (in.is_integral()) return Value::integer(in.as_int());
    if (in.type == Type::floating)
      return std::isfinite(in.f)
                 ? Value::integer(static_cast<std::int64_t>(in.f))
                 : Value::integer(dflt);
    if (in.is_string()) {
      bool ok;
      Value v = parse_int(in.s, base, &ok);
      if (ok) return v;
      char* end = nullptr;
      double f = std::strtod(in.s.c_str(), &end);
      bool fok = !in.s.empty() && end && *end == 0 && std::isfinite(f);
      return fok ? Value::integer(static_cast<std::int64_t>(f))
                 : Value::integer(dflt);
    }
    return Value::integer(dflt);
  }
  if (n == "float") {
    const Value* d = a.get(0, "default");
    Value dflt = d ? *d : Value::floating(0.0);
    if (in.is_undefined()) fail(line, in.s);
    if (in.is_number()) return Value::floating(in.as_double());
    if (in.is_string()) {
      std::string t = method(in, "strip", {}, line).s;
      char* end = nullptr;
      double f = std::strtod(t.c_str(), &end);
      if (!t.empty() && end && *end == 0) return Value::floating(f);
    }
    return dflt;
  }
  if (n == "abs") {
    if (in.type == Type::floating) return Value::floating(std::fabs(in.f));
    if (in.is_integral()) return Value::integer(std::llabs(in.as_int()));
    fail(line, "bad operand type for abs(): '" + type_name(in) + "'");
  }
  if (n == "round") {
    std::int64_t prec = arg_int(a, 0, "precision", 0, line);
    const Value* m = a.get(1, "method");
    std::string meth = m ? soft(*m) : "common";
    if (!in.is_number())
      fail(line, "type " + type_name(in) + " doesn't define __round__ method");
    if (meth == "common") {
      if (in.is_integral()) return Value::integer(in.as_int());
      return Value::floating(py_round(in.f, prec));
    }
    if (meth != "ceil" && meth != "floor")
      fail(line, "method must be common, ceil or floor");
    double p = std::pow(10.0, static_cast<double>(prec));
    double x = in.as_double() * p;
    return Value::floating((meth == "ceil" ? std::ceil(x) : std::floor(x)) / p);
  }
  if (n == "indent") {
    if (in.is_undefined()) fail(line, in.s);
    return S(indent(soft(in), a.get(0, "width"), arg_bool(a, 1, "first", false),
                    arg_bool(a, 2, "blank", false)));
  }
  if (n == "center") {
    if (in.is_undefined()) fail(line, in.s);
    Args r{{Value::integer(arg_int(a, 0, "width", 80, line))}, {}};
    return method(S(soft(in)), "center", r, line);
  }
  if (n == "wordcount") {
    std::int64_t words = 0;
    bool inword = false;
    for (const auto& c : utf8_chars(soft(in))) {
      unsigned char b = static_cast<unsigned char>(c[0]);
      bool w = c.size() > 1 ? !py_isspace(c) : (std::isalnum(b) || b == '_');
      if (w && !inword) ++words;
      inword = w;
    }
    return Value::integer(words);
  }
  if (n == "truncate") {
    std::string s = soft(in);
    std::int64_t length = arg_int(a, 0, "length", 255, line);
    bool killwords = arg_bool(a, 1, "killwords", false);
    const Value* e = a.get(2, "end");
    std::string end = e ? soft(*e) : "...";
    std::int64_t leeway = arg_int(a, 3, "leeway", 5, line);
    auto len = static_cast<std::int64_t>(utf8_length(s));
    if (len <= length + leeway) return in.is_undefined() ? in : S(s);
    Value head = slice(
        S(s), Value::none(),
        Value::integer(length - static_cast<std::int64_t>(utf8_length(end))),
        Value::none(), line);
    if (killwords) return S(head.s + end);
    Value parts =
        method(head, "rsplit", Args{{S(" "), Value::integer(1)}, {}}, line);
    return S((*parts.list)[0].s + end);
  }
  fail(line, "No filter named '" + n + "'.");
}

}  // namespace nuvec::lm::jinja
