// Compiled::graph: a traced graph as text and as Graphviz DOT, so users can
// see what fused, and why an element-wise step did not.
#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "compile/simplify.h"
#include "nuvec/primitives/fused.h"
#include "nuvec/primitives/fused_reduce.h"

namespace nuvec::compiler {

namespace {

std::string type_of(const Array& a) {
  std::ostringstream os;
  os << a.dtype() << a.shape();
  return os.str();
}

bool elementwise_step(const Step& s) {
  PrimitiveKind k = primitive_kind(s.primitive->id());
  return k == PrimitiveKind::unary || k == PrimitiveKind::binary ||
         s.primitive->id() == PrimitiveId::Select || s.primitive->id() == PrimitiveId::AsType;
}

std::string fused_program(const Fused& f) {
  std::ostringstream os;
  for (size_t j = 0; j < f.ops().size(); ++j) {
    const FusedOp& op = f.ops()[j];
    os << (j ? "; " : "") << 'v' << f.num_inputs() + j << " = " << op.primitive->name() << '(';
    for (size_t a = 0; a < op.args.size(); ++a) os << (a ? ", v" : "v") << op.args[a];
    os << ')';
  }
  return os.str();
}

const char* reduce_name(Reduce::Type t) {
  switch (t) {
    case Reduce::Type::sum: return "sum";
    case Reduce::Type::prod: return "prod";
    case Reduce::Type::max: return "max";
    case Reduce::Type::min: return "min";
    case Reduce::Type::all: return "all";
    default: return "any";
  }
}

// "map (3 ops), reduce max, scalars (2 ops), map (1 ops)": the stages.
std::string row_stages(const FusedReduce& f) {
  std::ostringstream os;
  for (size_t j = 0; j < f.stages().size(); ++j) {
    const RowStage& st = f.stages()[j];
    os << (j ? ", " : "");
    if (st.kind == RowStage::Kind::reduce) os << "reduce " << reduce_name(st.type);
    else os << (st.kind == RowStage::Kind::map ? "map (" : "scalars (") << st.program->ops().size() << " ops)";
  }
  return os.str();
}

// "%in3", "%c0", "%7", "%7.1" (snprintf: g++ 12 warns falsely about
// string concatenations at -O3).
std::string tag(const char* prefix, size_t i, int part = -1) {
  char buf[48];
  if (part < 0) std::snprintf(buf, sizeof buf, "%%%s%zu", prefix, i);
  else std::snprintf(buf, sizeof buf, "%%%s%zu.%d", prefix, i, part);
  return buf;
}

}  // namespace

GraphReport describe(const Graph& g) {
  std::unordered_map<const void*, std::string> name;
  std::ostringstream text, dot;
  dot << "digraph compiled {\n  rankdir=TB;\n  node [shape=box, fontname=monospace];\n";
  text << "inputs:";
  for (size_t i = 0; i < g.placeholders.size(); ++i) {
    std::string n = tag("in", i);
    name.emplace(g.placeholders[i].id(), n);
    text << (i ? ", " : " ") << n << ' ' << type_of(g.placeholders[i]);
    dot << "  \"" << n << "\" [shape=ellipse, label=\"" << n << "\\n" << type_of(g.placeholders[i])
        << "\"];\n";
  }
  text << '\n';
  int constants = 0;
  auto ref = [&](const Array& a) {
    auto it = name.find(a.id());
    if (it != name.end()) return it->second;
    std::string n = tag("c", static_cast<size_t>(constants++));
    name.emplace(a.id(), n);
    dot << "  \"" << n << "\" [shape=plaintext, label=\"const " << type_of(a) << "\"];\n";
    return n;
  };
  for (size_t i = 0; i < g.steps.size(); ++i) {
    const Step& s = g.steps[i];
    std::string n = tag("", i);
    std::vector<std::string> ins;
    for (const auto& in : s.inputs) ins.push_back(ref(in));
    for (size_t j = 0; j < s.outputs.size(); ++j)
      name.emplace(s.outputs[j].id(), s.outputs.size() > 1 ? tag("", i, static_cast<int>(j)) : n);
    text << n << " = " << s.primitive->name() << '(';
    for (size_t a = 0; a < ins.size(); ++a) text << (a ? ", " : "") << ins[a];
    text << ") ->";
    for (const auto& o : s.outputs) text << ' ' << type_of(o);
    std::string label = s.primitive->name();
    if (s.primitive->id() == PrimitiveId::Fused) {
      const auto& f = static_cast<const Fused&>(*s.primitive);
      std::string prog = fused_program(f);
      text << "\n    fused kernel, " << f.ops().size() << " ops: " << prog;
      label = "Fused (" + std::to_string(f.ops().size()) + " ops)\\n" + prog;
    } else if (s.primitive->id() == PrimitiveId::FusedReduce) {
      const auto& f = static_cast<const FusedReduce&>(*s.primitive);
      std::string stages = row_stages(f);
      text << "\n    fused over rows (axes " << f.split() << ".. of " << f.shape() << "): " << stages;
      label = "FusedReduce\\n" + stages;
    } else if (elementwise_step(s)) {
      text << "\n    not fused: no element-wise neighbour of the same shape whose every use is in "
              "one region";
    }
    text << '\n';
    dot << "  \"" << n << "\" [label=\"" << n << ": " << label << "\"";
    if (s.primitive->id() == PrimitiveId::Fused || s.primitive->id() == PrimitiveId::FusedReduce)
      dot << ", style=filled, fillcolor=lightblue";
    dot << "];\n";
    for (const auto& in : ins) dot << "  \"" << in.substr(0, in.find('.')) << "\" -> \"" << n << "\";\n";
  }
  text << "outputs:";
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    std::string n = ref(g.outputs[i]);
    text << (i ? ", " : " ") << n;
    dot << "  \"out" << i << "\" [shape=ellipse];\n  \"" << n.substr(0, n.find('.')) << "\" -> \"out"
        << i << "\";\n";
  }
  text << '\n';
  dot << "}\n";
  return {text.str(), dot.str()};
}

}  // namespace nuvec::compiler
