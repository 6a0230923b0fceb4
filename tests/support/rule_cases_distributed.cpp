// Rule cases of Collective over the group of one process (where every
// collective is the identity or a reshape): the rules' shapes and their
// composition with the other transforms. The values over several ranks
// are checked by tests/distributed_mpi_test.cpp.
#include <nuvec/distributed.h>

#include "support/rule_cases.h"

namespace nuvec::rulecases {

namespace {

using Arrays = std::vector<Array>;
using Op = Array (*)(const Array&, std::optional<distributed::Group>, StreamOrDevice);

FlatFunction over_one(Op op) {
  return [op](const Arrays& a) { return Arrays{op(a[0], distributed::init("single"), {})}; };
}

}  // namespace

RuleCase Case<PrimitiveId::Collective>::make(std::mt19937&) {
  return {{probe("all_sum", over_one(distributed::all_sum), {{2, 3}}),
           probe("all_max", over_one(distributed::all_max), {{4}}),
           probe("all_min", over_one(distributed::all_min), {{3, 2}}),
           probe("all_gather", over_one(distributed::all_gather),
                 {{2, 3}}),
           probe("reduce_scatter", over_one(distributed::reduce_scatter),
                 {{3, 2}})}};
}

}  // namespace nuvec::rulecases
