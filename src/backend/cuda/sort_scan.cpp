// GPU kernels of sorting and scans (cuda.h: launch_sort_scan): the row
// layout along the primitive's axis, then sort.cu or scan.cu.
//
// Partition and ArgPartition run the full stable sort: a sorted row is a
// valid partition for every kth (with the CPU's NaN order), though not the
// CPU's std::nth_element order of the other elements.
#include <string>

#include "backend/cpu/loops.h"
#include "backend/cuda/sort_scan.h"

namespace nuvec::cuda {

namespace {

RowLayout row_layout(const Array& in, int axis) {
  RowLayout l;
  Shape shape = in.shape();
  Strides strides = in.strides();
  l.n = shape[axis];
  l.axis_stride = strides[axis];
  l.offset = in.desc()->offset;
  for (int d = axis + 1; d < in.ndim(); ++d) l.inner *= shape[d];
  shape.erase(shape.begin() + axis);
  strides.erase(strides.begin() + axis);
  l.rows = shape_size(shape);
  auto c = cpu::collapse<1>(shape, {&strides});
  if (c.shape.size() > RowLayout::kMaxDims)
    (Error(ErrorKind::backend, "GPU sorts and scans take at most 8 collapsed dimensions")).raise();
  l.ndim = static_cast<int>(c.shape.size());
  for (int d = 0; d < l.ndim; ++d) {
    l.shape[d] = c.shape[d];
    l.strides[d] = c.strides[0][d];
  }
  return l;
}

}  // namespace

bool launch_sort_scan(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out,
                      void* stream, Stream s) {
  int axis = 0;
  bool arg = false;
  switch (p.id()) {
    case PrimitiveId::Sort: axis = static_cast<const Sort&>(p).axis(); break;
    case PrimitiveId::Partition: axis = static_cast<const Partition&>(p).axis(); break;
    case PrimitiveId::ArgSort:
      axis = static_cast<const ArgSort&>(p).axis();
      arg = true;
      break;
    case PrimitiveId::ArgPartition:
      axis = static_cast<const ArgPartition&>(p).axis();
      arg = true;
      break;
    case PrimitiveId::Scan: axis = static_cast<const Scan&>(p).axis(); break;
    default: return false;
  }
  if (in[0].size() == 0) return true;  // nothing to launch
  RowLayout l = row_layout(in[0], axis);
  if (p.id() == PrimitiveId::Scan)
    scan_rows(static_cast<const Scan&>(p), in[0], out[0], l, s, stream);
  else
    sort_rows(in[0], out[0], l, arg, s, stream);
  return true;
}

}  // namespace nuvec::cuda
