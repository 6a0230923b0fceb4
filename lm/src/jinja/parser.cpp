// The statement half of the recursive-descent parser (tags, bodies,
// assignment targets), and the compile-time check of filter and test names.
#include <algorithm>

#include "jinja/expr_parser.h"

namespace nuvec::lm::jinja {
namespace {

const char* const kFilters[] = {
    "tojson", "default",     "d",          "safe",   "string",    "e",
    "escape", "forceescape", "trim",       "upper",  "lower",     "capitalize",
    "title",  "replace",     "length",     "count",  "list",      "first",
    "last",   "reverse",     "join",       "items",  "dictsort",  "sort",
    "unique", "min",         "max",        "sum",    "map",       "select",
    "reject", "selectattr",  "rejectattr", "attr",   "int",       "float",
    "abs",    "round",       "indent",     "center", "wordcount", "truncate"};
const char* const kTests[] = {
    "defined",  "undefined", "none",    "boolean", "true",    "false",
    "integer",  "float",     "number",  "string",  "mapping", "sequence",
    "iterable", "callable",  "escaped", "odd",     "even",    "divisibleby",
    "eq",       "equalto",   "==",      "ne",      "!=",      "lt",
    "lessthan", "<",         "le",      "<=",      "gt",      "greaterthan",
    ">",        "ge",        ">=",      "in",      "sameas",  "lower",
    "upper"};

template <std::size_t N>
bool known(const char* const (&names)[N], const std::string& n) {
  for (const char* x : names)
    if (n == x) return true;
  return false;
}

// jinja2 rejects an unknown filter or test when it compiles the template,
// except inside an if statement or an inline if ("soft" frames, where the
// lookup waits until it runs); a for loop's, macro's or block's body is a
// frame of its own again.
void check_names(const Expr& e, bool soft) {
  if (e.kind == Expr::Kind::cond) soft = true;
  if (!soft && e.kind == Expr::Kind::filter && !known(kFilters, e.name))
    fail(e.line, "No filter named '" + e.name + "'.");
  if (!soft && e.kind == Expr::Kind::test && !known(kTests, e.name))
    fail(e.line, "No test named '" + e.name + "'.");
  for (const auto& a : e.args)
    if (a) check_names(*a, soft);
  for (const auto& kv : e.kwargs) check_names(*kv.second, soft);
}

void check_names(const Body& body, bool soft) {
  for (const Node& n : body) {
    bool is_if = n.kind == Node::Kind::if_;
    bool inner = !is_if && n.kind != Node::Kind::set &&
                 n.kind != Node::Kind::output && n.kind != Node::Kind::text;
    if (n.expr) check_names(*n.expr, soft || is_if);
    for (const auto& f : n.filters) check_names(*f, soft);
    for (const auto& d : n.defaults)
      if (d) check_names(*d, false);
    if (n.cond) check_names(*n.cond, false);
    check_names(n.body, is_if ? true : (inner ? false : soft));
    check_names(n.else_body, is_if ? true : false);
  }
}

class Parser : public ExprParser {
 public:
  using ExprParser::ExprParser;

  Body parse_template() {
    std::string which;
    return subparse({}, &which);
  }

 private:
  // ---- statements ----
  Body subparse(const std::vector<std::string>& ends, std::string* which) {
    Guard g(depth_, cur().line);
    Body body;
    while (true) {
      const Token& tk = cur();
      if (tk.type == Tok::data) {
        Node n{};
        n.kind = Node::Kind::text;
        n.line = tk.line;
        n.text = tk.text;
        body.push_back(std::move(n));
        next();
      } else if (tk.type == Tok::var_begin) {
        next();
        Node n{};
        n.kind = Node::Kind::output;
        n.line = tk.line;
        n.expr = parse_tuple(false, true, nullptr, false);
        if (cur().type != Tok::var_end) unexpected("end of print statement");
        next();
        body.push_back(std::move(n));
      } else if (tk.type == Tok::block_begin) {
        next();
        if (cur().type == Tok::name &&
            std::find(ends.begin(), ends.end(), cur().text) != ends.end()) {
          *which = next().text;
          return body;
        }
        parse_statement(body);
      } else if (tk.type == Tok::eof) {
        if (!ends.empty())
          fail(tk.line,
               "unexpected end of template, expected '" + ends[0] + "'");
        return body;
      } else {
        unexpected("template data or a tag");
      }
    }
  }

