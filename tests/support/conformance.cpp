#include "support/conformance.h"

#include <gtest/gtest.h>

#include <nuvec/core/graph.h>
#include <nuvec/ops/creation.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace nuvec::conformance {

namespace {

// Storage decoders written here, independently of nuvec's half types.
double half_to_double(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0) {
    v = std::ldexp(man, -24);
  } else if (exp == 31) {
    v = man ? std::numeric_limits<double>::quiet_NaN()
            : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp(man + 1024, exp - 25);
  }
  return sign ? -v : v;
}

double bf16_to_double(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Value of the element at p of dtype `d` (complex: component `part`).
double decode(DType d, const unsigned char* p, int part = 0) {
  switch (d.val) {
    case DType::Val::bool_: return p[0] != 0;
    case DType::Val::uint8: return load<uint8_t>(p);
    case DType::Val::uint16: return load<uint16_t>(p);
    case DType::Val::uint32: return load<uint32_t>(p);
    case DType::Val::uint64: return double(load<uint64_t>(p));
    case DType::Val::int8: return load<int8_t>(p);
    case DType::Val::int16: return load<int16_t>(p);
    case DType::Val::int32: return load<int32_t>(p);
    case DType::Val::int64: return double(load<int64_t>(p));
    case DType::Val::float16: return half_to_double(load<uint16_t>(p));
    case DType::Val::bfloat16: return bf16_to_double(load<uint16_t>(p));
    case DType::Val::float32: return load<float>(p);
    case DType::Val::float64: return load<double>(p);
    default: return load<float>(p + 4 * part);
  }
}

// Bits of a float component, mapped so that adjacent floats differ by 1.
long long ordered(uint64_t bits, int width) {
  uint64_t sign = 1ull << (width - 1);
  long long mag = static_cast<long long>(bits & (sign - 1));
  return (bits & sign) ? -mag : mag;
}

struct Format {
  int width;        // bits of one component
  int exp_bits;     // exponent width
  int components;   // 2 for complex
  double eps;       // 2^-mantissa bits
};

Format format_of(DType d) {
  switch (d.val) {
    case DType::Val::float16: return {16, 5, 1, std::ldexp(1.0, -10)};
    case DType::Val::bfloat16: return {16, 8, 1, std::ldexp(1.0, -7)};
    case DType::Val::float32: return {32, 8, 1, std::ldexp(1.0, -23)};
    case DType::Val::float64: return {64, 11, 1, std::ldexp(1.0, -52)};
    case DType::Val::complex64: return {32, 8, 2, std::ldexp(1.0, -23)};
    default: return {d.size() * 8, 0, 1, 0};
  }
}

uint64_t component_bits(const unsigned char* p, int width) {
  uint64_t b = 0;
  std::memcpy(&b, p, width / 8);
  return b;
}

bool nan_bits(uint64_t b, const Format& f) {
  int man = f.width - 1 - f.exp_bits;
  uint64_t exp = (b >> man) & ((1ull << f.exp_bits) - 1);
  return exp == (1ull << f.exp_bits) - 1 && (b & ((1ull << man) - 1)) != 0;
}

bool inf_bits(uint64_t b, const Format& f) {
  int man = f.width - 1 - f.exp_bits;
  uint64_t exp = (b >> man) & ((1ull << f.exp_bits) - 1);
  return exp == (1ull << f.exp_bits) - 1 && (b & ((1ull << man) - 1)) == 0;
}

// Compares one element; returns an empty string when within tolerance.
std::string compare_element(DType d, const unsigned char* want,
                            const unsigned char* got, const Tolerance& tol) {
  Format f = format_of(d);
  if (f.exp_bits == 0) {  // bool and integers: always exact
    if (std::memcmp(want, got, d.size()) == 0) return {};
    std::ostringstream os;
    os << "want " << decode(d, want) << " got " << decode(d, got);
    return os.str();
  }
  // |z| of the reference, for complex relative tolerances
  double mag = 0;
  for (int c = 0; c < f.components; ++c) {
    double v = decode(d, want, c);
    if (std::isfinite(v)) mag = std::hypot(mag, v);
  }
  for (int c = 0; c < f.components; ++c) {
    const unsigned char* w = want + c * f.width / 8;
    const unsigned char* g = got + c * f.width / 8;
    uint64_t wb = component_bits(w, f.width), gb = component_bits(g, f.width);
    bool ok;
    if (nan_bits(wb, f) || nan_bits(gb, f)) {
      ok = nan_bits(wb, f) && nan_bits(gb, f);
    } else if (wb == gb) {
      ok = true;
    } else if (inf_bits(wb, f) || inf_bits(gb, f) ||
               tol.kind == Tolerance::Kind::exact) {
      ok = false;
    } else if (tol.kind == Tolerance::Kind::ulp && f.components == 1) {
      long long dist = ordered(wb, f.width) - ordered(gb, f.width);
      if (dist < 0) dist = -dist;
      int limit = f.width == 16 ? tol.ulp16 : f.width == 32 ? tol.ulp32
                                                            : tol.ulp64;
      ok = dist <= limit;
    } else {
      double wv = decode(d, want, c), gv = decode(d, got, c);
      double scale = f.components == 2 ? mag : std::fabs(wv);
      double bound;
      if (tol.kind == Tolerance::Kind::ulp) {
        bound = tol.ulp32 * f.eps * scale;
      } else {
        bound = (tol.terms + 2) * f.eps * (scale + tol.scale);
      }
      // subnormal results: allow the absolute ulp floor of the format
      double tiny = std::ldexp(1.0, f.width == 16 ? (f.exp_bits == 5 ? -24 : -133)
                                    : f.width == 32 ? -149 : -1074);
      ok = std::fabs(wv - gv) <= bound + 4 * tiny;
    }
    if (!ok) {
      std::ostringstream os;
      os.precision(17);
      os << "want " << decode(d, want, c) << " got " << decode(d, got, c)
         << (f.components == 2 ? (c ? " (imag)" : " (real)") : "");
      return os.str();
    }
  }
  return {};
}

std::string shape_text(const std::vector<int>& s) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? "," : "") << s[i];
  return os.str() + ")";
}

