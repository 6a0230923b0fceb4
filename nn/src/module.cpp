// The non-template parts of modules: type names, key selection, summaries,
// failed arrays naming a layer.
#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <sstream>

#include "nuvec/core/graph.h"
#include "nuvec/nn/module.h"

namespace nuvec::nn::detail {

std::string demangle(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled, nullptr, nullptr, &status),
                                            std::free);
  std::string name = (status == 0 && out) ? out.get() : mangled;
  // Drop namespaces (not inside template arguments): "nuvec::nn::Linear" -> "Linear".
  size_t angle = name.find('<');
  size_t cut = name.rfind("::", angle == std::string::npos ? std::string::npos : angle);
  return cut == std::string::npos ? name : name.substr(cut + 2);
}

bool key_selects(const std::string& key, const std::string& path) {
  if (key.empty()) return false;
  if (path == key) return true;
  if (path.size() > key.size() && path.compare(0, key.size(), key) == 0 && path[key.size()] == '.')
    return true;
  size_t dot = path.rfind('.');
  return path.compare(dot == std::string::npos ? 0 : dot + 1, std::string::npos, key) == 0;
}

std::string summary_table(const std::string& root, const NamedArrays& leaves) {
  std::ostringstream os;
  size_t width = 4;
  for (auto& [p, a] : leaves) width = std::max(width, p.size());
  os << root << "\n";
  auto pad = [&](const std::string& s, size_t w) { return s + std::string(w > s.size() ? w - s.size() : 0, ' '); };
  os << pad("path", width) << "  " << pad("shape", 16) << "  " << pad("dtype", 9) << "  count\n";
  size_t total = 0;
  for (auto& [p, a] : leaves) {
    std::string shape = "(";
    for (int i = 0; i < a.ndim(); ++i) shape += (i ? ", " : "") + std::to_string(a.shape(i));
    shape += a.ndim() == 1 ? ",)" : ")";
    os << pad(p, width) << "  " << pad(shape, 16) << "  " << pad(std::string(dtype_name(a.dtype())), 9) << "  "
       << a.size() << "\n";
    total += a.size();
  }
  os << "total: " << total << " elements in " << leaves.size() << " arrays\n";
  return os.str();
}

Array layer_error(const ModuleBase& m, ErrorKind kind, const std::string& message) {
  return make_failed(Error(kind, m.where() + ": " + message, m.name()));
}

}  // namespace nuvec::nn::detail
