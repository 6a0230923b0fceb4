// Modules: trees of parameters with MLX's Module interface (docs/nn.md).
//
//   struct Mlp : nn::Module<Mlp> {
//     nn::Linear fc1, fc2;
//     Mlp(int d, int h) : fc1(d, h), fc2(h, d) {}
//     Array operator()(const Array& x) const { return fc2(nn::relu(fc1(x))); }
//   };
//   NUVEC_TREE(Mlp, fc1, fc2)
//
// Parameter paths are the tree paths ("fc1.weight"), MLX's names.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "nuvec/nn/walk.h"
#include "nuvec/nuvec.h"

namespace nuvec::nn {

/// (path, array) pairs in tree order, as MLX's tree_flatten(module.parameters()).
using NamedArrays = std::vector<std::pair<std::string, Array>>;

/// What every module has, whatever its type: a training flag (MLX's
/// Module.training) and the path it was last named at in its root.
class ModuleBase {
 public:
  ModuleBase() = default;
  ModuleBase(const ModuleBase&) = default;
  ModuleBase(ModuleBase&&) = default;
  ModuleBase& operator=(const ModuleBase&) = default;
  ModuleBase& operator=(ModuleBase&&) = default;
  virtual ~ModuleBase() = default;

  /// The type's name without namespaces ("Linear").
  virtual std::string name() const = 0;
  /// Whether the module is in training mode (MLX's Module.training).
  bool training() const { return training_; }
  /// The path the module was given by the last module-level call on its
  /// root (train, freeze, apply_to_modules, an optimizer's init...): what
  /// its error messages name. Empty for a root, or before any such call.
  const std::string& path() const { return path_; }
  /// The path when there is one, else the type's name: messages start with it.
  std::string where() const { return path_.empty() ? name() : path_; }

  /// Public because layers that behave differently in training list it as
  /// NUVEC_MODE(training_) (a switch retraces compiled steps once).
  bool training_ = true;
  std::string path_;
};

namespace detail {
std::string demangle(const char* mangled);
/// Whether a key of freeze/unfreeze selects the parameter at `path` (the
/// path relative to the module called): the whole path, a prefix of whole
/// components, or the last component (MLX's local names).
bool key_selects(const std::string& key, const std::string& path);
/// The rows of a module summary and its total.
std::string summary_table(const std::string& root, const NamedArrays& leaves);
/// A failed array naming the module: "where: message".
Array layer_error(const ModuleBase& m, ErrorKind kind, const std::string& message);
}  // namespace detail

/// Gives every submodule of `root` its path (see ModuleBase::path).
template <class M>
void name_modules(M& root) {
  struct Namer : Walk {
    void enter_module(const std::string& p, ModuleBase& m) override { m.path_ = p; }
  } namer;
  walk(root, "", namer);
}

/// The base of every module (CRTP): D is the module's own type, declared a
/// tree with NUVEC_TREE.
template <class D>
class Module : public ModuleBase {
 public:
  std::string name() const override { return detail::demangle(typeid(D).name()); }

  /// Every Param and plain array leaf (frozen ones too), not buffers.
  NamedArrays parameters() const { return select(false); }
  /// The leaves that gradients and optimizers see: unfrozen Params and plain arrays.
  NamedArrays trainable_parameters() const { return select(true); }
  /// The Buffer leaves (running statistics and other saved state).
  NamedArrays buffers() const {
    NamedArrays out;
    tree_visit(self(), [&](std::string_view p, const Array& a, LeafKind k, bool) {
      if (k == LeafKind::buffer) out.emplace_back(std::string(p), a);
    });
    return out;
  }
  /// The number of parameter elements (frozen ones included).
  size_t num_parameters() const {
    size_t n = 0;
    for (auto& [p, a] : parameters()) n += a.size();
    return n;
  }

  /// Freezes every Param (no keys) or those the keys select: a full path,
  /// a path prefix ("layers.0"), or a local name ("bias", as MLX's keys=).
  /// With recurse false, only this module's own Params (not submodules').
  D& freeze(const std::vector<std::string>& keys = {}, bool recurse = true) {
    return set_frozen(true, keys, recurse);
  }
  /// The opposite of freeze, with the same selection.
  D& unfreeze(const std::vector<std::string>& keys = {}, bool recurse = true) {
    return set_frozen(false, keys, recurse);
  }

