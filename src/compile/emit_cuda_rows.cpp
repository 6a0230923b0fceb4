// The CUDA kernel of a FusedReduce step (docs/compile.md, "Fusion into
// reductions"): a row to each group of `lanes` threads (grid-stride over
// rows), the stages in order: a block of kernels::rows::kThreads threads
// per row, or, for rows of at most rows::kStride elements, a warp per row
// (kThreads / 32 rows a block). A map stage followed by a reduction
// computes its value at each element of the row in kernels::rows' fixed
// order and folds it (the Reduce kernel's order, so the same bits): the
// block's thread t is that order's thread t; a warp's lane l plays threads
// l, l + 32, ... (the order's warps one after another, each folded by the
// same shuffles, their results then folded as the block's first warp
// would). The result goes to every thread through shared memory (block)
// or a shuffle (warp). Scalars stages run on every thread (the same bits
// everywhere); the last map stage writes the outputs.
#include <algorithm>
#include <sstream>

#include "compile/emit_cpp.h"
#include "nuvec/kernels/types.h"
#include "nuvec/primitives/fused_reduce.h"

namespace nuvec::compiler {

namespace {

const char* combine_name(Reduce::Type t) {
  switch (t) {
    case Reduce::Type::sum: return "Add";
    case Reduce::Type::prod: return "Multiply";
    case Reduce::Type::max: return "Maximum";
    case Reduce::Type::min: return "Minimum";
    case Reduce::Type::all: return "rows::AllOf";
    default: return "rows::AnyOf";
  }
}

const char* empty_value(Reduce::Type t) {
  return t == Reduce::Type::prod || t == Reduce::Type::all ? "1" : "0";
}

// The accumulator dtype (backend::reduce_acc_t): float for 16-bit floats.
DType acc_dtype(DType out) { return out == float16 || out == bfloat16 ? float32 : out; }

struct Emitter {
  const FusedReduce& f;
  std::vector<int> param_of;  // per region input: its parameter index, or -1
  std::ostringstream os;
  bool packed = false;  // full inputs come from the packs lp<a> (element k)

  // Region value v as stage input, read at element c of the row.
  // (A stream, not string concatenation: g++ 12 warns falsely about
  // those at -O3.)
  std::string value(int v, bool row_scalar) const {
    std::ostringstream e;
    if (v >= f.num_inputs()) {
      e << 's' << v;
      return e.str();
    }
    const int a = param_of[v];
    if (packed && !row_scalar) {
      e << "lp" << a << ".v[k]";
      return e.str();
    }
    e << 'p' << a << "[row * L.rs[" << a << ']';
    if (!row_scalar) e << " + c * L.cs[" << a << ']';
    e << ']';
    return e.str();
  }

  // A stage's program at one element (or one row): loads, operations.
  void body(const RowStage& st, const EmitRegion& r, const char* in) {
    std::vector<bool> lit = literal_inputs(*st.program);
    emit_literals(os, r, in);
    for (size_t k = 0; k < st.args.size(); ++k) {
      if (lit[k]) continue;
      bool scalar = st.kind == RowStage::Kind::scalars || st.row_scalar[k];
      os << in << "const " << cpp_type(st.arg_dtypes[k]) << " v" << k << " = " << value(st.args[k], scalar)
         << ";\n";
    }
    emit_ops(os, r, in, false, true);
  }

  // The parameters stage `st` reads at the row's elements.
  std::vector<int> full_params(const RowStage& st) const {
    std::vector<bool> lit = literal_inputs(*st.program);
    std::vector<int> out;
    for (size_t k = 0; k < st.args.size(); ++k)
      if (!lit[k] && !st.row_scalar[k] && st.args[k] < f.num_inputs()) {
        int a = param_of[st.args[k]];
        if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
      }
    return out;
  }

  // The 16-byte-or-less packs of four elements at j of those parameters.
  void pack_loads(const RowStage& st, const char* in) {
    for (int a : full_params(st)) {
      std::string t = cpp_type(f.value_dtype(param_input(a)));
      os << in << "const NvPack<" << t << "> lp" << a << " = *reinterpret_cast<const NvPack<" << t << ">*>(p" << a
         << " + row * L.rs[" << a << "] + j);\n";
    }
  }

  int param_input(int a) const {
    for (int i = 0; i < f.num_inputs(); ++i)
      if (param_of[i] == a) return i;
    return -1;
  }

