// The parsed template: expressions and statements.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/value.h"

namespace nuvec::lm::jinja {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind {
    constant,  // value
    name,      // name
    ns_ref,    // name.attr as an assignment target
    getattr,   // args[0].name
    getitem,   // args[0][args[1]]
    slice,     // args[0][args[1]:args[2]:args[3]] (null parts are absent)
    call,      // args[0](args[1:], kwargs)
    filter,    // name(args[0] (null in filter blocks), args[1:], kwargs)
    test,      // args[0] is [not] name(args[1:], kwargs)
    neg,
    pos,
    not_,
    binary,  // args[0] <name> args[1]: + - * / // % **
    and_,
    or_,
    compare,  // args[0] ops[0] args[1] ops[1] args[2] ...
    concat,   // args joined with ~
    cond,     // args[1] if args[0] else args[2] (args[2] may be null)
    list,
    tuple,
    dict,  // args: key, value, key, value, ...
  };
  Kind kind;
  int line = 0;
  std::string name;
  Value value;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;
  bool negated = false;
};

struct Node;
using Body = std::vector<Node>;

struct Node {
  enum class Kind {
    text,          // text
    output,        // {{ expr }}
    if_,           // if expr: body, else: else_body
    for_,          // for target in expr [if cond]: body, else: else_body
    set,           // set target = expr
    set_block,     // set target [| filters]: body
    macro,         // macro name(params = defaults): body
    call_block,    // call[(params)] expr: body
    filter_block,  // filter filters: body
    with,          // with targets = values: body
    break_,
    continue_,
  };
  Kind kind;
  int line = 0;
  std::string text;  // text, macro name
  ExprPtr expr;
  ExprPtr target;
  ExprPtr cond;
  std::vector<ExprPtr> filters;  // filter expressions without input
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // per param, null when none
  Body body, else_body;
};

/// Parses a template; throws nuvec::Error naming the line on a syntax
/// error or an unsupported tag.
Body parse(const std::string& source);

}  // namespace nuvec::lm::jinja
