// Transform rules of the element-wise primitives. For a real element-wise
// function both modes multiply by the derivative: vjp(v) = jvp(v) = v * f'(x)
// (MLX's convention for complex too: no conjugation).
#include <cmath>

#include "nuvec/primitives/elementwise.h"
#include "primitives/rules.h"

namespace nuvec {

namespace {


// Unary derivatives applied to v (a cotangent or a tangent), from x and the
// output y. Primitives without an entry are not differentiable: zero.
template <PrimitiveId Id>
struct UnaryD {
  static constexpr bool zero = true;
};
#define NUVEC_UNARY_D(Name, expr)                                            \
  template <>                                                                \
  struct UnaryD<PrimitiveId::Name> {                                         \
    static constexpr bool zero = false;                                      \
    static Array apply(const Array& x, const Array& y, const Array& v) {     \
      (void)x;                                                               \
      (void)y;                                                               \
      return expr;                                                           \
    }                                                                        \
  };
NUVEC_UNARY_D(Abs, v * ops::sign(x))
NUVEC_UNARY_D(Negative, -v)
NUVEC_UNARY_D(Exp, v * y)
NUVEC_UNARY_D(Expm1, v * (y + 1))
NUVEC_UNARY_D(Log, v / x)
NUVEC_UNARY_D(Log1p, v / (x + 1))
NUVEC_UNARY_D(Log2, v / (x * M_LN2))
NUVEC_UNARY_D(Log10, v / (x * M_LN10))
NUVEC_UNARY_D(Sqrt, v / (y * 2))
NUVEC_UNARY_D(Rsqrt, v * (y / x) * -0.5)
NUVEC_UNARY_D(Square, v * (x * 2))
NUVEC_UNARY_D(Reciprocal, -v * (y * y))
NUVEC_UNARY_D(Sin, v * ops::cos(x))
NUVEC_UNARY_D(Cos, -v * ops::sin(x))
NUVEC_UNARY_D(Tan, v / ops::square(ops::cos(x)))
NUVEC_UNARY_D(ArcSin, v * ops::rsqrt(1 - ops::square(x)))
NUVEC_UNARY_D(ArcCos, -v * ops::rsqrt(1 - ops::square(x)))
NUVEC_UNARY_D(ArcTan, v / (ops::square(x) + 1))
NUVEC_UNARY_D(Sinh, v * ops::cosh(x))
NUVEC_UNARY_D(Cosh, v * ops::sinh(x))
NUVEC_UNARY_D(Tanh, v * (1 - ops::square(y)))
NUVEC_UNARY_D(ArcSinh, v * ops::rsqrt(ops::square(x) + 1))
NUVEC_UNARY_D(ArcCosh, v * ops::rsqrt(ops::square(x) - 1))
NUVEC_UNARY_D(ArcTanh, v / (1 - ops::square(x)))
NUVEC_UNARY_D(Sigmoid, v * (y * (1 - y)))
NUVEC_UNARY_D(Erf, v * (ops::exp(-ops::square(x)) * M_2_SQRTPI))
NUVEC_UNARY_D(ErfInv, v * (ops::exp(ops::square(y)) * (0.5 * std::sqrt(M_PI))))
NUVEC_UNARY_D(MlxExp, v * y)
NUVEC_UNARY_D(MlxErf, v * (ops::exp(-ops::square(x)) * M_2_SQRTPI))
NUVEC_UNARY_D(MlxErfInv, v * (ops::exp(ops::square(y)) * (0.5 * std::sqrt(M_PI))))
NUVEC_UNARY_D(Conjugate, ops::conjugate(v))
NUVEC_UNARY_D(Real, ops::real(v))
#undef NUVEC_UNARY_D

// imag(z): forward, the imaginary part of the tangent; backward, the real
// cotangent times -i (MLX's convention: the pairing is Re(a * b), without
// conjugation, so that holomorphic functions just multiply by f'(z)).
template <>
struct UnaryD<PrimitiveId::Imag> {
  static constexpr bool zero = false;
  static Array apply(const Array&, const Array&, const Array& v) { return ops::imag(v); }
  static Array vjp(const Array&, const Array&, const Array& v) {
    return v.astype(complex64) * array(complex64_t(0.0f, -1.0f));
  }
};

// Binary partial derivatives applied to v, for operand `arg` (0 or 1).
template <PrimitiveId Id>
struct BinaryD {
  static constexpr bool zero = true;
};
#define NUVEC_BINARY_D(Name, da, db)                                                   \
  template <>                                                                          \
  struct BinaryD<PrimitiveId::Name> {                                                  \
    static constexpr bool zero = false;                                                \
    static Array apply(int arg, const Array& a, const Array& b, const Array& y, const Array& v) { \
      (void)a;                                                                         \
      (void)b;                                                                         \
      (void)y;                                                                         \
      return arg == 0 ? (da) : (db);                                                   \
    }                                                                                  \
  };
NUVEC_BINARY_D(Add, v, v)
NUVEC_BINARY_D(Subtract, v, -v)
NUVEC_BINARY_D(Multiply, v * b, v * a)
NUVEC_BINARY_D(Divide, v / b, -v * (y / b))
NUVEC_BINARY_D(Remainder, v, -v * ops::floor_divide(a, b))
// d/db a^b = a^b log a, taken as 0 where a == 0 (the limit for b > 0).
NUVEC_BINARY_D(Power, v * (ops::power(a, b - 1) * b),
               v * ops::where(ops::equal(a, 0), ops::zeros_like(y), y * ops::log(a)))
NUVEC_BINARY_D(Maximum, v * ops::greater(a, b), v * ops::less_equal(a, b))
NUVEC_BINARY_D(Minimum, v * ops::less(a, b), v * ops::greater_equal(a, b))
NUVEC_BINARY_D(ArcTan2, v * (b / (ops::square(a) + ops::square(b))),
               -v * (a / (ops::square(a) + ops::square(b))))
NUVEC_BINARY_D(LogAddExp, v * ops::sigmoid(a - b), v * ops::sigmoid(b - a))
#undef NUVEC_BINARY_D

}  // namespace

template <PrimitiveId Id, UnaryRule R>
Arrays UnaryPrimitive<Id, R>::vjp(const Arrays& primals, const Arrays& cotangents,
                                  const std::vector<int>&, const Arrays& outputs) const {
  if constexpr (UnaryD<Id>::zero) {
    return {rules::zeros_of(primals[0])};
  } else {
    if constexpr (requires { UnaryD<Id>::vjp(primals[0], outputs[0], cotangents[0]); }) {
      return {UnaryD<Id>::vjp(primals[0], outputs[0], cotangents[0])};
    } else {
      return {UnaryD<Id>::apply(primals[0], outputs[0], cotangents[0])};
    }
  }
}

template <PrimitiveId Id, UnaryRule R>
Arrays UnaryPrimitive<Id, R>::jvp(const Arrays& primals, const Arrays& tangents,
                                  const std::vector<int>&) const {
  if constexpr (UnaryD<Id>::zero) {
    auto spec = this->output_specs(primals);
    return {ops::zeros(spec->at(0).shape, spec->at(0).dtype)};
  } else {
    // The output is rebuilt for rules that use it (CSE merges it in compile).
    Array y = rules::rebuild(*this, primals)[0];
    return {UnaryD<Id>::apply(primals[0], y, tangents[0])};
  }
}

template <PrimitiveId Id, UnaryRule R>
std::pair<Arrays, std::vector<int>> UnaryPrimitive<Id, R>::vmap(const Arrays& inputs,
                                                               const std::vector<int>& axes) const {
  return rules::elementwise_vmap(*this, inputs, axes);
}

template <PrimitiveId Id, BinaryRule R>
Arrays BinaryPrimitive<Id, R>::vjp(const Arrays& primals, const Arrays& cotangents,
                                   const std::vector<int>& argnums, const Arrays& outputs) const {
  Arrays out;
  for (int arg : argnums) {
    if constexpr (BinaryD<Id>::zero) {
      out.push_back(rules::zeros_of(primals[arg]));
    } else {
      out.push_back(BinaryD<Id>::apply(arg, primals[0], primals[1], outputs[0], cotangents[0]));
    }
  }
  return out;
}

template <PrimitiveId Id, BinaryRule R>
Arrays BinaryPrimitive<Id, R>::jvp(const Arrays& primals, const Arrays& tangents,
                                   const std::vector<int>& argnums) const {
  Array y = rules::rebuild(*this, primals)[0];
  if constexpr (BinaryD<Id>::zero) {
    return {ops::zeros(y.shape(), y.dtype())};
  } else {
    Array sum;
    for (size_t i = 0; i < argnums.size(); ++i) {
      Array t = BinaryD<Id>::apply(argnums[i], primals[0], primals[1], y, tangents[i]);
      sum = i == 0 ? t : sum + t;
    }
    return {sum};
  }
}

template <PrimitiveId Id, BinaryRule R>
std::pair<Arrays, std::vector<int>> BinaryPrimitive<Id, R>::vmap(
    const Arrays& inputs, const std::vector<int>& axes) const {
  return rules::elementwise_vmap(*this, inputs, axes);
}

#define NUVEC_INSTANTIATE_UNARY(Name, rule) \
  template class UnaryPrimitive<PrimitiveId::Name, UnaryRule::rule>;
NUVEC_UNARY_PRIMITIVES(NUVEC_INSTANTIATE_UNARY)
#undef NUVEC_INSTANTIATE_UNARY
#define NUVEC_INSTANTIATE_BINARY(Name, rule) \
  template class BinaryPrimitive<PrimitiveId::Name, BinaryRule::rule>;
NUVEC_BINARY_PRIMITIVES(NUVEC_INSTANTIATE_BINARY)
#undef NUVEC_INSTANTIATE_BINARY

// where(cond, x, y): the cotangent goes to the chosen operand.
Arrays Select::vjp(const Arrays& p, const Arrays& cot, const std::vector<int>& argnums,
                   const Arrays&) const {
  Arrays out;
  for (int arg : argnums) {
    Array z = rules::zeros_of(cot[0]);
    if (arg == 0) out.push_back(rules::zeros_of(p[0]));
    else if (arg == 1) out.push_back(ops::where(p[0], cot[0], z));
    else out.push_back(ops::where(p[0], z, cot[0]));
  }
  return out;
}

Arrays Select::jvp(const Arrays& p, const Arrays& tan, const std::vector<int>& argnums) const {
  Array tx = rules::zeros_of(p[1]);
  Array ty = rules::zeros_of(p[2]);
  for (size_t i = 0; i < argnums.size(); ++i) {
    if (argnums[i] == 1) tx = tan[i];
    if (argnums[i] == 2) ty = tan[i];
  }
  return {ops::where(p[0], tx, ty)};
}

std::pair<Arrays, std::vector<int>> Select::vmap(const Arrays& inputs,
                                                 const std::vector<int>& axes) const {
  return rules::elementwise_vmap(*this, inputs, axes);
}

// A cast back for the cotangent; casts to a non-inexact type cut the chain.
Arrays AsType::vjp(const Arrays& p, const Arrays& cot, const std::vector<int>&,
                   const Arrays&) const {
  if (!is_inexact(dtype_)) return {rules::zeros_of(p[0])};
  return {cot[0].astype(p[0].dtype())};
}

Arrays AsType::jvp(const Arrays& p, const Arrays& tan, const std::vector<int>&) const {
  if (!is_inexact(dtype_)) return {ops::zeros(p[0].shape(), dtype_)};
  return {tan[0].astype(dtype_)};
}

std::pair<Arrays, std::vector<int>> AsType::vmap(const Arrays& inputs,
                                                 const std::vector<int>& axes) const {
  return rules::elementwise_vmap(*this, inputs, axes);
}

// (floor(a / b), a mod b): only the remainder is differentiable.
Arrays DivMod::vjp(const Arrays& p, const Arrays& cot, const std::vector<int>& argnums,
                   const Arrays&) const {
  Arrays out;
  for (int arg : argnums)
    out.push_back(arg == 0 ? cot[1] : -cot[1] * ops::floor_divide(p[0], p[1]));
  return out;
}

Arrays DivMod::jvp(const Arrays& p, const Arrays& tan, const std::vector<int>& argnums) const {
  Array q = ops::floor_divide(p[0], p[1]);
  Array r;
  for (size_t i = 0; i < argnums.size(); ++i) {
    Array t = argnums[i] == 0 ? tan[i] : -tan[i] * q;
    r = i == 0 ? t : r + t;
  }
  return {ops::zeros_like(q), r};
}

std::pair<Arrays, std::vector<int>> DivMod::vmap(const Arrays& inputs,
                                                 const std::vector<int>& axes) const {
  return rules::elementwise_vmap(*this, inputs, axes);
}

}  // namespace nuvec
