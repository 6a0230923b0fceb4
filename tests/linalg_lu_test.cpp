// linalg::lu, lu_factor, tri_inv, solve_triangular, det, slogdet, cross, eig,
// eigvals and the C++ forms of norm's overloads, against MLX's results
// recorded in tests/refs/linalg.ref (tools/record_mlx_linalg.py). Values
// are compared with MLX's within a tolerance scaled by the output's
// magnitude (LU factors and pivots too: partial pivoting picks the same rows,
// ties included; eigenvalues in LAPACK's order, which is MLX's), and every
// factorization is also checked by invariants computed here in float64 with
// plain loops (A[i] = (L U)[P[i]], L unit lower and U upper triangular,
// T T^-1 = I, T x = b, A v = w v); eigenvectors, unique up to a unit
// factor, by the invariants alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "support/conformance.h"
#include "support/cpu_default.h"
#include "support/rule_check.h"

namespace nuvec {
namespace {

namespace cf = conformance;
using Cd = std::complex<double>;

const std::set<std::string> kOps = {"lu",
                                    "lu_factor",
                                    "tri_inv",
                                    "tri_inv_upper",
                                    "solve_triangular",
                                    "solve_triangular_upper",
                                    "det",
                                    "slogdet",
                                    "cross",
                                    "eig",
                                    "eigvals",
                                    "norm_form"};

// The 4x4 matrix with a NaN (MLX's value follows its LAPACK's pivoting
// through NaN; nuvec gives NaN, LinalgLu.DetHandDerived).
const char* kNanDet = "det_special_49";
const char* kNanSlogdet = "slogdet_special_104";

bool starts_with(const std::string& s, const std::string& p) {
  return s.rfind(p, 0) == 0;
}

double eps_of(DType d) {
  return d == float64 ? std::numeric_limits<double>::epsilon()
                      : double(std::numeric_limits<float>::epsilon());
}

// Values in row-major order: real ones as float64, or as complex.
std::vector<double> values(const Array& x) {
  return ops::astype(x, float64).to_vector<double>();
}
std::vector<Cd> cvalues(const Array& x) {
  auto v = ops::astype(x, complex64).to_vector<complex64_t>();
  std::vector<Cd> r;
  for (auto z : v) r.emplace_back(z.re, z.im);
  return r;
}
double max_of(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

// The number of matrices [..., r, c] in x.
int64_t batch_of(const Array& x) {
  int64_t rc = int64_t(x.shape(-1)) * x.shape(-2);
  return rc == 0 ? 0 : x.size() / rc;
}

// A[i] = (L U)[rows[i]] for each matrix, with L [..., M, K], U [..., K, N]
// and rows [..., M] as float64 / uint32 values; rows a permutation.
void expect_reconstructs(const refs::Case& c, const Array& a,
                         const std::vector<double>& l,
                         const std::vector<double>& u,
                         const std::vector<uint32_t>& rows, int k) {
  int m = a.shape(-2), n = a.shape(-1);
  auto av = values(a);
  double tol = 64.0 * std::max(m, n) * eps_of(a.dtype()) * (max_of(av) + 1);
  for (int64_t b = 0; b < batch_of(a); ++b) {
    std::vector<bool> seen(m, false);
    for (int i = 0; i < m; ++i) {
      uint32_t r = rows[b * m + i];
      ASSERT_LT(r, uint32_t(m)) << c.where();
      EXPECT_FALSE(seen[r]) << c.where() << ": P is not a permutation";
      seen[r] = true;
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int t = 0; t < k; ++t)
          s += l[(b * m + r) * k + t] * u[(b * k + t) * n + j];
        EXPECT_NEAR(s, av[(b * m + i) * n + j], tol)
            << c.where() << ": A = L[P] U at " << b << "," << i << "," << j;
      }
    }
  }
}

void check_lu(const refs::Case& c, const Array& a,
              const std::vector<Array>& o) {
  int m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  auto l = values(o[1]), u = values(o[2]);
  ASSERT_EQ(o[1].shape(-1), k);
  ASSERT_EQ(o[2].shape(-2), k);
  for (int64_t b = 0; b < batch_of(a); ++b) {
    for (int i = 0; i < m; ++i)  // L: unit diagonal, zero above it
      for (int j = i; j < k; ++j)
        EXPECT_EQ(l[(b * m + i) * k + j], i == j ? 1.0 : 0.0)
            << c.where() << ": L " << i << j;
    for (int i = 0; i < k; ++i)  // U: zero below the diagonal
      for (int j = 0; j < std::min(i, n); ++j)
        EXPECT_EQ(u[(b * k + i) * n + j], 0.0) << c.where() << ": U " << i << j;
  }
  expect_reconstructs(c, a, l, u, o[0].to_vector<uint32_t>(), k);
}

// Pivots as row indices, independently of the kernel: row i of A is row
// rows[i] of L U when rows swaps i and piv[i] for i = K-1 down to 0.
void check_lu_factor(const refs::Case& c, const Array& a,
                     const std::vector<Array>& o) {
  int m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  auto lu = values(o[0]);
  auto piv = o[1].to_vector<uint32_t>();
  std::vector<double> l(lu.size() / std::max(n, 1) * k),
      u(lu.size() / std::max(m, 1) * k);
  std::vector<uint32_t> rows;
  for (int64_t b = 0; b < batch_of(a); ++b) {
    for (int i = 0; i < m; ++i)
      for (int t = 0; t < k; ++t)
        l[(b * m + i) * k + t] = i == t  ? 1.0
                                 : i > t ? lu[(b * m + i) * n + t]
                                         : 0.0;
    for (int t = 0; t < k; ++t)
      for (int j = 0; j < n; ++j)
        u[(b * k + t) * n + j] = t <= j ? lu[(b * m + t) * n + j] : 0.0;
    std::vector<uint32_t> r(m);
    for (int i = 0; i < m; ++i) r[i] = uint32_t(i);
    for (int i = k - 1; i >= 0; --i) {
      uint32_t p = piv[b * k + i];
      ASSERT_TRUE(p >= uint32_t(i) && p < uint32_t(m))
          << c.where() << ": pivot " << p;
      std::swap(r[i], r[p]);
    }
    rows.insert(rows.end(), r.begin(), r.end());
  }
  expect_reconstructs(c, a, l, u, rows, k);
}

// T out = I for the triangle T of a, and out zero on the other side.
void check_tri_inv(const refs::Case& c, const Array& a, const Array& out,
                   bool upper) {
  int n = a.shape(-1);
  auto av = values(a), ov = values(out);
  double tol = 64.0 * n * eps_of(a.dtype()) * (max_of(av) * max_of(ov) + 1);
  for (int64_t b = 0; b < batch_of(a); ++b)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        auto in_tri = [&](int r, int s) { return upper ? r <= s : r >= s; };
        if (!in_tri(i, j)) EXPECT_EQ(ov[(b * n + i) * n + j], 0.0) << c.where();
        double s = 0;
        for (int t = 0; t < n; ++t)
          if (in_tri(i, t))
            s += av[(b * n + i) * n + t] * ov[(b * n + t) * n + j];
        EXPECT_NEAR(s, i == j ? 1.0 : 0.0, tol)
            << c.where() << ": T T^-1 at " << i << "," << j;
      }
}

