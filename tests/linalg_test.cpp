// linalg (norm, inv, cholesky, qr, svd, eigh, solve, pinv, cholesky_inv)
// against MLX's results recorded in tests/refs/linalg.ref. Unique results
// (norms, inverses, Cholesky factors, singular values, eigenvalues) are
// compared within a tolerance scaled by the output's magnitude; results
// unique only up to signs (Q, R, U, Vt, eigenvectors) by invariants:
// reconstruction, orthogonality and triangularity.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "support/conformance.h"
#include "support/cpu_default.h"

namespace nuvec {
namespace {

namespace cf = conformance;

double maxabs(const Array& x) {
  if (x.size() == 0) return 0.0;
  return ops::max(ops::abs(ops::astype(x, float64))).item<double>();
}

double eps_of(const Array& x) {
  return x.dtype() == float64 ? std::numeric_limits<double>::epsilon()
                              : double(std::numeric_limits<float>::epsilon());
}

// max |x - y| <= 64 n eps (|a| + 1), a the input matrix.
// (unit: scale 1, for orthogonality.)
void expect_close(const Array& x, const Array& y, const Array& a, const std::string& what,
                  const refs::Case& c, bool unit = false) {
  int n = std::max(a.shape(-1), a.shape(-2));
  double tol = 64.0 * n * eps_of(a) * (unit ? 1.0 : maxabs(a) + 1.0);
  double d = maxabs(ops::subtract(x, y));
  EXPECT_LE(d, tol) << c.where() << ": " << what;
}

Array eye_like(int n, DType d) { return ops::eye(n, d); }

// Invariants of the non-unique factorizations.
void check_invariants(const refs::Case& c, const Array& a, const std::vector<Array>& out) {
  if (out.empty() || out[0].is_failed()) return;
  const std::string& op = c.op;
  if (op == "qr") {
    const Array &q = out[0], &r = out[1];
    expect_close(ops::matmul(q, r), a, a, "Q R = A", c);
    int k = q.shape(-1);
    expect_close(ops::matmul(ops::swapaxes(q, -1, -2), q), eye_like(k, a.dtype()), a,
                 "Q^T Q = I", c, true);
    EXPECT_EQ(maxabs(ops::tril(r, -1)), 0.0) << c.where() << ": R upper triangular";
  } else if (op == "svd") {
    const Array &u = out[0], &s = out[1], &vt = out[2];
    int m = u.shape(-1), n = vt.shape(-1), k = s.shape(-1);
    std::vector<int> z(a.ndim(), 0);
    Shape ue = u.shape(), ve = vt.shape();
    ue.back() = k;
    ve[ve.size() - 2] = k;
    Array uk = ops::slice(u, z, std::vector<int>(ue.begin(), ue.end()));
    Array vk = ops::slice(vt, z, std::vector<int>(ve.begin(), ve.end()));
    expect_close(ops::matmul(ops::multiply(uk, ops::expand_dims(s, -2)), vk), a, a,
                 "U diag(S) Vt = A", c);
    expect_close(ops::matmul(ops::swapaxes(u, -1, -2), u), eye_like(m, a.dtype()), a,
                 "U^T U = I", c, true);
    expect_close(ops::matmul(vt, ops::swapaxes(vt, -1, -2)), eye_like(n, a.dtype()), a,
                 "Vt Vt^T = I", c, true);
  } else if (op == "eigh" || op == "eigh_upper") {
    const Array &w = out[0], &v = out[1];
    expect_close(ops::matmul(ops::multiply(v, ops::expand_dims(w, -2)), ops::swapaxes(v, -1, -2)),
                 a, a, "V diag(w) V^T = A", c);
    expect_close(ops::matmul(ops::swapaxes(v, -1, -2), v), eye_like(v.shape(-1), a.dtype()), a,
                 "V^T V = I", c, true);
  } else if (op == "inv") {
    expect_close(ops::matmul(a, out[0]), eye_like(a.shape(-1), a.dtype()), a, "A inv(A) = I", c);
  }
}

// The MLX overload a recorded norm case used: no ord, a number or a name.
Array norm_case(const refs::Case& c, const Array& a) {
  std::optional<std::vector<int>> axes;
  if (c.param("axes") != "none") axes = c.param_ints("axes");
  bool kd = c.param_bool("keepdims");
  const std::string& o = c.param("ord");
  if (o == "none") return linalg::norm(a, axes, kd);
  if (o == "fro" || o == "nuc" || o == "f" || o == "abc")
    return linalg::norm(a, o, axes, kd);
  return linalg::norm(a, std::stod(o), axes, kd);
}

std::vector<Array> build_linalg(const refs::Case& c) {
  auto in = cf::make_inputs(c);
  const Array& a = in.at(0);
  const std::string& op = c.op;
  std::vector<Array> out;
  if (op == "norm") return {norm_case(c, a)};
  if (op == "inv") out = {linalg::inv(a)};
  else if (op == "cholesky") out = {linalg::cholesky(a)};
  else if (op == "cholesky_upper") out = {linalg::cholesky(a, true)};
  else if (op == "qr") {
    auto [q, r] = linalg::qr(a);
    out = {q, r};
  } else if (op == "svd") out = linalg::svd(a);
  else if (op == "svdvals") out = linalg::svd(a, false);
  else if (op == "eigh" || op == "eigh_upper") {
    auto [w, v] = linalg::eigh(a, op == "eigh" ? "L" : "U");
    out = {w, v};
  } else if (op == "eigvalsh") out = {linalg::eigvalsh(a)};
  else if (op == "pinv") out = {linalg::pinv(a)};
  else if (op == "cholesky_inv") out = {linalg::cholesky_inv(linalg::cholesky(a))};
  else if (op == "solve") out = {linalg::solve(a, in.at(1))};
  else if (op == "multivariate_normal") {
    auto sh = c.param_ints("shape");
    return {random::multivariate_normal(a, in.at(1), Shape(sh.begin(), sh.end()), float32,
                                        random::key(static_cast<uint64_t>(c.param_int("seed"))))};
  }
  else throw std::runtime_error("no op " + op);
  if (!c.error) check_invariants(c, a, out);
  return out;
}

TEST(Linalg, MatchesMlx) {
  nuvec::testing::CpuDefault cpu_default;
  cf::FileHooks hooks;
  hooks.tolerance = [](const refs::Case& c) {
    // Summation order and LAPACK's blocking differ from MLX's: allow a few
    // hundred roundings relative to the largest output value.
    double scale = c.outputs.empty() ? 0.0 : cf::max_abs(c.outputs[0]);
    if (c.op == "norm") return cf::Tolerance::reduction(64, 0);
    if (c.op == "multivariate_normal") return cf::Tolerance::reduction(64, 2.0);
    if (!c.outputs.empty() && (c.op == "svd" || c.op == "eigh" || c.op == "eigh_upper"))
      scale = cf::max_abs(c.outputs[c.op == "svd" ? 1 : 0]);
    return cf::Tolerance::reduction(256, scale);
  };
  hooks.skip = [](const refs::Case& c) -> cf::SkipElement {
    if (c.op == "qr") return [](size_t, size_t) { return "Q, R unique up to signs: invariants"; };
    if (c.op == "svd")
      return [](size_t o, size_t) -> const char* {
        return o == 1 ? nullptr : "U, Vt unique up to signs: invariants";
      };
    if (c.op == "eigh" || c.op == "eigh_upper")
      return [](size_t o, size_t) -> const char* {
        return o == 0 ? nullptr : "eigenvectors unique up to signs: invariants";
      };
    return {};
  };
  // The cases of the other functions are linalg_lu_test.cpp's.
  static const std::set<std::string> ops = {
      "norm", "inv",          "cholesky", "cholesky_upper",     "qr",
      "svd",  "svdvals",      "eigh",     "eigh_upper",         "eigvalsh",
      "pinv", "cholesky_inv", "solve",    "multivariate_normal"};
  cf::Tally tally;
  tally.file = "linalg.ref (norm ... solve)";
  for (const auto& c : cf::load_cases("linalg.ref")) {
    if (!ops.count(c.op)) continue;
    cf::SkipElement skip =
        c.outputs.empty() ? cf::SkipElement{} : hooks.skip(c);
    cf::run_case(
        c, [&] { return build_linalg(c); }, hooks.tolerance(c), tally, {},
        skip);
  }
  EXPECT_EQ(tally.cases, 465);
}

TEST(Linalg, InvalidInputFailsWithOpAndLocation) {
  nuvec::testing::CpuDefault cpu_default;
  Array bad = linalg::inv(ops::ones({3, 4}));
  int line = __LINE__ - 1;
  ASSERT_TRUE(bad.is_failed());
  EXPECT_EQ(bad.error()->kind(), ErrorKind::invalid_shape);
  EXPECT_EQ(bad.error()->op_name().value_or(""), "inv");
  EXPECT_EQ(bad.error()->line(), line);
  EXPECT_EQ(linalg::cholesky(ops::ones({3, 3}, int32)).error()->kind(),
            ErrorKind::unsupported_dtype);
  EXPECT_EQ(linalg::qr(ops::ones({3, 3}, float16)).first.error()->kind(),
            ErrorKind::unsupported_dtype);
  EXPECT_TRUE(linalg::svd(ops::ones({4})).at(2).is_failed());
  EXPECT_EQ(linalg::eigh(ops::eye(3), "X").second.error()->kind(), ErrorKind::invalid_argument);
  EXPECT_EQ(linalg::solve(ops::eye(3), ops::ones({4})).error()->kind(), ErrorKind::shape_mismatch);
  EXPECT_EQ(linalg::solve(ops::ones({2, 3, 3}), ops::ones({4, 3, 1})).error()->kind(),
            ErrorKind::shape_mismatch);
  EXPECT_EQ(linalg::norm(ops::ones({2, 2, 2}), 1.0).error()->kind(), ErrorKind::invalid_argument);
  EXPECT_EQ(linalg::norm(ops::ones({2, 2}), 3.0, Axes{0, 1}).error()->kind(),
            ErrorKind::invalid_argument);
}

TEST(Linalg, LapackFailuresAreEvalErrors) {
  nuvec::testing::CpuDefault cpu_default;
  auto expect_eval_error = [](const Array& x, const std::string& op, const std::string& word) {
    ASSERT_FALSE(x.is_failed());  // not known before evaluation
    try {
      x.eval();
      ADD_FAILURE() << op << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.op_name().value_or(""), op);
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  expect_eval_error(linalg::inv(ops::ones({3, 3})), "inv", "singular");
  expect_eval_error(linalg::solve(ops::zeros({2, 2}), ops::ones({2})), "solve", "singular");
  expect_eval_error(linalg::cholesky(-ops::eye(3)), "cholesky", "positive definite");
  // Only the dependents fail; another batch is fine.
  EXPECT_NEAR(linalg::inv(ops::eye(2) * 2.0).to_vector<float>()[0], 0.5f, 0.0f);
}

TEST(Linalg, BatchedBroadcastAndNonContiguous) {
  nuvec::testing::CpuDefault cpu_default;
  // a broadcast over a batch of right-hand sides, b transposed.
  Array a = array({{4.0, 1.0}, {2.0, 3.0}});
  Array b = ops::transpose(array({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}));  // (3, 2)
  Array x = linalg::solve(ops::expand_dims(a, 0), ops::expand_dims(b, -1));  // (3, 2, 1)
  ASSERT_EQ(x.shape(), (Shape{3, 2, 1}));
  Array back = ops::squeeze(ops::matmul(a, x), Axes(-1));
  auto got = back.to_vector<float>();
  auto want = b.to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5);
  // Norms of an integer array are float32; keepdims keeps the axes.
  Array n = linalg::norm(array({{3, 4}, {0, 0}}), std::nullopt, Axes{1}, true);
  EXPECT_EQ(n.dtype(), float32);
  EXPECT_EQ(n.shape(), (Shape{2, 1}));
  EXPECT_EQ(n.to_vector<float>(), (std::vector<float>{5, 0}));
  // float64 stays float64 through the decompositions.
  EXPECT_EQ(linalg::svd(ops::eye(3, float64), false)[0].dtype(), float64);
  Array pi = linalg::pinv(array({{1.0, 2.0}, {2.0, 4.0}}));  // rank 1
  auto p = pi.to_vector<float>();
  EXPECT_NEAR(p[0], 0.04f, 1e-6);
  EXPECT_NEAR(p[3], 0.16f, 1e-6);
}

}  // namespace
}  // namespace nuvec

