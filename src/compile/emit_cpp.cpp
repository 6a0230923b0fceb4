// Emitting fused regions as C++: one loop per variant over the region's
// values v0, v1, ... (inputs first), each the functor call the eager kernel
// makes, in the eager kernel's types (or its fast variant with the same
// bits, in blocks of small arguments). Literals are bit patterns.
#include "compile/emit_cpp.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "compile/fast_ranges.h"
#include "nuvec/kernels/functors.h"

namespace nuvec::compiler {

const char* cpp_type(DType d) {
  switch (d.val) {
    case DType::Val::bool_: return "bool";
    case DType::Val::uint8: return "unsigned char";
    case DType::Val::uint16: return "unsigned short";
    case DType::Val::uint32: return "unsigned int";
    case DType::Val::uint64: return "unsigned long";
    case DType::Val::int8: return "signed char";
    case DType::Val::int16: return "short";
    case DType::Val::int32: return "int";
    case DType::Val::int64: return "long";
    case DType::Val::float16: return "float16_t";
    case DType::Val::bfloat16: return "bfloat16_t";
    case DType::Val::float32: return "float";
    case DType::Val::float64: return "double";
    default: return "complex64_t";
  }
}

std::string value_type(DType d, bool pairs) {
  return pairs ? std::string("Two<") + cpp_type(d) + ">" : std::string(cpp_type(d));
}

namespace {

const char* carrier(int bytes) {
  switch (bytes) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    default: return "unsigned long long";
  }
}

std::string literal(DType d, uint64_t bits) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "bit_cast<%s>((%s)0x%llxull)", cpp_type(d), carrier(d.size()),
                static_cast<unsigned long long>(bits));
  return buf;
}

// The functor op calls: its registry name (the functor's), or with `small`
// its fast variant for small arguments.
std::string functor(const FusedOp& op, bool small) {
  PrimitiveId id = op.primitive->id();
  if (id == PrimitiveId::AsType) return std::string("Cast<") + cpp_type(op.dtype) + ">";
  std::string name(primitive_name(id));
  return small ? "Small<" + name + ">" : name;
}

// The call of op's functor on its arguments' values; with `pairs` on their
// pairs (kernels/pairs.h).
std::string call(const FusedOp& op, bool small, bool pairs = false) {
  std::ostringstream os;
  os << (pairs ? "pair_call(" : "") << functor(op, small) << (pairs ? "{}, " : "{}(");
  for (size_t a = 0; a < op.args.size(); ++a) os << (a ? ", v" : "v") << op.args[a];
  os << ")";
  return os.str();
}

// `outside |= ...` for a fast variant S of op's functor ("Small<F>").
void or_outside(std::ostream& os, const char* indent, const std::string& s, const std::vector<int>& args,
                bool pairs) {
  os << indent << "outside |= " << (pairs ? "pair_outside<" + s + ">(" : s + "::outside(");
  for (size_t a = 0; a < args.size(); ++a) os << (a ? ", v" : "v") << args[a];
  os << ");\n";
}

// Whether a kernels::Small variant is for GPU kernels only.
template <class S>
constexpr bool gpu_only_v = requires { S::gpu_only; };

// Whether op's functor has a fast variant for small arguments of its
// argument's dtype (kernels::Small), from the registry and the functors;
// with `gpu` also float32 division and exp (Small<Divide>, Small<Exp>:
// only the GPU computes them differently).
bool has_small(const EmitRegion& r, const FusedOp& op, bool gpu = false) {
  if (gpu && op.primitive->id() == PrimitiveId::Divide && op.dtype == float32 &&
      value_dtype(r, op.args[0]) == float32 && value_dtype(r, op.args[1]) == float32)
    return true;
  if (op.args.size() != 1) return false;
  PrimitiveId id = op.primitive->id();
  return dispatch_dtype(value_dtype(r, op.args[0]), [&](auto tag) {
    using T = typename decltype(tag)::type;
#define NUVEC_HAS_SMALL(Name, rule)                                                        \
  if (id == PrimitiveId::Name) {                                                           \
    using S = kernels::Small<kernels::Name>;                                               \
    if constexpr (requires { S{}(T{}); }) return gpu || !gpu_only_v<S>;                   \
    return false;                                                                          \
  }
    NUVEC_UNARY_PRIMITIVES(NUVEC_HAS_SMALL)
#undef NUVEC_HAS_SMALL
    return false;
  });
}

