// Random programs of element-wise operations for the compile property tests
// (compile_property_test.cpp on the CPU, gpu_compile_test.cpp on the GPU):
// every unary and binary op, casts, select, scalar constants and several
// outputs, over random shapes, layouts (broadcast, transposed, strided) and
// dtypes; optionally reductions over trailing axes among them.
#pragma once

#include <chrono>
#include <functional>
#include <random>
#include <sstream>

#include "support/bits.h"
#include "support/gpu.h"
#include <nuvec/compile.h>
#include <nuvec/nuvec.h>

namespace nuvec::testing {

using Unary = std::function<Array(const Array&)>;
using Binary = std::function<Array(const Operand&, const Operand&)>;

inline const std::vector<std::pair<const char*, Unary>>& unary_ops() {
  static const std::vector<std::pair<const char*, Unary>> ops = {
#define NUVEC_ENTRY(name) {#name, [](const Array& x) { return ops::name(x); }},
      NUVEC_UNARY_OPS(NUVEC_ENTRY)
#undef NUVEC_ENTRY
  };
  return ops;
}

inline const std::vector<std::pair<const char*, Binary>>& binary_ops() {
  static const std::vector<std::pair<const char*, Binary>> ops = {
#define NUVEC_ENTRY(name) {#name, [](const Operand& a, const Operand& b) { return ops::name(a, b); }},
      NUVEC_BINARY_OPS(NUVEC_ENTRY)
#undef NUVEC_ENTRY
  };
  return ops;
}


// The reductions programs use: over axes `from`.. (trailing), keeping them.
inline const char* const kReduceNames[] = {"sum", "max", "min", "prod", "mean", "all"};
inline Array reduce_op(int fn, const Array& x, int from) {
  std::vector<int> axes;
  for (int d = from; d < x.ndim(); ++d) axes.push_back(d);
  switch (fn) {
    case 0: return ops::sum(x, axes, true);
    case 1: return ops::max(x, axes, true);
    case 2: return ops::min(x, axes, true);
    case 3: return ops::prod(x, axes, true);
    case 4: return ops::mean(x, axes, true);
    default: return ops::all(x, axes, true);
  }
}

// One step of a program: an op on earlier values (or a scalar constant).
struct Op {
  enum Kind { unary, binary, scalar_left, scalar_right, cast, select, reduce } kind;
  int fn = 0;
  int a = 0, b = 0, c = 0;
  double scalar = 0;
  DType dtype = float32;
};

struct Program {
  int inputs = 0;
  std::vector<Op> ops;
  std::vector<int> outputs;
  std::string text;
};

inline Array apply_op(const Op& op, const std::vector<Array>& v) {
  switch (op.kind) {
    case Op::unary: return unary_ops()[op.fn].second(v[op.a]);
    case Op::binary: return binary_ops()[op.fn].second(v[op.a], v[op.b]);
    case Op::scalar_left: return binary_ops()[op.fn].second(op.scalar, v[op.a]);
    case Op::scalar_right: return binary_ops()[op.fn].second(v[op.a], op.scalar);
    case Op::cast: return ops::astype(v[op.a], op.dtype);
    case Op::reduce: return reduce_op(op.fn, v[op.a], op.b);
    default: return ops::where(v[op.c], v[op.a], v[op.b]);
  }
}

inline std::vector<Array> run(const Program& p, const std::vector<Array>& in) {
  std::vector<Array> v(in.begin(), in.end());
  for (const auto& op : p.ops) v.push_back(apply_op(op, v));
  std::vector<Array> out;
  for (int o : p.outputs) out.push_back(v[o]);
  return out;
}

// An input of `shape` in a random layout: dense, broadcast from fewer or
// size-1 axes, transposed, or every other element of a larger array.
inline Array input(std::mt19937& rng, const Shape& shape, DType dtype, int seed) {
  auto values = [&](const Shape& s) {
    Array x = random::normal(s, random::key(seed)) * 4.0f;
    return dtype == bool_ ? x > 0.0f : x.astype(dtype);
  };
  int layout = static_cast<int>(rng() % 4);
  int n = static_cast<int>(shape.size());
  if (layout == 1) {
    Shape s = shape;
    for (auto& d : s)
      if (rng() % 2) d = 1;
    int drop = n > 0 ? static_cast<int>(rng() % (n + 1)) : 0;
    s.erase(s.begin(), s.begin() + drop);
    return values(s);
  }
  if (layout == 2 && n >= 2) {
    Shape s(shape.rbegin(), shape.rend());
    return ops::transpose(values(s));
  }
  if (layout == 3 && n >= 1) {
    Shape s = shape;
    s.back() *= 2;
    std::vector<int> start(n, 0), stop(s.begin(), s.end()), step(n, 1);
    step.back() = 2;
    return ops::slice(values(s), start, stop, step);
  }
  return values(shape);
}

// A random program on `inputs`; each step is kept only if it is valid for
// its operands' dtypes (checked by building it eagerly).
inline Program program(std::mt19937& rng, const std::vector<Array>& inputs, bool reductions = false) {
  Program p;
  p.inputs = static_cast<int>(inputs.size());
  std::vector<Array> v(inputs.begin(), inputs.end());
  std::ostringstream text;
  int steps = 2 + static_cast<int>(rng() % 7);
  for (int tries = 0; static_cast<int>(p.ops.size()) < steps && tries < 60; ++tries) {
    Op op;
    int n = static_cast<int>(v.size());
    op.a = static_cast<int>(rng() % n);
    op.b = static_cast<int>(rng() % n);
    op.c = static_cast<int>(rng() % n);
    switch (reductions && rng() % 4 == 0 ? 8u : rng() % 8) {
      case 0: case 1: case 2:
        op.kind = Op::unary;
        op.fn = static_cast<int>(rng() % unary_ops().size());
        break;
      case 3: case 4:
        op.kind = Op::binary;
        op.fn = static_cast<int>(rng() % binary_ops().size());
        break;
      case 5:
        op.kind = rng() % 2 ? Op::scalar_right : Op::scalar_left;
        op.fn = static_cast<int>(rng() % binary_ops().size());
        op.scalar = rng() % 2 ? static_cast<double>(static_cast<int>(rng() % 7) - 3)
                              : (static_cast<double>(rng() % 1000) - 500.0) / 128.0;
        break;
      case 6:
        op.kind = Op::cast;
        op.dtype = kDtypes[rng() % std::size(kDtypes)];
        break;
      case 8:
        op.kind = Op::reduce;
        op.fn = static_cast<int>(rng() % std::size(kReduceNames));
        if (v[op.a].ndim() == 0) continue;
        op.b = static_cast<int>(rng() % v[op.a].ndim());
        break;
      default:
        op.kind = Op::select;
        if (!(v[op.c].dtype() == bool_)) continue;
    }
    Array r = apply_op(op, v);
    if (r.is_failed()) continue;
    v.push_back(r);
    p.ops.push_back(op);
    text << " v" << v.size() - 1 << "=";
    switch (op.kind) {
      case Op::unary: text << unary_ops()[op.fn].first << "(v" << op.a << ")"; break;
      case Op::binary: text << binary_ops()[op.fn].first << "(v" << op.a << ",v" << op.b << ")"; break;
      case Op::scalar_left: text << binary_ops()[op.fn].first << "(" << op.scalar << ",v" << op.a << ")"; break;
      case Op::scalar_right: text << binary_ops()[op.fn].first << "(v" << op.a << "," << op.scalar << ")"; break;
      case Op::cast: text << "astype(v" << op.a << "," << op.dtype << ")"; break;
      case Op::reduce: text << kReduceNames[op.fn] << "(v" << op.a << "," << op.b << "..)"; break;
      default: text << "where(v" << op.c << ",v" << op.a << ",v" << op.b << ")";
    }
  }
  int n = static_cast<int>(v.size());
  p.outputs.push_back(n - 1);
  for (int k = static_cast<int>(rng() % 3); k > 0; --k) p.outputs.push_back(static_cast<int>(rng() % n));
  p.text = text.str();
  return p;
}

struct Case {
  Program program;
  std::vector<Array> inputs;
};

// With `reductions`, programs also reduce over trailing axes (and shapes
// are larger, so that rows run past the reductions' groups of 16).
inline Case random_case(std::mt19937& rng, int seed, bool reductions = false) {
  Shape shape;
  for (int r = static_cast<int>(rng() % 4); r > 0; --r)
    shape.push_back(1 + static_cast<int>(rng() % (reductions ? 40 : 6)));
  Case c;
  int n_in = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < n_in; ++i)
    c.inputs.push_back(input(rng, shape, kDtypes[rng() % std::size(kDtypes)], seed * 7 + i));
  c.program = program(rng, c.inputs, reductions);
  return c;
}

