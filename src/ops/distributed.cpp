// The distributed ops (nuvec/distributed.h): each builds one Collective
// node. The mpi backend communicates host memory, so its collectives run on
// a CPU stream (GPU arrays are read through the host); the nccl backend's
// run on a GPU stream.
#include "distributed/group.h"
#include "nuvec/distributed.h"
#include "ops/builder.h"

namespace nuvec::distributed {

namespace {

using ops::impl::build1;
using ops::impl::make;

Group group_or_world(const std::optional<Group>& g) { return g ? *g : init(); }

// The stream a collective of `g` runs on: the mpi backend's on a CPU
// stream, the nccl backend's on a GPU one, by default and by force.
Expected<StreamOrDevice> route(const Group& g, const StreamOrDevice& s, const char* op) {
  const bool gpu = g.impl()->on_gpu();
  if (!gpu && g.backend() != "mpi") return s;
  const Device want = gpu ? Device::gpu : Device::cpu;
  if (std::holds_alternative<std::monostate>(s)) return StreamOrDevice(want);
  if (to_stream(s).device != want)
    return Error(ErrorKind::invalid_argument,
                 std::string(op) + (gpu ? ": the nccl backend communicates GPU arrays: leave the stream out or pass a GPU one"
                                        : ": the mpi backend communicates CPU arrays: leave the stream out or pass a CPU one"));
  return s;
}

Array collective(CollectiveOp op, const Array& x, const std::optional<Group>& group, StreamOrDevice s,
                 int peer = -1) {
  const char* name = collective_name(op);
  Group g = group_or_world(group);
  auto st = route(g, s, name);
  if (!st) return ops::impl::fail(st.error().kind(), st.error().message(), name, NUVEC_LOC);
  return build1(make<Collective>(op, g.impl(), peer), {x}, *st, name, NUVEC_LOC);
}

}  // namespace

Array all_sum(const Array& x, std::optional<Group> group, StreamOrDevice s) {
  return collective(CollectiveOp::all_sum, x, group, s);
}
Array all_max(const Array& x, std::optional<Group> group, StreamOrDevice s) {
  return collective(CollectiveOp::all_max, x, group, s);
}
Array all_min(const Array& x, std::optional<Group> group, StreamOrDevice s) {
  return collective(CollectiveOp::all_min, x, group, s);
}
Array all_gather(const Array& x, std::optional<Group> group, StreamOrDevice s) {
  return collective(CollectiveOp::all_gather, x, group, s);
}
Array reduce_scatter(const Array& x, std::optional<Group> group, StreamOrDevice s) {
  return collective(CollectiveOp::reduce_scatter, x, group, s);
}
Array sum_scatter(const Array& x, std::optional<Group> group, StreamOrDevice s) {
  return reduce_scatter(x, std::move(group), s);
}
Array send(const Array& x, int dst, std::optional<Group> group, StreamOrDevice s) {
  return collective(CollectiveOp::send, x, group, s, dst);
}
Array recv(Shape shape, DType dtype, int src, std::optional<Group> group, StreamOrDevice s) {
  Group g = group_or_world(group);
  auto st = route(g, s, "recv");
  if (!st) return ops::impl::fail(st.error().kind(), st.error().message(), "recv", NUVEC_LOC);
  return build1(make<Collective>(CollectiveOp::recv, g.impl(), src, std::move(shape), dtype), {}, *st, "recv",
                NUVEC_LOC);
}
Array recv_like(const Array& x, int src, std::optional<Group> group, StreamOrDevice s) {
  if (x.is_failed()) return x;
  return recv(x.shape(), x.dtype(), src, std::move(group), s);
}

}  // namespace nuvec::distributed
