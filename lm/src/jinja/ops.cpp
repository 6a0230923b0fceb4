// Operators, membership, and attribute/item/slice access with the rules of
// jinja2's ImmutableSandboxedEnvironment: `obj.name` tries the attribute
// (a safe method) then the item, `obj[key]` the item then the attribute; a
// missing one is undefined; methods that mutate a list or dict are unsafe.
#include <cmath>

#include "jinja/interpreter.h"

namespace nuvec::lm::jinja {

static std::string operand_error(const std::string& op, const Value& a,
                                 const Value& b) {
  return "unsupported operand type(s) for " + op + ": '" + type_name(a) +
         "' and '" + type_name(b) + "'";
}

static Value repeat(const Value& seq, std::int64_t n, int line) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    Interpreter::check_size(seq.s.size() * static_cast<std::size_t>(n), line);
    std::string out;
    for (std::int64_t k = 0; k < n; ++k) out += seq.s;
    return Value::string(std::move(out));
  }
  Interpreter::check_size(seq.list->size() * static_cast<std::size_t>(n), line);
  List out;
  for (std::int64_t k = 0; k < n; ++k)
    out.insert(out.end(), seq.list->begin(), seq.list->end());
  return Value::make_list(std::move(out), seq.type == Type::tuple);
}

static Value int_pow(std::int64_t base, std::int64_t exp, int line) {
  std::int64_t r = 1;
  for (std::int64_t k = 0; k < exp; ++k) {
    if (__builtin_mul_overflow(r, base, &r)) fail(line, "integer overflow");
    if (r == 0 || r == 1) break;
    if (r == -1) {
      r = (exp - k - 1) % 2 ? -r : r;
      break;
    }
  }
  return Value::integer(r);
}

Value Interpreter::binary(const std::string& op, const Value& a, const Value& b,
                          int line) {
  if (a.is_undefined()) fail(line, a.s);
  if (b.is_undefined()) fail(line, b.s);
  bool nums = a.is_number() && b.is_number();
  bool ints = a.is_integral() && b.is_integral();
  if (op == "+") {
    if (ints) {
      std::int64_t r;
      if (__builtin_add_overflow(a.as_int(), b.as_int(), &r))
        fail(line, "integer overflow");
      return Value::integer(r);
    }
    if (nums) return Value::floating(a.as_double() + b.as_double());
    if (a.is_string() && b.is_string()) {
      check_size(a.s.size() + b.s.size(), line);
      return Value::string(a.s + b.s);
    }
    if (a.is_sequence() && a.type == b.type) {
      List out = *a.list;
      out.insert(out.end(), b.list->begin(), b.list->end());
      check_size(out.size(), line);
      return Value::make_list(std::move(out), a.type == Type::tuple);
    }
    if (a.is_sequence() && b.is_sequence())
      fail(line, "can only concatenate " + type_name(a) + " (not \"" +
                     type_name(b) + "\") to " + type_name(a));
    fail(line, operand_error(op, a, b));
  }
  if (op == "-") {
    if (ints) {
      std::int64_t r;
      if (__builtin_sub_overflow(a.as_int(), b.as_int(), &r))
        fail(line, "integer overflow");
      return Value::integer(r);
    }
    if (nums) return Value::floating(a.as_double() - b.as_double());
    fail(line, operand_error(op, a, b));
  }
  if (op == "*") {
    if (ints) {
      std::int64_t r;
      if (__builtin_mul_overflow(a.as_int(), b.as_int(), &r))
        fail(line, "integer overflow");
      return Value::integer(r);
    }
    if (nums) return Value::floating(a.as_double() * b.as_double());
    if ((a.is_string() || a.is_sequence()) && b.is_integral())
      return repeat(a, b.as_int(), line);
    if ((b.is_string() || b.is_sequence()) && a.is_integral())
      return repeat(b, a.as_int(), line);
    fail(line, operand_error(op, a, b));
  }
  if (!nums) fail(line, operand_error(op, a, b));
  if (op == "/") {
    if (b.as_double() == 0) fail(line, "division by zero");
    return Value::floating(a.as_double() / b.as_double());
  }
  if (op == "//" || op == "%") {
    if (ints) {
      std::int64_t x = a.as_int(), y = b.as_int();
      if (y == 0) fail(line, "integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) fail(line, "integer overflow");
      std::int64_t q = x / y, r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) {
        q -= 1;
        r += y;
      }
      return Value::integer(op == "//" ? q : r);
    }
    // Python's float_divmod.
    double x = a.as_double(), y = b.as_double();
    if (y == 0) fail(line, "float division by zero");
    double mod = std::fmod(x, y), div = (x - mod) / y;
    if (mod != 0) {
      if ((y < 0) != (mod < 0)) {
        mod += y;
        div -= 1.0;
      }
    } else {
      mod = std::copysign(0.0, y);
    }
    if (op == "%") return Value::floating(mod);
    double fl;
    if (div != 0) {
      fl = std::floor(div);
      if (div - fl > 0.5) fl += 1.0;
    } else {
      fl = std::copysign(0.0, x / y);
    }
    return Value::floating(fl);
  }
  if (op == "**") {
    if (ints && b.as_int() >= 0) return int_pow(a.as_int(), b.as_int(), line);
    if (a.as_double() == 0 && b.as_double() < 0)
      fail(line, "0.0 cannot be raised to a negative power");
    return Value::floating(std::pow(a.as_double(), b.as_double()));
  }
  fail(line, "unknown operator " + op);
}

