// The expression half of the parser (parser.cpp holds the statements):
// jinja2's grammar and precedence, conditional < or < and < not <
// comparisons < + - < ~ < * / // % < ** < unary - + < filters and tests <
// postfix (attribute, item, call). Included by parser.cpp only.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "jinja/ast.h"
#include "jinja/lexer.h"

namespace nuvec::lm::jinja {

class ExprParser {
 public:
  explicit ExprParser(std::vector<Token> toks) : t_(std::move(toks)) {}

 protected:
  static constexpr int kMaxDepth = 200;  // bounds the parser's recursion

  const Token& cur() const { return t_[p_]; }
  const Token& look() const { return t_[std::min(p_ + 1, t_.size() - 1)]; }
  Token next() {
    Token tk = t_[p_];
    if (p_ + 1 < t_.size()) ++p_;
    return tk;
  }
  bool is_op(const char* op) const {
    return cur().type == Tok::op && cur().text == op;
  }
  bool is_name(const char* n) const {
    return cur().type == Tok::name && cur().text == n;
  }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* n) {
    if (!is_name(n)) return false;
    next();
    return true;
  }
  static std::string describe(const Token& tk) {
    switch (tk.type) {
      case Tok::eof:
        return "end of template";
      case Tok::block_end:
        return "end of statement block";
      case Tok::var_end:
        return "end of print statement";
      case Tok::data:
        return "template data";
      default:
        return tk.text.empty() ? "token" : tk.text;
    }
  }
  [[noreturn]] void unexpected(const char* wanted) const {
    fail(cur().line,
         std::string("expected ") + wanted + ", got '" + describe(cur()) + "'");
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) unexpected(op);
  }
  std::string expect_name() {
    if (cur().type != Tok::name) unexpected("a name");
    return next().text;
  }
  void expect_block_end() {
    if (cur().type != Tok::block_end) unexpected("end of statement block");
    next();
  }
  struct Guard {
    int& d;
    Guard(int& depth, int line) : d(depth) {
      if (++d > kMaxDepth) fail(line, "template nested too deeply");
    }
    ~Guard() { --d; }
  };

  static ExprPtr make(Expr e) {
    return std::make_shared<const Expr>(std::move(e));
  }
  Expr node(Expr::Kind k) const {
    Expr e;
    e.kind = k;
    e.line = cur().line;
    return e;
  }

  // ---- expressions ----
  bool tuple_end(const char* extra) const {
    if (cur().type == Tok::var_end || cur().type == Tok::block_end ||
        is_op(")"))
      return true;
    return extra && is_name(extra);
  }
  ExprPtr parse_tuple(bool, bool with_cond, const char* extra, bool parens) {
    Expr t = node(Expr::Kind::tuple);
    bool is_tuple = false;
    while (true) {
      if (!t.args.empty()) expect_op(",");
      if (tuple_end(extra)) break;
      t.args.push_back(parse_expression(with_cond));
      if (is_op(",")) {
        is_tuple = true;
      } else {
        break;
      }
    }
    if (!is_tuple) {
      if (!t.args.empty()) return t.args[0];
      if (!parens) unexpected("an expression");
    }
    return make(std::move(t));
  }

  ExprPtr parse_expression(bool with_cond) {
    Guard g(depth_, cur().line);
    if (!with_cond) return parse_or();
    ExprPtr e = parse_or();
    while (skip_name("if")) {
      Expr c = node(Expr::Kind::cond);
      ExprPtr test = parse_or();
      ExprPtr other = skip_name("else") ? parse_expression(true) : nullptr;
      c.args = {test, e, other};
      e = make(std::move(c));
    }
    return e;
  }
  ExprPtr parse_or() {
    ExprPtr l = parse_and();
    while (skip_name("or")) {
      Expr e = node(Expr::Kind::or_);
      e.args = {l, parse_and()};
      l = make(std::move(e));
    }
    return l;
  }
  ExprPtr parse_and() {
    ExprPtr l = parse_not();
    while (skip_name("and")) {
      Expr e = node(Expr::Kind::and_);
      e.args = {l, parse_not()};
      l = make(std::move(e));
    }
    return l;
  }
  ExprPtr parse_not() {
    if (is_name("not")) {
      Guard g(depth_, cur().line);
      Expr e = node(Expr::Kind::not_);
      next();
      e.args = {parse_not()};
      return make(std::move(e));
    }
    return parse_compare();
  }
  ExprPtr parse_compare() {
    ExprPtr first = parse_math1();
    Expr c = node(Expr::Kind::compare);
    c.args.push_back(first);
    while (true) {
      static const char* cmp[] = {"==", "!=", "<", "<=", ">", ">="};
      bool found = false;
      for (const char* op : cmp)
        if (is_op(op)) {
          next();
          c.ops.push_back(op);
          found = true;
          break;
        }
      if (!found) {
        if (skip_name("in")) {
          c.ops.push_back("in");
        } else if (is_name("not") && look().type == Tok::name &&
                   look().text == "in") {
          next();
          next();
          c.ops.push_back("notin");
        } else {
          break;
        }
      }
      c.args.push_back(parse_math1());
    }
    return c.ops.empty() ? first : make(std::move(c));
  }
  ExprPtr binary(ExprPtr l, const std::string& op, ExprPtr r) {
    Expr e = node(Expr::Kind::binary);
    e.name = op;
    e.args = {std::move(l), std::move(r)};
    return make(std::move(e));
  }
  ExprPtr parse_math1() {
    ExprPtr l = parse_concat();
    while (is_op("+") || is_op("-")) {
      std::string op = next().text;
      l = binary(l, op, parse_concat());
    }
    return l;
  }
  ExprPtr parse_concat() {
    ExprPtr first = parse_math2();
    if (!is_op("~")) return first;
    Expr c = node(Expr::Kind::concat);
    c.args.push_back(first);
    while (skip_op("~")) c.args.push_back(parse_math2());
    return make(std::move(c));
  }
  ExprPtr parse_math2() {
    ExprPtr l = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      std::string op = next().text;
      l = binary(l, op, parse_pow());
    }
    return l;
  }
  ExprPtr parse_pow() {
    ExprPtr l = parse_unary(true);
    while (skip_op("**")) l = binary(l, "**", parse_unary(true));
    return l;
  }
  ExprPtr parse_unary(bool with_filter) {
    Guard g(depth_, cur().line);
    ExprPtr n;
    if (is_op("-") || is_op("+")) {
      Expr e = node(is_op("-") ? Expr::Kind::neg : Expr::Kind::pos);
      next();
      e.args = {parse_unary(false)};
      n = make(std::move(e));
    } else {
      n = parse_primary();
    }
    n = parse_postfix(n);
    if (with_filter) n = parse_filter_expr(n);
    return n;
  }
  ExprPtr parse_primary() {
    const Token& tk = cur();
    Expr e = node(Expr::Kind::constant);
    if (tk.type == Tok::name) {
      std::string v = next().text;
      if (v == "true" || v == "True" || v == "false" || v == "False") {
        e.value = Value::boolean(v == "true" || v == "True");
      } else if (v == "none" || v == "None") {
        e.value = Value::none();
      } else {
        e.kind = Expr::Kind::name;
        e.name = v;
      }
    } else if (tk.type == Tok::string) {
      std::string s;
      while (cur().type == Tok::string) s += next().text;
      e.value = Value::string(std::move(s));
    } else if (tk.type == Tok::integer) {
      e.value = Value::integer(next().i);
    } else if (tk.type == Tok::floating) {
      e.value = Value::floating(next().f);
    } else if (is_op("(")) {
      next();
      ExprPtr inner = parse_tuple(false, true, nullptr, true);
      expect_op(")");
      return inner;
    } else if (is_op("[")) {
      next();
      e.kind = Expr::Kind::list;
      while (!is_op("]")) {
        if (!e.args.empty()) expect_op(",");
        if (is_op("]")) break;
        e.args.push_back(parse_expression(true));
      }
      expect_op("]");
    } else if (is_op("{")) {
      next();
      e.kind = Expr::Kind::dict;
      while (!is_op("}")) {
        if (!e.args.empty()) expect_op(",");
        if (is_op("}")) break;
        e.args.push_back(parse_expression(true));
        expect_op(":");
        e.args.push_back(parse_expression(true));
      }
      expect_op("}");
    } else {
      fail(tk.line, "unexpected '" + describe(tk) + "'");
    }
    return make(std::move(e));
  }
  ExprPtr parse_postfix(ExprPtr n) {
    while (true) {
      if (is_op(".") || is_op("[")) {
        n = parse_subscript(n);
      } else if (is_op("(")) {
        n = parse_call(n);
      } else {
        return n;
      }
    }
  }
  ExprPtr parse_filter_expr(ExprPtr n) {
    while (true) {
      if (skip_op("|")) {
        n = parse_filter(n);
      } else if (is_name("is")) {
        n = parse_test(n);
      } else if (is_op("(")) {
        n = parse_call(n);
      } else {
        return n;
      }
    }
  }
  ExprPtr parse_subscript(ExprPtr n) {
    Guard g(depth_, cur().line);
    if (skip_op(".")) {
      if (cur().type == Tok::name) {
        Expr e = node(Expr::Kind::getattr);
        e.name = next().text;
        e.args = {n};
        return make(std::move(e));
      }
      if (cur().type != Tok::integer) unexpected("name or number");
      Expr k = node(Expr::Kind::constant);
      k.value = Value::integer(next().i);
      Expr e = node(Expr::Kind::getitem);
      e.args = {n, make(std::move(k))};
      return make(std::move(e));
    }
    expect_op("[");
    std::vector<ExprPtr> subs;
    while (!is_op("]")) {
      if (!subs.empty()) expect_op(",");
      subs.push_back(parse_subscribed(n));
    }
    expect_op("]");
    if (subs.empty()) unexpected("a subscript");
    if (subs.size() == 1) return subs[0];
    fail(cur().line, "tuple subscripts are not supported");
  }
  // One subscript of `n`: an index or a slice a:b:c.
  ExprPtr parse_subscribed(const ExprPtr& n) {
    Expr e = node(Expr::Kind::getitem);
    ExprPtr first;
    if (!is_op(":")) {
      first = parse_expression(true);
      if (!is_op(":")) {
        e.args = {n, first};
        return make(std::move(e));
      }
    }
    next();  // the first ':'
    e.kind = Expr::Kind::slice;
    ExprPtr stop, step;
    if (!is_op(":") && !is_op("]") && !is_op(","))
      stop = parse_expression(true);
    if (skip_op(":")) {
      if (!is_op("]") && !is_op(",")) step = parse_expression(true);
    }
    e.args = {n, first, stop, step};
    return make(std::move(e));
  }
  void parse_call_args(Expr& e) {
    expect_op("(");
    bool need_comma = false;
    while (!is_op(")")) {
      if (need_comma) {
        expect_op(",");
        if (is_op(")")) break;
      }
      if (is_op("*") || is_op("**"))
        fail(cur().line, "*args and **kwargs in calls are not supported");
      if (cur().type == Tok::name && look().type == Tok::op &&
          look().text == "=") {
        std::string key = next().text;
        next();
        e.kwargs.emplace_back(key, parse_expression(true));
      } else {
        if (!e.kwargs.empty())
          fail(cur().line, "invalid syntax for function call expression");
        e.args.push_back(parse_expression(true));
      }
      need_comma = true;
    }
    expect_op(")");
  }
  ExprPtr parse_call(ExprPtr n) {
    Guard g(depth_, cur().line);
    Expr e = node(Expr::Kind::call);
    e.args.push_back(n);
    parse_call_args(e);
    return make(std::move(e));
  }
  ExprPtr parse_filter(ExprPtr n) {
    Guard g(depth_, cur().line);
    Expr e = node(Expr::Kind::filter);
    e.name = expect_name();
    while (skip_op(".")) e.name += "." + expect_name();
    e.args.push_back(n);
    if (is_op("(")) parse_call_args(e);
    return make(std::move(e));
  }
  ExprPtr parse_test(ExprPtr n) {
    Guard g(depth_, cur().line);
    Expr e = node(Expr::Kind::test);
    next();  // 'is'
    e.negated = skip_name("not");
    e.name = expect_name();
    while (skip_op(".")) e.name += "." + expect_name();
    e.args.push_back(n);
    if (is_op("(")) {
      parse_call_args(e);
    } else if ((cur().type == Tok::name || cur().type == Tok::string ||
                cur().type == Tok::integer || cur().type == Tok::floating ||
                is_op("[") || is_op("{")) &&
               !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is"))
        fail(cur().line, "You cannot chain multiple tests with is");
      e.args.push_back(parse_postfix(parse_primary()));
    }
    return make(std::move(e));
  }

  std::vector<Token> t_;
  std::size_t p_ = 0;
  int depth_ = 0;
};

}  // namespace nuvec::lm::jinja