// A v = w v for each column v, of unit norm (the eigenvalues are compared
// with MLX's directly: geev on the transpose, as MLX, gives its order).
void check_eig(const refs::Case& c, const Array& a,
               const std::vector<Array>& o) {
  if (o.size() < 2) return;
  int n = a.shape(-1);
  auto av = cvalues(a), w = cvalues(o[0]), v = cvalues(o[1]);
  double scale = 1;
  for (auto z : av) scale = std::max(scale, std::abs(z));
  // The outputs are complex64 whatever the input: float32 roundings.
  double tol = 64.0 * n * eps_of(float32) * scale * n;
  for (int64_t b = 0; b < batch_of(a); ++b)
    for (int j = 0; j < n; ++j) {
      double norm2 = 0;
      for (int r = 0; r < n; ++r) norm2 += std::norm(v[(b * n + r) * n + j]);
      EXPECT_NEAR(norm2, 1.0, 1e-5) << c.where() << ": |v_" << j << "|";
      for (int r = 0; r < n; ++r) {
        Cd s = 0;
        for (int t = 0; t < n; ++t)
          s += av[(b * n + r) * n + t] * v[(b * n + t) * n + j];
        EXPECT_LE(std::abs(s - w[b * n + j] * v[(b * n + r) * n + j]), tol)
            << c.where() << ": A v = w v, vector " << j << " row " << r;
      }
    }
}

