// The scalar functor of each element-wise registry entry, for every backend
// and code generator: functor_of_t<PrimitiveId::Exp> is kernels::Exp.
#pragma once

#include "nuvec/kernels/functors.h"
#include "nuvec/primitives/registry.h"

namespace nuvec::backend {

template <PrimitiveId Id>
struct functor_of;

#define NUVEC_FUNCTOR_OF(Name, rule)        \
  template <>                               \
  struct functor_of<PrimitiveId::Name> {    \
    using type = kernels::Name;             \
  };
NUVEC_UNARY_PRIMITIVES(NUVEC_FUNCTOR_OF)
NUVEC_BINARY_PRIMITIVES(NUVEC_FUNCTOR_OF)
#undef NUVEC_FUNCTOR_OF

template <PrimitiveId Id>
using functor_of_t = typename functor_of<Id>::type;

}  // namespace nuvec::backend
