// AddMM: its shape-and-dtype rule, parameters and transform rules (written
// with ops, so derivatives of derivatives work).
#include <sstream>

#include "nuvec/ops/ops.h"
#include "nuvec/primitives/linalg.h"
#include "primitives/grad_util.h"
#include "primitives/rules.h"

namespace nuvec {

namespace {

// x * s, or x itself when s is 1 (as ops::addmm skips the product).
Array scaled(const Array& x, float s) { return s == 1.0f ? x : x * s; }

// The output shape: a's with the last axis of b.
Shape product_shape(const Array& a, const Array& b) {
  Shape s = a.shape();
  s.back() = b.shape(-1);
  return s;
}

}  // namespace

void AddMM::print_params(std::ostream& os) const {
  os << "alpha=" << alpha_ << ", beta=" << beta_;
}

Expected<std::vector<OutputSpec>> AddMM::output_specs(
    const std::vector<Array>& inputs) const {
  const Array& a = inputs.at(0);
  const Array& b = inputs.at(1);
  const Array& c = inputs.at(2);
  if (a.dtype() != b.dtype() || c.dtype() != a.dtype())
    return op_error(ErrorKind::internal, "addmm operands differ in dtype");
  if (!is_inexact(a.dtype()))
    return op_error(
        ErrorKind::unsupported_dtype,
        "only floating point and complex types are supported, got " +
            std::string(dtype_name(a.dtype())));
  if (a.ndim() < 2 || a.ndim() != b.ndim())
    return op_error(ErrorKind::internal,
                    "addmm expects operands of one rank >= 2");
  int n = a.ndim();
  for (int i = 0; i < n - 2; ++i)
    if (a.shape(i) != b.shape(i))
      return op_error(ErrorKind::shape_mismatch, "addmm batch shapes differ");
  if (a.shape(n - 1) != b.shape(n - 2))
    return op_error(
        ErrorKind::shape_mismatch,
        "inner dimensions differ: " + std::to_string(a.shape(n - 1)) + " and " +
            std::to_string(b.shape(n - 2)));
  OutputSpec s;
  s.shape = product_shape(a, b);
  s.dtype = a.dtype();
  // c broadcasts to the output without widening it.
  bool fits = c.ndim() <= n;
  for (int i = 1; fits && i <= c.ndim(); ++i)
    fits = c.shape(-i) == 1 || c.shape(-i) == s.shape[n - i];
  if (!fits) {
    std::ostringstream os;
    os << "c of shape " << c.shape()
       << " does not broadcast to the product's shape " << s.shape;
    return op_error(ErrorKind::shape_mismatch, os.str());
  }
  return std::vector<OutputSpec>{s};
}

// D = alpha A B + beta C: the cotangents are alpha G B^T, alpha A^T G and
// beta G summed down to c's shape (c is read broadcast). a and b have equal
// batch shapes here: ops::addmm broadcast them through Broadcast nodes,
// whose vjp sums.
Arrays AddMM::vjp(const Arrays& primals, const Arrays& cotangents,
                  const std::vector<int>& argnums, const Arrays&) const {
  const Array& g = cotangents[0];
  Arrays out;
  for (int arg : argnums) {
    if (arg == 0)
      out.push_back(scaled(ops::matmul(g, rules::mT(primals[1])), alpha_));
    else if (arg == 1)
      out.push_back(scaled(ops::matmul(rules::mT(primals[0]), g), alpha_));
    else
      out.push_back(rules::sum_to_shape(scaled(g, beta_), primals[2].shape()));
  }
  return out;
}

Arrays AddMM::jvp(const Arrays& primals, const Arrays& tangents,
                  const std::vector<int>& argnums) const {
  Shape shape = product_shape(primals[0], primals[1]);
  Array sum;
  for (size_t i = 0; i < argnums.size(); ++i) {
    const Array& t = tangents[i];
    Array d = argnums[i] == 0   ? scaled(ops::matmul(t, primals[1]), alpha_)
              : argnums[i] == 1 ? scaled(ops::matmul(primals[0], t), alpha_)
                                : ops::broadcast_to(scaled(t, beta_), shape);
    sum = i == 0 ? d : sum + d;
  }
  return {sum};
}

// a and b have rank >= 2, so their batch goes in front of the broadcast
// batch axes (an unbatched operand gets a size-1 axis that the product
// broadcasts). A batched c of lower rank than the output gets size-1 axes
// after its batch axis, so that it still lines up from the right.
std::pair<Arrays, std::vector<int>> AddMM::vmap(
    const Arrays& inputs, const std::vector<int>& axes) const {
  Array a = rules::batch_front(inputs[0], axes[0]);
  Array b = rules::batch_front(inputs[1], axes[1]);
  Array c = inputs[2];
  if (axes[2] >= 0) {
    int rank = inputs[0].ndim() - (axes[0] >= 0 ? 1 : 0);  // of one output
    Array front = rules::batch_front(c, axes[2]);
    Shape s{front.shape(0)};
    s.insert(s.end(), static_cast<size_t>(rank - (c.ndim() - 1)), 1);
    s.insert(s.end(), front.shape().begin() + 1, front.shape().end());
    c = ops::reshape(front, s);
  }
  return {{ops::addmm(c, a, b, alpha_, beta_)}, {0}};
}

}  // namespace nuvec
