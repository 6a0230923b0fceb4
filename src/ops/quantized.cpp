// The quantization ops (include/nuvec/ops/quantized.h): argument checks
// with messages naming the argument (MLX's wording where MLX has one), then
// the primitives of nuvec/primitives/quantized.h.
#include "nuvec/ops/quantized.h"

#include <sstream>

#include "nuvec/core/dtype_info.h"
#include "nuvec/ops/ops.h"
#include "nuvec/primitives/quantized.h"
#include "ops/builder.h"
#include "ops/indexing_impl.h"

namespace nuvec::inline ops {

using impl::build;
using impl::build1;
using impl::fail;
using impl::make;

namespace {

std::string text(const Shape& s) { return impl::shape_text(s); }

// The format of (group_size, bits, mode) with MLX's defaults, or the error.
Expected<QuantSpec> spec_of(const char* op, std::optional<int> group_size, std::optional<int> bits,
                            const std::string& mode) {
  QuantSpec q;
  std::string op_s = std::string("[") + op + "] ";
  if (mode == "affine") {
    q = {group_size.value_or(64), bits.value_or(4), QuantMode::affine};
    if (q.group_size != 32 && q.group_size != 64 && q.group_size != 128)
      return op_error(ErrorKind::invalid_argument,
                      "The requested group size " + std::to_string(q.group_size) +
                          " is not supported. The supported group sizes are 32, 64, and 128.");
    if (q.bits < 1 || q.bits > 8 || q.bits == 7)
      return op_error(ErrorKind::invalid_argument,
                      "The requested number of bits " + std::to_string(q.bits) +
                          " is not supported. The supported bits are 1, 2, 3, 4, 5, 6 and 8.");
    return q;
  }
  QuantMode m;
  int g, b;
  if (mode == "mxfp4") {
    m = QuantMode::mxfp4, g = 32, b = 4;
  } else if (mode == "nvfp4") {
    m = QuantMode::nvfp4, g = 16, b = 4;
  } else if (mode == "mxfp8") {
    m = QuantMode::mxfp8, g = 32, b = 8;
  } else {
    return op_error(ErrorKind::invalid_argument,
                    "Invalid quantization mode '" + mode +
                        "' (mode must be affine, mxfp4, nvfp4 or mxfp8).");
  }
  q = {group_size.value_or(g), bits.value_or(b), m};
  if (q.group_size != g)
    return op_error(ErrorKind::invalid_argument, mode + " quantization requires group size " +
                                                     std::to_string(g) + " but got " +
                                                     std::to_string(q.group_size) + ".");
  if (q.bits != b)
    return op_error(ErrorKind::invalid_argument, mode + " quantization requires bits to be " +
                                                     std::to_string(b) + " but got " +
                                                     std::to_string(q.bits) + ".");
  return q;
}

bool quantizable(DType d) { return d == float32 || d == float16 || d == bfloat16 || d == float64; }

Array global_scale_unsupported(const char* op, Location loc) {
  return fail(ErrorKind::invalid_argument,
              "global_scale (two-level nvfp4 scaling) is not supported yet", op, loc);
}

// Checks w_q, scales and biases of a packed matrix (mode `q`) whose
// floating dtype is `t`; gives nullopt or the failed array.
std::optional<Array> check_packed(const char* op, const QuantSpec& q, const Array& w,
                                  const Array& scales, const std::optional<Array>& biases,
                                  Location loc) {
  if (w.dtype() != uint32)
    return fail(ErrorKind::unsupported_dtype,
                "w must be the uint32 words of quantize but has dtype " +
                    std::string(dtype_name(w.dtype())),
                op, loc);
  if (w.ndim() < 1) return fail(ErrorKind::invalid_shape, "w must have at least 1 dimension", op, loc);
  if (q.has_biases() && !biases)
    return fail(ErrorKind::invalid_argument, "biases must be given for mode affine", op, loc);
  if (!q.has_biases() && biases)
    return fail(ErrorKind::invalid_argument,
                std::string("biases are not used by mode ") + quant_mode_name(q.mode), op, loc);
  if (!q.has_biases() && scales.dtype() != uint8)
    return fail(ErrorKind::unsupported_dtype,
                std::string("scales of mode ") + quant_mode_name(q.mode) + " must be uint8 codes",
                op, loc);
  if (q.has_biases() && !quantizable(scales.dtype()))
    return fail(ErrorKind::unsupported_dtype, "scales must be floating", op, loc);
  const int64_t cols = int64_t(w.shape(-1)) * 32;
  Shape expect = w.shape();
  expect.back() = cols % q.bits ? -1 : int(cols / q.bits / q.group_size);
  bool ok = cols % q.bits == 0 && (cols / q.bits) % q.group_size == 0 && scales.shape() == expect;
  if (biases) ok = ok && biases->shape() == scales.shape();
  if (!ok)
    return fail(ErrorKind::shape_mismatch,
                "Shape of scales and biases does not match the matrix given the quantization "
                "parameters. Provided matrix of shape " +
                    text(w.shape()) + " and scales/biases of shape " + text(scales.shape()) +
                    " with group_size=" + std::to_string(q.group_size) +
                    " and bits=" + std::to_string(q.bits) + ".",
                op, loc);
  return std::nullopt;
}

// The common floating dtype of x and the affine scales and biases (the
// floating modes' uint8 scale codes do not take part), or the error.
Expected<DType> product_dtype(const Array& x, const QuantSpec& q, const Array& scales,
                              const std::optional<Array>& biases) {
  DType t = x.dtype();
  if (q.has_biases()) {
    t = promote_types(t, scales.dtype());
    if (biases) t = promote_types(t, biases->dtype());
  }
  if (!quantizable(t))
    return op_error(ErrorKind::unsupported_dtype,
                    "x must be float32, float16, bfloat16 or float64 but the inputs give " +
                        std::string(dtype_name(t)));
  return t;
}

// Indices of a gathered product: integers as uint32, or arange over the
// operand's batch axes when absent.
Expected<Array> indices_of(const char* name, const std::optional<Array>& idx, const Array& operand) {
  if (idx) {
    if (idx->is_failed()) return *idx;
    if (!is_integer(idx->dtype()))
      return op_error(ErrorKind::unsupported_dtype,
                      std::string(name) + " must be integers but has dtype " +
                          std::string(dtype_name(idx->dtype())));
    return ops::astype(*idx, uint32);
  }
  Shape batch(operand.shape().begin(), operand.shape().end() - 2);
  int64_t n = 1;
  for (int d : batch) n *= d;
  return ops::reshape(ops::arange(0, double(n), 1.0, uint32), batch);
}

}  // namespace

std::vector<Array> quantize(const Array& w, std::optional<int> group_size, std::optional<int> bits,
                            const std::string& mode, const std::optional<Array>& global_scale,
                            StreamOrDevice s, Location loc) {
  auto q = spec_of("quantize", group_size, bits, mode);
  auto all = [&](Array f) { return std::vector<Array>(mode == "affine" ? 3 : 2, f); };
  if (w.is_failed()) return all(w);
  if (!q) return all(fail(q.error().kind(), q.error().message(), "quantize", loc));
  if (global_scale) return all(global_scale_unsupported("quantize", loc));
  if (!quantizable(w.dtype()))
    return all(fail(ErrorKind::unsupported_dtype,
                    "Only real floating types can be quantized but w has type " +
                        std::string(dtype_name(w.dtype())) + ".",
                    "quantize", loc));
  if (w.ndim() < 2)
    return all(fail(ErrorKind::invalid_shape,
                    "The matrix to be quantized must have at least 2 dimension but it has only " +
                        std::to_string(w.ndim()) + ".",
                    "quantize", loc));
  if (w.shape(-1) % q->group_size || (int64_t(w.shape(-1)) * q->bits) % 32)
    return all(fail(ErrorKind::shape_mismatch,
                    "The last dimension of the matrix needs to be divisible by the quantization "
                    "group size " +
                        std::to_string(q->group_size) + ". However the provided matrix has shape " +
                        text(w.shape()),
                    "quantize", loc));
  return build(make<Quantize>(*q), {w}, s, "quantize", loc);
}

Array dequantize(const Array& w, const Array& scales, const std::optional<Array>& biases,
                 std::optional<int> group_size, std::optional<int> bits, const std::string& mode,
                 const std::optional<Array>& global_scale, std::optional<DType> dtype,
                 StreamOrDevice s, Location loc) {
  for (const Array* a : {&w, &scales})
    if (a->is_failed()) return *a;
  if (biases && biases->is_failed()) return *biases;
  auto q = spec_of("dequantize", group_size, bits, mode);
  if (!q) return fail(q.error().kind(), q.error().message(), "dequantize", loc);
  if (global_scale) return global_scale_unsupported("dequantize", loc);
  if (auto f = check_packed("dequantize", *q, w, scales, biases, loc)) return *f;
  if (biases && biases->dtype() != scales.dtype())
    return fail(ErrorKind::unsupported_dtype, "biases must have the scales' dtype", "dequantize",
                loc);
  const DType out = dtype.value_or(q->has_biases() ? scales.dtype() : bfloat16);
  if (!quantizable(out))
    return fail(ErrorKind::unsupported_dtype,
                "dtype must be floating but is " + std::string(dtype_name(out)), "dequantize", loc);
  std::vector<Array> in{w, scales};
  if (biases) in.push_back(*biases);
  return build1(make<Dequantize>(*q, out), in, s, "dequantize", loc);
}

namespace {

// x and the packed matrix checked and cast to the product's dtype; gives
// the primitive's inputs after x or a failed array.
std::variant<std::vector<Array>, Array> product_inputs(const char* op, const QuantSpec& q,
                                                       Array& x, const Array& w,
                                                       const Array& scales,
                                                       const std::optional<Array>& biases,
                                                       bool transpose, Location loc) {
  if (auto f = check_packed(op, q, w, scales, biases, loc)) return *f;
  if (w.ndim() < 2) return fail(ErrorKind::invalid_shape, "w must have at least 2 dimensions", op, loc);
  if (x.ndim() < 1) return fail(ErrorKind::invalid_shape, "x must have at least 1 dimension", op, loc);
  auto t = product_dtype(x, q, scales, biases);
  if (!t) return fail(t.error().kind(), t.error().message(), op, loc);
  const int cols = int(int64_t(w.shape(-1)) * 32 / q.bits);
  const int k = transpose ? cols : w.shape(-2);
  if (x.shape(-1) != k)
    return fail(ErrorKind::shape_mismatch,
                "the last dimension of x " + text(x.shape()) + " must be " + std::to_string(k) +
                    ", the inner dimension of the quantized matrix of shape " + text(w.shape()) +
                    (transpose ? " (transposed)" : ""),
                op, loc);
  x = ops::astype(x, *t);
  std::vector<Array> in{w, q.has_biases() ? ops::astype(scales, *t) : scales};
  if (biases) in.push_back(ops::astype(*biases, *t));
  return in;
}

}  // namespace

Array quantized_matmul(const Array& x_in, const Array& w, const Array& scales,
                       const std::optional<Array>& biases, bool transpose,
                       std::optional<int> group_size, std::optional<int> bits,
                       const std::string& mode, StreamOrDevice s, Location loc) {
  for (const Array* a : {&x_in, &w, &scales})
    if (a->is_failed()) return *a;
  if (biases && biases->is_failed()) return *biases;
  auto q = spec_of("quantized_matmul", group_size, bits, mode);
  if (!q) return fail(q.error().kind(), q.error().message(), "quantized_matmul", loc);
  Array x = x_in;
  auto r = product_inputs("quantized_matmul", *q, x, w, scales, biases, transpose, loc);
  if (auto* f = std::get_if<Array>(&r)) return *f;
  auto packed = std::get<std::vector<Array>>(r);
  if (w.ndim() > 2) {
    // Batch axes broadcast: x [..., M, K] against w's [...].
    if (x.ndim() < 2)
      return fail(ErrorKind::invalid_shape, "x must be [..., M, K] for a batched w",
                  "quantized_matmul", loc);
    Shape xb(x.shape().begin(), x.shape().end() - 2), wb(w.shape().begin(), w.shape().end() - 2);
    auto bs = try_broadcast_shapes(xb, wb);
    if (!bs)
      return fail(ErrorKind::shape_mismatch,
                  "batch axes of x " + text(x.shape()) + " and w " + text(w.shape()) +
                      " do not broadcast",
                  "quantized_matmul", loc);
    auto to = [&](const Array& a) {
      Shape sh = *bs;
      sh.push_back(a.shape(-2));
      sh.push_back(a.shape(-1));
      return ops::broadcast_to(a, sh);
    };
    x = to(x);
    for (auto& a : packed) a = to(a);
  }
  std::vector<Array> in{x};
  in.insert(in.end(), packed.begin(), packed.end());
  return build1(make<QuantizedMatmul>(*q, transpose), in, s, "quantized_matmul", loc);
}

Array gather_mm(const Array& a_in, const Array& b_in, std::optional<Array> lhs_indices,
                std::optional<Array> rhs_indices, bool sorted_indices, StreamOrDevice s,
                Location loc) {
  if (!lhs_indices && !rhs_indices) return ops::matmul(a_in, b_in, s, loc);
  for (const Array* a : {&a_in, &b_in})
    if (a->is_failed()) return *a;
  if (a_in.ndim() == 0 || b_in.ndim() == 0)
    return fail(ErrorKind::invalid_shape,
                "Got 0 dimension input. Inputs must have at least one dimension.", "gather_mm", loc);
  Array a = a_in.ndim() == 1 ? ops::expand_dims(a_in, 0) : a_in;
  Array b = b_in.ndim() == 1 ? ops::expand_dims(b_in, 1) : b_in;
  if (a.shape(-1) != b.shape(-2))
    return fail(ErrorKind::shape_mismatch,
                "Last dimension of first input with shape " + text(a.shape()) +
                    " must match second to last dimension of second input with shape " +
                    text(b.shape()) + ".",
                "gather_mm", loc);
  DType t = promote_types(a.dtype(), b.dtype());
  if (!is_floating(t))
    return fail(ErrorKind::unsupported_dtype,
                "Only real floating point types are supported but the inputs give " +
                    std::string(dtype_name(t)),
                "gather_mm", loc);
  auto lhs = indices_of("lhs_indices", lhs_indices, a);
  if (!lhs) return fail(lhs.error().kind(), lhs.error().message(), "gather_mm", loc);
  auto rhs = indices_of("rhs_indices", rhs_indices, b);
  if (!rhs) return fail(rhs.error().kind(), rhs.error().message(), "gather_mm", loc);
  auto is = try_broadcast_shapes(lhs->shape(), rhs->shape());
  if (!is)
    return fail(ErrorKind::shape_mismatch,
                "lhs_indices " + text(lhs->shape()) + " and rhs_indices " + text(rhs->shape()) +
                    " do not broadcast",
                "gather_mm", loc);
  Array out = build1(make<GatherMM>(sorted_indices),
                     {ops::astype(a, t), ops::astype(b, t), ops::broadcast_to(*lhs, *is),
                      ops::broadcast_to(*rhs, *is)},
                     s, "gather_mm", loc);
  if (a_in.ndim() == 1) out = ops::squeeze(out, out.ndim() - 2);
  if (b_in.ndim() == 1) out = ops::squeeze(out, out.ndim() - 1);
  return out;
}

Array gather_qmm(const Array& x_in, const Array& w, const Array& scales,
                 const std::optional<Array>& biases, std::optional<Array> lhs_indices,
                 std::optional<Array> rhs_indices, bool transpose, std::optional<int> group_size,
                 std::optional<int> bits, const std::string& mode,
                 const std::optional<Array>& global_scale, bool sorted_indices, StreamOrDevice s,
                 Location loc) {
  if (!lhs_indices && !rhs_indices)
    return quantized_matmul(x_in, w, scales, biases, transpose, group_size, bits, mode, s, loc);
  for (const Array* a : {&x_in, &w, &scales})
    if (a->is_failed()) return *a;
  if (biases && biases->is_failed()) return *biases;
  auto q = spec_of("gather_qmm", group_size, bits, mode);
  if (!q) return fail(q.error().kind(), q.error().message(), "gather_qmm", loc);
  if (global_scale) return global_scale_unsupported("gather_qmm", loc);
  if (x_in.ndim() < 2)
    return fail(ErrorKind::invalid_shape, "x must be [..., M, K]", "gather_qmm", loc);
  Array x = x_in;
  auto r = product_inputs("gather_qmm", *q, x, w, scales, biases, transpose, loc);
  if (auto* f = std::get_if<Array>(&r)) return *f;
  auto packed = std::get<std::vector<Array>>(r);
  auto lhs = indices_of("lhs_indices", lhs_indices, x);
  if (!lhs) return fail(lhs.error().kind(), lhs.error().message(), "gather_qmm", loc);
  auto rhs = indices_of("rhs_indices", rhs_indices, w);
  if (!rhs) return fail(rhs.error().kind(), rhs.error().message(), "gather_qmm", loc);
  auto is = try_broadcast_shapes(lhs->shape(), rhs->shape());
  if (!is)
    return fail(ErrorKind::shape_mismatch,
                "lhs_indices " + text(lhs->shape()) + " and rhs_indices " + text(rhs->shape()) +
                    " do not broadcast",
                "gather_qmm", loc);
  std::vector<Array> in{x};
  in.insert(in.end(), packed.begin(), packed.end());
  in.push_back(ops::broadcast_to(*lhs, *is));
  in.push_back(ops::broadcast_to(*rhs, *is));
  return build1(make<GatherQMM>(*q, transpose, sorted_indices), in, s, "gather_qmm", loc);
}

}  // namespace nuvec::ops
