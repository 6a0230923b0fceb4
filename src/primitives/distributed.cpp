// Collective: shapes and MLX's transform rules. vjp: all_sum, all_max and
// all_min pass the cotangent through (MLX's rule: the loss is replicated on
// every rank, as in tensor parallelism), all_gather keeps this rank's rows,
// reduce_scatter gathers the cotangents back. jvp: the same collective of
// the tangents (all_max / all_min: the tangent of the ranks that hold the
// extreme, averaged over ties). vmap: the batch moves off axis 0 where the
// collective splits or joins along it.
#include <sstream>

#include "distributed/group.h"
#include "nuvec/distributed.h"
#include "primitives/rules.h"

namespace nuvec {

const char* collective_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_sum: return "all_sum";
    case CollectiveOp::all_max: return "all_max";
    case CollectiveOp::all_min: return "all_min";
    case CollectiveOp::all_gather: return "all_gather";
    case CollectiveOp::reduce_scatter: return "reduce_scatter";
    case CollectiveOp::send: return "send";
    default: return "recv";
  }
}

Expected<std::vector<OutputSpec>> Collective::output_specs(const std::vector<Array>& inputs) const {
  const int n = group_->size();
  if (op_ == CollectiveOp::recv) {
    if (!inputs.empty()) return Error(ErrorKind::internal, "recv takes no inputs");
    if (peer_ < 0 || peer_ >= n || peer_ == group_->rank())
      return Error(ErrorKind::invalid_argument, "src " + std::to_string(peer_) + " is not another rank of a group of " +
                                                    std::to_string(n));
    for (auto d : shape_)
      if (d < 0) return Error(ErrorKind::invalid_shape, "recv: negative dimension in the shape");
    OutputSpec o;
    o.shape = shape_;
    o.dtype = dtype_;
    return std::vector<OutputSpec>{o};
  }
  if (inputs.size() != 1) return Error(ErrorKind::internal, "a collective takes one input");
  const Array& x = inputs[0];
  Shape shape = x.shape();
  switch (op_) {
    case CollectiveOp::all_gather:
      if (shape.empty()) shape = {1};
      shape[0] *= n;
      break;
    case CollectiveOp::reduce_scatter:
      if (shape.empty() || shape[0] % n != 0)
        return Error(ErrorKind::invalid_shape, "the first axis (" +
                                                   (shape.empty() ? std::string("none: a scalar")
                                                                  : std::to_string(shape[0])) +
                                                   ") must split into " + std::to_string(n) + " equal blocks");
      shape[0] /= n;
      break;
    case CollectiveOp::send:
      if (peer_ < 0 || peer_ >= n || peer_ == group_->rank())
        return Error(ErrorKind::invalid_argument, "dst " + std::to_string(peer_) +
                                                      " is not another rank of a group of " + std::to_string(n));
      break;
    default: break;
  }
  if ((op_ == CollectiveOp::all_max || op_ == CollectiveOp::all_min) && is_complex(x.dtype()))
    return Error(ErrorKind::unsupported_dtype, std::string(collective_name(op_)) + " of complex64");
  OutputSpec o;
  o.shape = shape;
  o.dtype = x.dtype();
  return std::vector<OutputSpec>{o};
}

void Collective::print_params(std::ostream& os) const {
  os << collective_name(op_) << ", " << group_->backend() << " group of " << group_->size();
  if (peer_ >= 0) os << ", peer " << peer_;
}

namespace {

distributed::Group group_of(const Collective& p) { return distributed::Group(p.group()); }

// The same collective on `x`, whose batch axis is `b`.
Array again(const Collective& p, const Array& x) {
  auto g = group_of(p);
  switch (p.op()) {
    case CollectiveOp::all_sum: return distributed::all_sum(x, g);
    case CollectiveOp::all_max: return distributed::all_max(x, g);
    case CollectiveOp::all_min: return distributed::all_min(x, g);
    case CollectiveOp::all_gather: return distributed::all_gather(x, g);
    case CollectiveOp::reduce_scatter: return distributed::reduce_scatter(x, g);
    default: return distributed::send(x, p.peer(), g);
  }
}

}  // namespace

Arrays Collective::vjp(const Arrays& primals, const Arrays& cotangents, const std::vector<int>&,
                       const Arrays&) const {
  auto g = group_of(*this);
  switch (op_) {
    case CollectiveOp::all_sum:
    case CollectiveOp::all_max:
    case CollectiveOp::all_min: return {cotangents[0]};
    case CollectiveOp::all_gather: {
      const Array& x = primals[0];
      Array ct = cotangents[0];
      int rows = x.ndim() == 0 ? 1 : static_cast<int>(x.shape()[0]);
      Array mine = ops::slice(ct, {g.rank() * rows}, {(g.rank() + 1) * rows});
      return {x.ndim() == 0 ? ops::reshape(mine, {}) : mine};
    }
    case CollectiveOp::reduce_scatter: return {distributed::all_gather(cotangents[0], g)};
    default: rules::no_rule(*this, "vjp");
  }
}

Arrays Collective::jvp(const Arrays& primals, const Arrays& tangents, const std::vector<int>&) const {
  auto g = group_of(*this);
  if (op_ == CollectiveOp::all_max || op_ == CollectiveOp::all_min) {
    const Array& x = primals[0];
    Array y = again(*this, x);
    Array at = ops::equal(x, y);
    Array picked = distributed::all_sum(ops::where(at, tangents[0], ops::zeros_like(tangents[0])), g);
    Array ties = distributed::all_sum(ops::astype(at, tangents[0].dtype()), g);
    return {ops::divide(picked, ties)};
  }
  if (op_ == CollectiveOp::recv) rules::no_rule(*this, "jvp");
  return {again(*this, tangents[0])};
}

std::pair<Arrays, std::vector<int>> Collective::vmap(const Arrays& inputs, const std::vector<int>& axes) const {
  Array x = inputs[0];
  int b = axes[0];
  if (op_ != CollectiveOp::all_gather && op_ != CollectiveOp::reduce_scatter) return {{again(*this, x)}, {b}};
  // The collective joins or splits the slices' axis 0: the batch goes to
  // axis 1 (a batch of scalars gathers to [size, batch]).
  if (x.ndim() == 1) {
    if (op_ == CollectiveOp::reduce_scatter)
      (Error(ErrorKind::invalid_shape, "vmap of reduce_scatter over scalars: nothing to split")).raise();
    Array y = again(*this, x);
    return {{ops::reshape(y, {group_->size(), static_cast<int>(x.shape()[0])})}, {1}};
  }
  if (b != 1) x = ops::moveaxis(x, b, 1);
  return {{again(*this, x)}, {1}};
}

}  // namespace nuvec
