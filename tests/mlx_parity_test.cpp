// MLX C++ API parity: the MLX-style calls of tests/parity/cases_*.inc,
// compiled here against nuvec (`namespace NS = nuvec`), must give MLX's
// results as recorded by tools/record_mlx_parity.sh (the same source
// compiled against MLX 0.32.4's C++ library): dtype, shape and values, or
// the standard exception class MLX throws. A call that compiles in both
// and means something else fails here; one that MLX accepts and nuvec does
// not fails to build. The few deliberate differences are listed below with
// their reasons (and in docs/mlx-differences.md).
#include <gtest/gtest.h>

#include <complex>
#include <fstream>
#include <map>
#include <nuvec/nuvec.h>

#include "parity/harness.h"

namespace NS = nuvec;

namespace parity {

namespace {

template <class T>
void put_elements(const nuvec::Array& a, Value& v) {
  if constexpr (std::is_same_v<T, bool>) {
    for (bool b : a.to_vector<bool>()) v.data.push_back(b ? "1" : "0");
  } else if constexpr (std::is_same_v<T, nuvec::complex64_t>) {
    for (auto c : a.to_vector<nuvec::complex64_t>())
      v.data.push_back(float_text(c.real()) + "," + float_text(c.imag()));
  } else if constexpr (std::is_integral_v<T>) {
    for (T x : a.to_vector<T>()) v.data.push_back(std::to_string(x));
  } else {
    for (double x : a.to_vector<double>()) v.data.push_back(float_text(x));
  }
}

std::string join(const std::vector<int>& s) {
  std::string t;
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return t;
}

}  // namespace

Value V(const nuvec::Array& a) {
  a.eval();
  Value v;
  v.kind = 'A';
  v.dtype = std::string(nuvec::dtype_name(a.dtype()));
  for (int d : a.shape()) v.shape.push_back(d);
  nuvec::dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, nuvec::float16_t> ||
                  std::is_same_v<T, nuvec::bfloat16_t> ||
                  std::is_floating_point_v<T>) {
      put_elements<double>(a, v);
    } else {
      put_elements<T>(a, v);
    }
  });
  return v;
}
Value V(const std::vector<nuvec::Array>& xs) {
  Value v;
  v.kind = 'L';
  for (auto& x : xs) v.items.push_back(V(x));
  return v;
}
Value V(const std::pair<nuvec::Array, nuvec::Array>& p) {
  return V(std::vector<nuvec::Array>{p.first, p.second});
}
Value V(const std::tuple<nuvec::Array, nuvec::Array>& p) {
  return V(std::vector<nuvec::Array>{std::get<0>(p), std::get<1>(p)});
}
Value V(const nuvec::Shape& s) { return scalar("shape:" + join(s)); }
Value V(const nuvec::Strides& s) {
  std::string t;
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return scalar("strides:" + t);
}
Value V(nuvec::DType d) {
  return scalar("dtype:" + std::string(nuvec::dtype_name(d)));
}

}  // namespace parity

using parity::V;

#include "parity/cases_all.inc"

namespace {

using parity::Value;

// Deliberate differences from MLX: "group/case" -> reason (each also in
// docs/mlx-differences.md). Such a case is skipped and counted.
const std::map<std::string, std::string>& known_differences() {
  static const std::map<std::string, std::string> m = {};
  return m;
}

struct Reference {
  std::map<std::string, Value> values;  // lists hold their items
  std::vector<std::string> duplicates;
};

const Reference& reference() {
  static const Reference ref = [] {
    Reference r;
    std::ifstream in(NUVEC_REFS_DIR "parity.ref");
    std::string line;
    std::string group;
    while (std::getline(in, line)) {
      if (line.rfind("@group ", 0) == 0) group = line.substr(7);
      if (line.empty() || line[0] == '#' || line[0] == '@') continue;
      auto [bare, v] = parity::read_line(line);
      std::string name = group + "/" + bare;  // names are unique per group
      auto hash = name.rfind('#');
      if (hash != std::string::npos) {
        auto parent = r.values.find(name.substr(0, hash));
        if (parent != r.values.end()) {
          // Nested lists are not recorded; items attach to their parent.
          parent->second.items.push_back(v);
          continue;
        }
      }
      if (r.values.count(name)) r.duplicates.push_back(name);
      r.values[name] = v;
    }
    return r;
  }();
  return ref;
}

std::string describe(const Value& v) {
  std::ostringstream os;
  parity::write_value(os, "", v);
  std::string s = os.str();
  if (s.size() > 400) s = s.substr(0, 400) + "...";
  return s;
}

bool same_element(const std::string& got, const std::string& want, double tol) {
  if (got == want) return true;
  auto g = parity::split(got, ','), w = parity::split(want, ',');
  if (g.size() != w.size()) return false;
  for (size_t i = 0; i < g.size(); ++i) {
    double a = parity::parse_float(g[i]), b = parity::parse_float(w[i]);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;
    if (tol == 0 || !(std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b))))
      return false;
  }
  return true;
}

// Why `got` differs from `want`, or "" when they agree.
std::string compare(const Value& got, const Value& want, double tol) {
  if (got.kind != want.kind) return "kind " + std::string(1, got.kind) + " vs " + want.kind;
  if (got.kind == 'L') {
    if (got.items.size() != want.items.size()) return "list length";
    for (size_t i = 0; i < got.items.size(); ++i) {
      std::string why = compare(got.items[i], want.items[i], tol);
      if (!why.empty()) return "item " + std::to_string(i) + ": " + why;
    }
    return "";
  }
  if (got.kind != 'A') return got.text == want.text ? "" : "value";
  if (got.dtype != want.dtype) return "dtype " + got.dtype + " vs " + want.dtype;
  if (got.shape != want.shape) return "shape";
  if (got.data.size() != want.data.size()) return "element count";
  for (size_t i = 0; i < got.data.size(); ++i)
    if (!same_element(got.data[i], want.data[i], tol))
      return "element " + std::to_string(i) + ": " + got.data[i] + " vs " + want.data[i];
  return "";
}

class Checker : public parity::Sink {
 public:
  explicit Checker(std::string group) : group_(std::move(group)) {}
  void put(const char* bare, double tol, const std::function<Value()>& f) override {
    ++cases;
    auto& refs = reference().values;
    std::string name = group_ + "/" + bare;
    auto it = refs.find(name);
    if (it == refs.end()) {
      ADD_FAILURE() << name << ": no recorded MLX value (run tools/record_mlx_parity.sh)";
      return;
    }
    if (known_differences().count(name)) {
      ++skipped;
      return;
    }
    Value got = parity::run_case(f);
    std::string why = compare(got, it->second, tol);
    EXPECT_TRUE(why.empty()) << name << ": " << why << "\n  nuvec: " << describe(got)
                             << "  MLX:   " << describe(it->second);
  }
  int cases = 0, skipped = 0;

 private:
  std::string group_;
};

#define PARITY_TEST(g)                                                   \
  TEST(MlxParity, g) {                                                   \
    nuvec::with_stream(nuvec::Device::cpu, [] {                          \
      Checker c(#g);                                                     \
      group_##g(c);                                                      \
      std::cout << "[parity " #g "] " << c.cases << " cases, " << c.skipped \
                << " deliberate differences skipped\n";                  \
    });                                                                  \
  }
PARITY_GROUPS(PARITY_TEST)

TEST(MlxParity, CaseNamesAreUniqueInEachGroup) {
  EXPECT_TRUE(reference().duplicates.empty()) << reference().duplicates.front();
  EXPECT_GT(reference().values.size(), 500u);  // the file was found and read
}

}  // namespace
