// The fast primitives on the GPU: inputs made dense (row_contiguous), then
// the row kernels of fast_rows.cu (fast_kernels.h). Attention has no GPU
// kernel yet: fast::plan_attention routes GPU calls to the composite.
#include "backend/cuda/fast.h"

#include "backend/cuda/cuda.h"
#include "backend/cuda/fast_attention.h"
#include "backend/cuda/fast_kernels.h"
#include "nuvec/primitives/fast.h"

namespace nuvec::cuda {

namespace {

void* at(Array& a) {
  return static_cast<char*>(a.desc()->data->ptr) + a.desc()->offset * a.itemsize();
}

// A per-feature parameter: null for the 0-d "none".
const void* param(const Array& p, std::vector<Array>& keep, void* stream, Stream s) {
  if (p.ndim() == 0) return nullptr;
  keep.push_back(row_contiguous(p, stream, s));
  return at(keep.back());
}

struct RowsOf {
  int64_t rows;
  int n;
};
RowsOf rows_of(const Array& x) {
  int n = x.ndim() ? x.shape().back() : 1;
  return {n ? x.size() / n : 0, n};
}

}  // namespace

namespace {

fastk::AttentionArgs attention_args(const std::vector<int>& dims, DType d, bool causal,
                                    bool has_mask, bool has_sinks) {
  fastk::AttentionArgs a{};
  a.t = d;
  a.B = dims[0], a.Hq = dims[1], a.Hkv = dims[2], a.Lq = dims[3], a.Lk = dims[4], a.D = dims[5],
  a.Dv = dims[6];
  a.causal = causal;
  // The plan looks at shapes and options only: stand-in pointers.
  static const char stand_in = 0;
  if (has_mask) a.mask = &stand_in;
  if (has_sinks) a.sinks = &stand_in;
  return a;
}

}  // namespace

std::string attention_kernel_for(const std::vector<int>& dims, DType d, bool causal, bool has_mask,
                                 bool has_sinks, bool backward) {
  auto a = attention_args(dims, d, causal, has_mask, has_sinks);
  return backward ? fastk::attention_backward_kernel(a) : fastk::attention_kernel(a);
}

bool has_fast_kernel(PrimitiveId id, DType d) {
  switch (id) {
    case PrimitiveId::RMSNorm:
    case PrimitiveId::LayerNorm:
    case PrimitiveId::AddRMSNorm:
    case PrimitiveId::Softmax:
    case PrimitiveId::LogSumExp:
    case PrimitiveId::CrossEntropy:
    case PrimitiveId::RoPE:
    case PrimitiveId::CrossEntropyGrad:
      return fastk::supports(d);
    default:
      return false;
  }
}

bool launch_fast(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out,
                 void* stream, Stream s) {
  std::vector<Array> keep;  // dense copies, alive until the launches are enqueued
  auto dense = [&](const Array& a) -> const void* {
    keep.push_back(row_contiguous(a, stream, s));
    return at(keep.back());
  };
  const DType t = in[0].dtype();
  const RowsOf r = rows_of(in[0]);
  switch (p.id()) {
    case PrimitiveId::RMSNorm: {
      if (out[0].size() == 0) return true;
      const void* x = dense(in[0]);
      fastk::rms_norm(t, x, param(in[1], keep, stream, s), at(out[0]), r.rows, r.n,
                      static_cast<const RMSNorm&>(p).eps(), stream);
      return true;
    }
    case PrimitiveId::AddRMSNorm: {
      if (out[0].size() == 0) return true;
      const void* x = dense(in[0]);
      const void* res = dense(in[1]);
      fastk::add_rms_norm(t, x, res, param(in[2], keep, stream, s), at(out[0]), at(out[1]), r.rows,
                          r.n, static_cast<const AddRMSNorm&>(p).eps(), stream);
      return true;
    }
    case PrimitiveId::LayerNorm: {
      if (out[0].size() == 0) return true;
      const void* x = dense(in[0]);
      const void* w = param(in[1], keep, stream, s);
      const void* b = param(in[2], keep, stream, s);
      fastk::layer_norm(t, x, w, b, at(out[0]), r.rows, r.n,
                        static_cast<const LayerNorm&>(p).eps(), stream);
      return true;
    }
    case PrimitiveId::Softmax:
      if (out[0].size() == 0) return true;
      fastk::softmax(t, dense(in[0]), at(out[0]), r.rows, r.n, stream);
      return true;
    case PrimitiveId::LogSumExp:
      if (out[0].size() == 0) return true;
      fastk::logsumexp(t, dense(in[0]), at(out[0]), r.rows, r.n, stream);
      return true;
    case PrimitiveId::CrossEntropy: {
      if (out[0].size() == 0) return true;
      auto& ce = static_cast<const CrossEntropy&>(p);
      const void* l = dense(in[0]);
      const void* tg = dense(in[1]);
      fastk::cross_entropy(t, l, static_cast<const int32_t*>(tg), static_cast<float*>(at(out[0])),
                           r.rows, r.n, ce.label_smoothing(), ce.ignore_index().has_value(),
                           ce.ignore_index().value_or(0), stream);
      return true;
    }
    case PrimitiveId::RoPE: {
      if (out[0].size() == 0) return true;
      auto& rp = static_cast<const RoPE&>(p);
      const Array& x = in[0];
      const void* xd = dense(x);
      const void* off = dense(in[1]);
      const float* freqs = rp.has_freqs() ? static_cast<const float*>(dense(in[2])) : nullptr;
      const int64_t per_item = r.rows / x.shape(0);
      fastk::rope(t, xd, at(out[0]), static_cast<const int32_t*>(off),
                  in[1].ndim() == 0 ? 1 : static_cast<int>(in[1].size()), freqs, r.rows, per_item,
                  x.shape(x.ndim() - 2), r.n, rp.dims(), rp.traditional(), rp.base(), rp.scale(),
                  rp.forward(), stream);
      return true;
    }
    case PrimitiveId::Attention:
    case PrimitiveId::AttentionGrad: {
      const bool grad = p.id() == PrimitiveId::AttentionGrad;
      if (out[0].size() == 0) return true;
      bool causal, has_mask, has_sinks = false;
      float scale;
      if (grad) {
        auto& g = static_cast<const AttentionGrad&>(p);
        causal = g.causal(), has_mask = g.has_mask(), scale = g.scale();
      } else {
        auto& f = static_cast<const Attention&>(p);
        causal = f.causal(), has_mask = f.has_mask(), has_sinks = f.has_sinks(), scale = f.scale();
      }
      // q, k, v with unit last strides (else dense copies).
      auto unit_last = [&](const Array& a) -> const Array& {
        if (a.strides().back() == 1 || a.shape().back() <= 1) return a;
        keep.push_back(row_contiguous(a, stream, s));
        return keep.back();
      };
      const Array& q = unit_last(in[0]);
      const Array& k = unit_last(in[1]);
      const Array& v = unit_last(in[2]);
      std::vector<int> dims{q.shape(0), q.shape(1), k.shape(1), q.shape(2),
                            k.shape(2), q.shape(3), v.shape(3)};
      fastk::AttentionArgs a = attention_args(dims, t, causal, has_mask, has_sinks);
      auto elem0 = [](const Array& x) {
        return static_cast<const char*>(x.desc()->data->ptr) + x.desc()->offset * x.itemsize();
      };
      a.q = elem0(q), a.k = elem0(k), a.v = elem0(v);
      for (int i = 0; i < 4; ++i) {
        a.q_st[i] = q.strides()[i];
        a.k_st[i] = k.strides()[i];
        a.v_st[i] = v.strides()[i];
      }
      const size_t mask_at = grad ? 5 : 3;
      if (has_mask) {
        const Array& m = in[mask_at];
        a.mask = elem0(m);
        a.mask_is_bool = m.dtype() == bool_;
        for (int i = 0; i < 4; ++i) a.mask_st[i] = m.strides()[i];
      }
      if (has_sinks) a.sinks = dense(in.back());
      a.scale = scale;
      std::shared_ptr<Data> scratch;
      if (!grad) {
        a.out = at(out[0]);
        size_t bytes = fastk::attention_scratch_bytes(a);
        if (bytes) scratch = allocate(bytes, s);
        fastk::attention(a, scratch ? scratch->ptr : nullptr, stream);
        return true;
      }
      fastk::AttentionGradArgs ga{};
      ga.a = a;
      ga.o = dense(in[3]);
      ga.dout = dense(in[4]);
      ga.dq = at(out[0]), ga.dk = at(out[1]), ga.dv = at(out[2]);
      size_t bytes = fastk::attention_backward_scratch_bytes(a);
      if (bytes) scratch = allocate(bytes, s);
      fastk::attention_backward(ga, scratch ? scratch->ptr : nullptr, stream);
      return true;
    }
    case PrimitiveId::CrossEntropyGrad: {
      if (out[0].size() == 0) return true;
      auto& ce = static_cast<const CrossEntropyGrad&>(p);
      const void* l = dense(in[0]);
      const void* tg = dense(in[1]);
      const void* g = dense(in[2]);
      fastk::cross_entropy_backward(t, l, static_cast<const int32_t*>(tg), static_cast<const float*>(g),
                                    at(out[0]), r.rows, r.n, ce.label_smoothing(),
                                    ce.ignore_index().has_value(), ce.ignore_index().value_or(0),
                                    stream);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace nuvec::cuda
