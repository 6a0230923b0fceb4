// Interval arithmetic over a fused region's float32 values, inside a pass
// through the fast variants (fast_ranges.h).
#include "compile/fast_ranges.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <limits>

#include "nuvec/kernels/functors.h"

namespace nuvec::compiler {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A float32 value known to be finite and within [lo, hi], or unknown.
struct Range {
  double lo = -kInf, hi = kInf;
  bool known = false;
};

Range make(double lo, double hi) {
  // Outward by far more than a float32 operation's rounding (or a function's
  // error of an ulp or two) plus the smallest normal float; unknown past
  // float32's largest value.
  lo -= std::fabs(lo) * 0x1.0p-16 + 0x1.0p-126;
  hi += std::fabs(hi) * 0x1.0p-16 + 0x1.0p-126;
  const double top = std::numeric_limits<float>::max();
  if (!(lo >= -top && hi <= top)) return {};
  return {lo, hi, true};
}

Range product(const Range& a, const Range& b) {
  double c[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return make(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
}

double magnitude(const Range& a) { return std::max(std::fabs(a.lo), std::fabs(a.hi)); }

// The range of an operation's value from its arguments' (all known).
Range result(PrimitiveId id, const std::vector<Range>& a) {
  switch (id) {
    case PrimitiveId::Add: return make(a[0].lo + a[1].lo, a[0].hi + a[1].hi);
    case PrimitiveId::Subtract: return make(a[0].lo - a[1].hi, a[0].hi - a[1].lo);
    case PrimitiveId::Multiply: return product(a[0], a[1]);
    case PrimitiveId::Divide:
      if (a[1].lo > 0 || a[1].hi < 0) return product(a[0], make(1 / a[1].hi, 1 / a[1].lo));
      return {};
    case PrimitiveId::Negative: return make(-a[0].hi, -a[0].lo);
    case PrimitiveId::Abs:
    case PrimitiveId::Square: {
      double low = a[0].lo > 0 ? a[0].lo : a[0].hi < 0 ? -a[0].hi : 0.0, high = magnitude(a[0]);
      return id == PrimitiveId::Abs ? make(low, high) : make(low * low, high * high);
    }
    case PrimitiveId::Sqrt:
      return a[0].lo >= 0 ? make(std::sqrt(a[0].lo), std::sqrt(a[0].hi)) : Range{};
    case PrimitiveId::Exp: return make(std::exp(a[0].lo), std::exp(a[0].hi));
    case PrimitiveId::Sin:
    case PrimitiveId::Cos:
    case PrimitiveId::Tanh:
    case PrimitiveId::Erf: return make(-1, 1);
    case PrimitiveId::Sigmoid: return make(0, 1);
    case PrimitiveId::Maximum: return make(std::max(a[0].lo, a[1].lo), std::max(a[0].hi, a[1].hi));
    case PrimitiveId::Minimum: return make(std::min(a[0].lo, a[1].lo), std::min(a[0].hi, a[1].hi));
    default: return {};
  }
}

// Whether a fast variant's check of operation `id` holds for every value
// of its arguments' ranges, and the ranges it leaves them in when emitted.
bool inside(PrimitiveId id, const std::vector<Range>& a) {
  for (const Range& r : a)
    if (!r.known) return false;
  switch (id) {
    case PrimitiveId::Sin:
    case PrimitiveId::Cos: return magnitude(a[0]) < kernels::math::kTrigSmall;
    case PrimitiveId::Exp: return magnitude(a[0]) < kernels::math::kExpNormal;
    case PrimitiveId::Divide: {
      using D = kernels::Small<kernels::Divide>;
      for (const Range& r : a)
        if (!((r.lo >= D::kLow || r.hi <= -D::kLow) && magnitude(r) < D::kHigh)) return false;
      return true;
    }
    default: return false;
  }
}
void narrow(PrimitiveId id, Range& r) {
  double bound = id == PrimitiveId::Exp ? kernels::math::kExpNormal
                 : id == PrimitiveId::Divide ? kernels::Small<kernels::Divide>::kHigh
                                             : kernels::math::kTrigSmall;
  r = {r.known ? std::max(r.lo, -bound) : -bound, r.known ? std::min(r.hi, bound) : bound, true};
  if (id == PrimitiveId::Divide) {  // and not in (-kLow, kLow)
    const double low = kernels::Small<kernels::Divide>::kLow;
    if (r.lo >= 0) r.lo = std::max(r.lo, low);
    if (r.hi <= 0) r.hi = std::min(r.hi, -low);
  }
}

}  // namespace

std::vector<bool> implied_checks(const EmitRegion& r, const std::vector<bool>& fast,
                                 const std::vector<bool>& shares_call) {
  static const bool enabled = [] {
    const char* e = std::getenv("NUVEC_IMPLIED_CHECKS");
    return !(e && std::string(e) == "0");
  }();
  const Fused& f = *r.fused;
  if (!enabled) return std::vector<bool>(f.ops().size(), false);
  const int n_in = f.num_inputs();
  std::vector<Range> range(n_in + f.ops().size());
  for (const auto& l : f.literals()) {
    if (r.input_dtypes[l.input] != float32) continue;
    uint32_t bits = static_cast<uint32_t>(l.bits);
    float v;
    std::memcpy(&v, &bits, sizeof v);
    if (std::isfinite(v)) range[l.input] = {v, v, true};
  }
  std::vector<bool> implied(f.ops().size(), false);
  for (size_t j = 0; j < f.ops().size(); ++j) {
    const FusedOp& op = f.ops()[j];
    PrimitiveId id = op.primitive->id();
    std::vector<Range> args;
    bool all_f32 = op.dtype == float32;
    for (int a : op.args) {
      args.push_back(range[a]);
      all_f32 = all_f32 && value_dtype(r, a) == float32;
    }
    if (fast[j] && !shares_call[j]) {
      implied[j] = all_f32 && inside(id, args);
      if (!implied[j] && all_f32) {  // the emitted check bounds the arguments from here on
        for (int a : op.args) narrow(id, range[a]);
        for (size_t k = 0; k < op.args.size(); ++k) args[k] = range[op.args[k]];
      }
    }
    bool known = all_f32;
    for (const Range& a : args) known = known && a.known;
    if (known) range[n_in + j] = result(id, args);
  }
  return implied;
}

}  // namespace nuvec::compiler
