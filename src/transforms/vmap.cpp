// The vmap engine: trace f on one slice of the batch, then replay the tape
// through each primitive's vmap rule on the batched arrays.
#include "nuvec/ops/ops.h"
#include "nuvec/transforms/flat.h"
#include "primitives/rules.h"
#include "transforms/tape.h"

namespace nuvec::detail {

namespace {

struct Batched {
  Array array;
  int axis;
};

int batch_size(const Arrays& inputs, const std::vector<int>& axes) {
  int size = -1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (axes[i] < 0) continue;
    int n = inputs[i].shape(axes[i]);
    if (size >= 0 && n != size)
      throw Error(ErrorKind::transform, "vmap: inconsistent batch sizes " + std::to_string(size) +
                                            " and " + std::to_string(n) + " (argument " +
                                            std::to_string(i) + ")");
    size = n;
  }
  if (size < 0) throw Error(ErrorKind::transform, "vmap: no argument is batched");
  return size;
}

}  // namespace

std::vector<Array> vmap(const FlatFunction& f, const Arrays& inputs, const std::vector<int>& in_axes,
                        const std::function<std::vector<int>(const Arrays&)>& out_axes) {
  transforms::throw_if_failed(inputs);
  int size = batch_size(inputs, in_axes);
  transforms::IdSet ids;
  std::unordered_map<const void*, Batched> batched;
  Arrays tracers = inputs;
  Arrays outputs;
  {
    TraceScope scope;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (in_axes[i] < 0) continue;
      // f sees one element of the batch: a view of the first slice.
      const Array& x = inputs[i];
      std::vector<int> start(x.ndim(), 0);
      std::vector<int> stop(x.shape().begin(), x.shape().end());
      stop[in_axes[i]] = 1;
      Array slice = ops::squeeze(ops::slice(x, start, stop), {in_axes[i]});
      tracers[i] = transforms::make_tracer(slice);
      ids.insert(tracers[i].id());
      batched.emplace(tracers[i].id(), Batched{inputs[i], in_axes[i]});
    }
    outputs = f(tracers);
  }
  transforms::throw_if_failed(outputs);
  auto tape = transforms::build_tape(outputs, ids);
  for (const auto& e : tape) {
    Arrays ins;
    std::vector<int> axes;
    for (const auto& in : e.inputs) {
      auto it = batched.find(in.id());
      ins.push_back(it == batched.end() ? in : it->second.array);
      axes.push_back(it == batched.end() ? -1 : it->second.axis);
    }
    // A rule may return an unbatched output (axis -1); its users then see it
    // unbatched, and a node none of whose inputs is batched is built as is.
    bool any = false;
    for (int a : axes) any = any || a >= 0;
    std::pair<Arrays, std::vector<int>> r;
    if (any) {
      r = e.primitive->vmap(ins, axes);
    } else {
      r.first = rules::rebuild(*e.primitive, ins);
      r.second.assign(r.first.size(), -1);
    }
    for (size_t j = 0; j < e.outputs.size(); ++j)
      if (e.output_alive[j]) batched.emplace(e.outputs[j].id(), Batched{r.first.at(j), r.second.at(j)});
  }
  std::vector<int> want = out_axes(outputs);
  Arrays result;
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto it = batched.find(outputs[i].id());
    if (it == batched.end() || it->second.axis < 0) {
      // An output independent of the batch: broadcast along the batch axis.
      const Array& o = it == batched.end() ? outputs[i] : it->second.array;
      Shape shape = o.shape();
      shape.insert(shape.begin() + want[i], size);
      result.push_back(ops::broadcast_to(ops::expand_dims(o, want[i]), shape));
    } else {
      result.push_back(ops::moveaxis(it->second.array, it->second.axis, want[i]));
    }
  }
  transforms::release_tape(tape);
  return result;
}

}  // namespace nuvec::detail
