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
      (Error(ErrorKind::transform, "vmap: inconsistent batch sizes " + std::to_string(size) +
                                            " and " + std::to_string(n) + " (argument " +
                                            std::to_string(i) + ")")).raise();
    size = n;
  }
  if (size < 0) (Error(ErrorKind::transform, "vmap: no argument is batched")).raise();
  return size;
}

// An empty batch: f runs on zeros of one element's shape, which gives the
// outputs' shapes and dtypes; the results are empty along the batch axis.
// Nothing depends on the inputs, which is right: every derivative of an
// empty result is empty, and a sum over it is zero.
Arrays empty_batch(const FlatFunction& f, const Arrays& inputs, const std::vector<int>& in_axes,
                   const std::function<std::vector<int>(const Arrays&)>& out_axes) {
  Arrays args = inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (in_axes[i] < 0) continue;
    Shape shape = inputs[i].shape();
    shape.erase(shape.begin() + in_axes[i]);
    args[i] = ops::zeros(shape, inputs[i].dtype());
  }
  Arrays outputs = f(args);
  transforms::throw_if_failed(outputs);
  std::vector<int> want = out_axes(outputs);
  Arrays result;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Shape shape = outputs[i].shape();
    shape.insert(shape.begin() + want[i], 0);
    result.push_back(ops::zeros(shape, outputs[i].dtype()));
  }
  return result;
}

}  // namespace

std::vector<Array> vmap(const FlatFunction& f, const Arrays& inputs, const std::vector<int>& in_axes,
                        const std::function<std::vector<int>(const Arrays&)>& out_axes) {
  transforms::throw_if_failed(inputs);
  int size = batch_size(inputs, in_axes);
  if (size == 0) return empty_batch(f, inputs, in_axes, out_axes);
  transforms::IdSet ids;
  // Each traced array's batched counterpart, found by id (a flat table).
  transforms::PtrIndex index;
  std::vector<Batched> batched;
  auto find = [&](const Array& a) -> const Batched* {
    int i = index.find(a.id());
    return i < 0 ? nullptr : &batched[static_cast<size_t>(i)];
  };
  auto add = [&](const Array& a, Batched b) {
    if (index.insert(a.id(), static_cast<int>(batched.size())).second)
      batched.push_back(std::move(b));
  };
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
      add(tracers[i], Batched{inputs[i], in_axes[i]});
    }
    outputs = f(tracers);
  }
  transforms::throw_if_failed(outputs);
  transforms::Tape tape = transforms::walk_tape(outputs, ids);
  index.reserve(ids.size() + tape.outputs.size());
  batched.reserve(ids.size() + tape.outputs.size());
  for (const auto& e : tape.entries) {
    Arrays ins;
    std::vector<int> axes;
    ins.reserve(e.num_inputs());
    axes.reserve(e.num_inputs());
    for (uint32_t i = e.in_begin; i < e.in_end; ++i) {
      const Array& in = tape.inputs[i];
      const Batched* b = find(in);
      ins.push_back(b ? b->array : in);
      axes.push_back(b ? b->axis : -1);
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
    for (uint32_t j = e.out_begin; j < e.out_end; ++j)
      if (tape.alive[j])
        add(tape.outputs[j], Batched{r.first.at(j - e.out_begin), r.second.at(j - e.out_begin)});
  }
  std::vector<int> want = out_axes(outputs);
  Arrays result;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Batched* b = find(outputs[i]);
    if (!b || b->axis < 0) {
      // An output independent of the batch: broadcast along the batch axis.
      const Array& o = b ? b->array : outputs[i];
      Shape shape = o.shape();
      shape.insert(shape.begin() + want[i], size);
      result.push_back(ops::broadcast_to(ops::expand_dims(o, want[i]), shape));
    } else {
      result.push_back(ops::moveaxis(b->array, b->axis, want[i]));
    }
  }
  transforms::release_tape(tape);
  return result;
}

}  // namespace nuvec::detail