  /// Sets this module and every submodule (and every mode flag) to
  /// training (true) or evaluation (false) mode.
  D& train(bool mode = true) {
    struct Setter : Walk {
      bool on;
      explicit Setter(bool m) : on(m) {}
      void enter_module(const std::string& p, ModuleBase& m) override {
        m.training_ = on;
        m.path_ = p;
      }
      void mode(const std::string&, bool& f) override { f = on; }
    } setter(mode);
    walk(self(), "", setter);
    return self();
  }
  /// train(false).
  D& eval() { return train(false); }

  /// Calls fn(path, module) for this module and every submodule, parents
  /// first (MLX's apply_to_modules); paths are assigned on the way.
  D& apply_to_modules(const std::function<void(const std::string&, ModuleBase&)>& fn) {
    struct Caller : Walk {
      const std::function<void(const std::string&, ModuleBase&)>& fn;
      explicit Caller(const std::function<void(const std::string&, ModuleBase&)>& f) : fn(f) {}
      void enter_module(const std::string& p, ModuleBase& m) override {
        m.path_ = p;
        fn(p, m);
      }
    } caller(fn);
    walk(self(), "", caller);
    return self();
  }

  /// Casts every leaf whose dtype satisfies `predicate` (floating dtypes by
  /// default, as MLX's set_dtype) to `dtype`.
  D& set_dtype(DType dtype, const std::function<bool(DType)>& predicate = is_floating) {
    tree_visit_mut(self(), [&](std::string_view, Array& a) {
      if (predicate(a.dtype())) a = a.astype(dtype);
    });
    return self();
  }

  /// A table of the leaves: path, shape, dtype, elements, and the total.
  std::string summary() const { return detail::summary_table(name(), tree_flatten(self())); }

  /// Writes every leaf (parameters and buffers) to a safetensors file by
  /// path, MLX's names (MLX's save_weights).
  void save_weights(const std::string& file) const { save(file, self()); }
  /// Reads weights saved by save_weights or by MLX. Strict: every leaf
  /// present with its shape and nothing else; partial: what matches. Any
  /// mismatch throws nuvec::Error listing all of them; the module is then
  /// unchanged. Loaded dtypes are kept.
  D& load_weights(const std::string& file, LoadMode mode = LoadMode::strict) {
    auto loaded = io::load_safetensors(file);
    std::map<std::string, Array> arrays(loaded.first.begin(), loaded.first.end());
    tree_load_flat(self(), arrays, mode, file);
    return self();
  }
  /// Loads (path, array) pairs (MLX's load_weights of a list).
  D& load_weights(const NamedArrays& weights, LoadMode mode = LoadMode::strict) {
    std::map<std::string, Array> m(weights.begin(), weights.end());
    tree_load_flat(self(), m, mode, "weights");
    return self();
  }

 private:
  D& self() { return static_cast<D&>(*this); }
  const D& self() const { return static_cast<const D&>(*this); }

  NamedArrays select(bool trainable_only) const {
    NamedArrays out;
    tree_visit(self(), [&](std::string_view p, const Array& a, LeafKind k, bool trainable) {
      if (k == LeafKind::buffer || (trainable_only && !trainable)) return;
      out.emplace_back(std::string(p), a);
    });
    return out;
  }

  D& set_frozen(bool frozen, const std::vector<std::string>& keys, bool recurse) {
    struct Setter : Walk {
      bool frozen, recurse;
      const std::vector<std::string>& keys;
      int depth = 0;
      Setter(bool f, bool r, const std::vector<std::string>& k) : frozen(f), recurse(r), keys(k) {}
      void enter_module(const std::string& p, ModuleBase& m) override {
        m.path_ = p;
        ++depth;
      }
      void leave_module(const std::string&, ModuleBase&) override { --depth; }
      void param(const std::string& p, Param& param) override {
        if (!recurse && depth > 1) return;
        bool selected = keys.empty();
        for (auto& k : keys) selected = selected || detail::key_selects(k, p);
        if (selected) param.frozen = frozen;
      }
    } setter(frozen, recurse, keys);
    walk(self(), "", setter);
    return self();
  }
};

/// MLX's nn.value_and_grad(model, fn): a function of fn's other arguments
/// returning {fn(model, args...), the gradients of the model's trainable
/// parameters as a tree of the model's type} (zeros where frozen). `fn`
/// takes the model first (const M&); the model is read when called.
template <class M, class F>
auto value_and_grad(const M& model, F fn) {
  return [&model, vg = nuvec::value_and_grad(std::move(fn))](const auto&... args) {
    return vg(model, args...);
  };
}

}  // namespace nuvec::nn
