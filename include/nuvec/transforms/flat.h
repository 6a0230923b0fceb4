// Transforms over positional arrays (the spec's *_flat forms), and the
// engines the tree forms are built on (docs/transforms.md).
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nuvec/core/array.h"

namespace nuvec {

struct CustomRules;

/// A function of positional arrays returning arrays.
using FlatFunction = std::function<std::vector<Array>(const std::vector<Array>&)>;

/// Reverse mode: runs f on `primals` and returns {outputs, vjps}: one
/// gradient per primal, for one cotangent per output (the outputs' shapes,
/// else nuvec::Error naming the output; cast to the outputs' dtypes).
std::pair<std::vector<Array>, std::vector<Array>> vjp_flat(const FlatFunction& f,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& cotangents);

/// Forward mode: runs f on `primals` and returns {outputs, jvps}: one
/// tangent per output, for one tangent per primal (the primal's shape;
/// cast to its dtype).
std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const FlatFunction& f,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents);

/// {f's outputs, gradients of the first output (a scalar, the loss) with
/// respect to the arguments at `argnums`}; the other outputs are auxiliary
/// values, returned without gradients.
std::function<std::pair<std::vector<Array>, std::vector<Array>>(const std::vector<Array>&)>
value_and_grad_flat(FlatFunction f, std::vector<int> argnums = {0});

/// The gradients of f's first output (a scalar) with respect to the
/// arguments at `argnums`.
FlatFunction grad_flat(FlatFunction f, std::vector<int> argnums = {0});

/// vmap's in axes, one per argument (empty: axis 0 for every argument).
/// Given as ints (a braced list of ints, a std::vector<int>: MLX's C++
/// form), -1 means "not mapped", as in MLX; given as std::optional<int>
/// (a list with a std::nullopt, a std::vector<std::optional<int>>),
/// std::nullopt means not mapped and every negative axis counts from the
/// end, so `{0, std::optional<int>(-1)}` maps the second argument's last
/// axis. Other negative ints (-2, ...) count from the end in both forms.
class VmapInAxes {
 public:
  VmapInAxes() = default;
  VmapInAxes(std::initializer_list<int> axes) : VmapInAxes(std::vector<int>(axes)) {}
  VmapInAxes(const std::vector<int>& axes) {
    for (int a : axes) axes_.push_back(a == -1 ? std::nullopt : std::optional<int>(a));
  }
  VmapInAxes(std::initializer_list<std::optional<int>> axes) : axes_(axes) {}
  VmapInAxes(std::vector<std::optional<int>> axes) : axes_(std::move(axes)) {}
  /// One entry per argument; std::nullopt: not mapped.
  const std::vector<std::optional<int>>& axes() const { return axes_; }
  bool empty() const { return axes_.empty(); }
  size_t size() const { return axes_.size(); }
  const std::optional<int>& operator[](size_t i) const { return axes_[i]; }

 private:
  std::vector<std::optional<int>> axes_;
};

/// f vectorized over a batch axis: `in_axes` has one entry per argument
/// (see VmapInAxes: std::nullopt, or -1 given as an int, means not batched;
/// empty: axis 0 for every argument), `out_axes` one per output (empty: 0
/// for every output; negative axes count from the end, -1 is the last).
/// A batch of size 0 gives empty outputs of the right shapes and dtypes.
FlatFunction vmap_flat(FlatFunction f, VmapInAxes in_axes = {}, std::vector<int> out_axes = {});

namespace detail {

/// Gives the cotangents of the outputs (checked against them).
using MakeSeeds = std::function<std::vector<Array>(const std::vector<Array>& outputs)>;

struct VjpResult {
  std::vector<Array> outputs;
  std::vector<Array> grads;  // one per primal; zeros where not in argnums
};
/// The reverse-mode engine: traces f on tracers of `primals`, asks
/// `seeds(outputs)` for the cotangents of the first outputs (the rest have
/// none), and walks the tape back to the primals listed in `argnums`.
VjpResult vjp(const FlatFunction& f, const std::vector<Array>& primals,
              const MakeSeeds& seeds, const std::vector<int>& argnums);

/// The forward-mode engine: `tangents[i]` for primal `argnums[i]`.
VjpResult jvp(const FlatFunction& f, const std::vector<Array>& primals,
              const std::vector<Array>& tangents, const std::vector<int>& argnums);

/// The vmap engine: `in_axes[i]` is -1 for an unbatched argument; outputs
/// are returned with their batch axis at `out_axes[i]` (already normalised
/// against the output's rank, counted after the batch axis is inserted);
/// `out_axes` is asked for once the outputs' ranks are known.
std::vector<Array> vmap(const FlatFunction& f, const std::vector<Array>& inputs,
                        const std::vector<int>& in_axes,
                        const std::function<std::vector<int>(const std::vector<Array>&)>& out_axes);

/// Applies a custom function (the Custom primitive): f runs on the primals
/// outside any trace; transforms use the rules (or recompute f).
std::vector<Array> apply_custom(std::shared_ptr<const CustomRules> rules,
                                const std::vector<Array>& primals);

/// Checks `given` against `expected` (count and shapes; dtypes may differ:
/// the engines cast, as MLX), naming `what` and names[i]; throws
/// nuvec::Error (transform).
void check_like(const char* what, const std::vector<Array>& expected,
                const std::vector<Array>& given, const std::vector<std::string>& names);

}  // namespace detail
}  // namespace nuvec
