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
  // The flat positions of the slice, from the shapes alone (slice's
  // normalization), so that a small update of a large array (a KV cache)
  // costs the update, not the array: up to 64 K positions one constant
  // computed here (one node, one upload: a decode step's cache write), more
  // as per-axis constants broadcast-added on the device (a prefill's).
  double total = 1;
  for (int d : src.shape()) total *= d;
  const bool wide = total > 2147483647.0;
  std::vector<int> first(nd), count(nd);
  std::vector<int64_t> rstride(nd, 1);
  double n_pos = 1;
  for (size_t d = 0; d < nd; ++d) {
    impl::slice_axis(src.shape(static_cast<int>(d)), start[d], stop[d], strides[d], first[d], count[d]);
    n_pos *= count[d];
  }
  for (int d = static_cast<int>(nd) - 2; d >= 0; --d) rstride[d] = rstride[d + 1] * src.shape(d + 1);
  auto axis_positions = [&](size_t d) {
    std::vector<int64_t> v(static_cast<size_t>(count[d]));
    for (int j = 0; j < count[d]; ++j) v[j] = (first[d] + int64_t(j) * strides[d]) * rstride[d];
    return v;
  };
  auto constant = [&](const std::vector<int64_t>& v, Shape shape) {
    if (wide) return nuvec::array(v, std::move(shape));
    return nuvec::array(std::vector<int32_t>(v.begin(), v.end()), std::move(shape));
  };
  std::optional<Array> pos_acc;
  if (nd > 0 && n_pos <= 65536) {
    std::vector<int64_t> all{0};
    for (size_t d = 0; d < nd; ++d) {
      auto ax = axis_positions(d);
      std::vector<int64_t> next;
      next.reserve(all.size() * ax.size());
      for (int64_t p : all)
        for (int64_t q : ax) next.push_back(p + q);
      all.swap(next);
    }
    pos_acc = constant(all, Shape(count.begin(), count.end()));
  } else {
    for (size_t d = 0; d < nd; ++d) {
      Shape bshape(nd, 1);
      bshape[d] = count[d];
      Array ax = constant(axis_positions(d), bshape);
      pos_acc = pos_acc ? ops::add(*pos_acc, ax, s, loc) : ax;
    }
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
