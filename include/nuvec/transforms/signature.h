// The call signature of a function object, read without calling it: how
// the one-argument transforms (grad(f), value_and_grad(f), vmap(f), ...)
// tell MLX's std::function forms (a function of one std::vector<Array>)
// from nuvec's tree forms. MLX takes std::function parameters, so a lambda
// picks its form by its parameter and result types; a generic lambda, whose
// signature is not known until it is called, takes the tree form (probing
// it with a trial call could instantiate its body with the wrong type).
#pragma once

#include <type_traits>
#include <vector>

#include "nuvec/core/array.h"

namespace nuvec::transforms_detail {

template <class... A>
struct ArgList {};

/// Whether the signature is known, its result and its parameters.
template <class M>
struct MemberSignature {
  static constexpr bool known = false;
};

#define NUVEC_MEMBER_SIGNATURE(QUALIFIERS)            \
  template <class R, class C, class... A>             \
  struct MemberSignature<R (C::*)(A...) QUALIFIERS> { \
    static constexpr bool known = true;               \
    using result = R;                                 \
    using args = ArgList<A...>;                       \
  };
NUVEC_MEMBER_SIGNATURE()
NUVEC_MEMBER_SIGNATURE(const)
NUVEC_MEMBER_SIGNATURE(&)
NUVEC_MEMBER_SIGNATURE(const&)
NUVEC_MEMBER_SIGNATURE(noexcept)
NUVEC_MEMBER_SIGNATURE(const noexcept)
NUVEC_MEMBER_SIGNATURE(&noexcept)
NUVEC_MEMBER_SIGNATURE(const& noexcept)
#undef NUVEC_MEMBER_SIGNATURE

/// A function object with one, non-template operator() (a lambda with
/// typed parameters, std::function), a function or a function pointer.
template <class F, class = void>
struct Signature {
  static constexpr bool known = false;
};
template <class F>
struct Signature<F, std::void_t<decltype(&F::operator())>>
    : MemberSignature<decltype(&F::operator())> {};
template <class R, class... A>
struct Signature<R(A...), void> {
  static constexpr bool known = true;
  using result = R;
  using args = ArgList<A...>;
};
template <class R, class... A>
struct Signature<R(A...) noexcept, void> : Signature<R(A...)> {};
template <class R, class... A>
struct Signature<R (*)(A...), void> : Signature<R(A...)> {};
template <class R, class... A>
struct Signature<R (*)(A...) noexcept, void> : Signature<R(A...)> {};

template <class F, class Arg, class Result, class = void>
struct CallsAs : std::false_type {};
template <class F, class Arg, class Result>
struct CallsAs<F, Arg, Result, std::enable_if_t<Signature<F>::known>> {
  template <class L>
  struct One : std::false_type {};
  template <class A>
  struct One<ArgList<A>> : std::is_same<std::remove_cvref_t<A>, Arg> {};
  static constexpr bool value =
      One<typename Signature<F>::args>::value &&
      std::is_same_v<std::remove_cvref_t<typename Signature<F>::result>,
                     Result>;
};

/// f is declared as `Result f(Arg)` (Arg by value or by reference).
template <class F, class Arg, class Result>
inline constexpr bool calls_as =
    CallsAs<std::remove_cvref_t<F>, Arg, Result>::value;

/// MLX's `std::function<std::vector<array>(const std::vector<array>&)>`.
template <class F>
inline constexpr bool arrays_to_arrays =
    calls_as<F, std::vector<Array>, std::vector<Array>>;

/// MLX's `std::function<array(const std::vector<array>&)>`.
template <class F>
inline constexpr bool arrays_to_array = calls_as<F, std::vector<Array>, Array>;

}  // namespace nuvec::transforms_detail
