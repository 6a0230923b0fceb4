#include "support/rule_check.h"

#include <nuvec/core/graph.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <unordered_set>

namespace nuvec::rulecases {

Probe probe(std::string label, FlatFunction f, std::vector<Shape> shapes,
            std::vector<Domain> domains) {
  Probe p;
  p.label = std::move(label);
  p.f = std::move(f);
  p.shapes = std::move(shapes);
  p.domains = std::move(domains);
  return p;
}

namespace {

using Kind = Domain::Kind;

double uniform(std::mt19937& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

// n values at least 0.15 apart, in random order.
std::vector<double> distinct_pool(size_t n, std::mt19937& rng) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (static_cast<double>(i) - static_cast<double>(n) / 2) * 0.25 + uniform(rng, -0.05, 0.05);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

// Integer k stored so that truncation toward zero gives k after a step of
// either sign.
double stored_integer(int64_t k) { return static_cast<double>(k) + (k >= 0 ? 0.5 : -0.5); }

std::vector<double> values(const Domain& d, const Shape& shape, std::mt19937& rng) {
  size_t n = static_cast<size_t>(shape_size(shape));
  if (d.kind == Kind::distinct) return distinct_pool(n, rng);
  std::vector<double> v(n);
  for (auto& x : v) {
    switch (d.kind) {
      case Kind::nonzero:
      case Kind::with_zero:
        x = uniform(rng, 0.3, 2.0) * (rng() % 2 ? 1 : -1);
        break;
      case Kind::positive: x = uniform(rng, 0.3, 2.0); break;
      case Kind::unit: x = uniform(rng, -0.8, 0.8); break;
      case Kind::above_one: x = uniform(rng, 1.3, 3.0); break;
      case Kind::fractional:
        x = std::uniform_int_distribution<int>(-3, 2)(rng) + uniform(rng, 0.2, 0.8);
        break;
      case Kind::index:
        x = stored_integer(std::uniform_int_distribution<int>(-d.bound, d.bound - 1)(rng));
        break;
      case Kind::key: x = stored_integer(rng()); break;
      default: x = uniform(rng, -2.0, 2.0); break;
    }
  }
  if (d.kind == Kind::with_zero && n > 0) v[0] = 0.0;
  if (d.kind == Kind::matrix && shape.size() >= 2) {
    size_t rows = shape[shape.size() - 2], cols = shape.back();
    for (size_t m = 0; m < n / (rows * cols); ++m)
      for (size_t i = 0; i < rows; ++i)
        for (size_t j = 0; j < cols; ++j) {
          double diag = i == j ? 1.5 * static_cast<double>(std::min(rows, cols) - i) : 0.0;
          v[(m * rows + i) * cols + j] = diag + uniform(rng, -0.1, 0.1);
        }
  }
  return v;
}

}  // namespace

Array draw(const Domain& d, const Shape& shape, std::mt19937& rng) {
  return array<double>(values(d, shape, rng), shape);
}

}  // namespace nuvec::rulecases

namespace nuvec::rulecheck {

namespace {

using Arrays = std::vector<Array>;
using rulecases::Domain;

const Domain& domain_of(const Probe& p, size_t i) {
  return p.domains.size() == 1 ? p.domains[0] : p.domains.at(i);
}

// Probes return real outputs (check_finite_differences insists).
std::vector<double> doubles(const Array& a) { return a.to_vector<double>(); }

double dot(const std::vector<double>& a, const std::vector<double>& b, double* abs_sum) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    s += a[i] * b[i];
    *abs_sum += std::abs(a[i] * b[i]);
  }
  return s;
}

// Standard normal values of `shape`, in `dtype`.
Array normal_like(const Shape& shape, DType dtype, std::mt19937& rng) {
  std::normal_distribution<double> n;
  std::vector<double> v(static_cast<size_t>(shape_size(shape)));
  for (auto& x : v) x = n(rng);
  return array<double>(v, shape).astype(dtype);
}

// A value (for cotangents of non-inexact outputs, which are not read).
Array seed_like(const Array& out, std::mt19937& rng) {
  if (is_inexact(out.dtype())) return normal_like(out.shape(), out.dtype(), rng);
  return ops::ones(out.shape(), out.dtype());
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

Array with_step(const Array& x, const Array& v, double h) {
  std::vector<double> a = x.to_vector<double>(), b = v.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) a[i] += h * b[i];
  return array<double>(a, x.shape());
}

// The bits of each element (floats widened to double exactly), so that
// vmap can be compared with the loop bit for bit.
std::vector<uint64_t> bits(const Array& a) {
  std::vector<uint64_t> out;
  if (is_complex(a.dtype())) {
    auto re = bits(ops::real(a)), im = bits(ops::imag(a));
    for (size_t i = 0; i < re.size(); ++i) {
      out.push_back(re[i]);
      out.push_back(im[i]);
    }
  } else if (is_floating(a.dtype())) {
    for (double d : a.to_vector<double>()) {
      uint64_t u;
      std::memcpy(&u, &d, sizeof u);
      out.push_back(u);
    }
  } else {
    for (int64_t i : a.to_vector<int64_t>()) out.push_back(static_cast<uint64_t>(i));
  }
  return out;
}

}  // namespace