// The C++ call of each recorded norm form (the record's NORM_FORMS): an int
// is an axis, a floating number an ord, a brace list axes.
Array norm_form(int k, const Array& x) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  using V = std::vector<int>;
  switch (k) {
    case 0:
      return linalg::norm(x);
    case 1:
      return linalg::norm(x, 1);
    case 2:
      return linalg::norm(x, -1);
    case 3:
      return linalg::norm(x, 0, true);
    case 4:
      return linalg::norm(x, 2.0);
    case 5:
      return linalg::norm(x, 1.0);
    case 6:
      return linalg::norm(x, 2.0, 0);
    case 7:
      return linalg::norm(x, 1.0, 1, true);
    case 8:
      return linalg::norm(x, inf);
    case 9:
      return linalg::norm(x, -inf, {1, 0});
    case 10:
      return linalg::norm(x, "fro");
    case 11:
      return linalg::norm(x, "nuc");
    case 12:
      return linalg::norm(x, "fro", {0, 1}, true);
    case 13:
      return linalg::norm(x, {0, 1});
    case 14:
      return linalg::norm(x, {0, 1}, true);
    case 15:
      return linalg::norm(x, V{});
    case 16:
      return linalg::norm(x, 0.5, {0});
    case 17:
      return linalg::norm(x, 2.0, {0, 1});
    case 18:
      return linalg::norm(x, 2);
    case 19:
      return linalg::norm(x, V{2, 0});
    case 20:
      return linalg::norm(x, 2.0, Axes{0, 2}, true);
    case 21:
      return linalg::norm(x, 0);
    case 22:
      return linalg::norm(x, 0.0);
    case 23:
      return linalg::norm(x, "nuc", V{1, 0});
    case 24:
      return linalg::norm(x, std::nullopt, true);
    // nuvec's Axes, and its earlier spelling with a null ord
    case 25:
      return linalg::norm(x, std::nullopt, Axes{-1});
    case 26:
      return linalg::norm(x, Axes{0, 1}, true);
  }
  throw std::runtime_error("no norm form " + std::to_string(k));
}

std::vector<Array> build(const refs::Case& c) {
  auto in = cf::make_inputs(c);
  const Array& a = in.at(0);
  const std::string& op = c.op;
  std::vector<Array> out;
  if (op == "norm_form") return {norm_form(int(c.param_int("form")), a)};
  if (op == "cross")
    return {linalg::cross(a, in.at(1), int(c.param_int("axis")))};
  if (op == "det") return {linalg::det(a)};
  if (op == "slogdet") {
    auto [sign, logabs] = linalg::slogdet(a);
    return {sign, logabs};
  }
  bool upper = op.find("upper") != std::string::npos;
  if (op == "lu")
    out = linalg::lu(a);
  else if (op == "lu_factor") {
    auto [lu, piv] = linalg::lu_factor(a);
    out = {lu, piv};
  } else if (starts_with(op, "tri_inv"))
    out = {linalg::tri_inv(a, upper)};
  else if (starts_with(op, "solve_triangular"))
    out = {linalg::solve_triangular(a, in.at(1), upper)};
  else if (op == "eig") {
    auto [w, v] = linalg::eig(a);
    out = {w, v};
  } else if (op == "eigvals")
    out = {linalg::eigvals(a)};
  else
    throw std::runtime_error("no op " + op);
  if (c.error || out[0].is_failed()) return out;
  if (op == "lu") check_lu(c, a, out);
  if (op == "lu_factor") check_lu_factor(c, a, out);
  if (starts_with(op, "tri_inv")) check_tri_inv(c, a, out[0], upper);
  if (starts_with(op, "solve_triangular")) {  // T x = b
    Array t = upper ? ops::triu(a) : ops::tril(a);
    Array b = in.at(1), x = out[0];
    bool vec = b.ndim() == 1;
    Array tx = ops::matmul(t, vec ? ops::expand_dims(x, -1) : x);
    Array want = vec ? ops::expand_dims(b, -1) : b;
    // x is as accurate as tri_inv(a) in a's dtype.
    double tol = 64.0 * a.shape(-1) * eps_of(a.dtype()) *
                 (max_of(values(a)) * max_of(values(x)) + 1);
    EXPECT_LE(max_of(values(ops::subtract(tx, want))), tol)
        << c.where() << ": T x = b";
  }
  if (op == "eig" || op == "eigvals") check_eig(c, a, out);
  return out;
}

