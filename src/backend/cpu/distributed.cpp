// Collective on the CPU: the group's backend moves dense host buffers.
#include <sstream>

#include "backend/cpu/cpu.h"
#include "distributed/group.h"
#include "nuvec/core/print.h"

namespace nuvec::cpu {

namespace {

// Equal on every rank for matching calls: the op, the dtype and the shape.
uint64_t signature(CollectiveOp op, const Array& x) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  mix(static_cast<uint64_t>(op));
  mix(static_cast<uint64_t>(x.dtype().val));
  mix(x.shape().size());
  for (auto d : x.shape()) mix(static_cast<uint64_t>(d));
  return h;
}

std::string describe(CollectiveOp op, const Array& x) {
  std::ostringstream os;
  os << collective_name(op) << " " << x.dtype() << " [";
  for (size_t i = 0; i < x.shape().size(); ++i) os << (i ? ", " : "") << x.shape()[i];
  os << "]";
  return os.str();
}

}  // namespace

void eval(const Collective& p, const Arrays& in, Arrays& out) {
  auto& g = *p.group();
  const CollectiveOp op = p.op();
  if (op == CollectiveOp::recv) {
    Array& y = out[0];
    g.recv(ptr<char>(y), static_cast<int64_t>(y.nbytes()), p.peer(), signature(CollectiveOp::send, y),
           describe(op, y));
    return;
  }
  const Array x = dense_copy(in[0]);
  const std::string what = describe(op, x);
  const uint64_t sig = signature(op, x);
  Array& y = out[0];
  switch (op) {
    case CollectiveOp::all_sum:
    case CollectiveOp::all_max:
    case CollectiveOp::all_min:
      g.all_reduce(op, ptr<char>(x), ptr<char>(y), x.size(), x.dtype(), sig, what);
      break;
    case CollectiveOp::all_gather:
      g.all_gather(ptr<char>(x), ptr<char>(y), static_cast<int64_t>(x.nbytes()), sig, what);
      break;
    case CollectiveOp::reduce_scatter:
      g.reduce_scatter(ptr<char>(x), ptr<char>(y), y.size(), x.dtype(), sig, what);
      break;
    default:
      g.send(ptr<char>(x), static_cast<int64_t>(x.nbytes()), p.peer(), signature(CollectiveOp::send, x), what);
      copy_general(x, y);
  }
}

}  // namespace nuvec::cpu
