#include "ops/builder.h"

#include <algorithm>

namespace nuvec::ops::detail {

bool& shapeless_tracing() {
  thread_local bool on = false;
  return on;
}

const Array* first_failed(const std::vector<Array>& arrays) {
  for (const auto& a : arrays)
    if (a.is_failed()) return &a;
  return nullptr;
}

Array fail(ErrorKind kind, std::string message, const char* op, Location loc) {
  return make_failed(Error(kind, std::move(message), std::string(op), loc));
}

std::vector<Array> build(std::shared_ptr<const Primitive> p,
                         std::vector<Array> inputs, const StreamOrDevice& s,
                         const char* op, Location loc) {
  if (const Array* f = first_failed(inputs)) return {*f};
  auto specs = p->output_specs(inputs);
  if (!specs) {
    const Error& e = specs.error();
    return {make_failed(Error(e.kind(), e.message(), std::string(op), loc))};
  }
  auto node = std::make_shared<Node>(std::move(p), std::move(inputs), to_stream(s), op, loc);
  std::vector<Array> outs;
  for (size_t i = 0; i < specs->size(); ++i) {
    const OutputSpec& spec = (*specs)[i];
    auto d = std::make_shared<ArrayDesc>();
    d->shape = spec.shape;
    d->size = shape_size(spec.shape);
    d->dtype = spec.dtype;
    if (spec.is_view) {
      d->strides = spec.strides;
      d->offset = spec.offset;
      d->row_contiguous = is_row_contiguous(spec.shape, spec.strides);
    } else {
      d->strides = row_major_strides(spec.shape);
    }
    d->node = node;
    d->output_index = static_cast<int>(i);
    node->outputs.push_back(d);
    outs.emplace_back(std::move(d));
  }
  node->specs = std::move(*specs);
  return outs;
}

Array build1(std::shared_ptr<const Primitive> p, std::vector<Array> inputs,
             const StreamOrDevice& s, const char* op, Location loc) {
  return build(std::move(p), std::move(inputs), s, op, loc)[0];
}

std::optional<int> normalize_axis(int axis, int ndim) {
  int a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim) return std::nullopt;
  return a;
}

Expected<std::vector<int>> normalize_axes(const std::vector<int>& axes, int ndim) {
  std::vector<int> out;
  for (int a : axes) {
    auto n = normalize_axis(a, ndim);
    if (!n)
      return op_error(ErrorKind::invalid_axis,
                      "axis " + std::to_string(a) + " is out of range for an array with " +
                          std::to_string(ndim) + " dimensions");
    out.push_back(*n);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    return op_error(ErrorKind::invalid_axis, "repeated axis in the axes list");
  return out;
}

}  // namespace nuvec::ops::detail
