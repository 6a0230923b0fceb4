// Conv1d/2d/3d and ConvTranspose1d/2d/3d over the core's convolutions.
#include "nuvec/nn/conv.h"

#include <cmath>
#include <string>

#include "checks.h"

namespace nuvec::nn {
namespace {

/// The shared constructor checks and MLX's draw: weight [out, kernel...,
/// in / groups] from U(-scale, scale), scale = sqrt(1 / fan_in) computed in
/// double as Python does.
Array draw_weight(const std::string& layer, int in_channels, int out_channels,
                  const std::vector<int>& kernel, int groups) {
  checks::positive(in_channels, "in_channels", layer);
  checks::positive(out_channels, "out_channels", layer);
  checks::all_positive(kernel, "kernel_size", layer);
  checks::positive(groups, "groups", layer);
  if (in_channels % groups != 0)
    checks::fail(layer, "the number of input channels (" +
                            std::to_string(in_channels) +
                            ") must be divisible by the number of groups (" +
                            std::to_string(groups) + ")");
  if (out_channels % groups != 0)
    checks::fail(layer, "the number of output channels (" +
                            std::to_string(out_channels) +
                            ") must be divisible by the number of groups (" +
                            std::to_string(groups) + ")");
  int64_t fan_in = in_channels / groups;
  Shape shape{out_channels};
  for (int k : kernel) {
    fan_in *= k;
    shape.push_back(k);
  }
  shape.push_back(in_channels / groups);
  double scale = std::sqrt(1.0 / static_cast<double>(fan_in));
  return random::uniform(-scale, scale, shape);
}

void check_geometry(const std::string& layer, const std::vector<int>& stride,
                    const std::vector<int>& padding,
                    const std::vector<int>& dilation) {
  checks::all_positive(stride, "stride", layer);
  checks::all_non_negative(padding, "padding", layer);
  checks::all_positive(dilation, "dilation", layer);
}

/// A failed array unless x is floating [N, spatial..., in_channels].
std::optional<Array> check_input(const ModuleBase& m, const Array& x,
                                 const Array& w, int groups) {
  int spatial = w.ndim() - 2;
  if (auto bad = checks::floating(m, x)) return bad;
  if (auto bad = checks::ndim_in(m, x, spatial + 2, spatial + 2,
                                 " [N, spatial..., C]"))
    return bad;
  return checks::last_axis(m, x, static_cast<int64_t>(w.shape(-1)) * groups,
                           "input channels");
}

Array add_bias(Array y, const std::optional<Param>& bias) {
  if (bias) y = y + bias->value;
  return y;
}

}  // namespace

Conv1d::Conv1d(int in_channels, int out_channels, int kernel_size, int stride_,
               int padding_, int dilation_, int groups_, bool has_bias)
    : stride(stride_), padding(padding_), dilation(dilation_), groups(groups_) {
  check_geometry("Conv1d", {stride}, {padding}, {dilation});
  weight =
      draw_weight("Conv1d", in_channels, out_channels, {kernel_size}, groups);
  if (has_bias) bias = Param(ops::zeros({out_channels}));
}

Array Conv1d::operator()(const Array& x) const {
  if (auto bad = check_input(*this, x, weight.value, groups)) return *bad;
  return add_bias(
      ops::conv1d(x, weight.value, stride, padding, dilation, groups), bias);
}

Conv2d::Conv2d(int in_channels, int out_channels, PerAxis<2> kernel_size,
               PerAxis<2> stride_, PerAxis<2> padding_, PerAxis<2> dilation_,
               int groups_, bool has_bias)
    : stride(stride_.vec()),
      padding(padding_.vec()),
      dilation(dilation_.vec()),
      groups(groups_) {
  check_geometry("Conv2d", stride, padding, dilation);
  weight = draw_weight("Conv2d", in_channels, out_channels, kernel_size.vec(),
                       groups);
  if (has_bias) bias = Param(ops::zeros({out_channels}));
}

Array Conv2d::operator()(const Array& x) const {
  if (auto bad = check_input(*this, x, weight.value, groups)) return *bad;
  return add_bias(
      ops::conv2d(x, weight.value, {stride[0], stride[1]},
                  {padding[0], padding[1]}, {dilation[0], dilation[1]}, groups),
      bias);
}

Conv3d::Conv3d(int in_channels, int out_channels, PerAxis<3> kernel_size,
               PerAxis<3> stride_, PerAxis<3> padding_, PerAxis<3> dilation_,
               bool has_bias)
    : stride(stride_.vec()),
      padding(padding_.vec()),
      dilation(dilation_.vec()) {
  check_geometry("Conv3d", stride, padding, dilation);
  weight =
      draw_weight("Conv3d", in_channels, out_channels, kernel_size.vec(), 1);
  if (has_bias) bias = Param(ops::zeros({out_channels}));
}

Array Conv3d::operator()(const Array& x) const {
  if (auto bad = check_input(*this, x, weight.value, 1)) return *bad;
  return add_bias(
      ops::conv3d(x, weight.value, {stride[0], stride[1], stride[2]},
                  {padding[0], padding[1], padding[2]},
                  {dilation[0], dilation[1], dilation[2]}),
      bias);
}

ConvTranspose1d::ConvTranspose1d(int in_channels, int out_channels,
                                 int kernel_size, int stride_, int padding_,
                                 int dilation_, int output_padding_,
                                 bool has_bias)
    : stride(stride_),
      padding(padding_),
      dilation(dilation_),
      output_padding(output_padding_) {
  check_geometry("ConvTranspose1d", {stride}, {padding}, {dilation});
  checks::all_non_negative({output_padding}, "output_padding",
                           "ConvTranspose1d");
  weight = draw_weight("ConvTranspose1d", in_channels, out_channels,
                       {kernel_size}, 1);
  if (has_bias) bias = Param(ops::zeros({out_channels}));
}

Array ConvTranspose1d::operator()(const Array& x) const {
  if (auto bad = check_input(*this, x, weight.value, 1)) return *bad;
  return add_bias(ops::conv_transpose1d(x, weight.value, stride, padding,
                                        dilation, output_padding),
                  bias);
}

ConvTranspose2d::ConvTranspose2d(int in_channels, int out_channels,
                                 PerAxis<2> kernel_size, PerAxis<2> stride_,
                                 PerAxis<2> padding_, PerAxis<2> dilation_,
                                 PerAxis<2> output_padding_, bool has_bias)
    : stride(stride_.vec()),
      padding(padding_.vec()),
      dilation(dilation_.vec()),
      output_padding(output_padding_.vec()) {
  check_geometry("ConvTranspose2d", stride, padding, dilation);
  checks::all_non_negative(output_padding, "output_padding", "ConvTranspose2d");
  weight = draw_weight("ConvTranspose2d", in_channels, out_channels,
                       kernel_size.vec(), 1);
  if (has_bias) bias = Param(ops::zeros({out_channels}));
}

Array ConvTranspose2d::operator()(const Array& x) const {
  if (auto bad = check_input(*this, x, weight.value, 1)) return *bad;
  return add_bias(ops::conv_transpose2d(x, weight.value, {stride[0], stride[1]},
                                        {padding[0], padding[1]},
                                        {dilation[0], dilation[1]},
                                        {output_padding[0], output_padding[1]}),
                  bias);
}

ConvTranspose3d::ConvTranspose3d(int in_channels, int out_channels,
                                 PerAxis<3> kernel_size, PerAxis<3> stride_,
                                 PerAxis<3> padding_, PerAxis<3> dilation_,
                                 PerAxis<3> output_padding_, bool has_bias)
    : stride(stride_.vec()),
      padding(padding_.vec()),
      dilation(dilation_.vec()),
      output_padding(output_padding_.vec()) {
  check_geometry("ConvTranspose3d", stride, padding, dilation);
  checks::all_non_negative(output_padding, "output_padding", "ConvTranspose3d");
  weight = draw_weight("ConvTranspose3d", in_channels, out_channels,
                       kernel_size.vec(), 1);
  if (has_bias) bias = Param(ops::zeros({out_channels}));
}

Array ConvTranspose3d::operator()(const Array& x) const {
  if (auto bad = check_input(*this, x, weight.value, 1)) return *bad;
  return add_bias(
      ops::conv_transpose3d(
          x, weight.value, {stride[0], stride[1], stride[2]},
          {padding[0], padding[1], padding[2]},
          {dilation[0], dilation[1], dilation[2]},
          {output_padding[0], output_padding[1], output_padding[2]}),
      bias);
}

}  // namespace nuvec::nn
