// nuvec::Array: a cheap value handle to a node of the lazy graph.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "nuvec/core/device.h"
#include "nuvec/core/dtype.h"
#include "nuvec/core/error.h"
#include "nuvec/core/shape.h"
#include "nuvec/ops/op_lists.h"

namespace nuvec {

/// The free functions with MLX's names live in `nuvec::ops`, an inline
/// namespace: `nuvec::cumsum` and `nuvec::ops::cumsum` are the same function,
/// so MLX C++ code ports by renaming `mlx::core` to `nuvec` (or keeps the
/// spec's `namespace mx = nuvec::ops;`).
inline namespace ops {}

struct ArrayDesc;
class Array;
class Operand;
class Index;
class At;

/// A lazily evaluated n-dimensional array. Copying an Array copies the handle
/// (both refer to the same values). Operations never throw: an invalid call
/// returns a failed array that remembers the operation, the caller's source
/// location and the reason; reading it (item, to_vector, eval, check) throws
/// nuvec::Error.
class Array {
 public:
  /// A failed array ("default-constructed array has no value"), so that
  /// containers of arrays can be default-constructed.
  Array();
  explicit Array(std::shared_ptr<ArrayDesc> desc) : desc_(std::move(desc)) {}

  // Metadata, known without evaluating.
  const Shape& shape() const;
  /// One dimension; a negative axis counts from the end. An axis out of
  /// range throws std::out_of_range (as nuvec::Error), as MLX.
  int shape(int axis) const;
  const Strides& strides() const;
  /// One stride (in elements); axes as shape(int).
  int64_t strides(int axis) const;
  DType dtype() const;
  int64_t size() const;
  int ndim() const;
  int itemsize() const { return dtype().size(); }
  int64_t nbytes() const { return size() * itemsize(); }

  // Failure and evaluation.
  /// Whether the array failed when its graph was built.
  bool is_failed() const;
  /// The error of a failed array (null otherwise).
  const Error* error() const;
  /// Throws the array's error if it failed (graph errors only; eval-time
  /// errors such as running out of memory surface in eval()). Returns *this.
  const Array& check() const;
  /// Evaluates the array and everything it depends on; throws on failure.
  const Array& eval() const;
  /// Whether the values are computed (eval() would not run anything).
  bool is_available() const;
  /// The only element, converted to T; evaluates. Throws if size() != 1.
  template <class T>
  T item() const;
  /// All elements in row-major order, converted to T; evaluates.
  template <class T>
  std::vector<T> to_vector() const;
  /// MLX's data<T>(): evaluates and returns the host address of element 0,
  /// from which the elements lie at strides() (a GPU array is copied to the
  /// host once). T must be the dtype's C++ type (bool for bool_,
  /// float16_t, ...): anything else throws std::invalid_argument, where MLX
  /// reinterprets the bytes. Read-only: arrays are immutable.
  template <class T>
  const T* data() const;

  // Graph access (for transforms, compile and backends).
  const std::shared_ptr<ArrayDesc>& desc() const { return desc_; }
  /// An identity of the node this handle refers to.
  const void* id() const { return desc_.get(); }

  // Unary operations (see ops::).
#define NUVEC_DECLARE_UNARY_METHOD(name) Array name(Location loc = NUVEC_LOC) const;
  NUVEC_UNARY_OPS(NUVEC_DECLARE_UNARY_METHOD)
#undef NUVEC_DECLARE_UNARY_METHOD
  Array round(int decimals = 0, Location loc = NUVEC_LOC) const;

  // Binary operations (see ops::).
#define NUVEC_DECLARE_BINARY_METHOD(name) \
  Array name(const Operand& other, Location loc = NUVEC_LOC) const;
  NUVEC_BINARY_OPS(NUVEC_DECLARE_BINARY_METHOD)
#undef NUVEC_DECLARE_BINARY_METHOD
  Array matmul(const Array& other, Location loc = NUVEC_LOC) const;

