// einsum: parse the subscripts, take repeated-letter diagonals, sum letters
// used by one operand only, then combine operands left to right (a matmul
// when letters are contracted, a broadcast multiply otherwise).
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "core/checked.h"
#include "nuvec/ops/ops.h"
#include "ops/builder.h"

namespace nuvec::inline ops {

namespace {

struct Term {
  Array x;
  std::string letters;  // one per axis of x
};

// Replaces "..." with capital letters for the broadcast axes, right-aligned.
Expected<std::string> expand_ellipsis(const std::string& t, int ndim, int max_extra) {
  auto p = t.find("...");
  if (p == std::string::npos) {
    if (static_cast<int>(t.size()) != ndim)
      return op_error(ErrorKind::shape_mismatch,
                      "subscript '" + t + "' has " + std::to_string(t.size()) +
                          " letters for an operand with " + std::to_string(ndim) + " axes");
    return t;
  }
  int extra = ndim - static_cast<int>(t.size()) + 3;
  if (extra < 0) return op_error(ErrorKind::shape_mismatch, "subscript '" + t + "' has too many letters");
  std::string dots;
  for (int k = max_extra - extra; k < max_extra; ++k) dots += static_cast<char>('A' + k);
  return t.substr(0, p) + dots + t.substr(p + 3);
}

// Takes the diagonal of repeated letters and sums letters nobody else needs.
Term reduce_term(Term t, const std::multiset<char>& needed, const StreamOrDevice& s, Location loc) {
  for (size_t i = 0; i < t.letters.size(); ++i) {
    size_t j = t.letters.find(t.letters[i], i + 1);
    if (j == std::string::npos) continue;
    char c = t.letters[i];
    t.x = ops::diagonal(t.x, 0, static_cast<int>(i), static_cast<int>(j), s, loc);
    std::string rest;
    for (size_t k = 0; k < t.letters.size(); ++k)
      if (k != i && k != j) rest += t.letters[k];
    t.letters = rest + c;
    i = static_cast<size_t>(-1);  // rescan
  }
  std::vector<int> sum_axes;
  std::string kept;
  for (size_t k = 0; k < t.letters.size(); ++k) {
    if (needed.count(t.letters[k])) kept += t.letters[k];
    else sum_axes.push_back(static_cast<int>(k));
  }
  if (!sum_axes.empty()) t.x = ops::sum(t.x, Axes(sum_axes), false, s, loc);
  t.letters = kept;
  return t;
}

// x's axes reordered to `order` (letters of x), with size-1 axes inserted for
// letters x lacks.
Array arrange(const Term& t, const std::string& order, const StreamOrDevice& s, Location loc) {
  std::vector<int> perm;
  Shape shape;
  for (char c : order) {
    auto p = t.letters.find(c);
    if (p != std::string::npos) perm.push_back(static_cast<int>(p));
  }
  Array y = ops::transpose(t.x, perm, s, loc);
  for (char c : order) shape.push_back(t.letters.find(c) == std::string::npos ? 1 : t.x.shape(static_cast<int>(t.letters.find(c))));
  return ops::reshape(y, shape, s, loc);
}

// Combines two reduced terms; `needed` holds the letters still used later.
Term combine(const Term& a, const Term& b, const std::multiset<char>& needed,
             const std::map<char, int>& size, const StreamOrDevice& s, Location loc) {
  std::string batch, fa, fb, contracted;
  for (char c : a.letters) {
    bool in_b = b.letters.find(c) != std::string::npos;
    if (in_b) (needed.count(c) ? batch : contracted) += c;
    else fa += c;
  }
  for (char c : b.letters)
    if (a.letters.find(c) == std::string::npos) fb += c;
  if (contracted.empty()) {  // broadcast multiply over the union of letters
    std::string all = batch + fa + fb;
    return {ops::multiply(arrange(a, all, s, loc), arrange(b, all, s, loc), s, loc), all};
  }
  auto dims = [&](const std::string& l) {
    Shape d;
    for (char c : l) d.push_back(size.at(c));
    return d;
  };
  // The merged axes' lengths, in int64 and checked (a product of letters
  // can pass the int range although each letter fits).
  std::optional<Error> too_long;
  auto prod = [&](const std::string& l) {
    __int128 n = 1;
    for (char c : l) n *= size.at(c);
    auto d = checked_dim(n, "merged length of the letters '" + l + "'");
    if (!d) {
      if (!too_long) too_long = d.error();
      return 0;
    }
    return *d;
  };
  Shape bs = dims(batch);
  Shape sa = bs, sb = bs;
  sa.push_back(prod(fa)), sa.push_back(prod(contracted));
  sb.push_back(prod(contracted)), sb.push_back(prod(fb));
  if (too_long)
    return {impl::fail(too_long->kind(), too_long->message(), "einsum", loc), batch + fa + fb};
  Shape full_a = dims(batch + fa + contracted), full_b = dims(batch + contracted + fb);
  Array xa = ops::reshape(ops::broadcast_to(arrange(a, batch + fa + contracted, s, loc), full_a, s, loc), sa, s, loc);
  Array xb = ops::reshape(ops::broadcast_to(arrange(b, batch + contracted + fb, s, loc), full_b, s, loc), sb, s, loc);
  Shape out = dims(batch + fa + fb);
  return {ops::reshape(ops::matmul(xa, xb, s, loc), out, s, loc), batch + fa + fb};
}

}  // namespace

Array einsum(const std::string& subscripts, const std::vector<Array>& operands, StreamOrDevice s,
             Location loc) {
  for (const auto& x : operands)
    if (x.is_failed()) return x;
  auto fail = [&](ErrorKind k, const std::string& m) { return impl::fail(k, m, "einsum", loc); };
  std::string spec;
  for (char c : subscripts)
    if (c != ' ') spec += c;
  auto arrow = spec.find("->");
  std::string lhs = spec.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',') terms.emplace_back();
    else terms.back() += c;
  }
  if (terms.size() != operands.size())
    return fail(ErrorKind::invalid_argument,
                "number of operands, " + std::to_string(operands.size()) +
                    ", does not match the number of input subscripts, " + std::to_string(terms.size()));
  int max_extra = 0;
  for (size_t k = 0; k < terms.size(); ++k)
    if (terms[k].find("...") != std::string::npos)
      max_extra = std::max(max_extra, operands[k].ndim() - static_cast<int>(terms[k].size()) + 3);
  std::vector<Term> ts;
  std::map<char, int> size;
  std::map<char, int> count;
  for (size_t k = 0; k < terms.size(); ++k) {
    auto e = expand_ellipsis(terms[k], operands[k].ndim(), max_extra);
    if (!e) return fail(e.error().kind(), e.error().message());
    for (size_t i = 0; i < e->size(); ++i) {
      char c = (*e)[i];
      if (!std::isalpha(static_cast<unsigned char>(c)))
        return fail(ErrorKind::invalid_argument, std::string("invalid subscript character '") + c + "'");
      int d = operands[k].shape(static_cast<int>(i));
      auto it = size.find(c);
      if (it != size.end() && it->second != d && d != 1 && it->second != 1)
        return fail(ErrorKind::shape_mismatch, std::string("letter '") + c + "' has sizes " +
                                                   std::to_string(it->second) + " and " +
                                                   std::to_string(d));
      size[c] = it == size.end() ? d : std::max(it->second, d);
      ++count[c];
    }
    ts.push_back({operands[k], *e});
  }
  std::string out;
  if (arrow != std::string::npos) {
    std::string o = spec.substr(arrow + 2);
    auto p = o.find("...");
    if (p != std::string::npos) {
      std::string dots;
      for (int k = 0; k < max_extra; ++k) dots += static_cast<char>('A' + k);
      o = o.substr(0, p) + dots + o.substr(p + 3);
    }
    for (char c : o)
      if (!size.count(c))
        return fail(ErrorKind::invalid_argument, std::string("output letter '") + c + "' is not in the inputs");
    out = o;
  } else {  // implicit: broadcast axes, then letters used once, sorted
    for (auto& [c, n] : count)
      if (std::isupper(static_cast<unsigned char>(c))) out += c;
    for (auto& [c, n] : count)
      if (n == 1 && std::islower(static_cast<unsigned char>(c))) out += c;
  }
  // Letters still needed after each step: the output's and the later terms'.
  auto needed_after = [&](size_t k) {
    std::multiset<char> n(out.begin(), out.end());
    for (size_t j = k + 1; j < ts.size(); ++j) n.insert(ts[j].letters.begin(), ts[j].letters.end());
    return n;
  };
  std::multiset<char> n0 = needed_after(0);
  Term acc = reduce_term(ts[0], n0, s, loc);
  for (size_t k = 1; k < ts.size(); ++k) {
    std::multiset<char> n = needed_after(k);
    std::multiset<char> for_b = n;
    for_b.insert(acc.letters.begin(), acc.letters.end());
    Term b = reduce_term(ts[k], for_b, s, loc);
    acc = combine(acc, b, n, size, s, loc);
  }
  acc = reduce_term(acc, std::multiset<char>(out.begin(), out.end()), s, loc);
  std::vector<int> perm;
  for (char c : out) perm.push_back(static_cast<int>(acc.letters.find(c)));
  Shape full;
  for (char c : out) full.push_back(size.at(c));
  return ops::broadcast_to(ops::transpose(acc.x, perm, s, loc), full, s, loc);
}

}  // namespace nuvec::ops
