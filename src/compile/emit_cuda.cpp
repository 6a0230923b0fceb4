// Emitting a fused region as CUDA C++ (emit_cpp.h: emit_cuda_kernel). The
// values and operations are the CPU emitter's (the same functor calls in the
// same dtypes), so a generated GPU kernel gives the unfused kernels' bits.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "compile/emit_cpp.h"

namespace nuvec::compiler {

namespace {

struct Params {
  std::vector<int> inputs;       // non-literal inputs, in parameter order
  std::vector<DType> out_types;  // per output
  int n = 4;                     // elements per thread (contiguous kernel)
  int pack = 4;                  // elements per 16-byte pack
  std::string suffix;            // of the kernels' names
  std::vector<GpuTable> tables;  // values the contiguous kernel looks up
};

// Whether the region computes (not looks up) an operation that has a fast
// variant for small arguments on the GPU (kernels::Small).
bool computes_small(const EmitRegion& r, const std::vector<GpuTable>& tables) {
  const int n_in = r.fused->num_inputs();
  for (size_t j = 0; j < r.fused->ops().size(); ++j) {
    bool looked_up = false;
    for (const GpuTable& t : tables) looked_up = looked_up || t.value == n_in + static_cast<int>(j);
    if (has_small_on_gpu(r, j) && !looked_up) return true;
  }
  return false;
}

Params params_of(const EmitRegion& r, int index) {
  Params p;
  CudaParams c = cuda_params(r);
  p.inputs = c.inputs;
  p.n = c.per_thread;
  // Several packs per thread: interleaved across the block (each pack's
  // loads coalesced over the warp) for regions of 1- or 2-byte dtypes and
  // regions with fast variants for small arguments (kernels::Small: their
  // packs are checked and computed one at a time), consecutive (one wide
  // pack) for the others. Measured on the H200, ms, consecutive /
  // interleaved: bfloat16 SwiGLU 0.114 / 0.107-0.108 (two runs each);
  // float32 GELU (tanh) 0.131 / 0.132-0.134, the float32 sin/cos chain
  // 0.193-0.195 / 0.186-0.192 (five runs each), the rest level.
  // NUVEC_GPU_INTERLEAVE=0 or 1 forces one, for tuning; read once.
  static const int interleave = [] {
    const char* e = std::getenv("NUVEC_GPU_INTERLEAVE");
    return e ? std::atoi(e) : -1;
  }();
  const bool spread = interleave == 1 || (interleave != 0 && (c.pack >= 8 || computes_small(r, c.tables)));
  p.pack = spread ? c.pack : c.per_thread;
  p.tables = c.tables;
  for (int v : r.fused->outputs()) p.out_types.push_back(value_dtype(r, v));
  char suffix[16];  // (snprintf: g++ 12 warns falsely on "_" + to_string)
  std::snprintf(suffix, sizeof suffix, "_%d", index);
  p.suffix = suffix;
  return p;
}

void signature(std::ostream& os, const EmitRegion& r, const Params& p, const char* name,
               const char* last) {
  os << "extern \"C\" __global__ void __launch_bounds__(256) " << name << p.suffix << "(";
  for (int k : p.inputs)
    os << "const " << cpp_type(r.input_dtypes[k]) << "* __restrict__ p" << k << ", ";
  for (size_t j = 0; j < p.out_types.size(); ++j)
    os << cpp_type(p.out_types[j]) << "* __restrict__ q" << j << ", ";
  os << "long long n, " << last << ") {\n";
  // Held launches' programmatic edges (launch.cuh, enter_held_kernel).
  os << "#if __CUDA_ARCH__ >= 900\n"
        "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n"
        "  asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");\n"
        "#endif\n";
}

void stores(std::ostream& os, const EmitRegion& r, const char* indent, const char* at) {
  const auto& outs = r.fused->outputs();
  for (size_t j = 0; j < outs.size(); ++j) os << indent << "q" << j << at << " = v" << outs[j] << ";\n";
}

const char* table_word(int size) { return size == 1 ? "unsigned char" : "unsigned short"; }

// Per value, the expression that looks it up in its table ("" for none);
// with `pairs`, both halves of the pair.
std::vector<std::string> lookups(const EmitRegion& r, const Params& p, bool pairs = false) {
  std::vector<std::string> l(r.fused->num_inputs() + r.fused->ops().size());
  for (size_t t = 0; t < p.tables.size(); ++t) {
    const GpuTable& g = p.tables[t];
    const std::string type = cpp_type(value_dtype(r, g.value));
    auto one = [&](const char* half) {
      return "bit_cast<" + type + ">(__ldg(t" + std::to_string(t) + " + bit_cast<unsigned short>(v" +
             std::to_string(g.input) + half + ")))";
    };
    std::ostringstream e;  // (not "{" + ...: g++ 12 warns falsely)
    if (pairs) e << "{" << one(".a") << ", " << one(".b") << "}";
    else e << one("");
    l[g.value] = e.str();
  }
  return l;
}

// Whether the contiguous kernel computes its packs a pair of adjacent
// elements at a time (kernels/pairs.h): where the region adds, subtracts
// or multiplies 16-bit floats, which then take one paired instruction a
// pair. NUVEC_GPU_PAIRS=0 or 1 (read once) forces it off or on, for tuning.
bool use_pairs(const EmitRegion& r) {
  static const int forced = [] {
    const char* e = std::getenv("NUVEC_GPU_PAIRS");
    return e ? std::atoi(e) : -1;
  }();
  if (forced == 0 || forced == 1) return forced == 1;
  for (const FusedOp& op : r.fused->ops()) {
    PrimitiveId id = op.primitive->id();
    bool arith = id == PrimitiveId::Add || id == PrimitiveId::Subtract || id == PrimitiveId::Multiply;
    if (arith && (op.dtype == float16 || op.dtype == bfloat16)) return true;
  }
  return false;
}

// Whether the contiguous kernel takes its packs through the fast variants
// for small arguments first (sin, cos, float32 division and exp:
// kernels::Small): where an operation that has one is computed (not
// looked up).
// NUVEC_GPU_SMALL_PACKS=0 (read once) turns it off, for tuning.
bool small_packs(const EmitRegion& r, const std::vector<GpuTable>& tables) {
  static const bool enabled = [] {
    const char* e = std::getenv("NUVEC_GPU_SMALL_PACKS");
    return !(e && std::string(e) == "0");
  }();
  return enabled && computes_small(r, tables);
}

// Input a's element i: dense (len 0), one value (len 1), or a row of len
// values repeated (i % len).
void contig(std::ostream& os, const EmitRegion& r, const Params& p) {
  std::string last = "NvRows m";
  for (size_t t = 0; t < p.tables.size(); ++t)
    last += std::string(", const ") + table_word(value_dtype(r, p.tables[t].value).size()) +
            "* __restrict__ t" + std::to_string(t);
  const std::vector<std::string> looked_up = lookups(r, p);
  const OpChoice choice{nullptr, &looked_up, true};
  // With pairs, the packs hold E = W / 2 pairs (kernels::Two) and the
  // pack loops compute pairs; the element-by-element tail does not.
  const bool pairs = use_pairs(r);
  const std::vector<std::string> pair_looked_up = pairs ? lookups(r, p, true) : looked_up;
  const OpChoice pack_choice{nullptr, &pair_looked_up, true, pairs};
  auto elem = [&](DType d) { return value_type(d, pairs); };
  signature(os, r, p, "nuvec_contig", last.c_str());
  emit_literals(os, r, "  ");
  // Below 2^31 elements the position in a repeated row comes from a
  // multiply and a shift (kernels/fastdiv.h), not a 64-bit remainder.
  // A block covers blockDim * N elements: P packs of W per thread, pack j
  // of thread t at (j * blockDim + t) * W, so each pack's loads and stores
  // are coalesced across the warp. A block that reaches past n goes element
  // by element.
  os << "  const bool n31 = n < 2147483648LL;\n";
  os << "  constexpr int W = " << p.pack << ", P = " << p.n / p.pack << ", E = " << (pairs ? "W / 2" : "W")
     << ";\n"
     << "  const long long b0 = static_cast<long long>(blockIdx.x) * blockDim.x * (W * P);\n"
     << "  long long at[P];\n"
     << "  for (int j = 0; j < P; ++j) at[j] = b0 + (static_cast<long long>(j) * blockDim.x + threadIdx.x) * W;\n"
     << "  if (b0 + static_cast<long long>(blockDim.x) * (W * P) <= n) {\n";
  for (size_t a = 0; a < p.inputs.size(); ++a) {
    int k = p.inputs[a];
    const std::string t = elem(r.input_dtypes[k]);
    os << "    NvPack<" << t << ", E> l" << k << "[P];\n";
    if (k < static_cast<int>(r.dense.size()) && r.dense[k]) {
      os << "#pragma unroll\n    for (int j = 0; j < P; ++j) l" << k << "[j] = *reinterpret_cast<const NvPack<" << t
         << ", E>*>(p" << k << " + at[j]);\n";
      continue;
    }
    os << "    if (m.len[" << a << "] == 1) {\n"
       << "      const " << t << " s = " << (pairs ? "as_two(p" : "(p") << k << "[0]);\n"
       << "      for (int j = 0; j < P; ++j)\n"
       << "        for (int u = 0; u < E; ++u) l" << k << "[j].v[u] = s;\n"
       << "    } else {\n"
       << "#pragma unroll\n"
       << "      for (int j = 0; j < P; ++j)\n"
       << "        l" << k << "[j] = *reinterpret_cast<const NvPack<" << t << ", E>*>(p" << k << " + (m.len[" << a
       << "] == 0 ? at[j] : n31 ? static_cast<long long>(nv_row(static_cast<unsigned>(at[j]), " << a
       << ", m)) : at[j] % m.len[" << a << "]));\n"
       << "    }\n";
  }
  for (size_t j = 0; j < p.out_types.size(); ++j)
    os << "    NvPack<" << elem(p.out_types[j]) << ", E> r" << j << "[P];\n";
  // The loop header over packs [first, last) of the thread.
  auto packs_from = [](const std::string& first, const std::string& last) {
    return "for (int j = " + first + "; j < " + last + "; ++j)";
  };
  auto pack_loop = [&](bool fast, const std::string& over) {
    os << "#pragma unroll\n    " << over << "\n#pragma unroll\n    for (int u = 0; u < E; ++u) {\n";
    for (int k : p.inputs)
      os << "      const " << elem(r.input_dtypes[k]) << " v" << k << " = l" << k << "[j].v[u];\n";
    emit_ops(os, r, "      ", fast, true, pack_choice);
    const auto& outs = r.fused->outputs();
    for (size_t j = 0; j < outs.size(); ++j)
      os << "      r" << j << "[j].v[u] = " << (pairs ? "as_two(v" : "(v") << outs[j] << ");\n";
    os << "    }\n";
  };
  // A thread's elements go through the fast variants first (sin and cos
  // through the float reduction alone; float32 division without the check
  // for special operands and the call to its slow path; float32 exp with
  // one scaling), and again through the general functors when one argument
  // was outside: one branch a thread, not one an element. H200, the float32
  // sin/cos chain back to back: 0.216-0.219 -> 0.203-0.204 ms (off / on,
  // same machine), the rest level. With sin and cos alone
  // it measured 0.369 ms: the division's slow-path calls then split the
  // output pack into single-word stores placed between the divisions, and
  // warps stalled on them (ncu).
  // Each pack goes through that on its own (checked, redone where needed,
  // stored), after the loads of all: fewer values live at once (the float32
  // sin/cos chain 64 -> 40 registers, so 32 -> 48 warps an SM). H200, back
  // to back, four runs each alternating on one machine: 0.174-0.180 ms with
  // one check for all four packs, 0.166-0.171 with one per two packs,
  // 0.162-0.167 with one per pack (torch.compile 0.165-0.166 there).
  const int packs = p.n / p.pack;
  const bool small = small_packs(r, p.tables);
  for (int g = 0; g < (small ? packs : 1); ++g) {
    const std::string over = small ? packs_from(std::to_string(g), std::to_string(g + 1)) : packs_from("0", "P");
    if (small) {
      os << "    {\n    unsigned outside = 0;\n";
      pack_loop(true, over);
      os << "    if (outside) {\n";
      pack_loop(false, over);
      os << "    }\n    }\n";
    } else {
      pack_loop(false, over);
    }
    os << "#pragma unroll\n    " << over << " {\n";
    for (size_t j = 0; j < p.out_types.size(); ++j)
      os << "      nv_store(reinterpret_cast<NvPack<" << elem(p.out_types[j]) << ", E>*>(q" << j << " + at[j]), r" << j
         << "[j]);\n";
    os << "    }\n";
  }
  os << "  } else {\n    for (int j = 0; j < P; ++j)\n"
     << "    for (long long i = at[j]; i < n && i < at[j] + W; ++i) {\n";
  for (size_t a = 0; a < p.inputs.size(); ++a) {
    int k = p.inputs[a];
    os << "      const " << cpp_type(r.input_dtypes[k]) << " v" << k << " = p" << k << "[m.len[" << a
       << "] == 0 ? i : i % m.len[" << a << "]];\n";
  }
  emit_ops(os, r, "      ", false, true, choice);
  stores(os, r, "      ", "[i]");
  os << "    }\n  }\n}\n";
}

// Each input's position from the element's coordinates: below 2^31
// elements (L.narrow) through a 32-bit multiply and shift a dimension
// (kernels/fastdiv.h, L.div), else 64-bit divisions, which cost dozens of
// instructions a dimension an element (H200: 258 us for 25M elements of a
// training step's strided regions before the 32-bit path).
void strided(std::ostream& os, const EmitRegion& r, const Params& p) {
  signature(os, r, p, "nuvec_strided", "NvLayout L");
  emit_literals(os, r, "  ");
  os << "  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;\n"
     << "  long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;\n"
     << "  for (int u = 0; u < 4; ++u, i += step) {\n"
     << "    if (i >= n) return;\n";
  for (int k : p.inputs) os << "    long long o" << k << " = 0;\n";
  os << "    if (L.narrow) {\n"
     << "      unsigned rest = static_cast<unsigned>(i);\n"
     << "      for (int d = static_cast<int>(L.ndim) - 1; d > 0; --d) {\n"
     << "        const unsigned q = fast_quotient(rest, L.div[d]);\n"
     << "        const long long c = rest - q * static_cast<unsigned>(L.shape[d]);\n"
     << "        rest = q;\n";
  for (size_t a = 0; a < p.inputs.size(); ++a)
    os << "        o" << p.inputs[a] << " += c * L.st[" << a << "][d];\n";
  os << "      }\n";
  for (size_t a = 0; a < p.inputs.size(); ++a)
    os << "      o" << p.inputs[a] << " += static_cast<long long>(rest) * L.st[" << a << "][0];\n";
  os << "    } else {\n"
     << "    long long rest = i;\n"
     << "    for (long long d = L.ndim - 1; d >= 0; --d) {\n"
     << "      const long long c = rest % L.shape[d];\n"
     << "      rest /= L.shape[d];\n";
  for (size_t a = 0; a < p.inputs.size(); ++a)
    os << "      o" << p.inputs[a] << " += c * L.st[" << a << "][d];\n";
  os << "    }\n    }\n";
  for (int k : p.inputs)
    os << "    const " << cpp_type(r.input_dtypes[k]) << " v" << k << " = p" << k << "[o" << k << "];\n";
  emit_ops(os, r, "    ", false, true);
  stores(os, r, "    ", "[i]");
  os << "  }\n}\n";
}

// The kernel that writes table t: value g.value at each of the 65536
// patterns of its input, through the operations it depends on only.
void table_builder(std::ostream& os, const EmitRegion& r, const Params& p, size_t t) {
  const GpuTable& g = p.tables[t];
  const int n_in = r.fused->num_inputs();
  const auto& ops = r.fused->ops();
  std::vector<bool> need(n_in + ops.size(), false), keep(ops.size(), false);
  need[g.value] = true;
  for (size_t j = ops.size(); j-- > 0;) {
    if (!need[n_in + j]) continue;
    keep[j] = true;
    for (int a : ops[j].args)
      if (a != g.input) need[a] = true;  // the key comes from the pattern
  }
  const char* w = table_word(value_dtype(r, g.value).size());
  os << "extern \"C\" __global__ void __launch_bounds__(256) nuvec_table" << p.suffix << "_" << t
     << "(const unsigned short* __restrict__ pattern, " << w << "* __restrict__ table) {\n";
  emit_literals(os, r, "  ");
  os << "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= 65536) return;\n"
     << "  const " << cpp_type(value_dtype(r, g.input)) << " v" << g.input << " = bit_cast<"
     << cpp_type(value_dtype(r, g.input)) << ">(pattern[i]);\n";
  emit_ops(os, r, "  ", false, false, OpChoice{&keep, nullptr});
  os << "  table[i] = bit_cast<" << w << ">(v" << g.value << ");\n}\n";
}

bool tables_enabled() {
  static const bool enabled = [] {
    const char* e = std::getenv("NUVEC_GPU_TABLES");
    return !(e && std::string(e) == "0");
  }();
  return enabled;
}

// CudaParams::tables.
std::vector<GpuTable> table_values(const EmitRegion& r, const CudaParams& c) {
  const Fused& f = *r.fused;
  const int n_in = f.num_inputs();
  const auto& ops = f.ops();
  const size_t nv = n_in + ops.size();
  std::vector<int> dep(nv, -1);  // the one input a value depends on; -1 none, -2 several
  std::vector<bool> heavy(nv, false);
  for (int k : c.inputs) dep[k] = k;
  for (size_t j = 0; j < ops.size(); ++j) {
    int d = -1;
    bool h = heavy_op(ops[j].primitive->id());
    for (int a : ops[j].args) {
      d = d == -1 ? dep[a] : dep[a] == -1 || dep[a] == d ? d : -2;
      h = h || heavy[a];
    }
    dep[n_in + j] = d;
    heavy[n_in + j] = h;
  }
  auto eligible = [&](size_t v) {
    if (v < static_cast<size_t>(n_in) || dep[v] < 0 || !heavy[v]) return false;
    int size = value_dtype(r, static_cast<int>(v)).size();
    return r.input_dtypes[dep[v]].size() == 2 && (size == 1 || size == 2);
  };
  std::vector<bool> needed(nv, false);  // by an output or an operation computed
  for (int o : f.outputs()) needed[o] = true;
  for (size_t j = 0; j < ops.size(); ++j)
    if (!eligible(n_in + j))
      for (int a : ops[j].args) needed[a] = true;
  std::vector<GpuTable> tables;
  for (size_t v = n_in; v < nv; ++v)
    if (eligible(v) && needed[v]) tables.push_back({static_cast<int>(v), dep[v]});
  // Then one operation of one argument that is worth a table (a
  // transcendental function, sqrt, rsqrt) applied to a 16-bit value that
  // several inputs make (Adam's sqrt(v)): keyed by that value.
  for (size_t j = 0; j < ops.size(); ++j) {
    const int v = n_in + static_cast<int>(j);
    PrimitiveId id = ops[j].primitive->id();
    bool worth = heavy_op(id) || id == PrimitiveId::Sqrt || id == PrimitiveId::Rsqrt;
    if (ops[j].args.size() != 1 || dep[v] != -2 || !worth) continue;
    const int a = ops[j].args[0];
    const int size = value_dtype(r, v).size();
    if (a >= n_in && value_dtype(r, a).size() == 2 && (size == 1 || size == 2)) tables.push_back({v, a});
  }
  if (tables.size() > 4) tables.clear();
  return tables;
}

}  // namespace