inline bool same_bits(const std::vector<Array>& a, const std::vector<Array>& b, std::string& why) {
  if (a.size() != b.size()) return why = "output count", false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i].dtype() == b[i].dtype()) || a[i].shape() != b[i].shape())
      return why = "output " + std::to_string(i) + " dtype/shape", false;
    if (bits_of(a[i]) != bits_of(b[i])) return why = "output " + std::to_string(i) + " bits", false;
  }
  return true;
}

inline uint32_t daily_seed() {
  auto days = std::chrono::duration_cast<std::chrono::hours>(
                  std::chrono::system_clock::now().time_since_epoch()).count() / 24;
  return static_cast<uint32_t>(days);
}

// `count` random cases traced as one function (so that their regions share
// one kernel build): f() runs each case's program on its slice of inputs.
struct Batch {
  std::vector<Case> cases;
  std::vector<Array> inputs;
  std::string text;
  FlatFunction f() const {
    return [this](const Arrays& in) {
      Arrays out;
      size_t k = 0;
      for (const auto& c : cases) {
        Arrays mine(in.begin() + k, in.begin() + k + c.inputs.size());
        k += c.inputs.size();
        for (auto& o : run(c.program, mine)) out.push_back(o);
      }
      return out;
    };
  }
};

inline Batch batch(uint32_t seed, int count, int first_input_seed, bool reductions = false) {
  std::mt19937 rng(seed);
  Batch b;
  for (int i = 0; i < count; ++i) {
    b.cases.push_back(random_case(rng, first_input_seed + i, reductions));
    for (const auto& in : b.cases.back().inputs) b.inputs.push_back(in);
    b.text += "\ncase " + std::to_string(i) + ":" + b.cases.back().program.text;
  }
  return b;
}

}  // namespace nuvec::testing
