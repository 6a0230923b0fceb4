// Products through cuBLASLt: matmul's D = A B (blas::lt_product), and
// AddMM's, one call: D = alpha A B + beta C.
// Row-major D = A B is column-major D^T = B^T A^T (as the cuBLAS path), so
// a c that is one row broadcast over the rows of D (the bias of a Linear
// layer) is one value per row of the column-major D^T: with beta == 1 it
// goes in CUBLASLT_EPILOGUE_BIAS (D = alpha A B + bias, rounded once).
// Otherwise c is copied into the output and the call runs in place with
// C = D and beta. Where the heuristic offers no algorithm for either, and
// for k == 0, the product and the element-wise tail run as separate
// kernels (the functors the composite uses); so do products of at most
// ROW_INDEPENDENT_ROWS rows, whose product is matmul's few-row kernel
// (row independent, unlike cuBLASLt's).
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <string>

#include "backend/broadcast_view.h"
#include "backend/cuda/blas.h"
#include "backend/cuda/cuda.h"
#include "backend/cuda/matmul_rows.h"
#include "nuvec/kernels/cast.h"
#include "nuvec/ops/quantized.h"

namespace nuvec::cuda {

namespace {

using blas::check;

// The most workspace a heuristic may ask for: fixed, so the algorithm
// depends on shapes, types and alignments only (DESIGN.md section 10).
constexpr uint64_t kMaxWorkspace = 32u << 20;

// The backend runs on device 0 only (runtime.cpp): one handle. A cuBLASLt
// handle holds no stream and no workspace, so all streams share it.
cublasLtHandle_t lt_handle() {
  static const cublasLtHandle_t h = [] {
    cublasLtHandle_t x = nullptr;
    check(cublasLtCreate(&x), "cublasLtCreate");
    return x;
  }();
  return h;
}

// A cuBLASLt descriptor destroyed with its owner.
template <class T, cublasStatus_t (*Destroy)(T)>
struct Owned {
  T h = nullptr;
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }
  void reset() {
    if (h) Destroy(h);
    h = nullptr;
  }
};
using MatmulDesc = Owned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using MatrixLayout = Owned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using Preference =
    Owned<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

template <class V>
void set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const V& v) {
  check(cublasLtMatmulDescSetAttribute(d, a, &v, sizeof v),
        "cublasLtMatmulDescSetAttribute");
}
template <class V>
void set(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a,
         const V& v) {
  check(cublasLtMatrixLayoutSetAttribute(l, a, &v, sizeof v),
        "cublasLtMatrixLayoutSetAttribute");
}
template <class V>
void set(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t a,
         const V& v) {
  check(cublasLtMatmulPreferenceSetAttribute(p, a, &v, sizeof v),
        "cublasLtMatmulPreferenceSetAttribute");
}

// A column-major rows x cols matrix with leading dimension ld, `count`
// of them `stride` elements apart.
void make_layout(MatrixLayout& l, cudaDataType t, int64_t rows, int64_t cols,
                 int64_t ld, int count, int64_t stride) {
  check(cublasLtMatrixLayoutCreate(&l.h, t, uint64_t(rows), uint64_t(cols), ld),
        "cublasLtMatrixLayoutCreate");
  if (count == 1) return;
  set(l.h, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t(count));
  set(l.h, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride);
}

// The alignment in bytes (at most 256) of every matrix of a batch: its
// first address and `stride_bytes` apart.
uint32_t alignment(const void* p, int64_t stride_bytes) {
  uint64_t v = reinterpret_cast<uint64_t>(p) | 256u;
  if (stride_bytes != 0) v |= uint64_t(stride_bytes);
  return uint32_t(v & (~v + 1));  // the lowest set bit
}

// What the heuristic was given (types, operations, bias alignment or -1,
// shapes, leading dimensions, batch, alignments).
using HeuristicKey = std::array<int64_t, 17>;

// A product's descriptors and the heuristic's answer for them: made once
// per key and thread, so that a call costs one cublasLtMatmul on the host
// (creating and destroying five descriptors a call made small products
// host-bound: the GPU waited between 20-40 us kernels).
struct Plan {
  MatmulDesc desc;
  MatrixLayout la, lb, ld;
  cublasLtMatmulHeuristicResult_t result{};
  bool ok = false;
};

// Per thread: a plan's bias pointer is set before each of its calls, and
// no other thread sees it meanwhile. Bounded: the shapes of a long run.
std::shared_ptr<Plan>& plan_slot(const HeuristicKey& key) {
  thread_local std::map<HeuristicKey, std::shared_ptr<Plan>> plans;
  if (plans.size() >= 1024 && !plans.count(key)) plans.clear();
  return plans[key];
}

