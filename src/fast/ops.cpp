// The fused row-wise operations of nuvec::fast (docs/fast.md): argument
// checks naming the argument, then the primitive, or its composite where the
// call's device has no kernel (route.h).
#include <sstream>

#include "backend/backend.h"
#include "fast/composite.h"
#include "fast/route.h"
#include "nuvec/core/dtype_info.h"
#include "nuvec/fast.h"
#include "nuvec/ops/ops.h"
#include "nuvec/primitives/fast.h"
#include "ops/builder.h"

namespace nuvec::fast {

using ops::impl::build;
using ops::impl::fail;
using ops::impl::make;

namespace detail {

bool has_kernel(PrimitiveId id, const StreamOrDevice& s, DType d) {
  Stream st = nuvec::detail::resolve_stream(s);
  if (st.device.type == Device::cpu) return true;
  return backend::gpu_fast_kernel(id, d);
}

Array softmax_last(const Array& x, bool precise, const StreamOrDevice& s, Location loc) {
  if (!has_kernel(PrimitiveId::Softmax, s, x.dtype()))
    return composite::softmax(x, {x.ndim() - 1}, s, loc);
  return ops::impl::build1(make<Softmax>(precise), {x}, s, "softmax", loc);
}

Array logsumexp_last(const Array& x, const StreamOrDevice& s, Location loc) {
  if (!has_kernel(PrimitiveId::LogSumExp, s, x.dtype()))
    return composite::logsumexp(x, {x.ndim() - 1}, s, loc);
  return ops::impl::build1(make<LogSumExp>(), {x}, s, "logsumexp", loc);
}

}  // namespace detail

namespace {

std::string shape_text(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

// A 1-d [n] parameter of a row-wise op, or the error naming it.
std::optional<Array> check_vector(const char* op, const char* name, const std::optional<Array>& a,
                                  int n, Location loc) {
  if (!a) return std::nullopt;
  if (a->is_failed()) return a;
  if (a->ndim() != 1 || a->shape(0) != n)
    return fail(ErrorKind::shape_mismatch,
                std::string(name) + " must have shape [" + std::to_string(n) +
                    "] (the last dimension of x) but has shape " + shape_text(a->shape()),
                op, loc);
  return a;
}

// The output dtype of x with its parameters, or the error.
Expected<DType> row_dtype(const char* op, const Array& x, std::initializer_list<const std::optional<Array>*> ps) {
  DType t = x.dtype();
  for (auto* p : ps)
    if (*p) t = promote_types(t, (*p)->dtype());
  if (!is_floating(t))
    return Error(ErrorKind::unsupported_dtype,
                 std::string("x must be of a floating dtype (float16, bfloat16, float32, "
                             "float64) but the inputs give ") +
                     std::string(dtype_name(t)));
  (void)op;
  return t;
}

// Common checks of rms_norm, layer_norm and add_rms_norm: x and the
// optional parameters; gives the output dtype or a failed array.
std::variant<DType, Array> check_rows(const char* op, const Array& x,
                                      std::optional<Array>& w, std::optional<Array>& b,
                                      Location loc) {
  if (x.is_failed()) return x;
  if (x.ndim() == 0)
    return fail(ErrorKind::invalid_shape, "x must have at least 1 dimension but is 0-d", op, loc);
  const int n = x.shape(-1);
  w = check_vector(op, "weight", w, n, loc);
  if (w && w->is_failed()) return *w;
  b = check_vector(op, "bias", b, n, loc);
  if (b && b->is_failed()) return *b;
  auto t = row_dtype(op, x, {&w, &b});
  if (!t) return fail(t.error().kind(), t.error().message(), op, loc);
  return *t;
}

}  // namespace

Array rms_norm(const Array& x, const std::optional<Array>& weight, float eps, StreamOrDevice s,
               Location loc) {
  std::optional<Array> w = weight, b;
  auto c = check_rows("rms_norm", x, w, b, loc);
  if (auto* f = std::get_if<Array>(&c)) return *f;
  DType t = std::get<DType>(c);
  Array xt = ops::astype(x, t, s, loc);
  Array wt = w ? ops::astype(*w, t, s, loc) : nuvec::array(1, t);
  if (!detail::has_kernel(PrimitiveId::RMSNorm, s, t)) return composite::rms_norm(xt, wt, eps, s);
  return ops::impl::build1(make<RMSNorm>(eps), {xt, wt}, s, "rms_norm", loc);
}

Array layer_norm(const Array& x, const std::optional<Array>& weight,
                 const std::optional<Array>& bias, float eps, StreamOrDevice s, Location loc) {
  std::optional<Array> w = weight, b = bias;
  auto c = check_rows("layer_norm", x, w, b, loc);
  if (auto* f = std::get_if<Array>(&c)) return *f;
  DType t = std::get<DType>(c);
  Array xt = ops::astype(x, t, s, loc);
  Array wt = w ? ops::astype(*w, t, s, loc) : nuvec::array(1, t);
  Array bt = b ? ops::astype(*b, t, s, loc) : nuvec::array(0, t);
  if (!detail::has_kernel(PrimitiveId::LayerNorm, s, t))
    return composite::layer_norm(xt, wt, bt, eps, s);
  return ops::impl::build1(make<LayerNorm>(eps), {xt, wt, bt}, s, "layer_norm", loc);
}

std::pair<Array, Array> add_rms_norm(const Array& x, const Array& residual,
                                     const std::optional<Array>& weight, float eps,
                                     StreamOrDevice s, Location loc) {
  std::optional<Array> w = weight, b;
  auto c = check_rows("add_rms_norm", x, w, b, loc);
  if (auto* f = std::get_if<Array>(&c)) return {*f, *f};
  if (residual.is_failed()) return {residual, residual};
  if (residual.shape() != x.shape()) {
    Array f = fail(ErrorKind::shape_mismatch,
                   "residual must have x's shape " + shape_text(x.shape()) + " but has shape " +
                       shape_text(residual.shape()),
                   "add_rms_norm", loc);
    return {f, f};
  }
  std::optional<Array> r = residual;
  auto t = row_dtype("add_rms_norm", x, {&w, &r});
  if (!t) {
    Array f = fail(t.error().kind(), t.error().message(), "add_rms_norm", loc);
    return {f, f};
  }
  Array xt = ops::astype(x, *t, s, loc), rt = ops::astype(residual, *t, s, loc);
  Array wt = w ? ops::astype(*w, *t, s, loc) : nuvec::array(1, *t);
  if (!detail::has_kernel(PrimitiveId::AddRMSNorm, s, *t)) {
    Array h = ops::add(xt, rt, s, loc);
    return {h, composite::rms_norm(h, wt, eps, s)};
  }
  auto outs = build(make<AddRMSNorm>(eps), {xt, rt, wt}, s, "add_rms_norm", loc);
  return {outs[0], outs[1]};
}

Array cross_entropy(const Array& logits, const Array& targets, StreamOrDevice s, Location loc) {
  return cross_entropy(logits, targets, CrossEntropyOptions{}, s, loc);
}

Array cross_entropy(const Array& logits, const Array& targets, const CrossEntropyOptions& o,
                    StreamOrDevice s, Location loc) {
  const char* op = "cross_entropy";
  if (logits.is_failed()) return logits;
  if (targets.is_failed()) return targets;
  if (logits.ndim() == 0)
    return fail(ErrorKind::invalid_shape, "logits must have at least 1 dimension (the classes)",
                op, loc);
  Shape rows(logits.shape().begin(), logits.shape().end() - 1);
  if (targets.shape() != rows)
    return fail(ErrorKind::shape_mismatch,
                "targets must have shape " + shape_text(rows) +
                    " (logits' shape without its last axis) but has shape " +
                    shape_text(targets.shape()),
                op, loc);
  if (!is_integer(targets.dtype()))
    return fail(ErrorKind::unsupported_dtype,
                std::string("targets must be class indices of an integer dtype, not ") +
                    std::string(dtype_name(targets.dtype())),
                op, loc);
  if (!is_floating(logits.dtype()))
    return fail(ErrorKind::unsupported_dtype,
                std::string("logits must be of a floating dtype, not ") +
                    std::string(dtype_name(logits.dtype())),
                op, loc);
  if (!(o.label_smoothing >= 0.0f && o.label_smoothing < 1.0f))
    return fail(ErrorKind::invalid_argument,
                "label_smoothing must be in [0, 1) but is " + std::to_string(o.label_smoothing),
                op, loc);
  const int c = logits.shape(-1);
  if (c == 0 && logits.size() == 0 && shape_size(rows) > 0)
    return fail(ErrorKind::invalid_shape, "logits have no classes (last dimension 0)", op, loc);
  std::optional<Array> cw = check_vector(op, "class_weights", o.class_weights, c, loc);
  if (cw && cw->is_failed()) return *cw;
  Array t = ops::astype(targets, int32, s, loc);
  Array loss =
      detail::has_kernel(PrimitiveId::CrossEntropy, s, logits.dtype()) && logits.size() > 0
          ? ops::impl::build1(make<CrossEntropy>(o.label_smoothing, o.ignore_index), {logits, t}, s,
                              op, loc)
          : composite::cross_entropy(logits, t, o.label_smoothing, o.ignore_index, s);
  if (cw) {
    // The weight of each row's target (0 for ignored rows, whose loss is 0).
    Array safe = o.ignore_index ? ops::where(ops::equal(t, *o.ignore_index, s, loc), 0, t, s, loc) : t;
    loss = ops::multiply(loss, ops::take(ops::astype(*cw, float32, s, loc), safe, 0, s, loc), s, loc);
  }
  if (o.weights) {
    if (o.weights->is_failed()) return *o.weights;
    Array w = ops::astype(*o.weights, float32, s, loc);
    Array prod = ops::multiply(loss, w, s, loc);
    if (!prod.is_failed() && prod.shape() != loss.shape())
      return fail(ErrorKind::shape_mismatch,
                  "weights must broadcast to the loss's shape " + shape_text(loss.shape()) +
                      " but have shape " + shape_text(o.weights->shape()),
                  op, loc);
    loss = prod;
  }
  return loss;
}

}  // namespace nuvec::fast