// For `pair_trig`: operation j's partner when j is a Sin and k > j a Cos
// of the same float32/16-bit value, or the other way round (partner[j] = k,
// partner[k] = j); -1 elsewhere. Both come from one kernels::SinCos call.
// Each goes with the first later unpaired one of the other function; when
// an unpaired j is reached, every earlier one of the other function on its
// value is paired already (it would have taken j), so the first unpaired
// entry of that list is the partner: one pass, linear in the region.
std::vector<int> trig_partners(const EmitRegion& r) {
  const auto& ops = r.fused->ops();
  std::vector<int> partner(ops.size(), -1);
  auto is = [&](size_t j, PrimitiveId id) { return ops[j].primitive->id() == id; };
  struct List {
    std::vector<int> at;  // operations on one value, in order
    size_t next = 0;      // entries before it are paired
  };
  std::unordered_map<int64_t, List> lists;  // value * 2 + (cos ? 1 : 0)
  for (size_t j = 0; j < ops.size(); ++j)
    if (is(j, PrimitiveId::Sin) || is(j, PrimitiveId::Cos))
      lists[int64_t{ops[j].args[0]} * 2 + is(j, PrimitiveId::Cos)].at.push_back(static_cast<int>(j));
  for (size_t j = 0; j < ops.size(); ++j) {
    if (partner[j] >= 0 || !(is(j, PrimitiveId::Sin) || is(j, PrimitiveId::Cos))) continue;
    DType d = value_dtype(r, ops[j].args[0]);
    if (!(d == float32 || d == float16 || d == bfloat16)) continue;
    auto it = lists.find(int64_t{ops[j].args[0]} * 2 + !is(j, PrimitiveId::Cos));
    if (it == lists.end()) continue;
    List& other = it->second;
    while (other.next < other.at.size() &&
           (partner[other.at[other.next]] >= 0 || other.at[other.next] < static_cast<int>(j)))
      ++other.next;
    if (other.next == other.at.size()) continue;
    int k = other.at[other.next++];
    partner[j] = k;
    partner[k] = static_cast<int>(j);
  }
  return partner;
}

