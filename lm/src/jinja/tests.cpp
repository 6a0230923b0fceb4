// jinja2's built-in tests (`x is defined`, `n is divisibleby 3`).
#include "jinja/interpreter.h"

namespace nuvec::lm::jinja {

bool Interpreter::test(const std::string& n, const Value& v, const Args& a,
                       int line) {
  const Value* arg = a.get(0, "value");
  auto need = [&]() -> const Value& {
    if (!arg) fail(line, "test '" + n + "' needs an argument");
    return *arg;
  };
  if (n == "defined") return !v.is_undefined();
  if (n == "undefined") return v.is_undefined();
  if (n == "none") return v.is_none();
  if (n == "boolean") return v.type == Type::boolean;
  if (n == "true") return v.type == Type::boolean && v.b;
  if (n == "false") return v.type == Type::boolean && !v.b;
  if (n == "integer") return v.type == Type::integer;
  if (n == "float") return v.type == Type::floating;
  if (n == "number") return v.is_number();
  if (n == "string") return v.is_string();
  if (n == "mapping") return v.type == Type::dict;
  if (n == "sequence")
    return v.is_string() || v.is_sequence() || v.type == Type::dict ||
           v.is_undefined();
  if (n == "iterable")
    return v.is_string() || v.is_sequence() || v.type == Type::dict ||
           v.is_undefined();
  if (n == "callable") return v.type == Type::callable;
  if (n == "escaped") return false;
  if (n == "odd" || n == "even") {
    Value r = binary("%", v, Value::integer(2), line);
    return n == "odd" ? equal(r, Value::integer(1))
                      : equal(r, Value::integer(0));
  }
  if (n == "divisibleby")
    return equal(binary("%", v, need(), line), Value::integer(0));
  if (n == "eq" || n == "equalto" || n == "==") return equal(v, need());
  if (n == "ne" || n == "!=") return !equal(v, need());
  if (n == "lt" || n == "lessthan" || n == "<")
    return compare(v, need(), line) < 0;
  if (n == "le" || n == "<=") return compare(v, need(), line) <= 0;
  if (n == "gt" || n == "greaterthan" || n == ">")
    return compare(v, need(), line) > 0;
  if (n == "ge" || n == ">=") return compare(v, need(), line) >= 0;
  if (n == "in") return contains(need(), v, line);
  if (n == "sameas") {
    const Value& o = need();
    if (v.type != o.type) return false;
    if (v.is_sequence()) return v.list == o.list;
    if (v.type == Type::dict || v.type == Type::ns) return v.dict == o.dict;
    return equal(v, o);
  }
  if (n == "lower" || n == "upper") {
    Value r = method(Value::string(to_str(v)),
                     n == "lower" ? "islower" : "isupper", {}, line);
    return r.b;
  }
  fail(line, "No test named '" + n + "'.");
}

}  // namespace nuvec::lm::jinja
