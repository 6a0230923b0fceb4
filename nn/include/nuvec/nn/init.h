// The initializers of mlx.nn.init (docs/nn.md): each function returns an
// initializer, a function from an array to a new array of its shape drawn
// (from the thread's key sequence, in MLX's order) or filled as MLX does.
//
//   auto init = nn::init::glorot_uniform();
//   layer.weight.value = init(layer.weight.value);
//
// MLX's glorot and he initializers take gain (and mode) when called; here
// they are arguments of the function that makes the initializer.
#pragma once

#include <functional>
#include <string>

#include "nuvec/nuvec.h"

namespace nuvec::nn::init {

/// A function from an array to an initialized array of its shape. An
/// array it cannot initialize (identity of a non-square one...) gives a
/// failed array.
using Initializer = std::function<Array(const Array&)>;

/// Every element `value` (a float32 value converted to `dtype`).
Initializer constant(double value, DType dtype = float32);
/// Normal with mean `mean` and standard deviation `std`.
Initializer normal(double mean = 0.0, double std = 1.0, DType dtype = float32);
/// Uniform in [low, high).
Initializer uniform(double low = 0.0, double high = 1.0, DType dtype = float32);
/// The identity matrix of a square 2-D array's size.
Initializer identity(DType dtype = float32);
/// Normal with std = gain * sqrt(2 / (fan_in + fan_out)) (Glorot, Xavier).
/// fan_in is the last axis and fan_out the first, both times the product of
/// the axes between (at least 2-D).
Initializer glorot_normal(DType dtype = float32, double gain = 1.0);
/// Uniform in [-limit, limit), limit = gain * sqrt(6 / (fan_in + fan_out)).
Initializer glorot_uniform(DType dtype = float32, double gain = 1.0);
/// Normal with std = gain / sqrt(fan), fan of `mode` "fan_in" or
/// "fan_out" (another mode throws nuvec::Error here; MLX raises when called).
Initializer he_normal(DType dtype = float32, const std::string& mode = "fan_in",
                      double gain = 1.0);
/// Uniform in [-limit, limit), limit = gain * sqrt(3 / fan).
Initializer he_uniform(DType dtype = float32,
                       const std::string& mode = "fan_in", double gain = 1.0);
/// A 2-D normal(mean, std) array with ceil(sparsity * columns) zeros in
/// every row, at the positions of the smallest of a uniform draw (drawn
/// first, as MLX).
Initializer sparse(double sparsity, double mean = 0.0, double std = 1.0,
                   DType dtype = float32);
/// The first rows x columns of Q from the QR factorization of an n x n
/// standard normal draw (n the larger size), columns scaled by the signs
/// of R's diagonal, times gain (2-D only).
Initializer orthogonal(double gain = 1.0, DType dtype = float32);

}  // namespace nuvec::nn::init