cf::Tolerance tolerance(const refs::Case& c) {
  double scale = c.outputs.empty() ? 0.0 : cf::max_abs(c.outputs[0]);
  const std::string& op = c.op;
  // A float32 path into a float64 output (a float32 a with a float64 b;
  // MLX's float64 exp, which is only float32-accurate, in det beyond 3x3):
  // float32 roundings in float64 units.
  double f32_in_f64 = eps_of(float32) / eps_of(float64);
  bool f64_out = !c.outputs.empty() && c.outputs[0].dtype == "float64";
  if (op == "cross") return cf::Tolerance::exact();  // MLX's operations
  if (op == "norm_form") return cf::Tolerance::reduction(64, 0);
  if (op == "det") {
    auto shape = c.inputs[0].view_shape();
    bool lu_path = shape.size() >= 2 && shape.back() > 3;
    return cf::Tolerance::reduction(f64_out && lu_path ? 64 * f32_in_f64 : 512,
                                    0);
  }
  if (op == "slogdet") return cf::Tolerance::reduction(512, 1);
  if (starts_with(op, "solve_triangular") && f64_out &&
      c.inputs[0].dtype == "float32")
    return cf::Tolerance::reduction(256 * f32_in_f64, scale);
  if (op == "lu" || op == "lu_factor")
    return cf::Tolerance::reduction(256, cf::max_abs(c.inputs[0]));
  return cf::Tolerance::reduction(256, scale);
}

cf::SkipElement skip(const refs::Case& c) {
  if (c.op == "eig")  // unique up to a unit factor: invariants
    return [](size_t o, size_t) -> const char* {
      return o == 1 ? "eigenvectors: invariants" : nullptr;
    };
  if (c.id == kNanDet || c.id == kNanSlogdet)
    return [](size_t, size_t) {
      return "NaN input: LAPACK's pivots decide MLX's value; NaN here (by "
             "hand)";
    };
  return {};
}

TEST(LinalgLu, MatchesMlx) {
  nuvec::testing::CpuDefault cpu_default;
  cf::Tally tally;
  tally.file = "linalg.ref (lu ... eig, norm forms)";
  for (const auto& c : cf::load_cases("linalg.ref")) {
    if (!kOps.count(c.op)) continue;
    cf::run_case(
        c, [&] { return build(c); }, tolerance(c), tally, {},
        c.outputs.empty() ? cf::SkipElement{} : skip(c));
  }
  EXPECT_EQ(tally.cases, 406);
}

void expect_fails(const Array& x, ErrorKind kind, const std::string& op,
                  int line) {
  ASSERT_TRUE(x.is_failed()) << op;
  EXPECT_EQ(x.error()->kind(), kind) << op << ": " << x.error()->what();
  EXPECT_EQ(x.error()->op_name().value_or(""), op) << x.error()->what();
  EXPECT_EQ(x.error()->line(), line) << op;
}

void expect_eval_error(const Array& x, const std::string& op,
                       const std::string& word) {
  ASSERT_FALSE(x.is_failed()) << op << ": known before evaluation";
  try {
    x.eval();
    ADD_FAILURE() << op << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.op_name().value_or(""), op) << e.what();
    EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
  }
}