// Operations [first, last) of the region (value n_in + j for operation j).
// With `pair_trig`, a Sin and a Cos of one value share a SinCos call (made
// at the first of the two, named scV after its value).
void op_range(std::ostream& os, const EmitRegion& r, const char* indent, bool small, size_t first,
              size_t last, bool pair_trig = false, OpChoice choice = {}) {
  const int n_in = r.fused->num_inputs();
  std::vector<int> partner = pair_trig ? trig_partners(r) : std::vector<int>();
  const bool pairs = choice.pairs;
  // The fast variants called, and which of their checks earlier checks
  // imply (fast_ranges.h): those are left out.
  const size_t n_ops = r.fused->ops().size();
  std::vector<bool> fast_at(n_ops, false), shares_call(n_ops, false);
  for (size_t j = 0; small && j < n_ops; ++j) {
    bool skipped = (choice.keep && !(*choice.keep)[j]) || (choice.lookup && !(*choice.lookup)[n_in + j].empty());
    fast_at[j] = !skipped && has_small(r, r.fused->ops()[j], choice.gpu);
    shares_call[j] = !partner.empty() && partner[j] >= 0 && partner[j] < static_cast<int>(j);
  }
  const std::vector<bool> implied = small ? implied_checks(r, fast_at, shares_call) : std::vector<bool>(n_ops);
  for (size_t j = first; j < last; ++j) {
    int v = n_in + static_cast<int>(j);
    const FusedOp& op = r.fused->ops()[j];
    if (choice.keep && !(*choice.keep)[j]) continue;
    const std::string type = value_type(op.dtype, pairs);
    if (choice.lookup && !(*choice.lookup)[v].empty()) {
      os << indent << "const " << type << " v" << v << " = " << (*choice.lookup)[v] << ";\n";
      continue;
    }
    bool fast = fast_at[j];
    bool check = fast && !implied[j];
    if (!partner.empty() && partner[j] >= 0) {
      int first_of = std::min(static_cast<int>(j), partner[j]) + n_in;
      const char* sincos = fast ? "Small<SinCos>" : "SinCos";
      if (first_of == v && check) or_outside(os, indent, sincos, {op.args[0]}, pairs);
      if (first_of == v)
        os << indent << "const auto sc" << v << " = " << (pairs ? "pair_call(" : "") << sincos
           << (pairs ? "{}, v" : "{}(v") << op.args[0] << ");\n";
      const char* part = op.primitive->id() == PrimitiveId::Sin ? ".sin" : ".cos";
      if (pairs)
        os << indent << "const " << type << " v" << v << " = {sc" << first_of << ".a" << part << ", sc"
           << first_of << ".b" << part << "};\n";
      else
        os << indent << "const auto v" << v << " = sc" << first_of << part << ";\n";
    } else {
      if (check) or_outside(os, indent, functor(op, true), op.args, pairs);
      os << indent << "const auto v" << v << " = " << call(op, fast, pairs) << ";\n";
    }
    if (!small)
      os << indent << "static_assert(same_v<decltype(v" << v << "), const " << type << ">, \"dtype of value "
         << v << "\");\n";
  }
}

}  // namespace

void emit_ops(std::ostream& os, const EmitRegion& r, const char* indent, bool small, bool pair_trig,
              OpChoice choice) {
  op_range(os, r, indent, small, 0, r.fused->ops().size(), pair_trig, choice);
}

bool has_small_on_gpu(const EmitRegion& r, size_t j) { return has_small(r, r.fused->ops()[j], true); }

DType value_dtype(const EmitRegion& r, int v) {
  const Fused& f = *r.fused;
  return v < f.num_inputs() ? r.input_dtypes[v] : f.ops()[v - f.num_inputs()].dtype;
}

// Whether the region computes a function of many instructions per element
// (exp, log, trigonometric, hyperbolic, erf...; also power): its time is
// arithmetic, not memory traffic.
bool heavy_op(PrimitiveId id) {
  switch (id) {
    case PrimitiveId::Exp: case PrimitiveId::Expm1: case PrimitiveId::Log:
    case PrimitiveId::Log1p: case PrimitiveId::Log2: case PrimitiveId::Log10:
    case PrimitiveId::Sin: case PrimitiveId::Cos: case PrimitiveId::Tan:
    case PrimitiveId::ArcSin: case PrimitiveId::ArcCos: case PrimitiveId::ArcTan:
    case PrimitiveId::Sinh: case PrimitiveId::Cosh: case PrimitiveId::Tanh:
    case PrimitiveId::ArcSinh: case PrimitiveId::ArcCosh: case PrimitiveId::ArcTanh:
    case PrimitiveId::Sigmoid: case PrimitiveId::Erf: case PrimitiveId::ErfInv:
    case PrimitiveId::Power: case PrimitiveId::ArcTan2: case PrimitiveId::LogAddExp:
      return true;
    default: return false;
  }
}

bool compute_bound(const EmitRegion& r) {
  for (const FusedOp& op : r.fused->ops())
    if (heavy_op(op.primitive->id())) return true;
  return false;
}

std::vector<bool> literal_inputs(const Fused& f) {
  std::vector<bool> is_literal(f.num_inputs(), false);
  for (const auto& l : f.literals()) is_literal[l.input] = true;
  return is_literal;
}

