// Emitting fused regions as C++: one loop per variant over the region's
// values v0, v1, ... (inputs first), each the functor call the eager kernel
// makes, in the eager kernel's types. Literals are bit patterns.
#include "compile/emit_cpp.h"

#include <cstdio>
#include <sstream>

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

std::string call(const FusedOp& op) {
  std::ostringstream os;
  PrimitiveId id = op.primitive->id();
  if (id == PrimitiveId::AsType) {
    os << "Cast<" << cpp_type(op.dtype) << ">{}(";
  } else {
    os << primitive_name(id) << "{}(";  // the registry name is the functor's
  }
  for (size_t a = 0; a < op.args.size(); ++a) os << (a ? ", v" : "v") << op.args[a];
  os << ")";
  return os.str();
}

}  // namespace

void emit_ops(std::ostream& os, const EmitRegion& r, const char* indent) {
  const Fused& f = *r.fused;
  const int n_in = f.num_inputs();
  for (size_t j = 0; j < f.ops().size(); ++j) {
    int v = n_in + static_cast<int>(j);
    const FusedOp& op = f.ops()[j];
    os << indent << "const auto v" << v << " = " << call(op) << ";\n"
       << indent << "static_assert(same_v<decltype(v" << v << "), const " << cpp_type(op.dtype)
       << ">, \"dtype of value " << v << "\");\n";
  }
}

DType value_dtype(const EmitRegion& r, int v) {
  const Fused& f = *r.fused;
  return v < f.num_inputs() ? r.input_dtypes[v] : f.ops()[v - f.num_inputs()].dtype;
}

std::vector<bool> literal_inputs(const Fused& f) {
  std::vector<bool> is_literal(f.num_inputs(), false);
  for (const auto& l : f.literals()) is_literal[l.input] = true;
  return is_literal;
}

namespace {

// The loop body: loads, the operations, the stores.
void body(std::ostream& os, const EmitRegion& r, bool strided) {
  const Fused& f = *r.fused;
  std::vector<bool> is_literal = literal_inputs(f);
  for (int k = 0; k < f.num_inputs(); ++k)
    if (!is_literal[k])
      os << "    const " << cpp_type(r.input_dtypes[k]) << " v" << k << " = p" << k
         << (strided ? "[i * s" + std::to_string(k) + "];\n" : "[i];\n");
  emit_ops(os, r, "    ");
  for (size_t j = 0; j < f.outputs().size(); ++j)
    os << "    q" << j << "[i] = v" << f.outputs()[j] << ";\n";
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
  for (size_t i = 0; i < regions.size(); ++i)
    for (bool strided : {false, true}) {
      os << "\nextern \"C\" void nuvec_k" << i
         << (strided ? "_strided(const void* const* in, void* const* out, const long* strides, long n) {\n"
                     : "_contig(const void* const* in, void* const* out, long n) {\n");
      pointers(os, regions[i], strided);
      os << "  for (long i = 0; i < n; ++i) {\n";
      body(os, regions[i], strided);
      os << "  }\n}\n";
    }
  return os.str();
}

}  // namespace nuvec::compiler