Arrays sample(const Probe& p, std::mt19937& rng) {
  // Distinct-domain inputs share one pool, so that no two of their values
  // tie (maximum(a, b) compares across inputs).
  size_t pooled = 0;
  for (size_t i = 0; i < p.shapes.size(); ++i)
    if (domain_of(p, i).kind == Domain::Kind::distinct)
      pooled += static_cast<size_t>(shape_size(p.shapes[i]));
  std::vector<double> pool = rulecases::distinct_pool(pooled, rng);
  size_t next = 0;
  Arrays out;
  for (size_t i = 0; i < p.shapes.size(); ++i) {
    const Domain& d = domain_of(p, i);
    if (d.kind != Domain::Kind::distinct) {
      out.push_back(rulecases::draw(d, p.shapes[i], rng));
      continue;
    }
    size_t n = static_cast<size_t>(shape_size(p.shapes[i]));
    std::vector<double> v(pool.begin() + next, pool.begin() + next + n);
    next += n;
    out.push_back(array<double>(v, p.shapes[i]));
  }
  return out;
}

std::vector<Layout> layouts(const Arrays& inputs) {
  std::vector<Layout> out{{"contiguous", inputs}};
  Layout tr{"transposed views", inputs}, st{"strided views", inputs};
  bool any_tr = false, any_st = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Array& x = inputs[i];
    if (x.ndim() >= 2) {
      Array t = ops::copy(ops::transpose(x));
      t.eval();
      tr.inputs[i] = ops::transpose(t);
      tr.inputs[i].eval();
      any_tr = any_tr || !tr.inputs[i].desc()->row_contiguous;
    }
    if (x.ndim() >= 1) {
      Shape big = x.shape();
      big.back() *= 2;
      std::vector<double> data(static_cast<size_t>(x.size()) * 2,
                               std::numeric_limits<double>::quiet_NaN());
      std::vector<double> v = x.to_vector<double>();
      for (size_t j = 0; j < v.size(); ++j) data[2 * j] = v[j];
      std::vector<int> start(x.ndim(), 0), steps(x.ndim(), 1);
      steps.back() = 2;
      st.inputs[i] = ops::slice(array<double>(data, big), start, big, steps);
      st.inputs[i].eval();
      any_st = any_st || !st.inputs[i].desc()->row_contiguous;
    }
  }
  if (any_tr) out.push_back(std::move(tr));
  if (any_st) out.push_back(std::move(st));
  return out;
}

bool builds(const Probe& p, const Arrays& inputs, PrimitiveId id) {
  // Walks the unevaluated graph from the outputs (nodes keep their
  // primitive and inputs until they run).
  Arrays outs = p.f(inputs);
  std::vector<std::shared_ptr<Node>> stack;
  std::unordered_set<const Node*> seen;
  auto push = [&](const Array& a) {
    const auto& n = a.desc()->node;
    if (n && seen.insert(n.get()).second) stack.push_back(n);
  };
  for (const auto& o : outs) push(o);
  while (!stack.empty()) {
    std::shared_ptr<Node> n = stack.back();
    stack.pop_back();
    std::shared_ptr<const Primitive> prim;
    Arrays ins;
    {
      std::lock_guard<std::mutex> lock(n->mu);
      prim = n->primitive;
      ins = n->inputs;
    }
    if (prim && prim->id() == id) return true;
    for (const auto& in : ins) push(in);
  }
  return false;
}