const char* cuda_prelude() {
  // NVRTC knows no GNU math builtins, which the functor headers use (nvcc
  // and the host compilers do): the CUDA math functions stand in, all exact
  // or correctly rounded with the options we compile with, as nvcc's
  // mapping of the builtins is.
  return R"(// NVRTC prelude (src/compile/emit_cuda.cpp)
#define __builtin_fma(a, b, c) ::fma(a, b, c)
#define __builtin_fmaf(a, b, c) ::fmaf(a, b, c)
#define __builtin_fabs(x) ::fabs(x)
#define __builtin_fabsf(x) ::fabsf(x)
#define __builtin_sqrt(x) ::sqrt(x)
#define __builtin_sqrtf(x) ::sqrtf(x)
#define __builtin_rint(x) ::rint(x)
#define __builtin_rintf(x) ::rintf(x)
#define __builtin_floor(x) ::floor(x)
#define __builtin_floorf(x) ::floorf(x)
#define __builtin_ceil(x) ::ceil(x)
#define __builtin_ceilf(x) ::ceilf(x)
#define __builtin_copysign(x, y) ::copysign(x, y)
#define __builtin_huge_val() __builtin_bit_cast(double, 0x7ff0000000000000ull)
#define __builtin_inf() __builtin_bit_cast(double, 0x7ff0000000000000ull)
#define __builtin_inff() __builtin_bit_cast(float, 0x7f800000u)
#define __builtin_nanf(s) __builtin_bit_cast(float, 0x7fc00000u)
)";
}

