// The shape-and-dtype rule of the Linalg primitive: the one place that
// validates linear-algebra inputs (ranks, square matrices, dtypes, batches).
#include "nuvec/primitives/linalg.h"

#include <sstream>
#include <string>

namespace nuvec {

const char* linalg_op_name(Linalg::Op op) {
  static constexpr const char* names[] = {
      "inv",      "cholesky", "qr",        "svd",     "svd", "eigh",
      "eigvalsh", "solve",    "lu_factor", "tri_inv", "eig", "eigvals"};
  return names[static_cast<int>(op)];
}

void Linalg::print_params(std::ostream& os) const {
  static constexpr const char* names[] = {
      "inv",      "cholesky", "qr",        "svd",     "svdvals", "eigh",
      "eigvalsh", "solve",    "lu_factor", "tri_inv", "eig",     "eigvals"};
  os << names[static_cast<int>(op_)];
  if (upper_) os << " upper";
}

namespace {

std::string shape_text(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

}  // namespace

Expected<std::vector<OutputSpec>> Linalg::output_specs(
    const std::vector<Array>& inputs) const {
  size_t want = op_ == Op::solve ? 2 : 1;
  if (inputs.size() != want) return op_error(ErrorKind::internal, "wrong number of inputs");
  const Array& a = inputs[0];
  // eig also takes complex64 (cgeev); the others are real only.
  bool complex_ok = op_ == Op::eig || op_ == Op::eigvals;
  for (const Array& x : inputs) {
    bool real = x.dtype() == float32 || x.dtype() == float64;
    if (!real && !(complex_ok && x.dtype() == complex64))
      return op_error(
          ErrorKind::unsupported_dtype,
          std::string("arrays must have type float32") +
              (complex_ok ? ", float64 or complex64" : " or float64") +
              ", got " + std::string(dtype_name(x.dtype())));
    if (x.ndim() < 2)
      return op_error(ErrorKind::invalid_shape,
                      "arrays must have at least 2 dimensions, got an array of shape " +
                          shape_text(x.shape()));
  }
  int m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  bool square_only = op_ != Op::qr && op_ != Op::svd && op_ != Op::svdvals &&
                     op_ != Op::lu_factor;
  if (square_only && m != n)
    return op_error(ErrorKind::invalid_shape,
                    std::string(linalg_op_name(op_)) +
                        " is only defined for square matrices, got shape " +
                        shape_text(a.shape()));
  Shape batch(a.shape().begin(), a.shape().end() - 2);
  auto with = [&](std::initializer_list<int> tail, DType d) {
    OutputSpec s;
    s.shape = batch;
    s.shape.insert(s.shape.end(), tail);
    s.dtype = d;
    return s;
  };
  DType t = a.dtype();
  std::vector<OutputSpec> out;
  switch (op_) {
    case Op::inv:
    case Op::cholesky:
      out.push_back(with({n, n}, t));
      break;
    case Op::qr:
      out.push_back(with({m, k}, t));
      out.push_back(with({k, n}, t));
      break;
    case Op::svd:
      out.push_back(with({m, m}, t));
      out.push_back(with({k}, t));
      out.push_back(with({n, n}, t));
      break;
    case Op::svdvals:
      out.push_back(with({k}, t));
      break;
    case Op::eigh:
      out.push_back(with({n}, t));
      out.push_back(with({n, n}, t));
      break;
    case Op::eigvalsh:
      out.push_back(with({n}, t));
      break;
    case Op::lu_factor:
      out.push_back(with({m, n}, t));
      out.push_back(with({k}, uint32));
      out.push_back(with({m}, uint32));
      break;
    case Op::tri_inv:
      out.push_back(with({n, n}, t));
      break;
    case Op::eig:
      out.push_back(with({n}, complex64));
      out.push_back(with({n, n}, complex64));
      break;
    case Op::eigvals:
      out.push_back(with({n}, complex64));
      break;
    case Op::solve: {
      const Array& b = inputs[1];
      if (b.dtype() != a.dtype())
        return op_error(ErrorKind::internal, "solve operands differ in dtype");
      Shape bb(b.shape().begin(), b.shape().end() - 2);
      if (bb != batch || b.shape(-2) != n)
        return op_error(ErrorKind::shape_mismatch,
                        "cannot solve a system of shape " + shape_text(a.shape()) +
                            " with right-hand sides of shape " + shape_text(b.shape()));
      out.push_back(with({n, b.shape(-1)}, t));
      break;
    }
  }
  return out;
}

}  // namespace nuvec
