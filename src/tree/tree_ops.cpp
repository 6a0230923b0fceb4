// The non-template parts of the tree operations.
#include "nuvec/tree/ops.h"

#include <sstream>

#include "nuvec/core/error.h"

namespace nuvec::tree_detail {

void Collect::leaf(std::string_view path, const Array& a, LeafKind, bool) {
  if (with_paths_) {
    pairs.emplace_back(std::string(path), a);
  } else {
    arrays.push_back(a);
  }
}

void Replace::leaf(std::string_view path, Array& a, LeafKind, bool) {
  const Array& next = leaves_[next_++];
  if (check_shapes_ && next.shape() != a.shape()) {
    std::ostringstream os;
    os << "'" << path << "' has shape " << a.shape() << " but the new leaf has shape " << next.shape();
    problems_.push_back(os.str());
  }
  a = next;
}

void Replace::finish(const char* what) const {
  if (problems_.empty()) return;
  std::string msg = std::string(what) + ": ";
  for (size_t i = 0; i < problems_.size(); ++i) msg += (i ? "; " : "") + problems_[i];
  (Error(ErrorKind::shape_mismatch, msg)).raise();
}

void check_leaf_count(const char* what, size_t expected, size_t given) {
  if (expected == given) return;
  (Error(ErrorKind::invalid_argument, std::string(what) + ": the tree has " + std::to_string(expected) +
                                               " leaves but " + std::to_string(given) + " were given")).raise();
}

void check_same_paths(const char* what, const std::vector<std::pair<std::string, Array>>& a,
                      const std::vector<std::pair<std::string, Array>>& b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (a[i].first != b[i].first)
      (Error(ErrorKind::invalid_argument, std::string(what) + ": the trees differ at leaf " +
                                                   std::to_string(i) + ": '" + a[i].first + "' vs '" +
                                                   b[i].first + "'")).raise();
  }
  if (a.size() != b.size()) {
    const auto& extra = a.size() > b.size() ? a[n].first : b[n].first;
    (Error(ErrorKind::invalid_argument, std::string(what) + ": the trees have " + std::to_string(a.size()) +
                                                 " and " + std::to_string(b.size()) +
                                                 " leaves (first unmatched: '" + extra + "')")).raise();
  }
}

}  // namespace nuvec::tree_detail
