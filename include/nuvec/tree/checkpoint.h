// Checkpoints of any tree: save to safetensors by path, load back strictly.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nuvec/load_options.h"
#include "nuvec/tree/ops.h"

namespace nuvec {

/// How tree_load_flat treats the tree's leaves missing from the arrays, and
/// arrays that match no leaf: `strict` makes both an error (load_into's
/// rule); `partial` loads what matches and leaves the rest unchanged (MLX's
/// load_weights(strict=False)).
enum class LoadMode { strict, partial };

namespace tree_detail {
/// Checks the loaded arrays against the leaves (path, shape): every problem
/// (missing, unexpected, wrong shape, duplicate path) in one nuvec::Error of
/// kind io naming `source`.
void check_load(const std::vector<std::pair<std::string, Shape>>& leaves,
                const std::map<std::string, Array>& arrays, LoadMode mode,
                const std::string& source);
/// Writes the (path, array) pairs as a safetensors file; duplicate paths
/// throw.
void save_pairs(const std::string& path, const std::vector<std::pair<std::string, Array>>& pairs,
                const std::map<std::string, std::string>& metadata);
std::map<std::string, Array> load_file(const std::string& path,
                                       bool copy = false);
}  // namespace tree_detail

/// Loads `arrays` into the leaves of `tree` by path. In strict mode every
/// leaf must be present with its shape and nothing else may be there; the
/// loaded dtypes are kept. On any problem nuvec::Error lists every one and
/// the tree is unchanged.
template <Tree T>
void tree_load_flat(T& tree, const std::map<std::string, Array>& arrays,
                    LoadMode mode = LoadMode::strict, const std::string& source = "arrays") {
  std::vector<std::pair<std::string, Shape>> leaves;
  tree_visit(tree, [&](std::string_view path, const Array& a, LeafKind, bool) {
    leaves.emplace_back(std::string(path), a.shape());
  });
  tree_detail::check_load(leaves, arrays, mode, source);
  tree_visit_mut(tree, [&](std::string_view path, Array& a) {
    auto it = arrays.find(std::string(path));
    if (it != arrays.end()) a = it->second;
  });
}

/// Writes the leaves of `tree` as a safetensors file, each named by its path
/// (MLX's tree_flatten names), evaluating them. A lone Array is not a
/// checkpoint here: `save(path, array)` is MLX's npy save (io.h); write one
/// array as safetensors with save_safetensors.
template <Tree T>
  requires(!std::is_same_v<T, Array>)
void save(const std::string& path, const T& tree,
          const std::map<std::string, std::string>& metadata = {}) {
  tree_detail::save_pairs(path, tree_flatten(tree), metadata);
}

/// Reads a file written by save into `tree` by path, strictly (see
/// tree_load_flat). The arrays are memory-mapped, not copied.
template <Tree T>
void load_into(const std::string& path, T& tree) {
  tree_load_flat(tree, tree_detail::load_file(path), LoadMode::strict, path);
}

/// load_into with `options`: `load_into(path, tree, {.copy = true})` reads
/// the file into allocator buffers instead of mapping it, so the tree stays
/// valid if the file is later replaced in place or truncated (LoadOptions).
template <Tree T>
void load_into(const std::string& path, T& tree, io::LoadOptions options) {
  tree_load_flat(tree, tree_detail::load_file(path, options.copy),
                 LoadMode::strict, path);
}

}  // namespace nuvec
