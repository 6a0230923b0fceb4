// fast::gated_delta and gated_delta_slots (docs/fast.md, "gated_delta"):
// the checks, then the recurrence as a composite of ops, one small step per
// time step (mlx-lm's ops path; its kernels compute the same sums in
// float32). Key heads are broadcast against their Hv / Hk value heads,
// never copied: the state is viewed as [B, Hk, Hv / Hk, Dv, Dk].
#include <sstream>

#include "nuvec/fast.h"
#include "nuvec/ops/ops.h"
#include "ops/builder.h"

namespace nuvec::fast {

using ops::impl::fail;

namespace {

std::string shape_text(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

std::pair<Array, Array> failed2(const Array& a) { return {a, a}; }

// The message of an invalid call, or "" when it is valid. `state` is the
// state (or the pool, whose first axis is free) of shape [., Hv, Dv, Dk].
struct Check {
  ErrorKind kind = ErrorKind::invalid_shape;
  std::string message;
};

Check check_args(const Array& q, const Array& k, const Array& v, const Array& g,
                 const Array& beta, const Array& state,
                 const std::optional<Array>& mask, bool pool) {
  auto bad = [](ErrorKind kind, std::string m) {
    return Check{kind, std::move(m)};
  };
  for (auto [a, name] : {std::pair{&q, "q"},
                         {&k, "k"},
                         {&v, "v"},
                         {&g, "g"},
                         {&beta, "beta"},
                         {&state, pool ? "pool" : "state"}})
    if (!is_floating(a->dtype()) || is_complex(a->dtype()))
      return bad(ErrorKind::unsupported_dtype,
                 std::string(name) + " must be of a real floating dtype, not " +
                     std::string(dtype_name(a->dtype())));
  if (q.ndim() != 4)
    return bad(ErrorKind::invalid_shape,
               "q must have shape [B, T, Hk, Dk] but has shape " +
                   shape_text(q.shape()));
  if (k.shape() != q.shape())
    return bad(ErrorKind::shape_mismatch,
               "k must have q's shape " + shape_text(q.shape()) +
                   " but has shape " + shape_text(k.shape()));
  const int B = q.shape(0), T = q.shape(1), Hk = q.shape(2), Dk = q.shape(3);
  if (v.ndim() != 4 || v.shape(0) != B || v.shape(1) != T)
    return bad(ErrorKind::shape_mismatch,
               "v must have shape [B, T, Hv, Dv] with q's B = " +
                   std::to_string(B) + " and T = " + std::to_string(T) +
                   " but has shape " + shape_text(v.shape()));
  const int Hv = v.shape(2), Dv = v.shape(3);
  if (Hk == 0 || Hv % Hk != 0)
    return bad(ErrorKind::shape_mismatch,
               "v's heads (" + std::to_string(Hv) +
                   ") must be a multiple of q's heads (" + std::to_string(Hk) +
                   ")");
  const Shape g_scalar{B, T, Hv}, g_vector{B, T, Hv, Dk};
  if (g.shape() != g_scalar && g.shape() != g_vector)
    return bad(ErrorKind::shape_mismatch,
               "g must have shape " + shape_text(g_scalar) + " or " +
                   shape_text(g_vector) + " but has shape " +
                   shape_text(g.shape()));
  if (beta.shape() != g_scalar)
    return bad(ErrorKind::shape_mismatch,
               "beta must have shape " + shape_text(g_scalar) +
                   " but has shape " + shape_text(beta.shape()));
  Shape want{B, Hv, Dv, Dk};
  if (pool && state.ndim() == 4) want[0] = state.shape(0);
  if (state.shape() != want)
    return bad(ErrorKind::shape_mismatch,
               std::string(pool ? "pool must have shape [S, "
                                : "state must have shape [") +
                   (pool ? "" : std::to_string(B) + ", ") + std::to_string(Hv) +
                   ", " + std::to_string(Dv) + ", " + std::to_string(Dk) +
                   "] but has shape " + shape_text(state.shape()));
  if (mask) {
    if (mask->dtype() != bool_)
      return bad(
          ErrorKind::unsupported_dtype,
          "mask must be bool, not " + std::string(dtype_name(mask->dtype())));
    if (mask->shape() != Shape{B, T})
      return bad(ErrorKind::shape_mismatch,
                 "mask must have shape [" + std::to_string(B) + ", " +
                     std::to_string(T) + "] but has shape " +
                     shape_text(mask->shape()));
  }
  return {};
}

// Time step t of x [B, T, ...] as [B, ...] reshaped to `shape`.
Array step(const Array& x, int t, const Shape& shape, const StreamOrDevice& s,
           Location loc) {
  Shape lo(x.ndim(), 0), hi = x.shape();
  lo[1] = t;
  hi[1] = t + 1;
  return reshape(slice(x, lo, hi, s, loc), shape, s, loc);
}

// The recurrence on checked arguments.
std::pair<Array, Array> run(const Array& q, const Array& k, const Array& v,
                            const Array& g, const Array& beta,
                            const Array& state,
                            const std::optional<Array>& mask,
                            const StreamOrDevice& s, Location loc) {
  const int B = q.shape(0), T = q.shape(1), Hk = q.shape(2), Dk = q.shape(3);
  const int Hv = v.shape(2), Dv = v.shape(3), R = Hv / Hk;
  const DType acc =
      (q.dtype() == float64 || state.dtype() == float64) ? float64 : float32;
  const bool vector_g = g.ndim() == 4;
  Array S = reshape(astype(state, acc, s, loc), {B, Hk, R, Dv, Dk}, s, loc);
  Array qa = astype(q, acc, s, loc), ka = astype(k, acc, s, loc),
        va = astype(v, acc, s, loc);
  Array ga = astype(g, acc, s, loc), ba = astype(beta, acc, s, loc);
  std::vector<Array> ys;
  ys.reserve(static_cast<size_t>(T));
  for (int t = 0; t < T; ++t) {
    Array qt = step(qa, t, {B, Hk, 1, 1, Dk}, s, loc);
    Array kt = step(ka, t, {B, Hk, 1, 1, Dk}, s, loc);
    Array vt = step(va, t, {B, Hk, R, Dv}, s, loc);
    Array gt = vector_g ? step(ga, t, {B, Hk, R, 1, Dk}, s, loc)
                        : step(ga, t, {B, Hk, R, 1, 1}, s, loc);
    Array bt = step(ba, t, {B, Hk, R, 1}, s, loc);
    Array decayed = multiply(S, gt, s, loc);
    Array kv = sum(multiply(decayed, kt, s, loc), -1, false, s,
                   loc);  // [B, Hk, R, Dv]
    Array delta = multiply(subtract(vt, kv, s, loc), bt, s, loc);
    Array next = add(
        decayed, multiply(kt, expand_dims(delta, -1, s, loc), s, loc), s, loc);
    Array y = sum(multiply(next, qt, s, loc), -1, false, s, loc);
    if (mask) {
      Array mt = step(*mask, t, {B, 1, 1, 1}, s, loc);
      y = where(mt, y, array(0.0, acc), s, loc);
      next = where(expand_dims(mt, -1, s, loc), next, S, s, loc);
    }
    S = next;
    ys.push_back(reshape(astype(y, q.dtype(), s, loc), {B, 1, Hv, Dv}, s, loc));
  }
  Array y = T == 0 ? zeros({B, 0, Hv, Dv}, q.dtype(), s, loc)
                   : concatenate(ys, 1, s, loc);
  return {y,
          astype(reshape(S, {B, Hv, Dv, Dk}, s, loc), state.dtype(), s, loc)};
}

}  // namespace

std::pair<Array, Array> gated_delta(const Array& q, const Array& k,
                                    const Array& v, const Array& g,
                                    const Array& beta, const Array& state,
                                    const std::optional<Array>& mask,
                                    StreamOrDevice s, Location loc) {
  const char* op = "gated_delta";
  for (const Array* a : {&q, &k, &v, &g, &beta, &state})
    if (a->is_failed()) return failed2(*a);
  if (mask && mask->is_failed()) return failed2(*mask);
  Check c = check_args(q, k, v, g, beta, state, mask, false);
  if (!c.message.empty()) return failed2(fail(c.kind, c.message, op, loc));
  return run(q, k, v, g, beta, state, mask, s, loc);
}

std::pair<Array, Array> gated_delta_slots(const Array& q, const Array& k,
                                          const Array& v, const Array& g,
                                          const Array& beta, const Array& pool,
                                          const Array& slots,
                                          const std::optional<Array>& mask,
                                          StreamOrDevice s, Location loc) {
  const char* op = "gated_delta_slots";
  for (const Array* a : {&q, &k, &v, &g, &beta, &pool, &slots})
    if (a->is_failed()) return failed2(*a);
  if (mask && mask->is_failed()) return failed2(*mask);
  Check c = check_args(q, k, v, g, beta, pool, mask, true);
  if (c.message.empty() && !is_integer(slots.dtype()))
    c = {ErrorKind::unsupported_dtype,
         "slots must be of an integer dtype, not " +
             std::string(dtype_name(slots.dtype()))};
  if (c.message.empty() && (slots.ndim() != 1 || slots.shape(0) != q.shape(0)))
    c = {ErrorKind::shape_mismatch, "slots must have shape [" +
                                        std::to_string(q.shape(0)) +
                                        "] (one per batch row) but has shape " +
                                        shape_text(slots.shape())};
  if (c.message.empty() && pool.shape(0) == 0)
    c = {ErrorKind::invalid_shape, "pool must hold at least one state"};
  if (!c.message.empty()) return failed2(fail(c.kind, c.message, op, loc));
  Array idx = astype(slots, int32, s, loc);
  Array state = take(pool, idx, 0, s, loc);
  auto [y, next] = run(q, k, v, g, beta, state, mask, s, loc);
  // scatter's updates: the indices' shape [B], then one slice [1, Hv, Dv, Dk].
  Array updates = expand_dims(next, 1, s, loc);
  return {y, scatter(pool, idx, updates, 0, s, loc)};
}

}  // namespace nuvec::fast
