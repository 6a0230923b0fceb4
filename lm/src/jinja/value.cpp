// Python semantics of the interpreter's values: printing, equality,
// ordering, iteration and json.dumps.
#include "jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "nuvec/core/error.h"

namespace nuvec::lm::jinja {

void fail(int line, const std::string& message) {
  std::string where = line > 0 ? "line " + std::to_string(line) + ": " : "";
  Error(ErrorKind::invalid_argument, "[chat_template] " + where + message)
      .raise();
}

const Value* Args::get(std::size_t index, const char* name) const {
  for (const auto& [k, v] : kw)
    if (k == name) return &v;
  return index < pos.size() ? &pos[index] : nullptr;
}

// Python's dict keys: 1, 1.0 and True are the same key.
static bool same_key(const Value& a, const Value& b) { return equal(a, b); }

const Value* Dict::find(const Value& key) const {
  for (const auto& kv : items)
    if (same_key(kv.first, key)) return &kv.second;
  return nullptr;
}
Value* Dict::find(const Value& key) {
  for (auto& kv : items)
    if (same_key(kv.first, key)) return &kv.second;
  return nullptr;
}
void Dict::set(const Value& key, Value v) {
  if (Value* p = find(key)) {
    *p = std::move(v);
  } else {
    items.emplace_back(key, std::move(v));
  }
}

bool truthy(const Value& v) {
  switch (v.type) {
    case Type::undefined:
    case Type::none:
      return false;
    case Type::boolean:
      return v.b;
    case Type::integer:
      return v.i != 0;
    case Type::floating:
      return v.f != 0;
    case Type::string:
      return !v.s.empty();
    case Type::list:
    case Type::tuple:
      return !v.list->empty();
    case Type::dict:
      return !v.dict->items.empty();
    default:
      return true;
  }
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto r =
      std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  // sci is "[-]D[.DDD]e[+-]XX": split into sign, digits and exponent.
  std::string sign;
  std::size_t p = 0;
  if (sci[0] == '-') sign = "-", p = 1;
  std::size_t e = sci.find('e');
  std::string digits;
  for (std::size_t k = p; k < e; ++k)
    if (sci[k] != '.') digits += sci[k];
  int exp = std::stoi(sci.substr(e + 1));
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int n = static_cast<int>(digits.size());
  if (exp >= -5 + 1 && exp < 16) {
    std::string out;
    if (exp < 0) {
      out = "0." + std::string(-exp - 1, '0') + digits;
    } else if (exp + 1 >= n) {
      out = digits + std::string(exp + 1 - n, '0') + ".0";
    } else {
      out = digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
    }
    return sign + out;
  }
  std::string out = digits.substr(0, 1);
  if (n > 1) out += "." + digits.substr(1);
  char eb[16];
  std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
  return sign + out + eb;
}

std::string to_str(const Value& v) {
  switch (v.type) {
    case Type::undefined:
      return "";
    case Type::string:
      return v.s;
    default:
      return repr(v);
  }
}

static void append_hex(std::string& out, const char* prefix, unsigned c,
                       int width) {
  char b[16];
  std::snprintf(b, sizeof b, "%s%0*x", prefix, width, c);
  out += b;
}

static std::string repr_string(const std::string& s) {
  char q = '\'';
  if (s.find('\'') != std::string::npos && s.find('"') == std::string::npos)
    q = '"';
  std::string out(1, q);
  for (std::size_t k = 0; k < s.size(); ++k) {
    unsigned char c = static_cast<unsigned char>(s[k]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == static_cast<unsigned char>(q)) {
      out += '\\';
      out += q;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      append_hex(out, "\\x", c, 2);
    } else if (c == 0xc2 && k + 1 < s.size()) {
      // U+0080..U+00BF: the C1 controls, NBSP and the soft hyphen are not
      // printable for Python.
      unsigned char d = static_cast<unsigned char>(s[k + 1]);
      if (d < 0xa1 || d == 0xad) {
        append_hex(out, "\\x", d, 2);
      } else {
        out += static_cast<char>(c);
        out += static_cast<char>(d);
      }
      ++k;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += q;
  return out;
}

std::string repr(const Value& v) {
  switch (v.type) {
    case Type::undefined:
      return "Undefined";
    case Type::none:
      return "None";
    case Type::boolean:
      return v.b ? "True" : "False";
    case Type::integer:
      return std::to_string(v.i);
    case Type::floating:
      return float_repr(v.f);
    case Type::string:
      return repr_string(v.s);
    case Type::list:
    case Type::tuple: {
      bool t = v.type == Type::tuple;
      std::string out = t ? "(" : "[";
      for (std::size_t k = 0; k < v.list->size(); ++k) {
        if (k) out += ", ";
        out += repr((*v.list)[k]);
      }
      if (t && v.list->size() == 1) out += ",";
      return out + (t ? ")" : "]");
    }
    case Type::dict:
    case Type::ns: {
      std::string out = v.type == Type::ns ? "<Namespace {" : "{";
      bool first = true;
      for (const auto& [k, x] : v.dict->items) {
        if (!first) out += ", ";
        first = false;
        out += repr(k) + ": " + repr(x);
      }
      return out + (v.type == Type::ns ? "}>" : "}");
    }
    case Type::callable:
      return "<function " + v.fn->name + ">";
  }
  return "";
}

std::string type_name(const Value& v) {
  switch (v.type) {
    case Type::undefined:
      return "Undefined";
    case Type::none:
      return "NoneType";
    case Type::boolean:
      return "bool";
    case Type::integer:
      return "int";
    case Type::floating:
      return "float";
    case Type::string:
      return "str";
    case Type::list:
      return "list";
    case Type::tuple:
      return "tuple";
    case Type::dict:
      return "dict";
    case Type::ns:
      return "Namespace";
    case Type::callable:
      return "function";
  }
  return "object";
}

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.type == Type::floating || b.type == Type::floating)
      return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.type != b.type) return false;
  switch (a.type) {
    case Type::undefined:
    case Type::none:
      return true;
    case Type::string:
      return a.s == b.s;
    case Type::list:
    case Type::tuple: {
      if (a.list->size() != b.list->size()) return false;
      for (std::size_t k = 0; k < a.list->size(); ++k)
        if (!equal((*a.list)[k], (*b.list)[k])) return false;
      return true;
    }
    case Type::dict: {
      if (a.dict->items.size() != b.dict->items.size()) return false;
      for (const auto& [k, x] : a.dict->items) {
        const Value* y = b.dict->find(k);
        if (!y || !equal(x, *y)) return false;
      }
      return true;
    }
    case Type::ns:
      return a.dict == b.dict;
    case Type::callable:
      return a.fn == b.fn;
    default:
      return false;
  }
}

