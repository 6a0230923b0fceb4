// Reading values on the host: item and to_vector.
#include <cstring>
#include <exception>

#include "backend/backend.h"
#include "core/checked.h"
#include "core/strided.h"
#include "nuvec/core/graph.h"
#include "nuvec/core/memory.h"
#include "nuvec/kernels/cast.h"

namespace nuvec {

namespace {

template <class T>
void read_converted(const Array& a, std::vector<T>& out) {
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const S* base = static_cast<const S*>(backend::host_pointer(a)) - a.desc()->offset;
    for_each_offset(a.shape(), a.strides(), a.desc()->offset, [&](int64_t off) {
      out.push_back(kernels::Cast<T>{}(base[off]));
    });
  });
}

}  // namespace

template <class T>
T Array::item() const {
  eval();
  if (size() != 1)
    (Error(ErrorKind::invalid_shape,
                "item() needs an array of one element, this one has " +
                    std::to_string(size()),
                std::string("item"))).raise();
  std::vector<T> v;
  read_converted(*this, v);
  return v[0];
}

template <class T>
std::vector<T> Array::to_vector() const {
  eval();
  std::vector<T> v;
  // The host vector is outside the allocator and its limit: a failure to
  // get it is still out_of_memory, with the size asked for, never a
  // std::bad_alloc or std::length_error.
  auto bytes = checked_bytes(size(), sizeof(T), "to_vector");
  if (!bytes) Error(bytes.error().kind(), bytes.error().message(), std::string("to_vector")).raise();
  // A vector past the memory limit is refused as the allocator refuses a
  // buffer (a broadcast view of a scalar evaluates to no memory at all, but
  // its vector would take all of it).
  if (*bytes > get_memory_limit())
    Error(ErrorKind::out_of_memory,
          "a host vector of " + std::to_string(size()) + " elements (" +
              std::to_string(*bytes) + " bytes) exceeds the memory limit of " +
              std::to_string(get_memory_limit()) + " bytes",
          std::string("to_vector"))
        .raise();
  try {
    v.reserve(static_cast<size_t>(size()));
  } catch (const std::exception&) {  // std::bad_alloc, std::length_error
    Error(ErrorKind::out_of_memory,
          "cannot allocate a host vector of " + std::to_string(size()) + " elements (" +
              std::to_string(*bytes) + " bytes)",
          std::string("to_vector"))
        .raise();
  }
  read_converted(*this, v);
  return v;
}

template <class T>
const T* Array::data() const {
  eval();
  if (!(dtype_v<T> == dtype()))
    (Error(ErrorKind::invalid_argument,
           "data<T>() of a " + std::string(dtype_name(dtype())) + " array needs T of that dtype, not " +
               std::string(dtype_name(dtype_v<T>)),
           std::string("data")))
        .raise();
  if (size() == 0) return nullptr;
  return static_cast<const T*>(backend::host_pointer(*this));
}

#define NUVEC_INSTANTIATE_READ(T)                  \
  template T Array::item<T>() const;               \
  template std::vector<T> Array::to_vector<T>() const; \
  template const T* Array::data<T>() const;
NUVEC_INSTANTIATE_READ(bool)
NUVEC_INSTANTIATE_READ(uint8_t)
NUVEC_INSTANTIATE_READ(uint16_t)
NUVEC_INSTANTIATE_READ(uint32_t)
NUVEC_INSTANTIATE_READ(uint64_t)
NUVEC_INSTANTIATE_READ(int8_t)
NUVEC_INSTANTIATE_READ(int16_t)
NUVEC_INSTANTIATE_READ(int32_t)
NUVEC_INSTANTIATE_READ(int64_t)
NUVEC_INSTANTIATE_READ(float16_t)
NUVEC_INSTANTIATE_READ(bfloat16_t)
NUVEC_INSTANTIATE_READ(float)
NUVEC_INSTANTIATE_READ(double)
NUVEC_INSTANTIATE_READ(complex64_t)
#undef NUVEC_INSTANTIATE_READ

}  // namespace nuvec
