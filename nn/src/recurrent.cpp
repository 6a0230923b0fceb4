// RNN, GRU and LSTM: the same ops in the same order as mlx.nn's
// recurrent.py (one input projection for all steps, then a loop over L).
#include "nuvec/nn/recurrent.h"

#include <cmath>
#include <string>

#include "checks.h"

namespace nuvec::nn {
namespace {

Array draw(double scale, const Shape& shape) {
  return random::uniform(-scale, scale, shape);
}

void check_sizes(int input_size, int hidden_size, const char* layer) {
  checks::positive(input_size, "input_size", layer);
  checks::positive(hidden_size, "hidden_size", layer);
}

/// A failed array unless x is floating [..., L >= 1, input] and the states
/// given end in hidden_size.
std::optional<Array> check_call(const ModuleBase& m, const Array& x,
                                int input_size, int hidden_size,
                                const std::optional<Array>& hidden,
                                const std::optional<Array>& cell = {}) {
  if (auto bad = checks::floating(m, x)) return bad;
  if (auto bad = checks::ndim_in(m, x, 2, 1 << 20, " [..., L, input_size]"))
    return bad;
  if (auto bad = checks::last_axis(m, x, input_size, "input size")) return bad;
  if (x.shape(-2) == 0)
    return detail::layer_error(m, ErrorKind::invalid_shape,
                               "the input sequence is empty");
  if (hidden)
    if (auto bad =
            checks::last_axis(m, *hidden, hidden_size, "hidden state size"))
      return bad;
  if (cell)
    if (auto bad = checks::last_axis(m, *cell, hidden_size, "cell state size"))
      return bad;
  return std::nullopt;
}

/// x W^T (+ b): the projection of every step at once.
Array project(const Array& x, const Param& w, const std::optional<Param>& b) {
  if (b) return ops::addmm(b->value, x, w.value.t());
  return ops::matmul(x, w.value.t());
}

/// x[..., t, :].
Array step(const Array& x, int t) { return x.i(ellipsis, t, IndexSlice{}); }

}  // namespace

RNN::RNN(int input_size, int hidden_size_, bool has_bias,
         std::function<Array(const Array&)> f)
    : hidden_size(hidden_size_), nonlinearity(std::move(f)) {
  check_sizes(input_size, hidden_size, "RNN");
  if (!nonlinearity) nonlinearity = [](const Array& a) { return ops::tanh(a); };
  double scale = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  Wxh = draw(scale, {hidden_size, input_size});
  Whh = draw(scale, {hidden_size, hidden_size});
  if (has_bias) bias = Param(draw(scale, {hidden_size}));
}

Array RNN::operator()(const Array& x_in, const std::optional<Array>& h0) const {
  if (auto bad = check_call(*this, x_in, Wxh.value.shape(1), hidden_size, h0))
    return *bad;
  Array x = project(x_in, Wxh, bias);
  std::optional<Array> hidden = h0;
  std::vector<Array> all;
  for (int t = 0; t < x.shape(-2); ++t) {
    Array h =
        hidden ? ops::addmm(step(x, t), *hidden, Whh.value.t()) : step(x, t);
    hidden = nonlinearity(h);
    all.push_back(*hidden);
  }
  return ops::stack(all, -2);
}

GRU::GRU(int input_size, int hidden_size_, bool has_bias)
    : hidden_size(hidden_size_) {
  check_sizes(input_size, hidden_size, "GRU");
  double scale = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  Wx = draw(scale, {3 * hidden_size, input_size});
  Wh = draw(scale, {3 * hidden_size, hidden_size});
  if (has_bias) {
    b = Param(draw(scale, {3 * hidden_size}));
    bhn = Param(draw(scale, {hidden_size}));
  }
}

Array GRU::operator()(const Array& x_in, const std::optional<Array>& h0) const {
  if (auto bad = check_call(*this, x_in, Wx.value.shape(1), hidden_size, h0))
    return *bad;
  const int h = hidden_size;
  Array x = project(x_in, Wx, b);
  Array x_rz = x.i(ellipsis, slice(std::nullopt, -h));
  Array x_n = x.i(ellipsis, slice(-h, std::nullopt));
  std::optional<Array> hidden = h0;
  std::vector<Array> all;
  for (int t = 0; t < x.shape(-2); ++t) {
    Array rz = step(x_rz, t);
    std::optional<Array> h_proj_n;
    if (hidden) {
      Array h_proj = ops::matmul(*hidden, Wh.value.t());
      Array h_proj_rz = h_proj.i(ellipsis, slice(std::nullopt, -h));
      h_proj_n = h_proj.i(ellipsis, slice(-h, std::nullopt));
      if (bhn) h_proj_n = *h_proj_n + bhn->value;
      rz = rz + h_proj_rz;
    }
    rz = ops::sigmoid(rz);
    auto parts = ops::split(rz, 2, -1);
    const Array& r = parts[0];
    const Array& z = parts[1];
    Array n = step(x_n, t);
    if (hidden)
      n = n + r * *h_proj_n;
    else if (bhn)
      n = n + r * bhn->value;
    n = ops::tanh(n);
    hidden = hidden ? (1 - z) * n + z * *hidden : (1 - z) * n;
    all.push_back(*hidden);
  }
  return ops::stack(all, -2);
}

LSTM::LSTM(int input_size, int hidden_size_, bool has_bias)
    : hidden_size(hidden_size_) {
  check_sizes(input_size, hidden_size, "LSTM");
  double scale = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  Wx = draw(scale, {4 * hidden_size, input_size});
  Wh = draw(scale, {4 * hidden_size, hidden_size});
  if (has_bias) bias = Param(draw(scale, {4 * hidden_size}));
}

std::pair<Array, Array> LSTM::operator()(const Array& x_in,
                                         const std::optional<Array>& h0,
                                         const std::optional<Array>& c0) const {
  if (auto bad =
          check_call(*this, x_in, Wx.value.shape(1), hidden_size, h0, c0))
    return {*bad, *bad};
  Array x = project(x_in, Wx, bias);
  std::optional<Array> hidden = h0, cell = c0;
  std::vector<Array> all_hidden, all_cell;
  for (int t = 0; t < x.shape(-2); ++t) {
    Array ifgo = step(x, t);
    if (hidden) ifgo = ops::addmm(ifgo, *hidden, Wh.value.t());
    auto g4 = ops::split(ifgo, 4, -1);
    Array i = ops::sigmoid(g4[0]);
    Array f = ops::sigmoid(g4[1]);
    Array g = ops::tanh(g4[2]);
    Array o = ops::sigmoid(g4[3]);
    cell = cell ? f * *cell + i * g : i * g;
    hidden = o * ops::tanh(*cell);
    all_cell.push_back(*cell);
    all_hidden.push_back(*hidden);
  }
  return {ops::stack(all_hidden, -2), ops::stack(all_cell, -2)};
}

}  // namespace nuvec::nn