// Compares one output; returns a message on mismatch.
// Whether `got` is within tol's ULPs of the float64 value `ref`.
bool near_libm(DType d, const unsigned char* got, double ref, const Tolerance& tol) {
  Format f = format_of(d);
  if (f.components != 1 || f.exp_bits == 0 || std::isnan(ref)) return false;
  double g = decode(d, got);
  if (std::isinf(ref) || std::isinf(g)) return g == ref;
  int limit = f.width == 16 ? tol.ulp16 : f.width == 32 ? tol.ulp32 : tol.ulp64;
  double min_normal = std::ldexp(1.0, 2 - (1 << (f.exp_bits - 1)));
  double ulp = f.eps * std::exp2(std::floor(std::log2(std::max(std::fabs(ref), min_normal))));
  return std::fabs(g - ref) <= (limit + 0.5) * ulp;
}

std::string compare_output(const refs::Tensor& want, const Array& got_in,
                           const Tolerance& tol, size_t out,
                           const SkipElement& skip, const LibmValue& libm,
                           int& skipped_values,
                           std::map<std::string, int>& reasons) {
  DType wd = dtype_from_name(want.dtype);
  if (got_in.dtype() != wd) {
    return "dtype: want " + want.dtype + " got " +
           std::string(dtype_name(got_in.dtype()));
  }
  if (got_in.shape() != want.shape) {
    return "shape: want " + shape_text(want.shape) + " got " +
           shape_text(got_in.shape());
  }
  // A dense copy on the CPU (whatever the default device): its bytes are
  // read on the host below.
  Array got = ops::copy(got_in, default_stream(Device::cpu));
  got.eval();
  size_t n = want.numel(), isz = wd.size();
  if (n == 0) return {};
  const unsigned char* gp = static_cast<const unsigned char*>(got.desc()->data->ptr) +
                            got.desc()->offset * isz;
  for (size_t i = 0; i < n; ++i) {
    if (skip) {
      if (const char* why = skip(out, i)) {
        ++skipped_values;
        ++reasons[why];
        continue;
      }
    }
    std::string m = compare_element(wd, want.bytes.data() + i * isz, gp + i * isz, tol);
    if (!m.empty() && libm && near_libm(wd, gp + i * isz, libm(i), tol)) {
      ++reasons["value: MLX outside tolerance, nuvec within it of libm (float64)"];
      continue;
    }
    if (!m.empty()) {
      std::ostringstream os;
      os << "output " << out << " element " << i << ": " << m;
      return os.str();
    }
  }
  return {};
}

}  // namespace

