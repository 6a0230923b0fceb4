// The composite definitions of the fast operations (composite.h).
#include "fast/composite.h"

#include <cmath>
#include <numeric>

#include "nuvec/core/dtype_info.h"
#include "nuvec/ops/ops.h"

namespace nuvec::fast::composite {

DType stats_dtype(DType d) { return d == float64 ? float64 : float32; }

namespace {

Array to_stats(const Array& x, const StreamOrDevice& s) {
  return ops::astype(x, stats_dtype(x.dtype()), s);
}

// x * w unless w is the 0-d placeholder for "no weight".
Array times_weight(const Array& y, const Array& w, const StreamOrDevice& s) {
  return w.ndim() == 0 ? y : ops::multiply(y, w, s);
}

}  // namespace

Array rms_norm(const Array& x, const Array& w, float eps, const StreamOrDevice& s) {
  Array xf = to_stats(x, s);
  Array ms = ops::mean(ops::square(xf, s), Axes(-1), true, s);
  Array y = ops::multiply(xf, ops::rsqrt(ops::add(ms, nuvec::array(eps, xf.dtype()), s), s), s);
  return times_weight(ops::astype(y, x.dtype(), s), w, s);
}

Array layer_norm(const Array& x, const Array& w, const Array& b, float eps,
                 const StreamOrDevice& s) {
  Array xf = to_stats(x, s);
  Array mu = ops::mean(xf, Axes(-1), true, s);
  Array xc = ops::subtract(xf, mu, s);
  Array v = ops::mean(ops::square(xc, s), Axes(-1), true, s);
  Array y = ops::multiply(xc, ops::rsqrt(ops::add(v, nuvec::array(eps, xf.dtype()), s), s), s);
  y = times_weight(ops::astype(y, x.dtype(), s), w, s);
  return b.ndim() == 0 ? y : ops::add(y, b, s);
}

Array softmax(const Array& x, const std::vector<int>& axes, const StreamOrDevice& s,
              Location loc) {
  DType out = at_least_float(x.dtype());
  Array xf = ops::astype(x, stats_dtype(out) == float64 || is_complex(out) ? out : float32, s, loc);
  Array m = ops::stop_gradient(ops::max(xf, Axes(axes), true, s, loc), s, loc);
  Array e = ops::exp(ops::subtract(xf, m, s, loc), s, loc);
  return ops::astype(ops::divide(e, ops::sum(e, Axes(axes), true, s, loc), s, loc), out, s, loc);
}

Array logsumexp(const Array& x, const std::vector<int>& axes, const StreamOrDevice& s,
                Location loc) {
  DType out = at_least_float(x.dtype());
  Array xf = ops::astype(x, is_floating(out) ? stats_dtype(out) : out, s, loc);
  Array m = ops::stop_gradient(ops::max(xf, Axes(axes), true, s, loc), s, loc);
  m = ops::where(ops::isinf(m, s, loc), 0.0, m, s, loc);
  Array r = ops::add(
      ops::log(ops::sum(ops::exp(ops::subtract(xf, m, s, loc), s, loc), Axes(axes), true, s, loc),
               s, loc),
      m, s, loc);
  return ops::astype(r, out, s, loc);
}

Array cross_entropy(const Array& logits, const Array& targets, float smoothing,
                    std::optional<int> ignore, const StreamOrDevice& s) {
  Array lf = ops::astype(logits, float32, s);
  Array lse = ops::squeeze(composite::logsumexp(lf, {lf.ndim() - 1}, s), Axes(-1), s);
  Array t = ops::astype(targets, int32, s);
  Array picked =
      ops::squeeze(ops::take_along_axis(lf, ops::expand_dims(t, Axes(-1), s), -1, s), Axes(-1), s);
  Array loss = ops::subtract(lse, picked, s);
  if (smoothing > 0) {
    Array mean = ops::mean(lf, Axes(-1), false, s);
    loss = ops::subtract(ops::subtract(lse, ops::multiply(picked, 1.0f - smoothing, s), s),
                         ops::multiply(mean, smoothing, s), s);
  }
  if (ignore) loss = ops::where(ops::equal(t, *ignore, s), 0.0f, loss, s);
  return loss;
}

Array cross_entropy_grad(const Array& logits, const Array& t, const Array& g, float smoothing,
                         std::optional<int> ignore, const StreamOrDevice& s) {
  const int c = logits.shape(-1);
  Array p = composite::softmax(ops::astype(logits, float32, s), {logits.ndim() - 1}, s);
  Array te = ops::expand_dims(t, Axes(-1), s);
  Array onehot = ops::astype(ops::equal(ops::arange(0.0, double(c), int32, s), te, s), float32, s);
  Array d = ops::subtract(p, ops::multiply(onehot, 1.0f - smoothing, s), s);
  if (smoothing > 0) d = ops::subtract(d, smoothing / float(c), s);
  if (ignore) d = ops::where(ops::equal(te, *ignore, s), 0.0f, d, s);
  return ops::astype(ops::multiply(ops::expand_dims(ops::astype(g, float32, s), Axes(-1), s), d, s),
                     logits.dtype(), s);
}

Array rope(const Array& x_in, const Array& offset_in, const std::optional<Array>& freqs, int dims,
           bool traditional, float base, float scale, bool forward, const StreamOrDevice& s) {
  const Shape shape = x_in.shape();
  Array x = x_in;
  if (x.ndim() == 3) x = ops::expand_dims(x, Axes(1), s);
  else if (x.ndim() > 4) x = ops::flatten(x, 1, x.ndim() - 3, s);
  const int half = dims / 2;
  Array xf = to_stats(x, s);
  Array offset = ops::astype(offset_in, float32, s);
  if (offset.size() > 1) offset = ops::reshape(offset, {-1, 1, 1}, s);
  Array positions = ops::multiply(
      ops::add(ops::arange(0.0, double(x.shape(2)), float32, s), offset, s), scale, s);
  Array inv = freqs ? ops::reciprocal(ops::astype(*freqs, float32, s), s)
                    : ops::exp(ops::multiply(ops::arange(0.0, double(-half), -1.0, float32, s),
                                             std::log(base) / float(half), s),
                               s);
  Array theta = ops::multiply(ops::expand_dims(positions, Axes(-1), s), inv, s);
  Array c = ops::cos(theta, s), sn = ops::sin(theta, s);
  if (!forward) sn = ops::negative(sn, s);
  const int B = x.shape(0), N = x.shape(1), T = x.shape(2), D = x.shape(3);
  Array x1 = traditional ? ops::slice(xf, {0, 0, 0, 0}, {B, N, T, dims}, {1, 1, 1, 2}, s)
                         : ops::slice(xf, {0, 0, 0, 0}, {B, N, T, half}, {}, s);
  Array x2 = traditional ? ops::slice(xf, {0, 0, 0, 1}, {B, N, T, dims}, {1, 1, 1, 2}, s)
                         : ops::slice(xf, {0, 0, 0, half}, {B, N, T, dims}, {}, s);
  Array o1 = ops::subtract(ops::multiply(x1, c, s), ops::multiply(x2, sn, s), s);
  Array o2 = ops::add(ops::multiply(x1, sn, s), ops::multiply(x2, c, s), s);
  Array rotated = traditional ? ops::reshape(ops::stack({o1, o2}, -1, s), {B, N, T, dims}, s)
                              : ops::concatenate({o1, o2}, -1, s);
  Array out = ops::astype(rotated, x.dtype(), s);
  if (dims < D) out = ops::concatenate({out, ops::slice(x, {0, 0, 0, dims}, {B, N, T, D}, {}, s)}, -1, s);
  return ops::reshape(out, shape, s);
}

Array attention(const Array& q_in, const Array& k_in, const Array& v_in,
                const std::optional<Array>& mask_in, const std::optional<Array>& sinks_in,
                float scale, bool causal, const StreamOrDevice& s) {
  const int hq = q_in.shape(1), hkv = k_in.shape(1), rep = hq / hkv;
  // No key and no sink: the softmax has nothing to normalize; the output is
  // the empty sum's zeros, as the kernels write (a paged sequence of length
  // 0 on a GPU without a kernel for its head size reached this).
  if (k_in.shape(-2) == 0 && !sinks_in)
    return ops::zeros({q_in.shape(0), hq, q_in.shape(2), v_in.shape(3)},
                      promote_types(promote_types(q_in.dtype(), k_in.dtype()), v_in.dtype()), s);
  Array q = ops::multiply(q_in, nuvec::array(scale, q_in.dtype()), s);
  Array k = k_in, v = v_in;
  if (rep > 1) {
    q = ops::unflatten(q, 1, {hkv, rep}, s);
    k = ops::expand_dims(k, Axes(2), s);
    v = ops::expand_dims(v, Axes(2), s);
  }
  Array scores = ops::matmul(q, ops::swapaxes(k, -1, -2, s), s);
  // The mask as an array (an empty optional: none); GCC 12 warns about a
  // reassigned std::optional<Array> here, so a flag says whether there is one.
  const bool masked = causal || mask_in.has_value();
  Array m = mask_in.has_value() ? *mask_in : scores;
  if (causal) {
    const int lk = k.shape(-2), lq = q.shape(-2);
    Array qi = ops::expand_dims(ops::arange(double(lk - lq), double(lk), int32, s), Axes(1), s);
    Array ki = ops::expand_dims(ops::arange(0.0, double(lk), int32, s), Axes(0), s);
    m = ops::greater_equal(qi, ki, s);
  }
  if (masked) {
    if (rep > 1 && m.ndim() >= 3)
      m = m.shape(-3) == 1 ? ops::expand_dims(m, Axes(-3), s) : ops::unflatten(m, -3, {hkv, rep}, s);
    scores = m.dtype() == bool_
                 ? ops::where(m, scores, nuvec::array(finfo(scores.dtype()).min, scores.dtype()), s)
                 : ops::add(scores, m, s);
  }
  if (sinks_in) {
    Array sk = ops::expand_dims(*sinks_in, Axes({0, 2, 3}), s);
    if (scores.ndim() == 5) sk = ops::unflatten(sk, 1, {hkv, rep}, s);
    Shape bs = scores.shape();
    bs.back() = 1;
    scores = ops::concatenate({ops::broadcast_to(sk, bs, s), scores}, -1, s);
  }
  scores = composite::softmax(scores, {scores.ndim() - 1}, s);
  if (sinks_in) {
    std::vector<int> start(scores.ndim(), 0), stop(scores.shape().begin(), scores.shape().end());
    start.back() = 1;
    scores = ops::slice(scores, start, stop, {}, s);
  }
  Array out = ops::matmul(scores, v, s);
  return rep > 1 ? ops::flatten(out, 1, 2, s) : out;
}

}  // namespace nuvec::fast::composite
