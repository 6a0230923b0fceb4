// Slice updates, static (start, stop, strides) and dynamic (start indices in
// an array), with MLX's checks: the flat positions of the slice (the slice of
// arange(src.size()) shaped like src) take the update through one Scatter.
// Positions inside one slice are distinct, so the order of writes never
// matters here.
#include "nuvec/ops/ops.h"
#include "nuvec/primitives/indexing.h"
#include "ops/builder.h"
#include "ops/indexing_impl.h"

namespace nuvec::inline ops {

namespace {

using impl::fail;

Array static_update(const Array& src, const Array& update, const Shape& start,
                    const Shape& stop, const Shape& strides, Scatter::Type type,
                    const char* op, const StreamOrDevice& s, Location loc) {
  if (src.is_failed()) return src;
  if (update.is_failed()) return update;
  size_t nd = src.ndim();
  if (start.size() != nd || stop.size() != nd || strides.size() != nd)
    return fail(ErrorKind::invalid_argument,
                "start, stop and strides need one entry for each of the " +
                    std::to_string(nd) + " dimensions, got " +
                    std::to_string(start.size()) + ", " +
                    std::to_string(stop.size()) + " and " +
                    std::to_string(strides.size()),
                op, loc);
  for (int k : strides)
    if (k == 0)
      return fail(ErrorKind::invalid_argument, "slice step cannot be 0", op,
                  loc);
  // The flat positions of the slice: per axis, its indices times the axis'
  // row-major stride (small constants computed here, as slice normalizes
  // them), broadcast-added. A small update of a large array (a KV cache)
  // costs the update, not the array, and adds a few nodes.
  double total = 1;
  for (int d : src.shape()) total *= d;
  const bool wide = total > 2147483647.0;
  std::optional<Array> pos_acc;
  int64_t row_stride = 1;
  for (int d = static_cast<int>(nd) - 1; d >= 0; --d) {
    int first = 0, count = 0;
    impl::slice_axis(src.shape(d), start[d], stop[d], strides[d], first, count);
    std::vector<int64_t> idx(static_cast<size_t>(count));
    for (int j = 0; j < count; ++j) idx[j] = (first + int64_t(j) * strides[d]) * row_stride;
    Shape bshape(nd, 1);
    bshape[d] = count;
    Array ax = nuvec::array(idx, bshape);
    if (!wide) ax = ops::astype(ax, int32, s, loc);
    pos_acc = pos_acc ? ops::add(*pos_acc, ax, s, loc) : ax;
    row_stride *= src.shape(d);
  }
  Array pos = nd == 0 ? ops::slice(impl::positions_of(src.shape(), s, loc), start, stop, strides, s, loc)
                      : *pos_acc;
  if (pos.is_failed()) return impl::refail(pos, op, loc);
  Array upd = ops::broadcast_to(ops::astype(update, src.dtype(), s, loc),
                                pos.shape(), s, loc);
  if (upd.is_failed())
    return fail(ErrorKind::shape_mismatch,
                "an update of shape " + impl::shape_text(update.shape()) +
                    " cannot broadcast to the slice's shape " +
                    impl::shape_text(pos.shape()),
                op, loc);
  return impl::scatter_flat(src, pos, upd, type, op, s, loc);
}

Shape ones_like_rank(const Array& a) { return Shape(a.ndim(), 1); }

}  // namespace

Array slice(const Array& x, Shape start, Shape stop, StreamOrDevice s,
            Location loc) {
  return ops::slice(x, std::move(start), std::move(stop), {}, s, loc);
}

#define NUVEC_DEFINE_SLICE_UPDATE(name, type)                                \
  Array name(const Array& src, const Array& update, Shape start, Shape stop, \
             Shape strides, StreamOrDevice s, Location loc) {                \
    return static_update(src, update, start, stop, strides,                  \
                         Scatter::Type::type, #name, s, loc);                \
  }                                                                          \
  Array name(const Array& src, const Array& update, Shape start, Shape stop, \
             StreamOrDevice s, Location loc) {                               \
    return static_update(src, update, start, stop, ones_like_rank(src),      \
                         Scatter::Type::type, #name, s, loc);                \
  }
NUVEC_DEFINE_SLICE_UPDATE(slice_update, set)
NUVEC_DEFINE_SLICE_UPDATE(slice_update_add, add)
NUVEC_DEFINE_SLICE_UPDATE(slice_update_prod, multiply)
NUVEC_DEFINE_SLICE_UPDATE(slice_update_max, maximum)
NUVEC_DEFINE_SLICE_UPDATE(slice_update_min, minimum)
#undef NUVEC_DEFINE_SLICE_UPDATE

Array slice_update(const Array& x, const Array& update, const Array& start,
                   const std::vector<int>& axes, StreamOrDevice s,
                   Location loc) {
  const char* op = "slice_update";
  if (x.is_failed()) return x;
  if (update.is_failed()) return update;
  if (start.is_failed()) return start;
  std::vector<int> ax(axes);
  if (auto bad = impl::check_dynamic_start(x, start, ax, op, loc)) return *bad;
  if (update.ndim() > x.ndim())
    return fail(ErrorKind::shape_mismatch,
                "an update of dimension " + std::to_string(update.ndim()) +
                    " for an array of dimension " + std::to_string(x.ndim()),
                op, loc);
  // MLX's block: missing leading axes take x's sizes (1 on the listed
  // axes); the others are the update's, at most x's.
  int lead = x.ndim() - update.ndim();
  Shape block = update.shape();
  block.insert(block.begin(), x.shape().begin(), x.shape().begin() + lead);
  for (int d = lead; d < x.ndim(); ++d)
    block[d] = std::min(block[d], x.shape(d));
  for (int a : ax)
    if (a < lead) block[a] = 1;
  Array upd =
      ops::broadcast_to(ops::astype(update, x.dtype(), s, loc), block, s, loc);
  if (upd.is_failed())
    return fail(ErrorKind::shape_mismatch,
                "an update of shape " + impl::shape_text(update.shape()) +
                    " does not fit an array of shape " +
                    impl::shape_text(x.shape()),
                op, loc);
  Array pos = impl::dynamic_positions(x.shape(), start, ax, block, s, loc);
  return impl::scatter_flat(x, pos, upd, Scatter::Type::set, op, s, loc);
}

}  // namespace nuvec::inline ops