// alpha or beta in the scale type (float, double, or a complex float).
struct Scale {
  float f[2];
  double d;
  explicit Scale(float v) : f{v, 0.0f}, d(v) {}
  const void* in(cudaDataType scale) const {
    return scale == CUDA_R_64F ? static_cast<const void*>(&d) : f;
  }
};

// One cuBLASLt product of the batched operands `o` into `out`.
class LtProduct {
 public:
  LtProduct(const blas::Operands& o, const blas::Types& ty, Array& out)
      : o_(o), ty_(ty), out_(out), count_(static_cast<int>(o.oa.size())) {}

  // Builds the descriptors for the bias epilogue (`bias`: the vector's
  // device address) or for C = D, and asks the heuristic: false when it
  // offers no algorithm.
  bool plan(const void* bias) {
    const int64_t m = o_.m, n = o_.n, k = o_.k, item = out_.itemsize();
    cublasOperation_t opa =
        o_.vb.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;  // A = b
    cublasOperation_t opb =
        o_.va.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;  // B = a
    const uint32_t a_align = alignment(blas::bytes(o_.b), o_.stride_b * item);
    const uint32_t b_align = alignment(blas::bytes(o_.a), o_.stride_a * item);
    const uint32_t d_align = alignment(blas::bytes(out_), m * n * item);
    // The heuristic's answer depends on nothing but these (the descriptors
    // and preferences below).
    HeuristicKey key{int64_t(ty_.compute), int64_t(ty_.scale), int64_t(ty_.data), int64_t(opa),
                     int64_t(opb), bias ? int64_t(alignment(bias, 0)) : -1, m, n, k,
                     int64_t(count_), o_.vb.ld, o_.va.ld, o_.stride_a, o_.stride_b,
                     int64_t(a_align), int64_t(b_align), int64_t(d_align)};
    std::shared_ptr<Plan>& slot = plan_slot(key);
    if (!slot) slot = make_plan(bias, opa, opb, a_align, b_align, d_align);
    plan_ = slot;
    if (bias && plan_->ok) set(plan_->desc.h, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
    return plan_->ok;
  }

  // Enqueues the planned product on `stream`: D = alpha A B + beta D (+ bias).
  void run(float alpha, float beta, cudaStream_t stream, Stream st) {
    Scale a(alpha), b(beta);
    const Plan& p = *plan_;
    std::shared_ptr<Data> workspace;
    if (p.result.workspaceSize > 0)
      workspace = allocate(p.result.workspaceSize, st);
    char* d = blas::bytes(out_);
    check(cublasLtMatmul(lt_handle(), p.desc.h, a.in(ty_.scale),
                         blas::bytes(o_.b), p.la.h, blas::bytes(o_.a), p.lb.h,
                         b.in(ty_.scale), d, p.ld.h, d, p.ld.h, &p.result.algo,
                         workspace ? workspace->ptr : nullptr,
                         p.result.workspaceSize, stream),
          "cublasLtMatmul");
    // The workspace returns to this stream's cache: later users of it on
    // this stream run after this product.
  }

 private:
  const blas::Operands& o_;
  blas::Types ty_;
  Array& out_;
  int count_;
  std::shared_ptr<Plan> plan_;

  // The descriptors (the bias epilogue when `bias`, else C = D) and the
  // heuristic's first answer.
  std::shared_ptr<Plan> make_plan(const void* bias, cublasOperation_t opa, cublasOperation_t opb,
                                  uint32_t a_align, uint32_t b_align, uint32_t d_align) const {
    auto p = std::make_shared<Plan>();
    const int64_t m = o_.m, n = o_.n, k = o_.k;
    check(cublasLtMatmulDescCreate(&p->desc.h, ty_.compute, ty_.scale),
          "cublasLtMatmulDescCreate");
    set(p->desc.h, CUBLASLT_MATMUL_DESC_TRANSA, int32_t(opa));
    set(p->desc.h, CUBLASLT_MATMUL_DESC_TRANSB, int32_t(opb));
    if (bias) {
      set(p->desc.h, CUBLASLT_MATMUL_DESC_EPILOGUE,
          uint32_t(CUBLASLT_EPILOGUE_BIAS));
      set(p->desc.h, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t(ty_.data));
    }
    // Stored shapes (before the op): b is n x k column-major, or k x n
    // seen transposed; a is k x m, or m x k; D is n x m.
    make_layout(p->la, ty_.data, opa == CUBLAS_OP_N ? n : k,
                opa == CUBLAS_OP_N ? k : n, o_.vb.ld, count_, o_.stride_b);
    make_layout(p->lb, ty_.data, opb == CUBLAS_OP_N ? k : m,
                opb == CUBLAS_OP_N ? m : k, o_.va.ld, count_, o_.stride_a);
    make_layout(p->ld, ty_.data, n, m, n, count_, m * n);
    Preference pref;
    check(cublasLtMatmulPreferenceCreate(&pref.h),
          "cublasLtMatmulPreferenceCreate");
    set(pref.h, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, kMaxWorkspace);
    set(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, a_align);
    set(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, b_align);
    set(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, d_align);
    set(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, d_align);
    if (bias) set(p->desc.h, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);  // its alignment is in the key
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(
        lt_handle(), p->desc.h, p->la.h, p->lb.h, p->ld.h, p->ld.h, pref.h, 1,
        &p->result, &found);
    p->ok = st == CUBLAS_STATUS_SUCCESS && found > 0 && p->result.state == CUBLAS_STATUS_SUCCESS;
    return p;
  }
};

// c (read at the output's shape) is one packed row over all rows and
// batches: the bias epilogue's vector.
bool is_row_bias(const Array& c) {
  const auto& s = c.strides();
  for (int i = 0; i + 1 < c.ndim(); ++i)
    if (s[i] != 0 && c.shape(i) != 1) return false;
  return c.ndim() >= 1 && (s.back() == 1 || c.shape(-1) == 1);
}

// A host value of dtype `d` read at `shape` (zero strides): binary kernels
// take it by value.
Array host_value(float v, DType d, const Shape& shape) {
  auto desc = std::make_shared<ArrayDesc>();
  desc->dtype = d;
  desc->size = 1;
  desc->data = allocate_data(d.size());
  dispatch_dtype(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    *static_cast<T*>(desc->data->ptr) = kernels::Cast<T>{}(v);
  });
  return backend::broadcast_view(Array(std::move(desc)), shape);
}