DType dtype_from_name(const std::string& name) {
  for (int i = 0; i < DType::count; ++i) {
    DType d{static_cast<DType::Val>(i)};
    if (dtype_name(d) == name) return d;
  }
  throw std::runtime_error("unknown dtype " + name);
}

Array make_input(const refs::Tensor& t) {
  Array stored = detail::array_from_bytes(t.bytes.data(), t.shape,
                                          dtype_from_name(t.dtype));
  if (t.view == "c") return stored;
  if (t.view == "t") return ops::transpose(stored);
  if (t.view == "s") {
    int nd = static_cast<int>(t.shape.size());
    std::vector<int> start(nd, 0), stop(t.shape), step(nd, 1);
    step[nd - 1] = 2;
    return ops::slice(stored, start, stop, step);
  }
  if (t.is_broadcast()) return ops::broadcast_to(stored, t.broadcast_shape);
  throw std::runtime_error("unknown view " + t.view);
}

std::vector<Array> make_inputs(const refs::Case& c) {
  std::vector<Array> r;
  for (const auto& t : c.inputs) r.push_back(make_input(t));
  return r;
}

Operand weak_scalar(const refs::Case& c, const std::string& value_key,
                    const std::string& type_key) {
  const std::string& kind = c.param(type_key);
  if (kind == "bool") return Operand(c.param_bool(value_key));
  if (kind == "int") return Operand(c.param_int(value_key));
  if (kind == "float") return Operand(c.param_double(value_key));
  throw std::runtime_error("unknown scalar type " + kind);
}

double value_at(const refs::Tensor& t, size_t i) {
  DType d = dtype_from_name(t.dtype);
  return decode(d, t.bytes.data() + i * d.size());
}

double max_abs(const refs::Tensor& t) {
  double m = 0;
  DType d = dtype_from_name(t.dtype);
  for (size_t i = 0; i < t.numel(); ++i) {
    for (int c = 0; c < (d == complex64 ? 2 : 1); ++c) {
      double v = decode(d, t.bytes.data() + i * d.size(), c);
      if (std::isfinite(v)) m = std::max(m, std::fabs(v));
    }
  }
  return m;
}