bool Interpreter::contains(const Value& c, const Value& item, int line) {
  switch (c.type) {
    case Type::undefined:
      return false;
    case Type::string:
      if (!item.is_string())
        fail(line, "'in <string>' requires string as left operand, not " +
                       type_name(item));
      return c.s.find(item.s) != std::string::npos;
    case Type::list:
    case Type::tuple:
      for (const Value& v : *c.list)
        if (equal(v, item)) return true;
      return false;
    case Type::dict:
      return c.dict->find(item) != nullptr;
    default:
      fail(line, "argument of type '" + type_name(c) + "' is not iterable");
  }
}

static std::string object_name(const Value& v) {
  return v.is_none() ? "'None'" : "'" + type_name(v) + " object'";
}

Value Interpreter::getattr(const Value& obj, const std::string& name,
                           int line) {
  if (obj.is_undefined()) fail(line, obj.s);
  if (!name.empty() && name[0] == '_')
    return Value::undefined("access to attribute '" + name + "' of '" +
                            type_name(obj) + "' object is unsafe.");
  Value m = method_value(obj, name, line);
  if (!m.is_undefined() || !m.s.empty()) return m;
  if (obj.type == Type::dict || obj.type == Type::ns) {
    if (const Value* v = obj.dict->find(Value::string(name))) return *v;
  }
  return Value::undefined(object_name(obj) + " has no attribute '" + name +
                          "'");
}

static bool py_index(const Value& key, std::size_t size, std::size_t* out) {
  if (!key.is_integral()) return false;
  std::int64_t k = key.as_int();
  auto n = static_cast<std::int64_t>(size);
  if (k < 0) k += n;
  if (k < 0 || k >= n) return false;
  *out = static_cast<std::size_t>(k);
  return true;
}

Value Interpreter::getitem(const Value& obj, const Value& key, int line) {
  if (obj.is_undefined()) fail(line, obj.s);
  std::size_t k;
  switch (obj.type) {
    case Type::dict:
      if (const Value* v = obj.dict->find(key)) return *v;
      break;
    case Type::list:
    case Type::tuple:
      if (py_index(key, obj.list->size(), &k)) return (*obj.list)[k];
      break;
    case Type::string:
      if (key.is_integral()) {
        if (is_ascii(obj.s)) {
          if (py_index(key, obj.s.size(), &k))
            return Value::string(obj.s.substr(k, 1));
        } else {
          auto chars = utf8_chars(obj.s);
          if (py_index(key, chars.size(), &k)) return Value::string(chars[k]);
        }
      }
      break;
    default:
      break;
  }
  if (key.is_string()) {
    // jinja2 falls back to the attribute; a namespace's members are its
    // attributes.
    Value v = getattr(obj, key.s, line);
    if (!v.is_undefined()) return v;
  }
  return Value::undefined(object_name(obj) + " has no element " + repr(key));
}

Value Interpreter::slice(const Value& obj, const Value& start,
                         const Value& stop, const Value& step, int line) {
  if (obj.is_undefined()) fail(line, obj.s);
  for (const Value* p : {&start, &stop, &step})
    if (!p->is_none() && !p->is_integral())
      return Value::undefined("slice indices must be integers or None");
  std::vector<std::string> chars;
  std::size_t n;
  if (obj.is_string()) {
    chars = utf8_chars(obj.s);
    n = chars.size();
  } else if (obj.is_sequence()) {
    n = obj.list->size();
  } else {
    return Value::undefined(object_name(obj) + " is not subscriptable");
  }
  std::int64_t len = static_cast<std::int64_t>(n);
  std::int64_t st = step.is_none() ? 1 : step.as_int();
  if (st == 0) fail(line, "slice step cannot be zero");
  // Python's PySlice_AdjustIndices.
  auto adjust = [&](const Value& v, std::int64_t dflt) {
    if (v.is_none()) return dflt;
    std::int64_t x = v.as_int();
    if (x < 0) {
      x += len;
      if (x < 0) x = st < 0 ? -1 : 0;
    } else if (x >= len) {
      x = st < 0 ? len - 1 : len;
    }
    return x;
  };
  std::int64_t a = adjust(start, st < 0 ? len - 1 : 0);
  std::int64_t b = adjust(stop, st < 0 ? -1 : len);
  std::vector<std::size_t> picks;
  for (std::int64_t x = a; st > 0 ? x < b : x > b; x += st)
    picks.push_back(static_cast<std::size_t>(x));
  if (obj.is_string()) {
    std::string out;
    for (std::size_t p : picks) out += chars[p];
    return Value::string(std::move(out));
  }
  List out;
  for (std::size_t p : picks) out.push_back((*obj.list)[p]);
  return Value::make_list(std::move(out), obj.type == Type::tuple);
}

}  // namespace nuvec::lm::jinja