  // Reductions: no argument means all axes.
#define NUVEC_DECLARE_REDUCTION_METHOD(name)              \
  Array name(Location loc = NUVEC_LOC) const;             \
  Array name(const Axes& axes, bool keepdims = false,     \
             Location loc = NUVEC_LOC) const;
  NUVEC_REDUCTION_OPS(NUVEC_DECLARE_REDUCTION_METHOD)
#undef NUVEC_DECLARE_REDUCTION_METHOD
  Array var(Location loc = NUVEC_LOC) const;
  Array var(const Axes& axes, bool keepdims = false, int ddof = 0,
            Location loc = NUVEC_LOC) const;
  Array std(Location loc = NUVEC_LOC) const;
  Array std(const Axes& axes, bool keepdims = false, int ddof = 0,
            Location loc = NUVEC_LOC) const;
  Array argmax(Location loc = NUVEC_LOC) const;
  Array argmax(int axis, bool keepdims = false, Location loc = NUVEC_LOC) const;
  Array argmin(Location loc = NUVEC_LOC) const;
  Array argmin(int axis, bool keepdims = false, Location loc = NUVEC_LOC) const;
  Array softmax(Location loc = NUVEC_LOC) const;
  Array softmax(const Axes& axes, Location loc = NUVEC_LOC) const;

  // Conversions and shape operations (views where strides allow).
  Array astype(DType dtype, Location loc = NUVEC_LOC) const;
  Array view(DType dtype, Location loc = NUVEC_LOC) const;
  Array copy(Location loc = NUVEC_LOC) const;
  Array reshape(Shape shape, Location loc = NUVEC_LOC) const;
  Array flatten(int start_axis = 0, int end_axis = -1,
                Location loc = NUVEC_LOC) const;
  Array squeeze(Location loc = NUVEC_LOC) const;
  Array squeeze(const Axes& axes, Location loc = NUVEC_LOC) const;
  Array expand_dims(const Axes& axes, Location loc = NUVEC_LOC) const;
  Array transpose(Location loc = NUVEC_LOC) const;
  Array transpose(std::vector<int> axes, Location loc = NUVEC_LOC) const;
  /// Reverses all axes (a view).
  Array t(Location loc = NUVEC_LOC) const;
  Array swapaxes(int axis1, int axis2, Location loc = NUVEC_LOC) const;
  Array moveaxis(int source, int destination, Location loc = NUVEC_LOC) const;
  Array broadcast_to(Shape shape, Location loc = NUVEC_LOC) const;
  Array clip(std::optional<Operand> a_min, std::optional<Operand> a_max,
             Location loc = NUVEC_LOC) const;

  /// Indexing as MLX's x[...]: integers (negative from the end), slices
  /// (`slice(1, 4, 2)`, `slice()` for `:`), `newaxis`, `ellipsis` and integer
  /// index arrays (NumPy's advanced indexing). Basic indexing gives a view;
  /// index arrays gather. The location is the caller's (taken by the first
  /// index's conversion).
  Array i(const Index& a) const;
  Array i(const Index& a, const Index& b) const;
  Array i(const Index& a, const Index& b, const Index& c) const;
  Array i(const Index& a, const Index& b, const Index& c, const Index& d) const;
  Array i(const Index& a, const Index& b, const Index& c, const Index& d,
          const Index& e) const;
  Array i(const Index& a, const Index& b, const Index& c, const Index& d,
          const Index& e, const Index& f) const;
  /// A pending functional update of the elements x.i(...) selects:
  /// `x.at(idx).add(v)` returns a new array (x is unchanged).
  At at(const Index& a) const;
  At at(const Index& a, const Index& b) const;
  At at(const Index& a, const Index& b, const Index& c) const;
  At at(const Index& a, const Index& b, const Index& c, const Index& d) const;