  EmitRegion region(const RowStage& st) const {
    EmitRegion r{st.program.get(), st.arg_dtypes, false, {}, {}};
    return r;
  }
};

}  // namespace

std::vector<int> cuda_rows_params(const FusedReduce& f) {
  std::vector<bool> needed(f.num_inputs(), false);
  for (const auto& st : f.stages()) {
    if (!st.program) continue;
    std::vector<bool> lit = literal_inputs(*st.program);
    for (size_t k = 0; k < st.args.size(); ++k)
      if (st.args[k] < f.num_inputs() && !lit[k]) needed[st.args[k]] = true;
  }
  std::vector<int> params;
  for (int i = 0; i < f.num_inputs(); ++i)
    if (needed[i]) params.push_back(i);
  return params;
}

std::string emit_cuda_rows_kernel(const FusedReduce& f, int index) {
  Emitter e{f, std::vector<int>(f.num_inputs(), -1), {}};
  std::vector<int> params = cuda_rows_params(f);
  for (size_t a = 0; a < params.size(); ++a) e.param_of[params[a]] = static_cast<int>(a);
  std::ostringstream& os = e.os;
  const size_t np = params.empty() ? 1 : params.size();
  os << "\n// The row kernel of fused reduction " << index << ".\nnamespace nuvec_rows" << index << " {\n"
     << "using namespace nuvec::kernels;\n"
     << "struct NvRowLayout { long long rs[" << np << "]; long long cs[" << np << "]; };\n"
     << "template <class T> struct alignas(sizeof(T) * 4) NvPack { T v[4]; };\n"
     << "extern \"C\" __global__ void __launch_bounds__(256) nuvec_rows_" << index << "(";
  for (size_t a = 0; a < params.size(); ++a)
    os << "const " << cpp_type(f.value_dtype(params[a])) << "* __restrict__ p" << a << ", ";
  for (size_t j = 0; j < f.outputs().size(); ++j)
    os << cpp_type(f.value_dtype(f.outputs()[j])) << "* __restrict__ q" << j << ", ";
  // `lanes`: the threads of a row (rows::kThreads or 32).
  os << "long long R, long long n, NvRowLayout L, int lanes) {\n"
     << "  const int t = threadIdx.x % lanes;\n"
     << "  const int per_block = rows::kThreads / lanes;\n";
  auto output_of = [&](int v) {
    for (size_t j = 0; j < f.outputs().size(); ++j)
      if (f.outputs()[j] == v) return static_cast<int>(j);
    return -1;
  };
  const auto& stages = f.stages();
  for (size_t s = 0; s < stages.size(); ++s)
    if (stages[s].kind == RowStage::Kind::reduce) {
      DType acc = acc_dtype(f.value_dtype(stages[s].results[0]));
      os << "  __shared__ " << cpp_type(acc) << " nv_values" << s << "[rows::kThreads / 32];\n"
         << "  __shared__ bool nv_valid" << s << "[rows::kThreads / 32];\n"
         << "  __shared__ " << cpp_type(f.value_dtype(stages[s].results[0])) << " nv_result" << s << ";\n";
    }
  os << "  for (long long row = static_cast<long long>(blockIdx.x) * per_block + threadIdx.x / lanes; row < R;\n"
     << "       row += static_cast<long long>(gridDim.x) * per_block) {\n";
  // Whether this row's full inputs and outputs are dense along the row in
  // aligned packs of four (the same elements in the same order as the
  // general loops, read and written 4 at a time).
  os << "    bool packed = n % 4 == 0;\n";
  {
    std::vector<int> seen;
    for (const auto& st : stages)
      if (st.kind == RowStage::Kind::map)
        for (int a : e.full_params(st))
          if (std::find(seen.begin(), seen.end(), a) == seen.end()) {
            seen.push_back(a);
            os << "    packed = packed && L.cs[" << a << "] == 1 && reinterpret_cast<unsigned long long>(p" << a
               << " + row * L.rs[" << a << "]) % sizeof(NvPack<" << cpp_type(f.value_dtype(e.param_input(a)))
               << ">) == 0;\n";
          }
    for (size_t j = 0; j < f.outputs().size(); ++j)
      if (!f.row_scalar(f.outputs()[j]))
        os << "    packed = packed && reinterpret_cast<unsigned long long>(q" << j << " + row * n) % sizeof(NvPack<"
           << cpp_type(f.value_dtype(f.outputs()[j])) << ">) == 0;\n";
  }
  for (size_t s = 0; s < stages.size(); ++s) {
    const RowStage& st = stages[s];
    if (st.kind == RowStage::Kind::scalars) {
      EmitRegion r = e.region(st);
      for (int v : st.results) os << "    " << cpp_type(f.value_dtype(v)) << " s" << v << ";\n";
      os << "    {\n";
      e.body(st, r, "      ");
      for (size_t j = 0; j < st.results.size(); ++j) {
        int v = st.results[j];
        os << "      s" << v << " = v" << st.program->outputs()[j] << ";\n";
        if (int o = output_of(v); o >= 0) os << "      if (t == 0) q" << o << "[row] = s" << v << ";\n";
      }
      os << "    }\n";
      continue;
    }
    if (st.kind != RowStage::Kind::map) continue;
    EmitRegion r = e.region(st);
    const bool reduces = s + 1 < stages.size() && stages[s + 1].kind == RowStage::Kind::reduce;
    if (!reduces) {  // the outputs at S
      os << "    if (packed) {\n"
         << "    for (long long j = rows::kPack * t; j < n; j += rows::kPack * lanes) {\n";
      e.pack_loads(st, "      ");
      for (size_t j = 0; j < st.results.size(); ++j)
        os << "      NvPack<" << cpp_type(f.value_dtype(st.results[j])) << "> r" << j << ";\n";
      os << "#pragma unroll\n      for (int k = 0; k < rows::kPack; ++k) {\n";
      e.packed = true;
      e.body(st, r, "        ");
      e.packed = false;
      for (size_t j = 0; j < st.results.size(); ++j)
        os << "        r" << j << ".v[k] = v" << st.program->outputs()[j] << ";\n";
      os << "      }\n";
      for (size_t j = 0; j < st.results.size(); ++j)
        os << "      *reinterpret_cast<NvPack<" << cpp_type(f.value_dtype(st.results[j])) << ">*>(q"
           << output_of(st.results[j]) << " + row * n + j) = r" << j << ";\n";
      os << "    }\n    } else {\n"
         << "    for (long long c = t; c < n; c += lanes) {\n";
      e.body(st, r, "      ");
      for (size_t j = 0; j < st.results.size(); ++j)
        os << "      q" << output_of(st.results[j]) << "[row * n + c] = v" << st.program->outputs()[j] << ";\n";
      os << "    }\n    }\n";
      continue;
    }
    const RowStage& red = stages[s + 1];
    const int v = red.results[0];
    const DType out = f.value_dtype(v), acc = acc_dtype(out);
    const std::string A = cpp_type(acc), O = cpp_type(out);
    std::string C = combine_name(red.type);
    C += "{}";
    // Per warp of the order (one for a block's warp, all for a warp's):
    // its threads' accumulators, folded over the warp; a warp's lane w then
    // keeps order warp w's result (`wv`, `wh`), a block's warps leave
    // theirs in shared memory.
    os << "    " << O << " s" << v << ";\n    {\n"
       << "      " << A << " wv{};\n      bool wh = false;\n"
       << "      for (int w = t / 32; w < rows::kThreads / 32; w += lanes / 32) {\n"
       << "      const int vt = 32 * w + t % 32;\n"
       << "      rows::Acc4<" << A << "> part;\n"
       << "      if (packed) {\n"
       << "      for (long long j = rows::kPack * vt; j < n; j += rows::kStride) {\n";
    e.pack_loads(st, "        ");
    os << "#pragma unroll\n      for (int k = 0; k < rows::kPack; ++k) {\n";
    e.packed = true;
    e.body(st, r, "        ");
    e.packed = false;
    os << "        part.add(k, Cast<" << A << ">{}(v" << st.program->outputs()[0] << "), " << C << ");\n"
       << "      }\n      }\n      } else {\n"
       << "      for (long long j = rows::kPack * vt; j < n; j += rows::kStride) {\n"
       << "#pragma unroll\n      for (int k = 0; k < rows::kPack; ++k) {\n"
       << "        const long long c = j + k;\n        if (c >= n) break;\n";
    e.body(st, r, "        ");
    os << "        part.add(k, Cast<" << A << ">{}(v" << st.program->outputs()[0] << "), " << C << ");\n"
       << "      }\n      }\n      }\n"
       << "      " << A << " acc;\n      bool have;\n"
       << "      part.total(acc, have, " << C << ");\n"
       << "      if (lanes == rows::kThreads) {\n"
       << "        rows::block_fold(acc, have, " << C << ", nv_values" << s + 1 << ", nv_valid" << s + 1 << ");\n"
       << "        wv = acc;\n        wh = have;\n"
       << "      } else if (rows::kPack * 32 * w < n) {  // else no element: absent\n"
       << "        rows::warp_fold(acc, have, " << C << ");\n"
       << "        acc = rows::shuffle_from(acc, 0);\n"
       << "        have = rows::shuffle_from(have, 0);\n"
       << "        if (t == w) {\n          wv = acc;\n          wh = have;\n        }\n"
       << "      }\n      }\n"
       << "      if (lanes == rows::kThreads) {\n"
       << "      if (t == 0) nv_result" << s + 1 << " = Cast<" << O << ">{}(wh ? wv : static_cast<" << A << ">("
       << empty_value(red.type) << "));\n"
       << "      __syncthreads();\n"
       << "      s" << v << " = nv_result" << s + 1 << ";\n"
       << "      } else {\n"
       << "      rows::warp_fold(wv, wh, " << C << ");\n"
       << "      s" << v << " = rows::shuffle_from(Cast<" << O << ">{}(wh ? wv : static_cast<" << A << ">("
       << empty_value(red.type) << ")), 0);\n"
       << "      }\n";
    if (int o = output_of(v); o >= 0) os << "      if (t == 0) q" << o << "[row] = s" << v << ";\n";
    os << "      if (lanes == rows::kThreads) __syncthreads();\n    }\n";
    ++s;
  }
  os << "  }\n}\n}  // namespace nuvec_rows" << index << "\n";
  return os.str();
}

}  // namespace nuvec::compiler
