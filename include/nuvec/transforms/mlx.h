// MLX's C++ transforms API (mlx/transforms.h): the std::function forms
// over std::vector<Array> and over single arrays, with MLX's meaning, so
// that MLX C++ code ports by renaming the namespace (docs/transforms.md).
// The one-argument calls grad(f), value_and_grad(f), vmap(f), checkpoint(f)
// and custom_function(f) are nuvec's templates (tree.h, vmap.h, custom.h),
// which pick MLX's meaning for a function of one std::vector<Array>.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "nuvec/transforms/flat.h"

namespace nuvec {

/// MLX's ValueAndGradFn: {f's outputs, the gradients of the first output}.
using ValueAndGradFn =
    std::function<std::pair<std::vector<Array>, std::vector<Array>>(
        const std::vector<Array>&)>;
/// MLX's SimpleValueAndGradFn: {f's value, its gradients}.
using SimpleValueAndGradFn = std::function<std::pair<Array, std::vector<Array>>(
    const std::vector<Array>&)>;
/// A function of positional arrays returning one array (MLX's loss form).
using ArraysToArray = std::function<Array(const std::vector<Array>&)>;
/// A function of one array returning one array.
using UnaryFunction = std::function<Array(const Array&)>;
/// A function of two arrays returning one array.
using BinaryFunction = std::function<Array(const Array&, const Array&)>;

/// Reverse mode (MLX's vjp): {fun(primals), one vjp per primal} for one
/// cotangent per output. Cotangents must have the outputs' shapes (else
/// std::invalid_argument naming the output) and are cast to the outputs'
/// dtypes, as MLX casts them.
std::pair<std::vector<Array>, std::vector<Array>> vjp(
    const FlatFunction& fun, const std::vector<Array>& primals,
    const std::vector<Array>& cotangents);

/// Reverse mode of a function of one array: {fun(primal), its vjp}.
std::pair<Array, Array> vjp(const UnaryFunction& fun, const Array& primal,
                            const Array& cotangent);

/// Forward mode (MLX's jvp): {fun(primals), one jvp per output} for one
/// tangent per primal (the primal's shape, else std::invalid_argument; cast
/// to the primal's dtype).
std::pair<std::vector<Array>, std::vector<Array>> jvp(
    const FlatFunction& fun, const std::vector<Array>& primals,
    const std::vector<Array>& tangents);

/// Forward mode of a function of one array: {fun(primal), its jvp}.
std::pair<Array, Array> jvp(const UnaryFunction& fun, const Array& primal,
                            const Array& tangent);

/// MLX's value_and_grad over positional arrays: the returned function gives
/// {fun(inputs), the gradients of the first output (a scalar loss; other
/// outputs are auxiliary, returned through stop_gradient as in MLX, so
/// outer transforms see them as constants) with respect to the inputs at
/// `argnums`}. As MLX: argnums may be negative (counted from the end), are
/// returned in increasing order, must not repeat, and must not be empty
/// (std::invalid_argument, the empty list at once, the others when called).
ValueAndGradFn value_and_grad(const FlatFunction& fun,
                              const std::vector<int>& argnums);
/// value_and_grad(fun, {argnum}).
ValueAndGradFn value_and_grad(const FlatFunction& fun, int argnum);
/// The same for a function returning the loss alone: {loss, gradients}.
SimpleValueAndGradFn value_and_grad(const ArraysToArray& fun,
                                    const std::vector<int>& argnums);
/// value_and_grad(fun, {argnum}).
SimpleValueAndGradFn value_and_grad(const ArraysToArray& fun, int argnum);

/// MLX's grad over positional arrays: the gradients of fun's scalar result
/// with respect to the inputs at `argnums` (see value_and_grad).
FlatFunction grad(const ArraysToArray& fun, const std::vector<int>& argnums);
/// grad(fun, {argnum}).
FlatFunction grad(const ArraysToArray& fun, int argnum);

/// MLX's vmap of a function of one array over axis `in_axis` of its
/// argument, the batch placed at `out_axis` (from 0) of the result.
/// in_axis -1 means "not mapped" (MLX), which leaves nothing to map: an
/// error.
UnaryFunction vmap(const UnaryFunction& fun, int in_axis, int out_axis = 0);

/// MLX's vmap of a function of two arrays; an in axis of -1 leaves that
/// argument unmapped.
BinaryFunction vmap(const BinaryFunction& fun, int in_axis_a, int in_axis_b = 0,
                    int out_axis = 0);

/// MLX's vmap over positional arrays: `in_axes` one per input (empty: 0 for
/// every input; from ints, -1 means not mapped, see VmapInAxes), `out_axes`
/// one per output (empty: 0 for each). As MLX, a negative out axis is an
/// error (std::invalid_argument, here at once; vmap_flat and vmap(f) count
/// them from the end), as are in axes that map nothing.
FlatFunction vmap(const FlatFunction& fun, const VmapInAxes& in_axes,
                  const std::vector<int>& out_axes = {});

}  // namespace nuvec