// The product, then * alpha, c * beta and + as the element-wise kernels
// compute them (the bits of the composite's separate kernels).
void separate_kernels(const AddMM& p, const Array& a, const Array& b,
                      const Array& c, Array& out, void* stream, Stream st) {
  launch_matmul(a, b, out, stream, st);
  DType d = out.dtype();
  if (p.alpha() != 1.0f)
    launch_binary(PrimitiveId::Multiply, out,
                  host_value(p.alpha(), d, out.shape()), out, stream);
  Array cc = c;
  if (p.beta() != 1.0f) {
    auto desc = std::make_shared<ArrayDesc>();
    desc->shape = out.shape();
    desc->strides = row_major_strides(desc->shape);
    desc->size = out.size();
    desc->dtype = d;
    desc->data = allocate(static_cast<size_t>(out.nbytes()), st);
    cc = Array(std::move(desc));
    launch_binary(PrimitiveId::Multiply, c,
                  host_value(p.beta(), d, out.shape()), cc, stream);
  }
  launch_binary(PrimitiveId::Add, out, cc, out, stream);
}

}  // namespace

namespace blas {

bool lt_product(const Operands& o, const Types& ty, Array& out, cudaStream_t stream, Stream st) {
  LtProduct lt(o, ty, out);
  if (!lt.plan(nullptr)) return false;
  lt.run(1.0f, 0.0f, stream, st);  // beta 0: D's old bytes are not read
  return true;
}

}  // namespace blas

void launch_addmm(const AddMM& p, const Array& a, const Array& b,
                  const Array& c0, Array& out, void* stream, Stream st) {
  if (out.size() == 0) return;
  Array c = backend::broadcast_view(c0, out.shape());
  blas::Types ty = blas::types_of(out.dtype());
  const bool few = a.shape(-2) <= ROW_INDEPENDENT_ROWS && rows::supports(out.dtype());
  if (a.shape(-1) > 0 && !few) {
    blas::Operands o = blas::operands(a, b, stream, st, true);
    LtProduct lt(o, ty, out);
    auto s = static_cast<cudaStream_t>(stream);
    if (p.beta() == 1.0f && is_row_bias(c) && lt.plan(blas::bytes(c))) {
      lt.run(p.alpha(), 0.0f, s, st);
      return;
    }
    if (lt.plan(nullptr)) {
      launch_cast(c, out, stream);  // C = D: c copied into the output
      lt.run(p.alpha(), p.beta(), s, st);
      return;
    }
  }
  separate_kernels(p, a, b, c, out, stream, st);
}

}  // namespace nuvec::cuda