TEST(LinalgLu, InvalidInputsNameTheOpAndLine) {
  nuvec::testing::CpuDefault cpu_default;
  using K = ErrorKind;
  Array sq = ops::eye(3), ints = ops::ones({3, 3}, int32), vec = ops::ones({3});
  // clang-format off
  expect_fails(linalg::lu(ints)[1], K::unsupported_dtype, "lu", __LINE__);
  expect_fails(linalg::lu(vec)[0], K::invalid_shape, "lu", __LINE__);
  expect_fails(linalg::lu_factor(ops::ones({2, 2}, float16)).second, K::unsupported_dtype, "lu_factor", __LINE__);
  expect_fails(linalg::tri_inv(ops::ones({2, 3})), K::invalid_shape, "tri_inv", __LINE__);
  expect_fails(linalg::tri_inv(ints, true), K::unsupported_dtype, "tri_inv", __LINE__);
  expect_fails(linalg::solve_triangular(sq, ops::ones({4})), K::shape_mismatch, "solve_triangular", __LINE__);
  expect_fails(linalg::solve_triangular(ints, ops::ones({3})), K::unsupported_dtype, "solve_triangular", __LINE__);
  expect_fails(linalg::solve_triangular(ints, ops::ones({3}, int32)), K::unsupported_dtype, "solve_triangular", __LINE__);
  expect_fails(linalg::solve_triangular(sq, ops::ones({})), K::invalid_shape, "solve_triangular", __LINE__);
  expect_fails(linalg::solve_triangular(ops::ones({2, 3, 3}), ops::ones({4, 3, 1})), K::shape_mismatch, "solve_triangular", __LINE__);
  expect_fails(linalg::det(ops::ones({2, 3})), K::invalid_shape, "det", __LINE__);
  expect_fails(linalg::det(ops::ones({2, 2}, complex64)), K::unsupported_dtype, "det", __LINE__);
  expect_fails(linalg::det(ops::ones({4, 4}, float16)), K::unsupported_dtype, "det", __LINE__);
  expect_fails(linalg::slogdet(vec).first, K::invalid_shape, "slogdet", __LINE__);
  expect_fails(linalg::cross(ops::ones({4}), vec), K::invalid_shape, "cross", __LINE__);
  expect_fails(linalg::cross(ops::ones({3, 2}), ops::ones({3, 2}), 2), K::invalid_axis, "cross", __LINE__);
  expect_fails(linalg::cross(ops::ones({4, 3}), ops::ones({5, 3})), K::shape_mismatch, "cross", __LINE__);
  expect_fails(linalg::eig(ints).second, K::unsupported_dtype, "eig", __LINE__);
  expect_fails(linalg::eigvals(ops::ones({2, 3})), K::invalid_shape, "eigvals", __LINE__);
  expect_fails(linalg::norm(ops::ones({2, 3, 4}), 2.0), K::invalid_argument, "norm", __LINE__);
  expect_fails(linalg::norm(sq, "fro", 0), K::invalid_argument, "norm", __LINE__);
  // clang-format on
  // A failed input comes back unchanged.
  Array bad = linalg::inv(ops::ones({2, 3}));
  EXPECT_EQ(linalg::det(bad).error()->op_name().value_or(""), "inv");
  EXPECT_EQ(linalg::cross(bad, bad).error()->op_name().value_or(""), "inv");
}

