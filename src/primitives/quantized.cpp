// The quantization primitives' shape-and-dtype rules (the ops in
// src/ops/quantized.cpp give the user-facing messages; these guard replays).
#include "nuvec/primitives/quantized.h"

#include <limits>
#include <ostream>

#include "nuvec/core/dtype_info.h"

namespace nuvec {

const char* quant_mode_name(QuantMode m) {
  switch (m) {
    case QuantMode::affine: return "affine";
    case QuantMode::mxfp4: return "mxfp4";
    case QuantMode::nvfp4: return "nvfp4";
    case QuantMode::mxfp8: return "mxfp8";
  }
  return "?";
}

namespace {

using Specs = Expected<std::vector<OutputSpec>>;

OutputSpec dense(Shape shape, DType dtype) {
  OutputSpec o;
  o.shape = std::move(shape);
  o.dtype = dtype;
  return o;
}

Specs bad(std::string m) { return op_error(ErrorKind::invalid_argument, std::move(m)); }

bool float_kind(DType d) { return d == float32 || d == float16 || d == bfloat16 || d == float64; }

Shape with_last(Shape s, int v) {
  s.back() = v;
  return s;
}

// The packed matrix's scales (and biases) against w_q [..., R, W]: shape
// [..., R, W * 32 / bits / group]; affine: biases of the scales' shape and
// dtype `t`; floating modes: uint8 scales.
bool scales_fit(const QuantSpec& q, const Array& w, const Array& sc, const Array* b, DType t) {
  if (w.dtype() != uint32 || w.ndim() < 1) return false;
  const int64_t cols = int64_t(w.shape(-1)) * 32 / q.bits;
  if (cols > std::numeric_limits<int>::max()) return false;  // dims are int
  if (cols % q.group_size || (int64_t(w.shape(-1)) * 32) % q.bits) return false;
  if (sc.shape() != with_last(w.shape(), int(cols / q.group_size))) return false;
  if (sc.dtype() != q.scale_dtype(t)) return false;
  if (q.has_biases()) return b && b->shape() == sc.shape() && b->dtype() == sc.dtype();
  return b == nullptr;
}

size_t packed_inputs(const QuantSpec& q) { return q.has_biases() ? 3 : 2; }

}  // namespace

Specs Quantize::output_specs(const std::vector<Array>& in) const {
  if (in.size() != 1) return bad("Quantize takes w");
  const Array& w = in[0];
  if (!float_kind(w.dtype()) || w.ndim() < 2 || w.shape(-1) % q_.group_size ||
      (int64_t(w.shape(-1)) * q_.bits) % 32)
    return bad("w must be floating, at least 2-D, its last axis a multiple of the group size");
  std::vector<OutputSpec> out{dense(with_last(w.shape(), int(q_.words(w.shape(-1)))), uint32),
                              dense(with_last(w.shape(), w.shape(-1) / q_.group_size),
                                    q_.scale_dtype(w.dtype()))};
  if (q_.has_biases()) out.push_back(out[1]);
  return out;
}

Specs Dequantize::output_specs(const std::vector<Array>& in) const {
  if (in.size() != packed_inputs(q_)) return bad("Dequantize takes w_q, scales and, for affine, biases");
  const DType t = q_.has_biases() ? in[1].dtype() : float32;
  if (!float_kind(t) || !float_kind(dtype_) ||
      !scales_fit(q_, in[0], in[1], q_.has_biases() ? &in[2] : nullptr, t))
    return bad("w_q, scales and biases do not fit the format");
  return std::vector<OutputSpec>{
      dense(with_last(in[0].shape(), int(int64_t(in[0].shape(-1)) * 32 / q_.bits)), dtype_)};
}

Specs QuantizedMatmul::output_specs(const std::vector<Array>& in) const {
  if (in.size() != packed_inputs(q_) + 1)
    return bad("QuantizedMatmul takes x, w_q, scales and, for affine, biases");
  const Array &x = in[0], &w = in[1];
  if (!float_kind(x.dtype()) || x.ndim() < 1 || w.ndim() < 2 ||
      !scales_fit(q_, w, in[2], q_.has_biases() ? &in[3] : nullptr, x.dtype()))
    return bad("x, w_q, scales and biases do not fit the format");
  const int cols = int(int64_t(w.shape(-1)) * 32 / q_.bits);
  const int k = transpose_ ? cols : w.shape(-2), n = transpose_ ? w.shape(-2) : cols;
  if (x.shape(-1) != k) return bad("x's last axis does not match the matrix");
  if (w.ndim() > 2) {
    if (x.ndim() != w.ndim()) return bad("a batched w needs x [..., M, K] of w's rank");
    for (int d = 0; d + 2 < w.ndim(); ++d)
      if (x.shape(d) != w.shape(d)) return bad("batch axes of x and w differ");
  }
  return std::vector<OutputSpec>{dense(with_last(x.shape(), n), x.dtype())};
}

namespace {

// The indices of a gathered product: two uint32 arrays of one shape.
bool indices_fit(const Array& l, const Array& r) {
  return l.dtype() == uint32 && r.dtype() == uint32 && l.shape() == r.shape();
}

Shape gathered_shape(const Array& idx, int m, int n) {
  Shape s = idx.shape();
  s.push_back(m);
  s.push_back(n);
  return s;
}

}  // namespace

Specs GatherMM::output_specs(const std::vector<Array>& in) const {
  if (in.size() != 4) return bad("GatherMM takes a, b, lhs and rhs indices");
  const Array &a = in[0], &b = in[1];
  if (a.ndim() < 2 || b.ndim() < 2 || !is_floating(a.dtype()) || a.dtype() != b.dtype() ||
      a.shape(-1) != b.shape(-2) || !indices_fit(in[2], in[3]))
    return bad("a [..., M, K], b [..., K, N] of one floating dtype and uint32 indices of one shape");
  return std::vector<OutputSpec>{dense(gathered_shape(in[2], a.shape(-2), b.shape(-1)), a.dtype())};
}

Specs GatherQMM::output_specs(const std::vector<Array>& in) const {
  const size_t np = packed_inputs(q_);
  if (in.size() != np + 3) return bad("GatherQMM takes x, w_q, scales[, biases], lhs and rhs");
  const Array &x = in[0], &w = in[1];
  if (!float_kind(x.dtype()) || x.ndim() < 2 || w.ndim() < 2 ||
      !scales_fit(q_, w, in[2], q_.has_biases() ? &in[3] : nullptr, x.dtype()) ||
      !indices_fit(in[np + 1], in[np + 2]))
    return bad("x, w_q, scales, biases and indices do not fit the format");
  const int cols = int(int64_t(w.shape(-1)) * 32 / q_.bits);
  const int k = transpose_ ? cols : w.shape(-2), n = transpose_ ? w.shape(-2) : cols;
  if (x.shape(-1) != k) return bad("x's last axis does not match the matrix");
  return std::vector<OutputSpec>{dense(gathered_shape(in[np + 1], x.shape(-2), n), x.dtype())};
}

void Quantize::print_params(std::ostream& os) const {
  os << quant_mode_name(q_.mode) << ", group_size=" << q_.group_size << ", bits=" << q_.bits;
}
void Dequantize::print_params(std::ostream& os) const {
  os << quant_mode_name(q_.mode) << ", group_size=" << q_.group_size << ", bits=" << q_.bits
     << ", " << dtype_name(dtype_);
}
void QuantizedMatmul::print_params(std::ostream& os) const {
  os << quant_mode_name(q_.mode) << ", group_size=" << q_.group_size << ", bits=" << q_.bits
     << (transpose_ ? ", transpose" : "");
}
void GatherMM::print_params(std::ostream& os) const {
  if (sorted_) os << "sorted";
}
void GatherQMM::print_params(std::ostream& os) const {
  os << quant_mode_name(q_.mode) << ", group_size=" << q_.group_size << ", bits=" << q_.bits
     << (transpose_ ? ", transpose" : "") << (sorted_ ? ", sorted" : "");
}

}  // namespace nuvec
