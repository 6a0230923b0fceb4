// Checkpoints of trees over the safetensors reader and writer.
#include "nuvec/tree/checkpoint.h"

#include <set>
#include <sstream>

#include "nuvec/core/error.h"
#include "nuvec/io.h"

namespace nuvec::tree_detail {

void check_load(const std::vector<std::pair<std::string, Shape>>& leaves,
                const std::map<std::string, Array>& arrays, LoadMode mode, const std::string& source) {
  std::vector<std::string> problems;
  std::set<std::string> seen;
  for (const auto& [path, shape] : leaves) {
    if (!seen.insert(path).second) {
      problems.push_back("the tree has two leaves named '" + path + "'");
      continue;
    }
    auto it = arrays.find(path);
    if (it == arrays.end()) {
      if (mode == LoadMode::strict) problems.push_back("'" + path + "' is missing");
      continue;
    }
    if (it->second.shape() != shape) {
      std::ostringstream os;
      os << "'" << path << "' has shape " << it->second.shape() << " but the tree expects " << shape;
      problems.push_back(os.str());
    }
  }
  if (mode == LoadMode::strict) {
    for (const auto& [name, a] : arrays)
      if (!seen.count(name)) problems.push_back("'" + name + "' matches no leaf of the tree");
  }
  if (problems.empty()) return;
  std::string msg = source + ": " + std::to_string(problems.size()) + " problem" +
                    (problems.size() > 1 ? "s" : "") + " loading the tree (unchanged): ";
  for (size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
  (Error(ErrorKind::io, msg)).raise();
}

void save_pairs(const std::string& path, const std::vector<std::pair<std::string, Array>>& pairs,
                const std::map<std::string, std::string>& metadata) {
  std::unordered_map<std::string, Array> arrays;
  for (const auto& [name, a] : pairs) {
    if (!arrays.emplace(name, a).second)
      (Error(ErrorKind::io, path + ": the tree has two leaves named '" + name + "'")).raise();
  }
  io::save_safetensors(path, arrays, {metadata.begin(), metadata.end()});
}

std::map<std::string, Array> load_file(const std::string& path, bool copy) {
  auto loaded = io::load_safetensors(path, io::LoadOptions{.copy = copy}).first;
  return {loaded.begin(), loaded.end()};
}

}  // namespace nuvec::tree_detail