 private:
  std::shared_ptr<ArrayDesc> desc_;
};

/// A number whose dtype is decided by the array it is combined with (a weak
/// scalar): `x * 2.0` keeps x's floating dtype, `int_array + 2.5` is float32.
struct Scalar {
  enum class Kind { boolean, integer, floating };
  Kind kind;
  int64_t i = 0;
  double f = 0;
  Scalar(bool v) : kind(Kind::boolean), i(v) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> &&
                                          !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind(Kind::integer), i(static_cast<int64_t>(v)) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind(Kind::floating), f(static_cast<double>(v)) {}
};

/// An operand of a binary operation: an array, or a weak scalar.
class Operand {
 public:
  Operand(const Array& a) : array_(a) {}
  Operand(Array&& a) : array_(std::move(a)) {}
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Operand(T v) : scalar_(Scalar(v)) {}
  Operand(Scalar s) : scalar_(s) {}
  bool is_scalar() const { return scalar_.has_value(); }
  const Array& array() const { return *array_; }
  const Scalar& scalar() const { return *scalar_; }

 private:
  std::optional<Array> array_;
  std::optional<Scalar> scalar_;
};

/// A slice with Python's meaning: start and stop may be absent (the ends, in
/// the step's direction), the step may be negative. `slice()` is `:`,
/// `slice({}, {}, -1)` is `::-1`, `slice(4, 0, -1)` is positions 4, 3, 2, 1.
struct IndexSlice {
  std::optional<int> start, stop;
  int step = 1;
};
inline IndexSlice slice(std::optional<int> start = {}, std::optional<int> stop = {},
                   int step = 1) {
  return IndexSlice{start, stop, step};
}
/// A new axis of size 1 in an index (NumPy's None).
struct NewAxis {};
inline constexpr NewAxis newaxis{};
/// As many full slices as the other entries leave axes (NumPy's ...).
struct Ellipsis {};
inline constexpr Ellipsis ellipsis{};

/// One entry of an index: an integer, a slice, newaxis, ellipsis or an
/// integer array. Converting to it records the caller's location.
class Index {
 public:
  enum class Kind { integer, slice, newaxis, ellipsis, array };
  Index(int i, Location loc = NUVEC_LOC) : kind_(Kind::integer), int_(i), loc_(loc) {}
  Index(IndexSlice s, Location loc = NUVEC_LOC) : kind_(Kind::slice), slice_(s), loc_(loc) {}
  Index(NewAxis, Location loc = NUVEC_LOC) : kind_(Kind::newaxis), loc_(loc) {}
  Index(Ellipsis, Location loc = NUVEC_LOC) : kind_(Kind::ellipsis), loc_(loc) {}
  Index(const Array& a, Location loc = NUVEC_LOC)
      : kind_(Kind::array), array_(a), loc_(loc) {}
  Kind kind() const { return kind_; }
  int integer() const { return int_; }
  const IndexSlice& slice() const { return slice_; }
  const Array& array() const { return *array_; }
  Location loc() const { return loc_; }

 private:
  Kind kind_;
  int int_ = 0;
  IndexSlice slice_;
  std::optional<Array> array_;
  Location loc_;
};

/// A pending functional update made by Array::at. Updates are converted to
/// the array's dtype and broadcast to the selection's shape; repeated indices
/// accumulate (add, multiply, ...) in index order, deterministically; for
/// set, the last write wins.
class At {
 public:
  At(Array x, std::vector<Index> index) : x_(std::move(x)), index_(std::move(index)) {}
  Array set(const Operand& v) const;
  Array add(const Operand& v) const;
  Array subtract(const Operand& v) const;
  Array multiply(const Operand& v) const;
  /// Multiplies by the reciprocal converted to the dtype (MLX's rule, so an
  /// integer array divided by 2 becomes 0 there).
  Array divide(const Operand& v) const;
  Array maximum(const Operand& v) const;
  Array minimum(const Operand& v) const;

 private:
  Array x_;
  std::vector<Index> index_;
};

}  // namespace nuvec