std::string check_finite_differences(const Probe& p, const Arrays& at, const Arrays& values,
                                     std::mt19937& rng) {
  std::ostringstream err;
  Arrays outs = p.f(values);
  eval(outs);
  for (size_t i = 0; i < outs.size(); ++i)
    if (!is_floating(outs[i].dtype()))
      return "harness: output " + std::to_string(i) +
             " is not real floating; mark the probe zero_grad or return real parts";
  Arrays v, u;
  for (const auto& x : at) v.push_back(normal_like(x.shape(), float64, rng));
  for (const auto& o : outs) u.push_back(seed_like(o, rng));
  auto [jo, jv] = jvp_flat(p.f, at, v);
  auto [vo, g] = vjp_flat(p.f, at, u);
  Arrays plus, minus;
  for (size_t k = 0; k < values.size(); ++k) {
    plus.push_back(with_step(values[k], v[k], p.step));
    minus.push_back(with_step(values[k], v[k], -p.step));
  }
  Arrays fp = p.f(plus), fm = p.f(minus);
  eval(fp);
  eval(fm);

  double ufd = 0, ujv = 0, gv = 0, ufd_abs = 0, ujv_abs = 0, gv_abs = 0;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (jv.at(i).shape() != outs[i].shape()) {
      err << "jvp output " << i << " has shape " << shape_str(jv[i].shape()) << ", not "
          << shape_str(outs[i].shape()) << "; ";
      continue;
    }
    std::vector<double> a = doubles(fp[i]), b = doubles(fm[i]), t = doubles(jv[i]);
    std::vector<double> fd(a.size());
    double scale = 1, worst = 0;
    size_t at_j = 0;
    for (size_t j = 0; j < a.size(); ++j) {
      fd[j] = (a[j] - b[j]) / (2 * p.step);
      scale = std::max(scale, 1 + std::abs(fd[j]));
    }
    for (size_t j = 0; j < a.size(); ++j) {
      double e = std::abs(t[j] - fd[j]);
      if (!(e <= worst)) {  // NaN counts as the worst
        worst = e;
        at_j = j;
      }
    }
    if (!(worst <= p.tol * scale))
      err << "jvp of output " << i << " differs from finite differences at element " << at_j
          << ": jvp " << t[at_j] << ", fd " << fd[at_j] << "; ";
    std::vector<double> uu = doubles(u[i]);
    ufd += dot(uu, fd, &ufd_abs);
    ujv += dot(uu, t, &ujv_abs);
  }
  for (size_t k = 0; k < at.size(); ++k) {
    if (g.at(k).shape() != at[k].shape() || !(g[k].dtype() == float64)) {
      err << "vjp of input " << k << " has shape " << shape_str(g[k].shape()) << " and dtype "
          << g[k].dtype() << "; ";
      continue;
    }
    gv += dot(g[k].to_vector<double>(), v[k].to_vector<double>(), &gv_abs);
  }
  if (!(std::abs(gv - ufd) <= p.tol * (1 + gv_abs + ufd_abs)))
    err << "vjp differs from finite differences: <vjp(u), v> = " << gv << ", <u, fd(v)> = " << ufd
        << "; ";
  if (!(std::abs(gv - ujv) <= p.dot_tol * (1 + gv_abs + ujv_abs)))
    err << "dot-product identity fails: <vjp(u), v> = " << gv << ", <u, jvp(v)> = " << ujv
        << "; ";
  return err.str();
}

std::string check_zero_derivatives(const Probe& p, const Arrays& at, std::mt19937& rng) {
  std::ostringstream err;
  Arrays outs = p.f(at);
  Arrays u, v;
  for (const auto& o : outs) u.push_back(seed_like(o, rng));
  for (const auto& x : at) v.push_back(normal_like(x.shape(), float64, rng));
  auto nonzero = [](const Array& a) {
    auto d = doubles(a);
    return std::any_of(d.begin(), d.end(), [](double x) { return x != 0; });
  };
  auto [vo, g] = vjp_flat(p.f, at, u);
  for (size_t k = 0; k < at.size(); ++k) {
    if (g.at(k).shape() != at[k].shape() || !(g[k].dtype() == float64))
      err << "vjp of input " << k << " has shape " << shape_str(g[k].shape()) << " and dtype "
          << g[k].dtype() << "; ";
    else if (nonzero(g[k]))
      err << "vjp of input " << k << " is not zero; ";
  }
  auto [jo, jv] = jvp_flat(p.f, at, v);
  for (size_t i = 0; i < outs.size(); ++i) {
    if (jv.at(i).shape() != outs[i].shape() || !(jv[i].dtype() == outs[i].dtype()))
      err << "jvp of output " << i << " has shape " << shape_str(jv[i].shape()) << " and dtype "
          << jv[i].dtype() << "; ";
    else if (nonzero(jv[i]))
      err << "jvp of output " << i << " is not zero; ";
  }
  return err.str();
}