CudaParams cuda_params(const EmitRegion& r) {
  CudaParams c;
  std::vector<bool> is_literal = literal_inputs(*r.fused);
  int smallest = 8;
  for (int k = 0; k < r.fused->num_inputs(); ++k)
    if (!is_literal[k]) {
      c.inputs.push_back(k);
      smallest = std::min(smallest, r.input_dtypes[k].size());
    }
  for (int v : r.fused->outputs()) smallest = std::min(smallest, value_dtype(r, v).size());
  c.pack = std::max(4, 16 / smallest);  // 16-byte packs of the smallest dtype
  c.per_thread = c.pack;
  // Two packs per thread where the region computes a transcendental
  // function: more independent work per thread to hide its long dependency
  // chains (H200, 2^26 float32: GELU erf 0.171 -> 0.154 ms, SwiGLU 0.220
  // -> 0.201, the sin/cos chain 0.258 -> 0.234), one elsewhere (x*x+1
  // 0.142 -> 0.151 and Adam 0.462 -> 0.488 with two). The environment
  // variable NUVEC_GPU_PACKS_PER_THREAD=k (1, 2 or 4) forces k packs for
  // every region, for tuning; read once. The source changes with it, so
  // cached kernels do not mix. Regions reading a broadcast row take two as
  // well (scale-bias-relu, float32: 0.150-0.157 -> 0.142 ms, 88-90% -> 99%
  // of copy; bfloat16 0.098 -> 0.095). Four where the transcendental
  // functions go through the fast variants for small arguments (their
  // packs interleaved): the float32 sin/cos chain 0.192-0.196 -> 0.181-0.185
  // ms (H200, two runs each; four packs made float32 GELU, whose packs are
  // consecutive, 40-70% slower, and the bfloat16 functions, whose
  // functions are looked up, 1-4%).
  static const int forced = [] {
    const char* e = std::getenv("NUVEC_GPU_PACKS_PER_THREAD");
    int k = e ? std::atoi(e) : 0;
    return k == 1 || k == 2 || k == 4 ? k : 0;
  }();
  if (tables_enabled()) c.tables = table_values(r, c);
  const bool heavy = compute_bound(r);
  int packs = heavy && computes_small(r, c.tables) ? 4 : heavy || r.broadcast ? 2 : 1;
  c.per_thread *= forced ? forced : packs;
  return c;
}