// A NaN entry makes every entry of the inverse NaN (LAPACK's pivoting
// through NaN comparisons used to leave a 0 in the all-NaN 2x2).
TEST(LinalgNaN, InverseOfAMatrixWithNaNIsAllNaN) {
  using namespace nuvec;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Array& m : {array({nan, nan, nan, nan}, {2, 2}),
                         array({2.0f, 1.0f, 0.0f, 1.0f, nan, 1.0f, 0.0f, 1.0f, 3.0f}, {3, 3})}) {
    for (DType dt : {float32, float64}) {
      Array inv = linalg::inv(m.astype(dt), Device::cpu);
      auto v = inv.astype(float32).to_vector<float>();
      for (float x : v) EXPECT_TRUE(std::isnan(x)) << inv;
    }
  }
  // Batches: only the matrix with the NaN.
  Array b = stack({array({2.0f, 0.0f, 0.0f, 4.0f}, {2, 2}), array({nan, 1.0f, 1.0f, 1.0f}, {2, 2})});
  auto v = linalg::inv(b, Device::cpu).to_vector<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.begin() + 4), (std::vector<float>{0.5f, 0.0f, 0.0f, 0.25f}));
  for (int i = 4; i < 8; ++i) EXPECT_TRUE(std::isnan(v[i]));
}
