// Statements and expressions.
#include "jinja/interpreter.h"

namespace nuvec::lm::jinja {

const Value* Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent.get()) {
    auto it = s->vars.find(name);
    if (it != s->vars.end()) return &it->second;
  }
  return nullptr;
}

void Interpreter::check_size(std::size_t n, int line) {
  if (n > kMaxOutput)
    fail(line,
         "output larger than " + std::to_string(kMaxOutput >> 20) + " MiB");
}

std::string Interpreter::render(const Body& body, const Value& context) {
  root_ = std::make_shared<Scope>();
  if (context.type == Type::dict)
    for (const auto& [k, v] : context.dict->items)
      if (k.is_string()) root_->vars[k.s] = v;
  std::string out;
  exec(body, root_, out);
  root_.reset();
  return out;
}

static ScopePtr child(const ScopePtr& parent) {
  auto s = std::make_shared<Scope>();
  s->parent = parent;
  return s;
}

Interpreter::Flow Interpreter::exec(const Body& body, const ScopePtr& scope,
                                    std::string& out) {
  for (const Node& n : body) {
    switch (n.kind) {
      case Node::Kind::text:
        out += n.text;
        break;
      case Node::Kind::output: {
        out += to_str(eval(*n.expr, scope));
        break;
      }
      case Node::Kind::if_: {
        Flow f = exec(truthy(eval(*n.expr, scope)) ? n.body : n.else_body,
                      scope, out);
        if (f != Flow::normal) return f;
        break;
      }
      case Node::Kind::for_: {
        Flow f = exec_for(n, scope, out);
        if (f != Flow::normal) return f;
        break;
      }
      case Node::Kind::set:
        assign(*n.target, eval(*n.expr, scope), scope, n.line);
        break;
      case Node::Kind::set_block: {
        std::string text;
        exec(n.body, child(scope), text);
        assign(*n.target, apply_filters(n.filters, Value::string(text), scope),
               scope, n.line);
        break;
      }
      case Node::Kind::macro:
        scope->vars[n.text] = define_macro(n, scope);
        break;
      case Node::Kind::call_block: {
        // The body becomes `caller`, a macro with the block's parameters.
        Value caller = define_macro(n, scope);
        const Expr& c = *n.expr;
        Value fn = eval(*c.args[0], scope);
        Args args = eval_args(c, 1, scope);
        args.kw.emplace_back("caller", caller);
        out += to_str(call(fn, args, n.line));
        break;
      }
      case Node::Kind::filter_block: {
        std::string text;
        Flow f = exec(n.body, scope, text);
        out += to_str(apply_filters(n.filters, Value::string(text), scope));
        if (f != Flow::normal) return f;
        break;
      }
      case Node::Kind::with: {
        ScopePtr s = child(scope);
        for (std::size_t k = 0; k < n.params.size(); ++k)
          s->vars[n.params[k]] = eval(*n.defaults[k], scope);
        Flow f = exec(n.body, s, out);
        if (f != Flow::normal) return f;
        break;
      }
      case Node::Kind::break_:
        return Flow::break_;
      case Node::Kind::continue_:
        return Flow::continue_;
    }
    check_size(out.size(), n.line);
  }
  return Flow::normal;
}

