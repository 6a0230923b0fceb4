// Values of the chat-template interpreter: Python's types as jinja2 sees
// them (None, bool, int, float, str, list, tuple, dict, a namespace, a
// callable), with Python's printing, equality and ordering.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nuvec::lm::jinja {

class Interpreter;
struct Value;

enum class Type {
  undefined,  // jinja2's default Undefined: prints empty, fails on use
  none,
  boolean,
  integer,
  floating,
  string,
  list,
  tuple,
  dict,
  ns,        // namespace(): a dict whose members are attributes
  callable,  // macros, globals, bound methods
};

using List = std::vector<Value>;

/// An insertion-ordered dict (the dicts of chat templates are small: a
/// linear search keeps Python's order without a second index).
struct Dict {
  std::vector<std::pair<Value, Value>> items;
  const Value* find(const Value& key) const;
  Value* find(const Value& key);
  void set(const Value& key, Value v);
};

/// A call's arguments: positional, then keyword (in the call's order).
struct Args {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
  /// The argument at `index` or named `name`, nullptr when absent.
  const Value* get(std::size_t index, const char* name) const;
};

using Function = std::function<Value(Interpreter&, const Args&, int line)>;

struct Callable {
  std::string name;
  Function fn;
};

struct Value {
  Type type = Type::undefined;
  bool b = false;
  std::int64_t i = 0;
  double f = 0;
  /// The text of a string; for an undefined value, the message that using
  /// it raises ("'x' is undefined").
  std::string s;
  std::shared_ptr<List> list;  // list and tuple
  std::shared_ptr<Dict> dict;  // dict and ns
  std::shared_ptr<Callable> fn;

  static Value undefined(std::string message) {
    Value v;
    v.s = std::move(message);
    return v;
  }
  static Value none() { return make(Type::none); }
  static Value boolean(bool x) {
    Value v = make(Type::boolean);
    v.b = x;
    return v;
  }
  static Value integer(std::int64_t x) {
    Value v = make(Type::integer);
    v.i = x;
    return v;
  }
  static Value floating(double x) {
    Value v = make(Type::floating);
    v.f = x;
    return v;
  }
  static Value string(std::string x) {
    Value v = make(Type::string);
    v.s = std::move(x);
    return v;
  }
  static Value make_list(List items = {}, bool tuple = false) {
    Value v = make(tuple ? Type::tuple : Type::list);
    v.list = std::make_shared<List>(std::move(items));
    return v;
  }
  static Value make_dict(Dict d = {}, bool ns = false) {
    Value v = make(ns ? Type::ns : Type::dict);
    v.dict = std::make_shared<Dict>(std::move(d));
    return v;
  }
  static Value callable(std::string name, Function fn) {
    Value v = make(Type::callable);
    v.fn = std::make_shared<Callable>(Callable{std::move(name), std::move(fn)});
    return v;
  }

  bool is_undefined() const { return type == Type::undefined; }
  bool is_none() const { return type == Type::none; }
  bool is_string() const { return type == Type::string; }
  bool is_sequence() const { return type == Type::list || type == Type::tuple; }
  bool is_mapping() const { return type == Type::dict; }
  /// int, float or bool (Python's bool is an int).
  bool is_number() const {
    return type == Type::integer || type == Type::floating ||
           type == Type::boolean;
  }
  bool is_integral() const {
    return type == Type::integer || type == Type::boolean;
  }
  std::int64_t as_int() const { return type == Type::boolean ? b : i; }
  double as_double() const {
    return type == Type::floating ? f : static_cast<double>(as_int());
  }

 private:
  static Value make(Type t) {
    Value v;
    v.type = t;
    return v;
  }
};

/// Python's bool(x) (an undefined value is false).
bool truthy(const Value& v);
/// Python's str(x), as `{{ x }}` prints it (undefined prints nothing).
std::string to_str(const Value& v);
/// Python's repr(x) (how list and dict members print).
std::string repr(const Value& v);
/// Python's repr of a float: the shortest text that reads back the same.
std::string float_repr(double d);
/// Python's type name, for messages ("'int' object is not iterable").
std::string type_name(const Value& v);
/// Python's ==.
bool equal(const Value& a, const Value& b);
/// Python's <, <=, >, >= as -1/0/1; throws a template error for types that
/// Python does not order.
int compare(const Value& a, const Value& b, int line);
/// The members a for loop visits: list/tuple items, dict keys, the
/// characters of a string; undefined iterates as empty; other types throw.
List iterate(const Value& v, int line);

/// transformers' tojson: json.dumps(x, ensure_ascii=False, indent=indent,
/// separators=..., sort_keys=...). `indent` < 0 means None; an empty
/// separator means Python's default for the indent.
std::string to_json(const Value& v, int indent, const std::string& item_sep,
                    const std::string& key_sep, bool sort_keys, int line);

/// Raises nuvec::Error (invalid_argument) "[chat_template] line N: msg".
[[noreturn]] void fail(int line, const std::string& message);

// UTF-8 helpers: code points are what Python's str indexes and counts.
std::vector<std::string> utf8_chars(std::string_view s);
std::size_t utf8_length(std::string_view s);
bool is_ascii(std::string_view s);
std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);
/// Python's str.isspace for one code point given as its UTF-8 text.
bool py_isspace(std::string_view ch);

}  // namespace nuvec::lm::jinja