namespace {

// The loads of the non-literal inputs at i (strided: at i * sK).
// Inputs in `skip` are not loaded (the rows kernel reads them once).
void loads(std::ostream& os, const EmitRegion& r, const char* indent, bool strided,
           const std::vector<bool>* skip = nullptr) {
  std::vector<bool> is_literal = literal_inputs(*r.fused);
  for (int k = 0; k < r.fused->num_inputs(); ++k) {
    if (is_literal[k] || (skip && (*skip)[k])) continue;
    os << indent << "const " << cpp_type(r.input_dtypes[k]) << " v" << k << " = p" << k;
    if (strided) os << "[i * s" << k << "];\n";
    else os << "[i];\n";
  }
}

// The loop body: loads, the operations, the stores.
void body(std::ostream& os, const EmitRegion& r, bool strided, const std::vector<bool>* skip = nullptr) {
  const Fused& f = *r.fused;
  loads(os, r, "    ", strided, skip);
  emit_ops(os, r, "    ");
  for (size_t j = 0; j < f.outputs().size(); ++j)
    os << "    q" << j << "[i] = v" << f.outputs()[j] << ";\n";
}

constexpr int kSmallBlock = 256;  // elements per check (in L1)

// Block [b, e) through the strided kernel of region i, with unit strides.
void strided_call(std::ostream& os, const EmitRegion& r, size_t i) {
  const Fused& f = *r.fused;
  std::vector<bool> is_literal = literal_inputs(f);
  os << "    const void* ib[" << f.num_inputs() << "] = {";
  for (int a = 0; a < f.num_inputs(); ++a) {
    os << (a ? ", " : "");
    if (is_literal[a]) os << "nullptr";
    else os << "p" << a << " + b";
  }
  os << "};\n    void* ob[" << f.outputs().size() << "] = {";
  for (size_t j = 0; j < f.outputs().size(); ++j) os << (j ? ", q" : "q") << j << " + b";
  os << "};\n    nuvec_k" << i << "_strided(ib, ob, ones, e - b);\n  }\n";
}

// A loop over the block [b, e) through the fast variants: operations
// [first, last), reading earlier loops' values from their buffers wV and
// writing to wV the values later loops read. The last loop stores the
// outputs: to the buffers tJ when it runs before the check (`checked`
// false), else straight to the outputs.
void fast_loop(std::ostream& os, const EmitRegion& r, size_t first, size_t last,
               const std::vector<bool>& buffered, bool checked, const char* in) {
  const Fused& f = *r.fused;
  const int n_in = f.num_inputs();
  const int lo = n_in + static_cast<int>(first), hi = n_in + static_cast<int>(last);
  const std::string body_in = std::string(in) + "  ";
  os << in << "NUVEC_INDEPENDENT_ITERATIONS\n" << in << "for (long i = b; i < e; ++i) {\n";
  loads(os, r, body_in.c_str(), false);
  for (int v = n_in; v < lo; ++v)
    if (buffered[v])
      os << body_in << "const " << cpp_type(value_dtype(r, v)) << " v" << v << " = w" << v
         << "[i - b];\n";
  op_range(os, r, body_in.c_str(), true, first, last);
  for (int v = lo; v < hi; ++v)
    if (buffered[v]) os << body_in << "w" << v << "[i - b] = v" << v << ";\n";
  if (last == f.ops().size())
    for (size_t j = 0; j < f.outputs().size(); ++j)
      os << body_in << (checked ? "q" : "t") << j << (checked ? "[i]" : "[i - b]") << " = v"
         << f.outputs()[j] << ";\n";
  os << in << "}\n";
}

// The contiguous kernel of region i when it has fast variants: per block of
// kSmallBlock elements, the fast variants while OR-ing whether some
// argument was outside their domain; then the block is finished, or goes
// through the strided kernel (unit strides: the general functors, compiled
// once). Nothing is written to the outputs before the check (an output may
// share an input's buffer). After a block with an argument outside, the
// next 7 go straight to the general loop (the same bits either way; large
// arguments tend to come in runs). The operations after the last one with
// a fast variant run in a second loop over the block, after the check: the
// rest of a chain that depends on sin/cos, in the same loop body, leaves
// the core waiting (the standard set's sin/cos chain measured 0.84
// ns/element on one thread as one loop, 0.67 as two).
void small_blocks(std::ostream& os, const EmitRegion& r, size_t i) {
  const Fused& f = *r.fused;
  const int k = kSmallBlock, n_in = f.num_inputs();
  const size_t n_ops = f.ops().size();
  size_t cut = 0;  // operations [0, cut) in the first loop
  for (size_t j = 0; j < n_ops; ++j)
    if (has_small(r, f.ops()[j])) cut = j + 1;
  auto first_loop = [&](int v) { return v >= n_in && v < n_in + static_cast<int>(cut); };
  std::vector<bool> buffered(n_in + n_ops, false);  // computed before the cut, read after
  for (size_t j = cut; j < n_ops; ++j)
    for (int a : f.ops()[j].args) buffered[a] = buffered[a] || first_loop(a);
  for (int v : f.outputs()) buffered[v] = buffered[v] || (cut < n_ops && first_loop(v));
  os << "  const long ones[" << n_in << "] = {";
  for (int a = 0; a < n_in; ++a) os << (a ? ", 1" : "1");
  os << "};\n  int skip = 0;\n"
     << "  for (long b = 0; b < n; b += " << k << ") {\n"
     << "    const long e = n - b < " << k << " ? n : b + " << k << ";\n"
     << "    if (skip == 0) {\n      unsigned int outside = 0;\n";
  for (size_t j = 0; j < f.outputs().size() && cut == n_ops; ++j)
    os << "      " << cpp_type(value_dtype(r, f.outputs()[j])) << " t" << j << "[" << k << "];\n";
  for (size_t v = 0; v < buffered.size(); ++v)
    if (buffered[v])
      os << "      " << cpp_type(value_dtype(r, static_cast<int>(v))) << " w" << v << "[" << k
         << "];\n";
  fast_loop(os, r, 0, cut, buffered, false, "      ");
  os << "      if (!outside) {\n";
  if (cut < n_ops) {
    fast_loop(os, r, cut, n_ops, buffered, true, "        ");
  } else {
    os << "        NUVEC_INDEPENDENT_ITERATIONS\n        for (long i = b; i < e; ++i) {\n";
    for (size_t j = 0; j < f.outputs().size(); ++j)
      os << "          q" << j << "[i] = t" << j << "[i - b];\n";
    os << "        }\n";
  }
  os << "        continue;\n      }\n      skip = 8;\n    }\n    --skip;\n";
  strided_call(os, r, i);
}

// The streaming kernel of region i (dense inputs, as the contiguous one):
// per tile of kStreamTile elements, the contiguous kernel writes the
// outputs to tiles on the stack, which go to memory with non-temporal
// stores (kernels/stream.h). Calling the contiguous kernel keeps one
// vectorized loop per region to compile (a copy of the loop here made the
// first call's compile 35% longer). Used when the outputs are larger than
// the last-level cache.
void stream_kernel(std::ostream& os, const EmitRegion& r, size_t i) {
  const Fused& f = *r.fused;
  std::vector<bool> is_literal = literal_inputs(f);
  const size_t n_out = f.outputs().size();
  for (size_t j = 0; j < n_out; ++j)
    os << "  alignas(64) " << cpp_type(value_dtype(r, f.outputs()[j])) << " t" << j
       << "[kStreamTile];\n";
  os << "  void* ob[" << n_out << "] = {";
  for (size_t j = 0; j < n_out; ++j) os << (j ? ", t" : "t") << j;
  os << "};\n  for (long b = 0; b < n; b += kStreamTile) {\n"
     << "    const long e = n - b < kStreamTile ? n : b + kStreamTile;\n"
     << "    const void* ib[" << f.num_inputs() << "] = {";
  for (int a = 0; a < f.num_inputs(); ++a) {
    os << (a ? ", " : "");
    if (is_literal[a]) os << "nullptr";
    else os << "p" << a << " + b";
  }
  os << "};\n    nuvec_k" << i << "_contig(ib, ob, e - b);\n";
  for (size_t j = 0; j < n_out; ++j) os << "    stream_tile(q" << j << " + b, t" << j << ", e - b);\n";
  os << "  }\n  stream_fence();\n";
}

bool any_small(const EmitRegion& r) {
  for (const FusedOp& op : r.fused->ops())
    if (has_small(r, op)) return true;
  return false;
}

void pointers(std::ostream& os, const EmitRegion& r, bool strided) {
  const Fused& f = *r.fused;
  std::vector<bool> is_literal = literal_inputs(f);
  emit_literals(os, r, "  ");
  for (int k = 0; k < f.num_inputs(); ++k) {
    if (is_literal[k]) continue;
    const char* t = cpp_type(r.input_dtypes[k]);
    os << "  const " << t << "* __restrict__ p" << k << " = static_cast<const " << t << "*>(in["
       << k << "]);\n";
    if (strided) os << "  const long s" << k << " = strides[" << k << "];\n";
  }
  for (size_t j = 0; j < f.outputs().size(); ++j) {
    const char* t = cpp_type(value_dtype(r, f.outputs()[j]));
    os << "  " << t << "* __restrict__ q" << j << " = static_cast<" << t << "*>(out[" << j << "]);\n";
  }
}

}  // namespace