  void parse_statement(Body& out) {
    int line = cur().line;
    if (cur().type != Tok::name) unexpected("a statement name");
    std::string tag = next().text;
    std::string which;
    Node n{};
    n.line = line;
    if (tag == "if") {
      parse_if(n);
    } else if (tag == "for") {
      n.kind = Node::Kind::for_;
      n.target = parse_assign_target(false, true);
      if (!skip_name("in")) unexpected("'in'");
      n.expr = parse_tuple(false, false, "recursive", false);
      if (skip_name("if")) n.cond = parse_expression(true);
      if (is_name("recursive"))
        fail(line, "recursive for loops are not supported");
      expect_block_end();
      ++loop_depth_;
      n.body = subparse({"endfor", "else"}, &which);
      --loop_depth_;
      if (which == "else") {
        expect_block_end();
        n.else_body = subparse({"endfor"}, &which);
      }
      expect_block_end();
    } else if (tag == "set") {
      n.target = parse_assign_target(true, false);
      if (skip_op("=")) {
        n.kind = Node::Kind::set;
        n.expr = parse_tuple(false, true, nullptr, false);
        expect_block_end();
      } else {
        n.kind = Node::Kind::set_block;
        if (n.target->kind == Expr::Kind::tuple)
          fail(line, "a block set takes one target");
        while (skip_op("|")) n.filters.push_back(parse_filter(nullptr));
        expect_block_end();
        n.body = subparse({"endset"}, &which);
        expect_block_end();
      }
    } else if (tag == "macro") {
      n.kind = Node::Kind::macro;
      n.text = expect_name();
      parse_params(n);
      expect_block_end();
      n.body = subparse_outside_loop({"endmacro"}, &which);
      expect_block_end();
    } else if (tag == "call") {
      n.kind = Node::Kind::call_block;
      if (is_op("(")) parse_params(n);
      n.expr = parse_expression(true);
      if (n.expr->kind != Expr::Kind::call) fail(line, "expected call");
      expect_block_end();
      n.body = subparse_outside_loop({"endcall"}, &which);
      expect_block_end();
    } else if (tag == "filter") {
      n.kind = Node::Kind::filter_block;
      do {
        n.filters.push_back(parse_filter(nullptr));
      } while (skip_op("|"));
      expect_block_end();
      n.body = subparse({"endfilter"}, &which);
      expect_block_end();
    } else if (tag == "with" || tag == "generation") {
      // {% generation %} is transformers' marker of assistant text: its body
      // renders in a scope of its own, as a call block's does.
      n.kind = Node::Kind::with;
      while (tag == "with" && cur().type != Tok::block_end) {
        if (!n.params.empty()) expect_op(",");
        n.params.push_back(expect_name());
        expect_op("=");
        n.defaults.push_back(parse_expression(true));
      }
      expect_block_end();
      n.body = subparse({tag == "with" ? "endwith" : "endgeneration"}, &which);
      expect_block_end();
    } else if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0) fail(line, "'" + tag + "' outside of a loop");
      n.kind = tag == "break" ? Node::Kind::break_ : Node::Kind::continue_;
      expect_block_end();
    } else {
      fail(line, "unsupported or unknown tag '" + tag + "'");
    }
    out.push_back(std::move(n));
  }

  Body subparse_outside_loop(const std::vector<std::string>& ends,
                             std::string* which) {
    int saved = loop_depth_;
    loop_depth_ = 0;
    Body b = subparse(ends, which);
    loop_depth_ = saved;
    return b;
  }

  void parse_if(Node& n) {
    n.kind = Node::Kind::if_;
    n.expr = parse_tuple(false, false, nullptr, false);
    expect_block_end();
    std::string which;
    n.body = subparse({"elif", "else", "endif"}, &which);
    if (which == "elif") {
      Node e{};
      e.line = cur().line;
      parse_if(e);
      n.else_body.push_back(std::move(e));
      return;  // the nested if consumed the endif
    }
    if (which == "else") {
      expect_block_end();
      n.else_body = subparse({"endif"}, &which);
    }
    expect_block_end();
  }

  void parse_params(Node& n) {
    expect_op("(");
    while (!is_op(")")) {
      if (!n.params.empty()) expect_op(",");
      if (is_op(")")) break;
      n.params.push_back(expect_name());
      n.defaults.push_back(skip_op("=") ? parse_expression(true) : nullptr);
    }
    expect_op(")");
  }

  ExprPtr parse_assign_target(bool with_ns, bool for_target) {
    if (with_ns && cur().type == Tok::name && look().type == Tok::op &&
        look().text == ".") {
      Expr e = node(Expr::Kind::ns_ref);
      e.name = next().text;
      next();
      e.ops.push_back(expect_name());
      return make(std::move(e));
    }
    Expr t = node(Expr::Kind::tuple);
    bool is_tuple = false;
    while (true) {
      if (!t.args.empty()) expect_op(",");
      if (cur().type == Tok::block_end || (for_target && is_name("in"))) break;
      Expr e = node(Expr::Kind::name);
      e.name = expect_name();
      if (e.name == "true" || e.name == "false" || e.name == "none" ||
          e.name == "True" || e.name == "False" || e.name == "None")
        fail(e.line, "can't assign to '" + e.name + "'");
      t.args.push_back(make(std::move(e)));
      if (!is_op(",")) break;
      is_tuple = true;
    }
    if (t.args.empty()) unexpected("an assignment target");
    return is_tuple ? make(std::move(t)) : t.args[0];
  }

  int loop_depth_ = 0;  // for bodies around the current statement
};

}  // namespace

Body parse(const std::string& source) {
  Body body = Parser(lex(source)).parse_template();
  check_names(body, false);
  return body;
}

}  // namespace nuvec::lm::jinja
