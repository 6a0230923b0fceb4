// Array handles, nodes and constants.
#include "nuvec/core/graph.h"

#include <cstring>

#include "core/allocator.h"
#include "core/pool.h"

namespace nuvec {

namespace {

void release_allocator_block(Data& d) {
  allocator::free(allocator::Block{d.ptr, d.nbytes, d.capacity});
}

std::shared_ptr<ArrayDesc> default_desc() {
  static const std::shared_ptr<const Error> err = std::make_shared<Error>(
      ErrorKind::invalid_argument, "default-constructed array has no value",
      std::string("array"));
  auto d = new_desc();
  d->error = err;
  return d;
}

}  // namespace

std::shared_ptr<Data> allocate_data(size_t nbytes) {
  allocator::Block b;
  try {
    b = allocator::malloc(nbytes);
  } catch (const allocator::OutOfMemory& e) {
    (Error(ErrorKind::out_of_memory, e.what())).raise();
  }
  auto d = std::make_shared<Data>();
  d->ptr = b.ptr;
  d->nbytes = b.size;
  d->capacity = b.capacity;
  d->from_allocator = true;
  d->release = &release_allocator_block;
  return d;
}

std::shared_ptr<ArrayDesc> new_desc() {
  return std::allocate_shared<ArrayDesc>(detail::PoolAllocator<ArrayDesc>());
}

std::shared_ptr<Node> new_node(std::shared_ptr<const Primitive> p, std::vector<Array> in,
                               Stream s, const char* op, Location l) {
  return std::allocate_shared<Node>(detail::PoolAllocator<Node>(), std::move(p), std::move(in), s,
                                    op, l);
}

int& detail::trace_depth() {
  thread_local int depth = 0;
  return depth;
}

Node::~Node() {
  // Inputs of nested node destructions are queued here instead of being
  // destroyed recursively.
  thread_local std::vector<Array>* pending = nullptr;
  if (pending) {
    for (auto& a : inputs) pending->push_back(std::move(a));
    return;
  }
  std::vector<Array> stack = std::move(inputs);
  pending = &stack;
  while (!stack.empty()) {
    Array a = std::move(stack.back());
    stack.pop_back();
  }
  pending = nullptr;
}

bool is_row_contiguous(const Shape& shape, const Strides& strides) {
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 0) return true;
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

Array make_constant(std::shared_ptr<Data> data, Shape shape, DType dtype) {
  auto d = new_desc();
  d->strides = row_major_strides(shape);
  d->size = shape_size(shape);
  d->shape = std::move(shape);
  d->dtype = dtype;
  d->data = std::move(data);
  return Array(std::move(d));
}

Array make_empty_constant(Shape shape, DType dtype) {
  size_t nbytes = static_cast<size_t>(shape_size(shape)) * dtype.size();
  return make_constant(allocate_data(nbytes), std::move(shape), dtype);
}

Array make_failed(Error error) {
  auto d = new_desc();
  d->error = std::make_shared<const Error>(std::move(error));
  return Array(std::move(d));
}

Array::Array() : desc_(default_desc()) {}

const Shape& Array::shape() const { return desc_->shape; }
namespace {
int checked_axis(int axis, int ndim, const char* what) {
  int a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    Error(ErrorKind::invalid_axis,
          "axis " + std::to_string(axis) + " is out of range for an array with " +
              std::to_string(ndim) + " dimensions",
          std::string(what))
        .raise();
  return a;
}
}  // namespace

int Array::shape(int axis) const {
  return desc_->shape[checked_axis(axis, ndim(), "shape")];
}
const Strides& Array::strides() const { return desc_->strides; }
int64_t Array::strides(int axis) const {
  return desc_->strides[checked_axis(axis, ndim(), "strides")];
}
DType Array::dtype() const { return desc_->dtype; }
int64_t Array::size() const { return desc_->size; }
int Array::ndim() const { return static_cast<int>(desc_->shape.size()); }
bool Array::is_failed() const { return desc_->error != nullptr; }
const Error* Array::error() const { return desc_->error.get(); }

const Array& Array::check() const {
  if (desc_->error) (desc_->error)->raise();
  return *this;
}

}  // namespace nuvec
