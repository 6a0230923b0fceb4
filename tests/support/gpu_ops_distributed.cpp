// The cross-backend check of Collective: over the group of one process,
// every collective gives the same bits on the GPU as on the CPU (a copy),
// from every layout.
#include <nuvec/distributed.h>

#include "support/gpu_ops.h"

namespace nuvec::testing::gpu_ops {

void check_Collective() {
  auto g = distributed::init("single");
  using Op = Array (*)(const Array&, std::optional<distributed::Group>, StreamOrDevice);
  const std::pair<const char*, Op> ops_[] = {{"all_sum", distributed::all_sum},
                                             {"all_max", distributed::all_max},
                                             {"all_gather", distributed::all_gather},
                                             {"reduce_scatter", distributed::reduce_scatter}};
  for (DType dt : {float32, bfloat16, int32})
    for (const auto& in : layouts(dt, 71))
      for (const auto& [label, op] : ops_)
        expect_same([&](StreamOrDevice s) { return op(in.x, g, s); },
                    std::string(label) + " " + name(dt) + " " + in.layout);
}

}  // namespace nuvec::testing::gpu_ops
