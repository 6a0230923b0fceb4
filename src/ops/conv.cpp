// Convolutions: validate in Im2Col's rule, gather patches, one matmul
// (one batched matmul over groups).
#include "nuvec/ops/conv.h"

#include "nuvec/ops/elementwise.h"
#include "nuvec/ops/linalg.h"
#include "nuvec/ops/shape.h"
#include "nuvec/primitives/conv.h"
#include "ops/builder.h"

namespace nuvec::inline ops {

using impl::build1;
using impl::fail;
using impl::make;

namespace {

std::vector<int> per_axis(std::vector<int> v, int d, int fill) {
  if (v.empty()) return std::vector<int>(static_cast<size_t>(std::max(d, 0)), fill);
  if (v.size() == 1 && d > 1) return std::vector<int>(static_cast<size_t>(d), v[0]);
  return v;
}

Array flip_spatial(const Array& w, StreamOrDevice s, Location loc) {
  std::vector<int> start(w.ndim(), 0), stop(w.ndim()), step(w.ndim(), 1);
  for (int a = 0; a < w.ndim(); ++a) {
    stop[a] = w.shape(a);
    if (a > 0 && a < w.ndim() - 1) start[a] = -1, stop[a] = -w.shape(a) - 1, step[a] = -1;
  }
  return ops::slice(w, start, stop, step, s, loc);
}

}  // namespace

Array conv_general(const Array& input, const Array& weight, std::vector<int> stride,
                   std::vector<int> padding, std::vector<int> kernel_dilation,
                   std::vector<int> input_dilation, int groups, bool flip, StreamOrDevice s,
                   Location loc) {
  return conv_general(Array(input), weight, std::move(stride), padding, padding,
                      std::move(kernel_dilation), std::move(input_dilation), groups, flip, s,
                      loc);
}

Array conv_general(Array input, const Array& weight, std::vector<int> stride,
                   std::vector<int> padding_lo, std::vector<int> padding_hi,
                   std::vector<int> kernel_dilation, std::vector<int> input_dilation,
                   int groups, bool flip, StreamOrDevice s, Location loc) {
  const char* op = "conv";
  if (input.is_failed()) return input;
  if (weight.is_failed()) return weight;
  int d = input.ndim() - 2;
  Array x = input, w = weight;
  if (is_floating(x.dtype()) && is_floating(w.dtype()) && x.dtype() != w.dtype()) {
    DType t = promote_types(x.dtype(), w.dtype());
    x = ops::astype(x, t, s, loc), w = ops::astype(w, t, s, loc);
  }
  auto prim = make<Im2Col>(per_axis(std::move(stride), d, 1), per_axis(std::move(padding_lo), d, 0),
                           per_axis(std::move(padding_hi), d, 0),
                           per_axis(std::move(kernel_dilation), d, 1),
                           per_axis(std::move(input_dilation), d, 1), groups);
  Array cols = build1(prim, {x, w}, s, op, loc);
  if (cols.is_failed()) return cols;
  if (flip) w = flip_spatial(w, s, loc);
  int n = x.shape(0), cin = x.shape(-1), cout = w.shape(0);
  int64_t m = n, taps = 1;
  Shape out_shape{n};
  for (int a = 0; a < d; ++a) {
    m *= cols.shape(1 + a);
    taps *= cols.shape(1 + d + a);
    out_shape.push_back(cols.shape(1 + a));
  }
  out_shape.push_back(cout);
  // The patch matrix's sides (products within int64: cols passed the size
  // rule) must fit int.
  auto rows = checked_dim(m, "number of patches");
  auto width = checked_dim(taps * cin, "patch length");
  for (const auto* e : {&rows, &width})
    if (!*e) return fail(e->error().kind(), e->error().message(), op, loc);
  int M = *rows, K = static_cast<int>(taps);
  if (groups == 1) {
    Array a = ops::reshape(cols, {M, *width}, s, loc);
    Array b = ops::reshape(w, {cout, *width}, s, loc);
    return ops::reshape(ops::matmul(a, ops::transpose(b, s, loc), s, loc), out_shape, s, loc);
  }
  int G = groups, cg = cin / G, og = cout / G;
  Array a = ops::reshape(cols, {M, K, G, cg}, s, loc);
  a = ops::reshape(ops::transpose(a, {2, 0, 1, 3}, s, loc), {G, M, K * cg}, s, loc);
  Array b = ops::reshape(w, {G, og, K * cg}, s, loc);
  Array r = ops::matmul(a, ops::transpose(b, {0, 2, 1}, s, loc), s, loc);  // [G, M, og]
  return ops::reshape(ops::transpose(r, {1, 0, 2}, s, loc), out_shape, s, loc);
}

Array conv1d(const Array& input, const Array& weight, int stride, int padding, int dilation,
             int groups, StreamOrDevice s, Location loc) {
  return conv_general(input, weight, {stride}, {padding}, {padding}, {dilation}, {1}, groups,
                      false, s, loc);
}

Array conv2d(const Array& input, const Array& weight, PerAxis<2> stride, PerAxis<2> padding,
             PerAxis<2> dilation, int groups, StreamOrDevice s, Location loc) {
  return conv_general(input, weight, stride.vec(), padding.vec(), padding.vec(), dilation.vec(),
                      {1, 1}, groups, false, s, loc);
}

Array conv3d(const Array& input, const Array& weight, PerAxis<3> stride, PerAxis<3> padding,
             PerAxis<3> dilation, int groups, StreamOrDevice s, Location loc) {
  return conv_general(input, weight, stride.vec(), padding.vec(), padding.vec(), dilation.vec(),
                      {1, 1, 1}, groups, false, s, loc);
}

namespace {

Array conv_transpose_general(const Array& input, const Array& weight, std::vector<int> stride,
                             std::vector<int> padding, std::vector<int> dilation,
                             std::vector<int> output_padding, int groups, StreamOrDevice s,
                             Location loc) {
  if (input.is_failed()) return input;
  if (weight.is_failed()) return weight;
  std::vector<int> lo(padding.size()), hi(padding.size());
  // With a weight of the wrong rank the kernel size is unknown; Im2Col's
  // rule reports it (the padding computed here is then unused).
  for (size_t a = 0; a < padding.size(); ++a) {
    int k = static_cast<int>(a + 1) < weight.ndim() ? weight.shape(static_cast<int>(a) + 1) : 1;
    int64_t l = int64_t(dilation[a]) * (k - 1) - padding[a], h = l + output_padding[a];
    for (int64_t v : {l, h})
      if (v < -2147483648LL || v > 2147483647LL)
        return fail(ErrorKind::overflow,
                    "padding " + std::to_string(v) + " of axis " + std::to_string(a + 1) +
                        " exceeds the int range",
                    "conv_transpose", loc);
    lo[a] = static_cast<int>(l);
    hi[a] = static_cast<int>(h);
  }
  return conv_general(input, weight, std::vector<int>(padding.size(), 1), lo, hi, dilation,
                      stride, groups, true, s, loc);
}

}  // namespace

Array conv_transpose1d(const Array& input, const Array& weight, int stride, int padding,
                       int dilation, int output_padding, int groups, StreamOrDevice s,
                       Location loc) {
  return conv_transpose_general(input, weight, {stride}, {padding}, {dilation}, {output_padding},
                                groups, s, loc);
}

Array conv_transpose2d(const Array& input, const Array& weight, PerAxis<2> stride,
                       PerAxis<2> padding, PerAxis<2> dilation, PerAxis<2> output_padding,
                       int groups, StreamOrDevice s, Location loc) {
  return conv_transpose_general(input, weight, stride.vec(), padding.vec(), dilation.vec(),
                                output_padding.vec(), groups, s, loc);
}

Array conv_transpose3d(const Array& input, const Array& weight, PerAxis<3> stride,
                       PerAxis<3> padding, PerAxis<3> dilation, PerAxis<3> output_padding,
                       int groups, StreamOrDevice s, Location loc) {
  return conv_transpose_general(input, weight, stride.vec(), padding.vec(), dilation.vec(),
                                output_padding.vec(), groups, s, loc);
}

}  // namespace nuvec::ops
