// The tree-walking interpreter: jinja2's scoping (a for loop's body and a
// macro's run in scopes of their own; if does not), its sandboxed attribute
// rules and its default Undefined.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "jinja/ast.h"
#include "jinja/value.h"

namespace nuvec::lm::jinja {

struct Scope {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Scope> parent;
  const Value* find(const std::string& name) const;
};
using ScopePtr = std::shared_ptr<Scope>;

/// Bounds that keep a hostile template from exhausting the machine.
inline constexpr std::size_t kMaxOutput = 64u << 20;    // bytes of any string
inline constexpr int kMaxCallDepth = 100;               // nested macro calls
inline constexpr long long kMaxIterations = 1'000'000;  // loop steps, total

class Interpreter {
 public:
  /// Renders `body` with the context's variables (a dict).
  std::string render(const Body& body, const Value& context);

  Value eval(const Expr& e, const ScopePtr& scope);
  /// Calls a callable value (undefined raises its message).
  Value call(const Value& fn, const Args& args, int line);
  /// `obj.name` and `obj[key]` with jinja2's sandboxed lookup rules.
  Value getattr(const Value& obj, const std::string& name, int line);
  Value getitem(const Value& obj, const Value& key, int line);
  /// `obj[start:stop:step]` (none for an absent part).
  Value slice(const Value& obj, const Value& start, const Value& stop,
              const Value& step, int line);
  /// Fails when a string or list result would pass kMaxOutput.
  static void check_size(std::size_t n, int line);

  /// Filters, tests, methods and globals (filters.cpp, tests.cpp,
  /// methods.cpp, globals.cpp).
  Value filter(const std::string& name, const Value& in, const Args& args,
               int line);
  bool test(const std::string& name, const Value& in, const Args& args,
            int line);
  Value method(const Value& obj, const std::string& name, const Args& args,
               int line);
  /// A bound method for `obj.name`, or an undefined value when `obj`'s type
  /// has no such (safe) method.
  Value method_value(const Value& obj, const std::string& name, int line);
  bool global(const std::string& name, Value* out);

 private:
  enum class Flow { normal, break_, continue_ };
  Flow exec(const Body& body, const ScopePtr& scope, std::string& out);
  Flow exec_for(const Node& n, const ScopePtr& scope, std::string& out);
  void assign(const Expr& target, const Value& v, const ScopePtr& scope,
              int line);
  Value define_macro(const Node& n, const ScopePtr& scope);
  Value call_macro(const Node& n, const std::weak_ptr<Scope>& defining,
                   const Args& args, const Value* caller, int line);
  Value apply_filters(const std::vector<ExprPtr>& filters, Value v,
                      const ScopePtr& scope);
  Args eval_args(const Expr& e, std::size_t first, const ScopePtr& scope);
  Value binary(const std::string& op, const Value& a, const Value& b, int line);
  bool contains(const Value& container, const Value& item, int line);

  ScopePtr root_;
  int call_depth_ = 0;
  long long iterations_ = 0;
};

}  // namespace nuvec::lm::jinja
