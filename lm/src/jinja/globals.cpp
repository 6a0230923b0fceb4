// The globals transformers gives templates: range (capped as jinja2's
// sandbox caps it), dict, namespace, raise_exception, strftime_now.
#include <ctime>

#include "jinja/interpreter.h"

namespace nuvec::lm::jinja {

static Value dict_from(const Args& a, bool ns, int line) {
  Dict d;
  if (!a.pos.empty()) {
    if (a.pos.size() > 1) fail(line, "expected at most 1 positional argument");
    const Value& src = a.pos[0];
    if (src.type == Type::dict || src.type == Type::ns) {
      d = *src.dict;
    } else {
      for (const Value& kv : iterate(src, line)) {
        List pair = iterate(kv, line);
        if (pair.size() != 2)
          fail(line, "dictionary update sequence element has wrong length");
        d.set(pair[0], pair[1]);
      }
    }
  }
  for (const auto& [k, v] : a.kw) {
    if (ns && !k.empty() && k[0] == '_')
      fail(line,
           "Chat templates cannot store underscore-prefixed attributes "
           "on a namespace");
    d.set(Value::string(k), v);
  }
  return Value::make_dict(std::move(d), ns);
}

bool Interpreter::global(const std::string& name, Value* out) {
  if (name == "range") {
    *out = Value::callable(name, [](Interpreter&, const Args& a, int line) {
      std::int64_t start = 0, stop, step = 1;
      for (const Value& v : a.pos)
        if (!v.is_integral())
          fail(line, "'" + type_name(v) +
                         "' object cannot be interpreted as an integer");
      if (a.pos.size() == 1) {
        stop = a.pos[0].as_int();
      } else if (a.pos.size() == 2 || a.pos.size() == 3) {
        start = a.pos[0].as_int();
        stop = a.pos[1].as_int();
        if (a.pos.size() == 3) step = a.pos[2].as_int();
      } else {
        fail(line, "range expected 1 to 3 integer arguments");
      }
      if (step == 0) fail(line, "range() arg 3 must not be zero");
      List items;
      for (std::int64_t x = start; step > 0 ? x < stop : x > stop; x += step) {
        // jinja2's sandbox caps ranges at 100000 items.
        if (items.size() >= 100000)
          fail(line,
               "Range too big. The sandbox blocks ranges larger than MAX_RANGE "
               "(100000).");
        items.push_back(Value::integer(x));
      }
      return Value::make_list(std::move(items));
    });
    return true;
  }
  if (name == "dict" || name == "namespace") {
    bool ns = name == "namespace";
    *out = Value::callable(name, [ns](Interpreter&, const Args& a, int line) {
      return dict_from(a, ns, line);
    });
    return true;
  }
  if (name == "raise_exception") {
    *out = Value::callable(
        name, [](Interpreter&, const Args& a, int line) -> Value {
          const Value* m = a.get(0, "message");
          fail(line, "raise_exception: " + (m ? to_str(*m) : std::string()));
        });
    return true;
  }
  if (name == "strftime_now") {
    *out = Value::callable(name, [](Interpreter&, const Args& a, int line) {
      const Value* f = a.get(0, "format");
      if (!f || !f->is_string())
        fail(line, "strftime_now takes a format string");
      std::time_t t = std::time(nullptr);
      std::tm tm{};
      localtime_r(&t, &tm);
      char buf[512];
      std::size_t n = std::strftime(buf, sizeof buf, f->s.c_str(), &tm);
      return Value::string(std::string(buf, n));
    });
    return true;
  }
  return false;
}

}  // namespace nuvec::lm::jinja
