// The recurrent layers of mlx.nn: RNN, GRU and LSTM (docs/nn.md). Inputs are
// [..., L, input_size] (usually [N, L, D] or [L, D]); the output holds the
// hidden state of every step, [..., L, hidden_size]. Every weight and bias
// is drawn from U(-k, k), k = 1/sqrt(hidden_size), in MLX's order.
#pragma once

#include <functional>
#include <optional>
#include <utility>

#include "nuvec/nn/module.h"

namespace nuvec::nn {

/// h_t = nonlinearity(x_t Wxh^T + bias + h_{t-1} Whh^T) (Elman RNN); the
/// nonlinearity is tanh when left empty.
struct RNN : Module<RNN> {
  Param Wxh, Whh;
  std::optional<Param> bias;
  int hidden_size;
  std::function<Array(const Array&)> nonlinearity;
  /// Draws Wxh [hidden, input], Whh [hidden, hidden], then bias [hidden].
  /// Throws nuvec::Error when a size is not positive.
  RNN(int input_size, int hidden_size, bool bias = true,
      std::function<Array(const Array&)> nonlinearity = {});
  /// x [..., L, input_size] (L >= 1), hidden [..., hidden_size] or absent
  /// (zero); returns [..., L, hidden_size]. A wrong last axis, rank or
  /// dtype gives a failed array naming the layer.
  Array operator()(const Array& x,
                   const std::optional<Array>& hidden = std::nullopt) const;
};
NUVEC_TREE(RNN, Wxh, Whh, bias, NUVEC_STATIC(hidden_size),
           NUVEC_UNCHECKED(nonlinearity))

/// The gated recurrent unit as MLX's: gates r, z, n in that order along
/// Wx's rows; bhn is the hidden bias of n (applied inside r * (...)).
struct GRU : Module<GRU> {
  Param Wx, Wh;
  std::optional<Param> b, bhn;
  int hidden_size;
  /// Draws Wx [3 hidden, input], Wh [3 hidden, hidden], b [3 hidden], bhn
  /// [hidden].
  GRU(int input_size, int hidden_size, bool bias = true);
  /// As RNN's call.
  Array operator()(const Array& x,
                   const std::optional<Array>& hidden = std::nullopt) const;
};
NUVEC_TREE(GRU, Wx, Wh, b, bhn, NUVEC_STATIC(hidden_size))

/// The long short-term memory as MLX's: gates i, f, g, o in that order
/// along Wx's rows.
struct LSTM : Module<LSTM> {
  Param Wx, Wh;
  std::optional<Param> bias;
  int hidden_size;
  /// Draws Wx [4 hidden, input], Wh [4 hidden, hidden], bias [4 hidden].
  LSTM(int input_size, int hidden_size, bool bias = true);
  /// {hidden states, cell states} of every step, each [..., L,
  /// hidden_size]; hidden and cell start at zero when absent.
  std::pair<Array, Array> operator()(
      const Array& x, const std::optional<Array>& hidden = std::nullopt,
      const std::optional<Array>& cell = std::nullopt) const;
};
NUVEC_TREE(LSTM, Wx, Wh, bias, NUVEC_STATIC(hidden_size))

}  // namespace nuvec::nn
