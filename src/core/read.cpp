// Reading values on the host: item and to_vector.
#include <cstring>

#include "backend/backend.h"
#include "core/strided.h"
#include "nuvec/core/graph.h"
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
  v.reserve(static_cast<size_t>(size()));
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