std::vector<double> op_values(const refs::Tensor& t, const std::vector<int>& shape) {
  // shape and strides (in stored elements) of the view
  std::vector<int> vs = t.shape;
  std::vector<long long> st(vs.size());
  long long acc = 1;
  for (size_t k = vs.size(); k-- > 0;) {
    st[k] = acc;
    acc *= vs[k];
  }
  if (t.view == "t") {
    std::reverse(vs.begin(), vs.end());
    std::reverse(st.begin(), st.end());
  } else if (t.view == "s") {
    vs.back() = (vs.back() + 1) / 2;
    st.back() *= 2;
  }
  // broadcast (the "b:" view and the op's own broadcasting) to `shape`
  size_t nd = shape.size();
  if (vs.size() > nd) return {};  // not broadcastable: no values
  std::vector<long long> bst(nd, 0);
  for (size_t k = 0; k < vs.size(); ++k) {
    size_t o = nd - vs.size() + k;
    bst[o] = vs[k] == 1 ? 0 : st[k];
  }
  size_t n = 1;
  for (int d : shape) n *= static_cast<size_t>(d);
  std::vector<double> r(n);
  std::vector<int> idx(nd, 0);
  for (size_t i = 0; i < n; ++i) {
    long long off = 0;
    for (size_t k = 0; k < nd; ++k) off += idx[k] * bst[k];
    r[i] = value_at(t, static_cast<size_t>(off));
    for (size_t k = nd; k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return r;
}

std::vector<refs::Case> load_cases(const std::string& file) {
  return refs::load(refs::ref_path(file));
}

Tally::~Tally() {
  std::printf("[conformance] %s: %d cases, %d matched, %d failed, %d skipped, "
              "%d expected failures, %d values skipped\n",
              file.c_str(), cases, matched, failed, skipped, xfail,
              skipped_values);
  for (const auto& [why, n] : reasons) std::printf("    %5d  %s\n", n, why.c_str());
}

void run_case(const refs::Case& c,
              const std::function<std::vector<Array>()>& build,
              const Tolerance& tol, Tally& tally, const ExpectedFailures& xfail,
              const SkipElement& skip, const LibmValue& libm) {
  ++tally.cases;
  std::vector<Array> outs;
  std::string problem;
  bool nuvec_failed = false;
  std::string nuvec_error;
  try {
    outs = build();
    for (auto& o : outs) o.eval();
  } catch (const Error& e) {
    nuvec_failed = true;
    nuvec_error = e.what();
  } catch (const std::exception& e) {
    problem = std::string("exception (not nuvec::Error): ") + e.what();
  }
  if (problem.empty() && c.crashed()) {
    // MLX died (SIGFPE): any defined result is fine; we got here, no crash.
    ++tally.skipped;
    ++tally.reasons["case: MLX crashed (SIGFPE); nuvec only checked not to crash"];
    return;
  }
  if (problem.empty() && c.error) {
    if (!nuvec_failed) problem = "MLX raised '" + *c.error + "' but nuvec succeeded";
  } else if (problem.empty() && nuvec_failed) {
    problem = "nuvec failed where MLX did not: " + nuvec_error;
  } else if (problem.empty()) {
    if (outs.size() != c.outputs.size()) {
      problem = "number of outputs: want " + std::to_string(c.outputs.size()) +
                " got " + std::to_string(outs.size());
    }
    for (size_t i = 0; problem.empty() && i < outs.size(); ++i) {
      try {
        problem = compare_output(c.outputs[i], outs[i], tol, i, skip, libm,
                                 tally.skipped_values, tally.reasons);
      } catch (const Error& e) {
        problem = std::string("nuvec failed reading the output: ") + e.what();
      }
    }
  }
  auto x = xfail.find(c.id);
  if (x != xfail.end()) {
    ++tally.xfail;
    if (problem.empty()) {
      std::printf("[conformance] note: expected failure %s now matches; "
                  "remove it from the list\n", c.id.c_str());
    }
    return;
  }
  if (problem.empty()) {
    ++tally.matched;
  } else {
    ++tally.failed;
    ADD_FAILURE() << c.where() << " [" << c.op << "] " << problem;
  }
}

void run_file(const std::string& file,
              const std::function<std::vector<Array>(const refs::Case&)>& build,
              const FileHooks& hooks) {
  auto cases = load_cases(file);
  if (cases.empty()) {
    ADD_FAILURE() << file << " has no cases";
    return;
  }
  Tally tally;
  tally.file = file;
  for (const auto& c : cases) {
    Tolerance tol = hooks.tolerance ? hooks.tolerance(c) : Tolerance::exact();
    SkipElement skip = hooks.skip && !c.outputs.empty() ? hooks.skip(c) : SkipElement{};
    LibmValue libm = hooks.libm && !c.outputs.empty() ? hooks.libm(c) : LibmValue{};
    run_case(c, [&] { return build(c); }, tol, tally, hooks.xfail, skip, libm);
  }
}

}  // namespace nuvec::conformance