int compare(const Value& a, const Value& b, int line) {
  if (a.is_undefined() || b.is_undefined())
    fail(line, (a.is_undefined() ? a : b).s);
  if (a.is_number() && b.is_number()) {
    if (a.type == Type::floating || b.type == Type::floating) {
      double x = a.as_double(), y = b.as_double();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    return a.as_int() < b.as_int() ? -1 : (a.as_int() > b.as_int() ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    int c = a.s.compare(b.s);  // UTF-8 byte order is code point order
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.type == b.type && a.is_sequence()) {
    std::size_t n = std::min(a.list->size(), b.list->size());
    for (std::size_t k = 0; k < n; ++k) {
      const Value &x = (*a.list)[k], &y = (*b.list)[k];
      if (!equal(x, y)) return compare(x, y, line);
    }
    return a.list->size() < b.list->size()
               ? -1
               : (a.list->size() > b.list->size() ? 1 : 0);
  }
  fail(line, "'<' not supported between instances of '" + type_name(a) +
                 "' and '" + type_name(b) + "'");
}

List iterate(const Value& v, int line) {
  switch (v.type) {
    case Type::undefined:
      return {};
    case Type::list:
    case Type::tuple:
      return *v.list;
    case Type::dict:
    case Type::ns: {
      List keys;
      for (const auto& kv : v.dict->items) keys.push_back(kv.first);
      return keys;
    }
    case Type::string: {
      List out;
      for (auto& c : utf8_chars(v.s)) out.push_back(Value::string(c));
      return out;
    }
    default:
      fail(line, "'" + type_name(v) + "' object is not iterable");
  }
}

static void json_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          append_hex(out, "\\u", c, 4);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

namespace {
struct JsonWriter {
  int indent;
  std::string item_sep, key_sep;
  bool sort_keys;
  int line;
  std::string out;

  void newline(int depth) {
    out += '\n';
    out.append(static_cast<std::size_t>(indent) * depth, ' ');
  }
  std::string key_text(const Value& k) {
    switch (k.type) {
      case Type::string:
        return k.s;
      case Type::boolean:
        return k.b ? "true" : "false";
      case Type::none:
        return "null";
      case Type::integer:
      case Type::floating:
        return repr(k);
      default:
        fail(line,
             "keys must be str, int, float, bool or None, not " + type_name(k));
    }
  }
  void write(const Value& v, int depth) {
    if (depth > 200) fail(line, "tojson: value nested too deeply");
    switch (v.type) {
      case Type::none:
        out += "null";
        return;
      case Type::boolean:
        out += v.b ? "true" : "false";
        return;
      case Type::integer:
        out += std::to_string(v.i);
        return;
      case Type::floating:
        if (std::isnan(v.f)) {
          out += "NaN";
        } else if (std::isinf(v.f)) {
          out += v.f < 0 ? "-Infinity" : "Infinity";
        } else {
          out += float_repr(v.f);
        }
        return;
      case Type::string:
        json_string(out, v.s);
        return;
      case Type::list:
      case Type::tuple: {
        if (v.list->empty()) {
          out += "[]";
          return;
        }
        out += '[';
        for (std::size_t k = 0; k < v.list->size(); ++k) {
          if (k) out += item_sep;
          if (indent >= 0) newline(depth + 1);
          write((*v.list)[k], depth + 1);
        }
        if (indent >= 0) newline(depth);
        out += ']';
        return;
      }
      case Type::dict: {
        if (v.dict->items.empty()) {
          out += "{}";
          return;
        }
        std::vector<std::pair<std::string, const Value*>> members;
        for (const auto& [k, x] : v.dict->items)
          members.emplace_back(key_text(k), &x);
        if (sort_keys)
          std::stable_sort(members.begin(), members.end(),
                           [](auto& a, auto& b) { return a.first < b.first; });
        out += '{';
        for (std::size_t k = 0; k < members.size(); ++k) {
          if (k) out += item_sep;
          if (indent >= 0) newline(depth + 1);
          json_string(out, members[k].first);
          out += key_sep;
          write(*members[k].second, depth + 1);
        }
        if (indent >= 0) newline(depth);
        out += '}';
        return;
      }
      default:
        fail(line,
             "Object of type " + type_name(v) + " is not JSON serializable");
    }
  }
};
}  // namespace

std::string to_json(const Value& v, int indent, const std::string& item_sep,
                    const std::string& key_sep, bool sort_keys, int line) {
  JsonWriter w{indent, item_sep, key_sep, sort_keys, line, {}};
  if (w.item_sep.empty() && w.key_sep.empty()) {
    w.item_sep = indent >= 0 ? "," : ", ";
    w.key_sep = ": ";
  }
  w.write(v, 0);
  return std::move(w.out);
}

}  // namespace nuvec::lm::jinja