std::string emit_cuda_kernel(const EmitRegion& r, int index, CudaVariant v) {
  Params p = params_of(r, index);
  size_t rows = p.inputs.empty() ? 1 : p.inputs.size();
  std::ostringstream os;
  os << "\n// The generated kernels of fused region " << index << ".\nnamespace nuvec_r" << index << " {\n"
     << "using namespace nuvec::kernels;\n"
     << "template <class T, int N> struct alignas(sizeof(T) * N) NvPack { T v[N]; };\n"
     // A 16-byte pack's store as one st.global.v4 (NVVM splits the struct's
     // store into four words when the pack is built from scalars).
     << "struct NvWords { unsigned w[4]; };\n"
     << "template <class T, int N> __device__ __forceinline__ void nv_store(NvPack<T, N>* p, const NvPack<T, N>& v) {\n"
     << "  if constexpr (sizeof(v) == 16) {\n"
     << "    const NvWords x = bit_cast<NvWords>(v);\n"
     << "    asm volatile(\"st.global.v4.b32 [%0], {%1, %2, %3, %4};\" ::\"l\"(p), \"r\"(x.w[0]), \"r\"(x.w[1]), "
        "\"r\"(x.w[2]), \"r\"(x.w[3]));\n"
     << "  } else {\n    *p = v;\n  }\n}\n"
     << "struct NvLayout { long long ndim; long long shape[8]; long long st[" << rows
     << "][8]; FastDiv div[8]; long long narrow; };\n"
     << "struct NvRows { long long len[" << rows << "]; FastDiv div[" << rows << "]; };\n"
     << "__device__ __forceinline__ unsigned nv_row(unsigned i, int a, const NvRows& m) {\n"
     << "  return i - fast_quotient(i, m.div[a]) * static_cast<unsigned>(m.len[a]);\n}\n\n";
  if (v == CudaVariant::contig) {
    contig(os, r, p);
    for (size_t t = 0; t < p.tables.size(); ++t) table_builder(os, r, p, t);
  } else {
    strided(os, r, p);
  }
  os << "}  // namespace nuvec_r" << index << "\n";
  return os.str();
}

}  // namespace nuvec::compiler
