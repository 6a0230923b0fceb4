// fast::scaled_dot_product_attention and fast::plan_attention (docs/fast.md):
// MLX's checks, the plan (a function of shapes, dtypes, options and the
// device only), then the Attention primitive or the composite.
#include <sstream>

#include "backend/backend.h"
#include "fast/composite.h"
#include "fast/route.h"
#include "nuvec/fast.h"
#include "nuvec/ops/ops.h"
#include "nuvec/primitives/fast.h"
#include "ops/builder.h"

namespace nuvec::fast {

using ops::impl::fail;

namespace {

std::string shape_of(const Array& a) {
  std::ostringstream os;
  os << a.shape();
  return os.str();
}

struct Checked {
  DType type = float32;
  bool causal = false;
  std::optional<Array> mask;  // broadcast to [B, Hq, Lq, Lk], of `type` unless bool
  std::optional<Array> sinks;
};

// MLX's checks; the failed array names the argument.
std::variant<Checked, Array> check(const Array& q, const Array& k, const Array& v,
                                   const std::string& mode, const std::optional<Array>& mask,
                                   const std::optional<Array>& sinks, const StreamOrDevice& s,
                                   Location loc) {
  const char* op = "scaled_dot_product_attention";
  for (const Array* a : {&q, &k, &v})
    if (a->is_failed()) return *a;
  if (mask && mask->is_failed()) return *mask;
  if (sinks && sinks->is_failed()) return *sinks;
  const char* names[] = {"q", "k", "v"};
  const Array* arrs[] = {&q, &k, &v};
  for (int i = 0; i < 3; ++i)
    if (arrs[i]->ndim() != 4)
      return fail(ErrorKind::invalid_shape,
                  std::string(names[i]) + " must have 4 dimensions [B, H, L, D] but has shape " +
                      shape_of(*arrs[i]),
                  op, loc);
  if (mode != "" && mode != "causal" && mode != "array")
    return fail(ErrorKind::invalid_argument,
                "mask_mode must be \"\", \"causal\" or \"array\", not \"" + mode + "\"", op, loc);
  if (mode == "causal" && mask)
    return fail(ErrorKind::invalid_argument, "mask_mode \"causal\" takes no mask array", op, loc);
  // (As MLX: mask_mode "array" without a mask array means no mask.)
  if (k.shape(0) != q.shape(0) || v.shape(0) != q.shape(0))
    return fail(ErrorKind::shape_mismatch,
                "q, k and v must have one batch size; got " + shape_of(q) + ", " + shape_of(k) +
                    " and " + shape_of(v),
                op, loc);
  if (k.shape(-1) != q.shape(-1))
    return fail(ErrorKind::shape_mismatch,
                "k must have q's head dimension " + std::to_string(q.shape(-1)) +
                    " but has shape " + shape_of(k),
                op, loc);
  if (k.shape(1) != v.shape(1) || k.shape(2) != v.shape(2))
    return fail(ErrorKind::shape_mismatch,
                "v must have k's heads and length; got k " + shape_of(k) + " and v " + shape_of(v),
                op, loc);
  if (k.shape(1) == 0 || q.shape(1) % k.shape(1) != 0)
    return fail(ErrorKind::shape_mismatch,
                "the query heads (" + std::to_string(q.shape(1)) +
                    ") must be a multiple of the key/value heads (" + std::to_string(k.shape(1)) +
                    ")",
                op, loc);
  Checked c;
  c.type = promote_types(promote_types(q.dtype(), k.dtype()), v.dtype());
  if (!is_floating(c.type))
    return fail(ErrorKind::unsupported_dtype,
                "q, k and v must be of floating dtypes; they give " + std::string(dtype_name(c.type)),
                op, loc);
  c.causal = mode == "causal";
  if (mask) {
    if (mask->ndim() > 4)
      return fail(ErrorKind::invalid_shape,
                  "mask must have at most 4 dimensions but has shape " + shape_of(*mask), op, loc);
    if (mask->dtype() != bool_ && promote_types(mask->dtype(), c.type) != c.type)
      return fail(ErrorKind::unsupported_dtype,
                  "an additive mask's dtype must promote to " + std::string(dtype_name(c.type)) +
                      ", not " + std::string(dtype_name(mask->dtype())),
                  op, loc);
    Shape target{q.shape(0), q.shape(1), q.shape(2), k.shape(2)};
    Array m = mask->dtype() == bool_ ? *mask : ops::astype(*mask, c.type, s, loc);
    Array b = ops::broadcast_to(m, target, s, loc);
    if (b.is_failed())
      return fail(ErrorKind::shape_mismatch,
                  "mask of shape " + shape_of(*mask) + " does not broadcast to the scores' shape " +
                      [&] {
                        std::ostringstream os;
                        os << target;
                        return os.str();
                      }(),
                  op, loc);
    c.mask = b;
  }
  if (sinks) {
    if (sinks->ndim() != 1 || sinks->shape(0) != q.shape(1))
      return fail(ErrorKind::shape_mismatch,
                  "sinks must have shape [" + std::to_string(q.shape(1)) +
                      "] (one per query head) but has shape " + shape_of(*sinks),
                  op, loc);
    if (promote_types(sinks->dtype(), c.type) != c.type)
      return fail(ErrorKind::unsupported_dtype,
                  "sinks' dtype must promote to " + std::string(dtype_name(c.type)), op, loc);
    c.sinks = ops::astype(*sinks, c.type, s, loc);
  }
  return c;
}

AttentionPlan plan_for(const Array& q, const Array& k, const Array& v, const StreamOrDevice& s,
                       DType type, bool causal, bool has_mask, bool has_sinks) {
  Stream st = nuvec::detail::resolve_stream(s);
  if (st.device.type == Device::cpu) return {"cpu_blocked", ""};
  std::vector<int> dims{q.shape(0), q.shape(1), k.shape(1), q.shape(2),
                        k.shape(2), q.shape(3), v.shape(3)};
  std::string kernel = backend::gpu_attention_kernel(dims, type, causal, has_mask, has_sinks, false);
  if (!kernel.empty()) return {kernel, ""};
  const int d = q.shape(3);
  if (d != 64 && d != 80 && d != 96 && d != 128 && d != 256)
    return {"composite", "head dimension " + std::to_string(d) + " has no GPU kernel"};
  if (v.shape(3) != d) return {"composite", "v's head dimension differs from q's"};
  if (q.shape(2) > 8 && type == float32)
    return {"composite", "more than 8 query rows in float32: the tiled kernel takes 16-bit inputs"};
  return {"composite", std::string("no GPU attention kernel for this call (") +
                           std::string(dtype_name(type)) + ")"};
}

}  // namespace

bool detail::attention_grad_kernel(const std::vector<Array>& p, bool causal, bool has_mask,
                                   const StreamOrDevice& s) {
  if (nuvec::detail::resolve_stream(s).device.type == Device::cpu) return true;
  const Array &q = p[0], &k = p[1], &v = p[2];
  std::vector<int> dims{q.shape(0), q.shape(1), k.shape(1), q.shape(2),
                        k.shape(2), q.shape(3), v.shape(3)};
  return !backend::gpu_attention_kernel(dims, q.dtype(), causal, has_mask, false, true).empty();
}

AttentionPlan plan_attention(const Array& q, const Array& k, const Array& v,
                             const std::string& mask_mode, const std::optional<Array>& mask,
                             const std::optional<Array>& sinks, StreamOrDevice s) {
  auto c = check(q, k, v, mask_mode, mask, sinks, s, Location::none());
  if (auto* f = std::get_if<Array>(&c))
    return {"composite", "invalid call: " + std::string(f->error() ? f->error()->message() : "")};
  const Checked& ck = std::get<Checked>(c);
  return plan_for(q, k, v, s, ck.type, ck.causal, ck.mask.has_value(), ck.sinks.has_value());
}

Array scaled_dot_product_attention(const Array& q, const Array& k, const Array& v, float scale,
                                   const std::string& mask_mode, std::optional<Array> mask,
                                   const std::optional<Array>& sinks, bool force_fused,
                                   StreamOrDevice s, Location loc) {
  const char* op = "scaled_dot_product_attention";
  auto c = check(q, k, v, mask_mode, mask, sinks, s, loc);
  if (auto* f = std::get_if<Array>(&c)) return *f;
  Checked& ck = std::get<Checked>(c);
  Array qt = ops::astype(q, ck.type, s, loc), kt = ops::astype(k, ck.type, s, loc),
        vt = ops::astype(v, ck.type, s, loc);
  AttentionPlan plan = plan_for(qt, kt, vt, s, ck.type, ck.causal, ck.mask.has_value(),
                                ck.sinks.has_value());
  if (!plan.fused()) {
    if (force_fused)
      return fail(ErrorKind::invalid_argument, "force_fused: no fused kernel (" + plan.reason + ")",
                  op, loc);
    return composite::attention(qt, kt, vt, ck.mask, ck.sinks, scale, ck.causal, s);
  }
  std::vector<Array> in{qt, kt, vt};
  if (ck.mask) in.push_back(*ck.mask);
  if (ck.sinks) in.push_back(*ck.sinks);
  return ops::impl::build1(ops::impl::make<Attention>(scale, ck.causal, ck.mask.has_value(),
                                                      ck.sinks.has_value()),
                           std::move(in), s, op, loc);
}

}  // namespace nuvec::fast
