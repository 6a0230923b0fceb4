// gather, scatter (and its reductions) and masked_scatter with MLX's checks.
// Each computes the flat positions of the elements it reads or writes (the
// slice corner from the indices plus the offsets inside one slice) and runs
// one Take or one Scatter over the flattened array.
#include <set>

#include "nuvec/ops/ops.h"
#include "nuvec/primitives/indexing.h"
#include "ops/builder.h"
#include "ops/indexing_impl.h"

namespace nuvec::inline ops {

namespace {

using impl::fail;

// The checks gather and scatter share (MLX's order), then the index arrays
// broadcast together; on failure `error` is set.
struct IndexCheck {
  std::vector<Array> indices;  // broadcast
  Shape shape;                 // their shape
  std::optional<Array> error;
};

IndexCheck check_index_arrays(const Array& a, const std::vector<Array>& indices,
                              const std::vector<int>& axes, const char* op,
                              const StreamOrDevice& s, Location loc) {
  IndexCheck c;
  auto bad = [&](ErrorKind k, const std::string& m) {
    c.error = fail(k, m, op, loc);
    return c;
  };
  for (const auto& i : indices)
    if (i.is_failed()) {
      c.error = i;
      return c;
    }
  int nd = a.ndim();
  if (static_cast<int>(indices.size()) > nd)
    return bad(ErrorKind::invalid_argument,
               "too many index arrays: " + std::to_string(indices.size()) +
                   " for an array with " + std::to_string(nd) + " dimensions");
  for (const auto& i : indices)
    if (i.dtype() == bool_)
      return bad(ErrorKind::invalid_argument,
                 "boolean indices are not supported");
  std::set<int> dims(axes.begin(), axes.end());
  if (dims.size() != axes.size())
    return bad(ErrorKind::invalid_argument, "repeated axes are not allowed");
  if (!dims.empty() && (*dims.begin() < 0 || *dims.rbegin() >= nd))
    return bad(ErrorKind::invalid_argument,
               "axes must lie in [0, " + std::to_string(nd) + ")");
  if (indices.size() != axes.size())
    return bad(ErrorKind::invalid_argument,
               std::to_string(indices.size()) + " index arrays for " +
                   std::to_string(axes.size()) + " axes");
  for (const auto& i : indices) {
    auto b = try_broadcast_shapes(c.shape, i.shape());
    if (!b) return bad(ErrorKind::shape_mismatch, b.error().message());
    c.shape = *b;
  }
  if (!indices.empty()) {
    // One integer dtype for all, by MLX's promotion (uint64 with a signed
    // dtype is float32, which is not an index).
    DType d = indices[0].dtype();
    for (const auto& i : indices) d = promote_types(d, i.dtype());
    if (!is_integer(d))
      return bad(
          ErrorKind::unsupported_dtype,
          "index arrays must be integers, got " + std::string(dtype_name(d)));
  }
  for (const auto& i : indices)
    c.indices.push_back(ops::broadcast_to(i, c.shape, s, loc));
  return c;
}

// The flat positions, of shape c.shape + block, of the blocks whose corners
// are at the indices along `axes` (clamped so each block fits in a).
Array block_positions(const Array& a, const IndexCheck& c,
                      const std::vector<int>& axes, const Shape& block,
                      const StreamOrDevice& s, Location loc) {
  auto strides = nuvec::row_major_strides(a.shape());
  Array corner = ops::zeros(c.shape, int64, s, loc);
  for (size_t k = 0; k < axes.size(); ++k) {
    int d = axes[k];
    Array start = impl::wrap_clamp(c.indices[k], a.shape(d),
                                   a.shape(d) - block[d], s, loc);
    corner = ops::add(corner, ops::multiply(start, strides[d], s, loc), s, loc);
  }
  Shape with_block = c.shape;
  with_block.insert(with_block.end(), block.size(), 1);
  return ops::add(ops::reshape(corner, with_block, s, loc),
                  impl::block_offsets(a.shape(), block, s, loc), s, loc);
}

int64_t product(const Shape& shape) {
  int64_t n = 1;
  for (int d : shape) n *= d;
  return n;
}

}  // namespace

Array gather(const Array& a, const std::vector<Array>& indices,
             const std::vector<int>& axes, const Shape& slice_sizes,
             StreamOrDevice s, Location loc) {
  const char* op = "gather";
  if (a.is_failed()) return a;
  int nd = a.ndim();
  IndexCheck c = check_index_arrays(a, indices, axes, op, s, loc);
  if (c.error) return *c.error;
  if (static_cast<int>(slice_sizes.size()) != nd)
    return fail(ErrorKind::invalid_argument,
                std::to_string(slice_sizes.size()) +
                    " slice sizes for an array with " + std::to_string(nd) +
                    " dimensions",
                op, loc);
  Shape out = c.shape;
  out.insert(out.end(), slice_sizes.begin(), slice_sizes.end());
  if (a.size() == 0) {
    if (product(c.shape) != 0 && product(slice_sizes) != 0)
      return fail(
          ErrorKind::invalid_argument,
          "from an empty array, either the indices or the slices must be empty",
          op, loc);
    return ops::zeros(out, a.dtype(), s, loc);
  }
  for (int d = 0; d < nd; ++d)
    if (slice_sizes[d] < 0 || slice_sizes[d] > a.shape(d))
      return fail(ErrorKind::invalid_argument,
                  "slice sizes " + impl::shape_text(slice_sizes) +
                      " do not fit an array of shape " +
                      impl::shape_text(a.shape()),
                  op, loc);
  Array pos = block_positions(a, c, axes, slice_sizes, s, loc);
  return impl::take_flat(a, pos, op, s, loc);
}

Array gather(const Array& a, const Array& indices, int axis,
             const Shape& slice_sizes, StreamOrDevice s, Location loc) {
  return ops::gather(a, std::vector<Array>{indices}, std::vector<int>{axis},
                     slice_sizes, s, loc);
}

namespace {

Array scatter_as(const Array& a, const std::vector<Array>& indices,
                 const Array& updates, const std::vector<int>& axes,
                 Scatter::Type type, const char* op, const StreamOrDevice& s,
                 Location loc) {
  if (a.is_failed()) return a;
  if (updates.is_failed()) return updates;
  IndexCheck c = check_index_arrays(a, indices, axes, op, s, loc);
  if (c.error) return *c.error;
  int nd = a.ndim(), ni = static_cast<int>(c.shape.size());
  auto bad = [&](const std::string& m) {
    return fail(ErrorKind::invalid_argument, m, op, loc);
  };
  if (updates.ndim() != nd + ni)
    return bad("updates of dimension " + std::to_string(updates.ndim()) +
               " do not match the array's (" + std::to_string(nd) +
               ") plus the indices' (" + std::to_string(ni) + ")");
  for (int i = 0; i < ni; ++i)
    if (updates.shape(i) != c.shape[i])
      return bad("updates of shape " + impl::shape_text(updates.shape()) +
                 " do not fit indices of shape " + impl::shape_text(c.shape));
  Shape block(updates.shape().begin() + ni, updates.shape().end());
  for (int d = 0; d < nd; ++d)
    if (block[d] > a.shape(d))
      return bad("updates of shape " + impl::shape_text(updates.shape()) +
                 " are too large for an array of shape " +
                 impl::shape_text(a.shape()));
  Array pos = block_positions(a, c, axes, block, s, loc);
  return impl::scatter_flat(a, pos, ops::astype(updates, a.dtype(), s, loc),
                            type, op, s, loc);
}

}  // namespace

#define NUVEC_DEFINE_SCATTER(name, type)                                     \
  Array name(const Array& a, const std::vector<Array>& indices,              \
             const Array& updates, const std::vector<int>& axes,             \
             StreamOrDevice s, Location loc) {                               \
    return scatter_as(a, indices, updates, axes, Scatter::Type::type, #name, \
                      s, loc);                                               \
  }                                                                          \
  Array name(const Array& a, const Array& indices, const Array& updates,     \
             int axis, StreamOrDevice s, Location loc) {                     \
    return scatter_as(a, {indices}, updates, {axis}, Scatter::Type::type,    \
                      #name, s, loc);                                        \
  }
NUVEC_DEFINE_SCATTER(scatter, set)
NUVEC_DEFINE_SCATTER(scatter_add, add)
NUVEC_DEFINE_SCATTER(scatter_prod, multiply)
NUVEC_DEFINE_SCATTER(scatter_max, maximum)
NUVEC_DEFINE_SCATTER(scatter_min, minimum)
#undef NUVEC_DEFINE_SCATTER

Array masked_scatter(const Array& a, const Array& mask, const Array& src,
                     StreamOrDevice s, Location loc) {
  const char* op = "masked_scatter";
  if (a.is_failed()) return a;
  if (mask.is_failed()) return mask;
  if (src.is_failed()) return src;
  auto bad = [&](ErrorKind k, const std::string& m) {
    return fail(k, m, op, loc);
  };
  if (mask.dtype() != bool_)
    return bad(
        ErrorKind::unsupported_dtype,
        "the mask must be bool, got " + std::string(dtype_name(mask.dtype())));
  if (mask.ndim() > a.ndim())
    return bad(ErrorKind::shape_mismatch,
               "the mask has more dimensions than the array");
  int trailing = a.ndim() - mask.ndim();
  if (src.ndim() > trailing + 1)
    return bad(ErrorKind::shape_mismatch,
               "src of shape " + impl::shape_text(src.shape()) +
                   " must broadcast with the last " + std::to_string(trailing) +
                   " dimensions of the array");
  if (!std::equal(mask.shape().begin(), mask.shape().end(), a.shape().begin()))
    return bad(ErrorKind::shape_mismatch,
               "a mask of shape " + impl::shape_text(mask.shape()) +
                   " is not the leading shape of an array of shape " +
                   impl::shape_text(a.shape()));
  // src as rows of the unmasked block: (rows, a.shape[mask.ndim():]).
  Shape row(a.shape().begin() + mask.ndim(), a.shape().end());
  Array v = ops::astype(src, a.dtype(), s, loc);
  Shape vshape = v.shape(), target = row;
  if (v.ndim() < trailing + 1) {
    vshape.insert(vshape.begin(), trailing + 1 - v.ndim(), 1);
    v = ops::reshape(v, vshape, s, loc);
    if (mask.size() > INT32_MAX)
      return bad(ErrorKind::overflow, "a mask of " + std::to_string(mask.size()) +
                                          " elements gives rows past the int range");
    target.insert(target.begin(), static_cast<int>(mask.size()));
  } else {
    target.insert(target.begin(), v.shape(0));
  }
  Array rows = ops::broadcast_to(v, target, s, loc);
  if (rows.is_failed())
    return bad(ErrorKind::shape_mismatch,
               "src of shape " + impl::shape_text(src.shape()) +
                   " does not broadcast with the array's trailing shape " +
                   impl::shape_text(row));
  if (rows.size() == 0) return a;  // nothing to write with
  // The k-th selected element (row-major) reads element k of src; past its
  // end the last value repeats (Take clamps).
  Shape mshape = mask.shape();
  mshape.insert(mshape.end(), trailing, 1);
  Array m =
      ops::broadcast_to(ops::reshape(mask, mshape, s, loc), a.shape(), s, loc);
  Array flat_m = ops::reshape(m, impl::flat_shape(m), s, loc);
  Array k =
      ops::cumsum(ops::astype(flat_m, int64, s, loc), 0, false, false, s, loc);
  Array picked =
      ops::reshape(impl::take_flat(rows, k, op, s, loc), a.shape(), s, loc);
  return ops::where(m, picked, a, s, loc);
}

}  // namespace nuvec::inline ops
