// Matrix products and array creation primitives.
#pragma once

#include "nuvec/primitives/params.h"
#include "nuvec/primitives/primitive.h"

namespace nuvec {

/// [..., M, K] @ [..., K, N] with equal batch shapes (ops broadcast first).
class Matmul : public PrimitiveBase<PrimitiveId::Matmul> {
 public:
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
};

/// alpha * (a @ b) + beta * c: a [..., M, K] and b [..., K, N] with equal
/// batch shapes (as Matmul's), c any shape that broadcasts to the output
/// [..., M, N] without widening it (read through zero strides, so shapeless
/// compile needs no literal broadcast); all three of one inexact dtype. The
/// CPU gives the bits of matmul, then * alpha (when alpha != 1), c * beta
/// (when beta != 1) and + in the dtype: those of ops::addmm's composite.
class AddMM : public PrimitiveBase<PrimitiveId::AddMM> {
 public:
  AddMM(float alpha, float beta) : alpha_(alpha), beta_(beta) {}
  float alpha() const { return alpha_; }
  float beta() const { return beta_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override {
    auto& p = static_cast<const AddMM&>(o);
    return params::same_float_bits(p.alpha_, alpha_) &&
           params::same_float_bits(p.beta_, beta_);
  }
  size_t params_hash() const override {
    return params::combine(params::hash_double(alpha_),
                           params::hash_double(beta_));
  }
  void print_params(std::ostream& os) const override;

 private:
  float alpha_, beta_;
};

/// start + i * step for i in [0, size), computed in double and converted.
class Arange : public PrimitiveBase<PrimitiveId::Arange> {
 public:
  Arange(double start, double step, int size, DType dtype)
      : start_(start), step_(step), size_(size), dtype_(dtype) {}
  double start() const { return start_; }
  double step() const { return step_; }
  DType dtype() const { return dtype_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool shape_polymorphic() const override { return false; }
  bool params_equal(const Primitive& o) const override {
    auto& a = static_cast<const Arange&>(o);
    return params::same_bits(a.start_, start_) &&
           params::same_bits(a.step_, step_) && a.size_ == size_ &&
           a.dtype_ == dtype_;
  }
  size_t params_hash() const override {
    return params::combine(params::hash_double(start_),
                           params::combine(params::hash_double(step_), size_t(size_)));
  }

 private:
  double start_, step_;
  int size_;
  DType dtype_;
};

/// LAPACK-backed matrix factorizations on [..., M, N] float32/float64 inputs
/// (CPU only), batched over the leading axes. Outputs:
///   inv, cholesky: [..., N, N] (cholesky: lower, or upper when `upper`);
///   qr: Q [..., M, K], R [..., K, N] with K = min(M, N);
///   svd: U [..., M, M], S [..., K], Vt [..., N, N]; svdvals: S only;
///   eigh: eigenvalues [..., N] (ascending), eigenvectors [..., N, N]
///     (columns), from the lower triangle or the upper when `upper`;
///   eigvalsh: eigenvalues only;
///   solve: inputs a [..., N, N] and b [..., N, R] of one batch shape, out
///     [..., N, R];
///   lu_factor: LU [..., M, N] (L below the diagonal, its unit diagonal
///     implied, U on and above), pivots [..., K] and row indices [..., M]
///     (uint32, 0-based): LAPACK swapped row i with pivots[i] in turn, and
///     A[i] = (L U)[rows[i]];
///   tri_inv: [..., N, N], the inverse of the lower (upper when `upper`)
///     triangle of A, zero on the other side;
///   eig: eigenvalues [..., N] and right eigenvectors [..., N, N] (columns,
///     unit 2-norm), complex64 whatever the input (float32, float64 or
///     complex64); eigvals: eigenvalues only.
/// A singular matrix (inv, solve, tri_inv), a matrix that is not positive
/// definite (cholesky), a non-finite input (eig) or a non-converging
/// iteration fails at evaluation; lu_factor of a singular matrix succeeds (U
/// has a zero on its diagonal).
class Linalg : public PrimitiveBase<PrimitiveId::Linalg> {
 public:
  enum class Op {
    inv,
    cholesky,
    qr,
    svd,
    svdvals,
    eigh,
    eigvalsh,
    solve,
    lu_factor,
    tri_inv,
    eig,
    eigvals
  };
  explicit Linalg(Op op, bool upper = false) : op_(op), upper_(upper) {}
  Op op() const { return op_; }
  bool upper() const { return upper_; }
  Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const override;
  NUVEC_TRANSFORM_RULES
  bool params_equal(const Primitive& o) const override {
    auto& r = static_cast<const Linalg&>(o);
    return r.op_ == op_ && r.upper_ == upper_;
  }
  size_t params_hash() const override {
    return params::combine(size_t(op_), size_t(upper_));
  }
  void print_params(std::ostream& os) const override;

 private:
  Op op_;
  bool upper_;
};

/// The public name of a Linalg operation ("inv", "cholesky", ...).
const char* linalg_op_name(Linalg::Op op);

}  // namespace nuvec
