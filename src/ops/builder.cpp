#include "ops/builder.h"

#include <algorithm>

namespace nuvec::inline ops::impl {

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

namespace {

// The descriptor of output `i` of `node`, as `spec` describes it. The only
// output of a node that is not a view takes the spec's shape (see
// Node::specs): one allocation less per node.
std::shared_ptr<ArrayDesc> make_output(const std::shared_ptr<Node>& node, OutputSpec& spec,
                                       size_t i) {
  auto d = new_desc();
  d->size = shape_size(spec.shape);
  d->dtype = spec.dtype;
  if (spec.is_view) {
    d->strides = spec.strides;
    d->offset = spec.offset;
    d->row_contiguous = is_row_contiguous(spec.shape, spec.strides);
  } else {
    d->strides = row_major_strides(spec.shape);
  }
  if (node->specs.size() == 1 && !spec.is_view) d->shape = std::move(spec.shape);
  else d->shape = spec.shape;
  d->node = node;
  d->output_index = static_cast<int>(i);
  return d;
}

// Validates and builds the node; on failure returns null and sets `failed`.
std::shared_ptr<Node> validated_node(std::shared_ptr<const Primitive>& p,
                                     std::vector<Array>& inputs, const StreamOrDevice& s,
                                     const char* op, Location loc, Array& failed) {
  if (const Array* f = first_failed(inputs)) {
    failed = *f;
    return nullptr;
  }
  auto specs = p->output_specs(inputs);
  if (!specs) {
    const Error& e = specs.error();
    failed = make_failed(Error(e.kind(), e.message(), std::string(op), loc));
    return nullptr;
  }
  // Every output's count and byte size, for every op: no rule can make an
  // output whose size wraps (docs/semantics.md, "Sizes").
  for (const OutputSpec& spec : *specs) {
    auto n = checked_size(spec.shape, spec.dtype.size(), "output");
    if (!n) {
      failed = make_failed(Error(n.error().kind(), n.error().message(), std::string(op), loc));
      return nullptr;
    }
  }
  auto node = new_node(std::move(p), std::move(inputs), detail::resolve_stream(s), op, loc);
  node->specs = std::move(*specs);
  node->outputs.reserve(node->specs.size());
  return node;
}

}  // namespace

std::vector<Array> build(std::shared_ptr<const Primitive> p,
                         std::vector<Array> inputs, const StreamOrDevice& s,
                         const char* op, Location loc) {
  std::vector<Array> outs;
  Array failed = Array(std::shared_ptr<ArrayDesc>());
  auto node = validated_node(p, inputs, s, op, loc, failed);
  if (!node) {
    outs.push_back(std::move(failed));
    return outs;
  }
  outs.reserve(node->specs.size());
  for (size_t i = 0; i < node->specs.size(); ++i) {
    auto d = make_output(node, node->specs[i], i);
    node->outputs.push_back(d);
    outs.emplace_back(std::move(d));
  }
  return outs;
}

// build()'s first output, without a vector of outputs (the common case: one
// output per node). The other outputs, if any, are left unreferenced, as
// build()'s would be once the caller dropped them.
Array build1(std::shared_ptr<const Primitive> p, std::vector<Array> inputs,
             const StreamOrDevice& s, const char* op, Location loc) {
  Array failed = Array(std::shared_ptr<ArrayDesc>());
  auto node = validated_node(p, inputs, s, op, loc, failed);
  if (!node) return failed;
  auto d = make_output(node, node->specs[0], 0);
  node->outputs.push_back(d);
  for (size_t i = 1; i < node->specs.size(); ++i) node->outputs.push_back({});
  return Array(std::move(d));
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
    return op_error(ErrorKind::invalid_argument, "repeated axis in the axes list");
  return out;
}

}  // namespace nuvec::ops::impl