Interpreter::Flow Interpreter::exec_for(const Node& n, const ScopePtr& scope,
                                        std::string& out) {
  List items = iterate(eval(*n.expr, scope), n.line);
  if (n.cond) {  // `for x in xs if cond`: loop.* count the kept items
    List kept;
    for (const Value& item : items) {
      if (++iterations_ > kMaxIterations) fail(n.line, "too many loop steps");
      ScopePtr s = child(scope);
      assign(*n.target, item, s, n.line);
      if (truthy(eval(*n.cond, s))) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    exec(n.else_body, child(scope), out);
    return Flow::normal;
  }
  const auto len = static_cast<std::int64_t>(items.size());
  for (std::int64_t k = 0; k < len; ++k) {
    if (++iterations_ > kMaxIterations) fail(n.line, "too many loop steps");
    ScopePtr s = child(scope);
    Dict loop;
    auto put = [&](const char* key, Value v) {
      loop.items.emplace_back(Value::string(key), std::move(v));
    };
    put("index", Value::integer(k + 1));
    put("index0", Value::integer(k));
    put("revindex", Value::integer(len - k));
    put("revindex0", Value::integer(len - k - 1));
    put("first", Value::boolean(k == 0));
    put("last", Value::boolean(k == len - 1));
    put("length", Value::integer(len));
    put("depth", Value::integer(1));
    put("depth0", Value::integer(0));
    if (k > 0) put("previtem", items[static_cast<std::size_t>(k - 1)]);
    if (k + 1 < len) put("nextitem", items[static_cast<std::size_t>(k + 1)]);
    put("cycle",
        Value::callable("cycle", [k](Interpreter&, const Args& a, int line) {
          if (a.pos.empty()) fail(line, "no items for cycling given");
          return a.pos[static_cast<std::size_t>(k) % a.pos.size()];
        }));
    s->vars["loop"] = Value::make_dict(std::move(loop));
    assign(*n.target, items[static_cast<std::size_t>(k)], s, n.line);
    Flow f = exec(n.body, s, out);
    if (f == Flow::break_) break;
  }
  return Flow::normal;
}

void Interpreter::assign(const Expr& target, const Value& v,
                         const ScopePtr& scope, int line) {
  if (target.kind == Expr::Kind::name) {
    scope->vars[target.name] = v;
  } else if (target.kind == Expr::Kind::ns_ref) {
    const Value* ns = scope->find(target.name);
    if (!ns || ns->type != Type::ns)
      fail(line, "cannot assign attribute on non-namespace object");
    if (!target.ops[0].empty() && target.ops[0][0] == '_')
      fail(line,
           "Chat templates cannot store underscore-prefixed attributes "
           "on a namespace");
    ns->dict->set(Value::string(target.ops[0]), v);
  } else {  // a tuple of names: unpack
    List items = iterate(v, line);
    if (items.size() != target.args.size())
      fail(line, items.size() < target.args.size()
                     ? "not enough values to unpack"
                     : "too many values to unpack");
    for (std::size_t k = 0; k < items.size(); ++k)
      assign(*target.args[k], items[k], scope, line);
  }
}

Value Interpreter::define_macro(const Node& n, const ScopePtr& scope) {
  std::weak_ptr<Scope> defining = scope;
  const Node* node = &n;
  return Value::callable(
      n.text, [node, defining](Interpreter& in, const Args& a, int line) {
        return in.call_macro(*node, defining, a, nullptr, line);
      });
}

Value Interpreter::call_macro(const Node& n,
                              const std::weak_ptr<Scope>& defining,
                              const Args& args, const Value*, int line) {
  if (call_depth_ >= kMaxCallDepth)
    fail(line,
         "macro calls nested deeper than " + std::to_string(kMaxCallDepth));
  ScopePtr parent = defining.lock();
  ScopePtr s = child(parent ? parent : root_);
  if (args.pos.size() > n.params.size())
    fail(line, "macro '" + n.text + "' takes not more than " +
                   std::to_string(n.params.size()) + " argument(s)");
  for (const auto& [k, v] : args.kw) {
    bool known = k == "caller";
    for (const auto& p : n.params) known = known || p == k;
    if (!known)
      fail(line,
           "macro '" + n.text + "' takes no keyword argument '" + k + "'");
    s->vars[k] = v;
  }
  for (std::size_t k = 0; k < n.params.size(); ++k) {
    if (k < args.pos.size()) {
      s->vars[n.params[k]] = args.pos[k];
    } else if (!s->vars.count(n.params[k])) {
      s->vars[n.params[k]] =
          n.defaults[k] ? eval(*n.defaults[k], s)
                        : Value::undefined("parameter '" + n.params[k] +
                                           "' was not provided");
    }
  }
  ++call_depth_;
  std::string out;
  try {
    exec(n.body, s, out);
  } catch (...) {
    --call_depth_;
    throw;
  }
  --call_depth_;
  return Value::string(std::move(out));
}

Value Interpreter::apply_filters(const std::vector<ExprPtr>& filters, Value v,
                                 const ScopePtr& scope) {
  for (const ExprPtr& f : filters) {
    Args args = eval_args(*f, 1, scope);
    v = filter(f->name, v, args, f->line);
  }
  return v;
}

Args Interpreter::eval_args(const Expr& e, std::size_t first,
                            const ScopePtr& scope) {
  Args a;
  for (std::size_t k = first; k < e.args.size(); ++k)
    a.pos.push_back(eval(*e.args[k], scope));
  for (const auto& [name, x] : e.kwargs)
    a.kw.emplace_back(name, eval(*x, scope));
  return a;
}

Value Interpreter::call(const Value& fn, const Args& args, int line) {
  if (fn.is_undefined()) fail(line, fn.s);
  if (fn.type != Type::callable)
    fail(line, "'" + type_name(fn) + "' object is not callable");
  return fn.fn->fn(*this, args, line);
}

Value Interpreter::eval(const Expr& e, const ScopePtr& scope) {
  using K = Expr::Kind;
  switch (e.kind) {
    case K::constant:
      return e.value;
    case K::name: {
      if (const Value* v = scope->find(e.name)) return *v;
      Value g;
      if (global(e.name, &g)) return g;
      return Value::undefined("'" + e.name + "' is undefined");
    }
    case K::ns_ref:
      fail(e.line, "a namespace reference is only an assignment target");
    case K::getattr:
      return getattr(eval(*e.args[0], scope), e.name, e.line);
    case K::getitem:
      return getitem(eval(*e.args[0], scope), eval(*e.args[1], scope), e.line);
    case K::slice: {
      Value obj = eval(*e.args[0], scope);
      Value parts[3];
      for (int k = 0; k < 3; ++k)
        parts[k] = e.args[k + 1] ? eval(*e.args[k + 1], scope) : Value::none();
      return slice(obj, parts[0], parts[1], parts[2], e.line);
    }
    case K::call: {
      Value fn = eval(*e.args[0], scope);
      return call(fn, eval_args(e, 1, scope), e.line);
    }
    case K::filter: {
      Value in = eval(*e.args[0], scope);
      return filter(e.name, in, eval_args(e, 1, scope), e.line);
    }
    case K::test: {
      Value in = eval(*e.args[0], scope);
      bool r = test(e.name, in, eval_args(e, 1, scope), e.line);
      return Value::boolean(e.negated ? !r : r);
    }
    case K::neg:
    case K::pos: {
      Value v = eval(*e.args[0], scope);
      if (v.is_undefined()) fail(e.line, v.s);
      if (!v.is_number())
        fail(e.line, std::string("bad operand type for unary ") +
                         (e.kind == K::neg ? "-" : "+") + ": '" + type_name(v) +
                         "'");
      if (e.kind == K::pos)
        return v.type == Type::boolean ? Value::integer(v.b) : v;
      if (v.type == Type::floating) return Value::floating(-v.f);
      if (v.as_int() == INT64_MIN) fail(e.line, "integer overflow");
      return Value::integer(-v.as_int());
    }
    case K::not_:
      return Value::boolean(!truthy(eval(*e.args[0], scope)));
    case K::and_: {
      Value a = eval(*e.args[0], scope);
      return truthy(a) ? eval(*e.args[1], scope) : a;
    }
    case K::or_: {
      Value a = eval(*e.args[0], scope);
      return truthy(a) ? a : eval(*e.args[1], scope);
    }
    case K::binary:
      return binary(e.name, eval(*e.args[0], scope), eval(*e.args[1], scope),
                    e.line);
    case K::compare: {
      Value left = eval(*e.args[0], scope);
      for (std::size_t k = 0; k < e.ops.size(); ++k) {
        Value right = eval(*e.args[k + 1], scope);
        const std::string& op = e.ops[k];
        bool r;
        if (op == "==") {
          r = equal(left, right);
        } else if (op == "!=") {
          r = !equal(left, right);
        } else if (op == "in") {
          r = contains(right, left, e.line);
        } else if (op == "notin") {
          r = !contains(right, left, e.line);
        } else {
          int c = compare(left, right, e.line);
          r = op == "<"    ? c < 0
              : op == "<=" ? c <= 0
              : op == ">"  ? c > 0
                           : c >= 0;
        }
        if (!r) return Value::boolean(false);
        left = std::move(right);
      }
      return Value::boolean(true);
    }
    case K::concat: {
      std::string s;
      for (const ExprPtr& a : e.args) {
        s += to_str(eval(*a, scope));
        check_size(s.size(), e.line);
      }
      return Value::string(std::move(s));
    }
    case K::cond: {
      if (truthy(eval(*e.args[0], scope))) return eval(*e.args[1], scope);
      if (e.args[2]) return eval(*e.args[2], scope);
      return Value::undefined(
          "the inline if-expression evaluated to false and no else section "
          "was defined.");
    }
    case K::list:
    case K::tuple: {
      List items;
      for (const ExprPtr& a : e.args) items.push_back(eval(*a, scope));
      return Value::make_list(std::move(items), e.kind == K::tuple);
    }
    case K::dict: {
      Dict d;
      for (std::size_t k = 0; k + 1 < e.args.size(); k += 2)
        d.set(eval(*e.args[k], scope), eval(*e.args[k + 1], scope));
      return Value::make_dict(std::move(d));
    }
  }
  return Value::none();
}

}  // namespace nuvec::lm::jinja