void emit_literals(std::ostream& os, const EmitRegion& r, const char* indent) {
  for (const auto& l : r.fused->literals())
    os << indent << "const " << cpp_type(r.input_dtypes[l.input]) << " v" << l.input << " = "
       << literal(r.input_dtypes[l.input], l.bits) << ";\n";
}

std::string emit_cpu_kernels(const std::vector<EmitRegion>& regions) {
  std::ostringstream os;
  os << "\n// Generated kernels of fused regions.\nusing namespace nuvec::kernels;\n";
  for (size_t i = 0; i < regions.size(); ++i) {
    for (bool strided : {true, false}) {  // contig may call strided
      os << "\nextern \"C\" void nuvec_k" << i
         << (strided ? "_strided(const void* const* in, void* const* out, const long* strides, long n) {\n"
                     : "_contig(const void* const* in, void* const* out, long n) {\n");
      pointers(os, regions[i], strided);
      if (!strided && any_small(regions[i])) {
        small_blocks(os, regions[i], i);
      } else {
        os << "  NUVEC_INDEPENDENT_ITERATIONS\n  for (long i = 0; i < n; ++i) {\n";
        body(os, regions[i], strided);
        os << "  }\n";
      }
      os << "}\n";
    }
    if (std::find(regions[i].row_scalar.begin(), regions[i].row_scalar.end(), true) !=
        regions[i].row_scalar.end()) {
      // A row of a FusedReduce stage: the inputs that hold one value per
      // row are read once, the others are dense.
      os << "\nextern \"C\" void nuvec_k" << i << "_rows(const void* const* in, void* const* out, long n) {\n";
      pointers(os, regions[i], false);
      std::vector<bool> is_literal = literal_inputs(*regions[i].fused);
      for (int k = 0; k < regions[i].fused->num_inputs(); ++k)
        if (regions[i].row_scalar[k] && !is_literal[k])
          os << "  const " << cpp_type(regions[i].input_dtypes[k]) << " v" << k << " = p" << k << "[0];\n";
      os << "  NUVEC_INDEPENDENT_ITERATIONS\n  for (long i = 0; i < n; ++i) {\n";
      body(os, regions[i], false, &regions[i].row_scalar);
      os << "  }\n}\n";
    }
    // Regions with a transcendental function are compute-bound: streaming
    // their stores measured 5-14% slower (GELU, SwiGLU), so they get none.
    if (compute_bound(regions[i])) continue;
    os << "\nextern \"C\" void nuvec_k" << i << "_stream(const void* const* in, void* const* out, long n) {\n";
    pointers(os, regions[i], false);
    stream_kernel(os, regions[i], i);
    os << "}\n";
  }
  return os.str();
}

}  // namespace nuvec::compiler