TEST(LinalgLu, EvaluationErrors) {
  nuvec::testing::CpuDefault cpu_default;
  Array low_singular = array({1.0f, 0.0f, 1.0f, 0.0f}, {2, 2});
  expect_eval_error(linalg::tri_inv(low_singular), "tri_inv", "singular");
  expect_eval_error(linalg::solve_triangular(low_singular, ops::ones({2})),
                    "solve_triangular", "singular");
  float nan = std::numeric_limits<float>::quiet_NaN();
  expect_eval_error(linalg::eigvals(array({nan, 1.0f, 1.0f, 1.0f}, {2, 2})),
                    "eigvals", "non-finite");
  // A singular matrix factors: U has a zero pivot.
  auto [lu, piv] = linalg::lu_factor(ops::ones({3, 3}));
  EXPECT_EQ(values(lu), (std::vector<double>{1, 1, 1, 1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(piv.to_vector<uint32_t>(), (std::vector<uint32_t>{0, 1, 2}));
}

// MLX's own CPU kernels crash on these (SIGFPE); nuvec defines them.
TEST(LinalgLu, EmptyMatrices) {
  nuvec::testing::CpuDefault cpu_default;
  auto plu = linalg::lu(ops::zeros({2, 0}));
  EXPECT_EQ(plu[0].to_vector<uint32_t>(), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(plu[1].shape(), (Shape{2, 0}));
  EXPECT_EQ(plu[2].shape(), (Shape{0, 0}));
  auto p03 = linalg::lu(ops::zeros({0, 3}));
  EXPECT_EQ(p03[0].shape(), (Shape{0}));
  EXPECT_EQ(p03[1].shape(), (Shape{0, 0}));
  EXPECT_EQ(p03[2].shape(), (Shape{0, 3}));
  EXPECT_EQ(p03[2].size(), 0);
  auto [lu, piv] = linalg::lu_factor(ops::zeros({2, 0, 0}, float64));
  EXPECT_EQ(lu.shape(), (Shape{2, 0, 0}));
  EXPECT_EQ(piv.shape(), (Shape{2, 0}));
  EXPECT_EQ(piv.dtype(), uint32);
  lu.eval();
  EXPECT_EQ(linalg::tri_inv(ops::zeros({0, 0})).to_vector<float>().size(), 0u);
  auto rows = linalg::lu(ops::zeros({3, 2, 0}))[0].to_vector<uint32_t>();
  EXPECT_EQ(rows, (std::vector<uint32_t>{0, 1, 0, 1, 0, 1}));
}

TEST(LinalgLu, DetHandDerived) {
  nuvec::testing::CpuDefault cpu_default;
  auto f64 = [](std::vector<double> v, int n) {
    return array<double>(v, {n, n});
  };
  // diag(1, 2, 3, 4, -5): -120, exactly (MLX: -119.99998474, its float64
  // exp being float32-accurate).
  Array d = ops::multiply(ops::eye(5, float64),
                          array<double>({1, 2, 3, 4, -5}, {5}));
  EXPECT_NEAR(linalg::det(d).item<double>(), -120.0, 1e-12);
  // The tridiagonal (1, 2, 1) matrix of order n has determinant n + 1.
  Array tri = ops::add(
      ops::multiply(ops::eye(6, float64), 2.0),
      ops::add(ops::eye(6, 6, 1, float64), ops::eye(6, 6, -1, float64)));
  EXPECT_NEAR(linalg::det(tri).item<double>(), 7.0, 1e-12);
  auto [sign, logabs] = linalg::slogdet(ops::negative(tri));
  EXPECT_EQ(sign.item<double>(), 1.0);  // (-1)^6
  EXPECT_NEAR(logabs.item<double>(), std::log(7.0), 1e-14);
  // Permutations: a swap of two rows is odd, a 5-cycle even.
  Array swap = ops::take(ops::eye(4, float64), array({1, 0, 2, 3}), 0);
  Array cycle =
      ops::take(ops::eye(5, float64), array({4, 0, 1, 2, 3}), 0);
  EXPECT_EQ(linalg::det(swap).item<double>(), -1.0);
  EXPECT_EQ(linalg::det(cycle).item<double>(), 1.0);
  EXPECT_EQ(linalg::slogdet(cycle).first.item<double>(), 1.0);
  // A NaN anywhere: NaN, whatever LAPACK's pivots did with it.
  Array with_nan =
      f64({std::nan(""), 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, 4);
  EXPECT_TRUE(std::isnan(linalg::det(with_nan).item<double>()));
  auto [s_nan, l_nan] = linalg::slogdet(with_nan);
  EXPECT_TRUE(std::isnan(s_nan.item<double>()));
  EXPECT_TRUE(std::isnan(l_nan.item<double>()));
  // Integer and bool inputs compute in float32; 0x0 is the empty product.
  EXPECT_EQ(linalg::det(array({{1, 2}, {3, 4}})).dtype(), float32);
  EXPECT_EQ(linalg::det(array({{1, 2}, {3, 4}})).item<float>(), -2.0f);
  EXPECT_EQ(linalg::det(ops::zeros({2, 0, 0})).to_vector<float>(),
            (std::vector<float>{1, 1}));
}

// Gradients: tri_inv and lu_factor have rules (MLX has none); solve_
// triangular, det, slogdet and cross differentiate through their parts.
TEST(LinalgLu, DerivativesMatchFiniteDifferences) {
  nuvec::testing::CpuDefault cpu_default;
  using rulecases::probe;
  namespace dom = rulecases::dom;
  auto one = [](std::function<Array(const Array&)> f) -> FlatFunction {
    return [f](const std::vector<Array>& in) {
      return std::vector<Array>{f(in[0])};
    };
  };
  // Rows of a well-conditioned matrix reordered, so that pivoting swaps.
  auto permuted = [](const Array& x) {
    std::vector<int> idx(x.shape(-2));
    for (int i = 0; i < int(idx.size()); ++i)
      idx[i] = (i + 1) % int(idx.size());
    return ops::take(x, array<int>(idx, {int(idx.size())}), x.ndim() - 2);
  };
  const auto m = dom::matrix;
  std::vector<rulecases::Probe> probes = {
      probe("tri_inv", one([](const Array& x) { return linalg::tri_inv(x); }),
            {{3, 3}}, {m}),
      probe("tri_inv, upper, batched",
            one([](const Array& x) { return linalg::tri_inv(x, true); }),
            {{2, 3, 3}}, {m}),
      probe("solve_triangular",
            [](const std::vector<Array>& in) {
              return std::vector<Array>{
                  linalg::solve_triangular(in[0], in[1], true)};
            },
            {{3, 3}, {3, 2}}, {m, dom::real}),
      probe("lu_factor (packed LU), with row swaps", one([&](const Array& x) {
              return linalg::lu_factor(permuted(x)).first;
            }),
            {{4, 4}}, {m}),
      probe("lu (L, U), batched",
            [&](const std::vector<Array>& in) {
              auto plu = linalg::lu(permuted(in[0]));
              return std::vector<Array>{plu[1], plu[2]};
            },
            {{2, 3, 3}}, {m}),
      probe("det 3x3 (cofactors)",
            one([&](const Array& x) { return linalg::det(permuted(x)); }),
            {{3, 3}}, {m}),
      probe("det 5x5 (lu_factor)",
            one([&](const Array& x) { return linalg::det(permuted(x)); }),
            {{5, 5}}, {m}),
      probe("slogdet's log|det|, batched", one([&](const Array& x) {
              return linalg::slogdet(permuted(x)).second;
            }),
            {{2, 4, 4}}, {m}),
      probe("cross",
            [](const std::vector<Array>& in) {
              return std::vector<Array>{linalg::cross(in[0], in[1])};
            },
            {{4, 3}, {3}}, {dom::real}),
      probe("cross, size 2 and 3 on axis 0",
            [](const std::vector<Array>& in) {
              return std::vector<Array>{linalg::cross(in[0], in[1], 0)};
            },
            {{2, 4}, {3, 4}}, {dom::real}),
  };
  std::mt19937 rng(7);
  for (const auto& p : probes) {
    auto inputs = rulecheck::sample(p, rng);
    for (const auto& layout : rulecheck::layouts(inputs))
      EXPECT_EQ(
          rulecheck::check_finite_differences(p, layout.inputs, inputs, rng),
          "")
          << p.label << " (" << layout.name << ")";
    EXPECT_EQ(rulecheck::check_vmap(p, rng), "") << p.label;
    auto q = rulecheck::vjp_of(p, rng);
    auto qin = rulecheck::sample(q, rng);
    EXPECT_EQ(rulecheck::check_finite_differences(q, qin, qin, rng), "")
        << p.label << ": second order";
  }
}

TEST(LinalgLu, NoDerivativesWhereMlxHasNone) {
  nuvec::testing::CpuDefault cpu_default;
  Array a = array({{2.0f, 1.0f}, {0.5f, 3.0f}});
  auto eig_loss = [](const std::vector<Array>& in) {
    return std::vector<Array>{ops::sum(ops::real(linalg::eigvals(in[0])))};
  };
  EXPECT_THROW(grad_flat(eig_loss)({a}), Error);
  auto tall = [](const std::vector<Array>& in) {
    return std::vector<Array>{ops::sum(linalg::lu_factor(in[0]).first)};
  };
  EXPECT_THROW(grad_flat(tall)({ops::ones({3, 2})}), Error);
}

// On a GPU stream linear algebra fails at evaluation, as inv does (MLX runs
// it on the CPU only); composites of CPU-free ops (cross) run there.
TEST(LinalgLu, GpuStreamSaysCpuOnly) {
  if (!is_available(Device::gpu)) GTEST_SKIP() << "no GPU";
  Array a = array({{2.0f, 1.0f}, {0.5f, 3.0f}});
  expect_eval_error(linalg::lu(a, Device::gpu)[1], "lu", "CPU only");
  expect_eval_error(linalg::tri_inv(a, false, Device::gpu), "tri_inv",
                    "CPU only");
  expect_eval_error(linalg::det(ops::eye(4), Device::gpu), "det", "CPU only");
  expect_eval_error(linalg::eig(a, Device::gpu).first, "eig", "CPU only");
  EXPECT_EQ(linalg::cross(array({1.0f, 0.0f, 0.0f}), array({0.0f, 1.0f, 0.0f}),
                          -1, Device::gpu)
                .to_vector<float>(),
            (std::vector<float>{0, 0, 1}));
}

}  // namespace
}  // namespace nuvec