std::string check_vmap(const Probe& p, std::mt19937& rng) {
  constexpr int B = 3;
  std::vector<Arrays> draws;
  for (int b = 0; b < B; ++b) draws.push_back(sample(p, rng));
  size_t n = p.shapes.size();
  bool any_axes = std::any_of(p.shapes.begin(), p.shapes.end(),
                              [](const Shape& s) { return !s.empty(); });

  struct Variant {
    std::string name;
    std::vector<std::optional<int>> axes;
  };
  std::vector<Variant> variants{{"batch axis 0", std::vector<std::optional<int>>(n, 0)}};
  if (any_axes) {
    Variant v{"batch axis 1", {}};
    for (const auto& s : p.shapes) v.axes.push_back(s.empty() ? 0 : 1);
    variants.push_back(v);
  }
  if (n >= 2) {
    Variant v{"first input unbatched", std::vector<std::optional<int>>(n, 0)};
    v.axes[0] = std::nullopt;
    variants.push_back(v);
  }

  std::ostringstream err;
  for (const auto& var : variants) {
    Arrays batched;
    for (size_t k = 0; k < n; ++k) {
      if (!var.axes[k]) {
        batched.push_back(draws[0][k]);
        continue;
      }
      Arrays items;
      for (int b = 0; b < B; ++b) items.push_back(draws[b][k]);
      batched.push_back(ops::stack(items, *var.axes[k]));
      batched.back().eval();
    }
    Arrays got = vmap_flat(p.f, var.axes)(batched);
    for (int b = 0; b < B; ++b) {
      Arrays in = draws[b];
      for (size_t k = 0; k < n; ++k)
        if (!var.axes[k]) in[k] = draws[0][k];
      Arrays want = p.f(in);
      if (got.size() != want.size()) {
        err << var.name << ": " << got.size() << " outputs, the loop has " << want.size() << "; ";
        break;
      }
      for (size_t i = 0; i < want.size(); ++i) {
        Shape ws = want[i].shape();
        ws.insert(ws.begin(), B);
        if (got[i].shape() != ws || !(got[i].dtype() == want[i].dtype())) {
          err << var.name << ": output " << i << " has shape " << shape_str(got[i].shape())
              << " and dtype " << got[i].dtype() << ", the loop's stack "
              << shape_str(ws) << " " << want[i].dtype() << "; ";
          return err.str();
        }
        auto gb = bits(got[i].i(b)), wb = bits(want[i]);
        if (gb != wb) {
          size_t j = 0;
          while (j < gb.size() && gb[j] == wb[j]) ++j;
          err << var.name << ": output " << i << " of batch element " << b
              << " differs from the loop at element " << j << " ("
              << doubles(got[i].i(b))[j] << " vs " << doubles(want[i])[j] << "); ";
        }
      }
    }
  }
  return err.str();
}

Probe vjp_of(const Probe& p, std::mt19937& rng) {
  Arrays u;
  for (const auto& o : p.f(sample(p, rng))) u.push_back(seed_like(o, rng));
  Probe q = p;
  q.label = "vjp of " + p.label;
  q.f = [f = p.f, u](const Arrays& x) { return vjp_flat(f, x, u).second; };
  return q;
}

std::string check_rules_refused(const Probe& p, const Arrays& inputs, const std::string& which,
                                const std::string& text) {
  Arrays zeros, batched;
  for (const auto& x : inputs) {
    zeros.push_back(ops::zeros_like(x));
    batched.push_back(ops::stack({x, x}));
  }
  try {
    if (which == "vjp") {
      Arrays cotangents;
      for (const auto& o : p.f(inputs)) cotangents.push_back(ops::zeros_like(o));
      vjp_flat(p.f, inputs, cotangents);
    } else if (which == "jvp") {
      jvp_flat(p.f, inputs, zeros);
    } else {
      vmap_flat(p.f)(batched);
    }
  } catch (const Error& e) {
    std::string what = e.what();
    if (e.kind() != ErrorKind::transform || what.find(which + " of " + text) == std::string::npos)
      return which + " threw \"" + what + "\", expected a transform error about " + which +
             " of " + text + "; ";
    return "";
  }
  return which + " did not throw; it has no rule; ";
}

std::string check_failed_input(const Probe& p, const Arrays& inputs) {
  // The failure is made inside f, so that every transform traces through
  // it; `want` is what the failed array itself would throw.
  std::string want;
  FlatFunction bad = [&](const Arrays& in) {
    Arrays a = in;
    a[0] = ops::reshape(a[0], {static_cast<int>(a[0].size()) + 1});
    if (const Error* e = a[0].error()) want = e->what();
    return p.f(a);
  };
  std::ostringstream err;
  auto expect_throw = [&](const char* what, const std::function<void()>& run) {
    try {
      run();
      err << what << " did not throw; ";
    } catch (const Error& e) {
      if (want.empty() || e.what() != want)
        err << what << " threw \"" << e.what() << "\" instead of \"" << want << "\"; ";
    }
  };
  Arrays tangents, batched;
  for (const auto& x : inputs) {
    tangents.push_back(ops::zeros_like(x));
    batched.push_back(ops::stack({x, x}));
  }
  expect_throw("vjp", [&] { vjp_flat(bad, inputs, {}); });
  expect_throw("jvp", [&] { jvp_flat(bad, inputs, tangents); });
  expect_throw("vmap", [&] { vmap_flat(bad)(batched); });
  return err.str();
}

}  // namespace nuvec::rulecheck
