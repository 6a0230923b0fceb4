// The checks the transform-rule harness runs on each probe (rule_cases.h):
// drawing inputs, re-laying them out, finite differences, the dot-product
// identity, vmap against a loop, and failed inputs. Each check returns the
// problems it found ("" when none); a rule that throws (a missing rule
// throws nuvec::Error naming the primitive) propagates to the caller.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "support/rule_cases.h"

namespace nuvec::rulecheck {

using rulecases::Probe;

/// One draw of a probe's inputs: contiguous float64 arrays with values.
std::vector<Array> sample(const Probe& p, std::mt19937& rng);

/// The same values in one memory layout.
struct Layout {
  std::string name;
  std::vector<Array> inputs;
};
/// The inputs as drawn, then (where they differ) as transposed views of
/// the inputs with 2+ axes and as strided views with NaN between the
/// elements of the inputs with 1+ axes: a rule or kernel that ignores the
/// strides reads the NaNs.
std::vector<Layout> layouts(const std::vector<Array>& inputs);

/// Whether the graph that f builds on `inputs` holds a node of `id`.
bool builds(const Probe& p, const std::vector<Array>& inputs, PrimitiveId id);

/// jvp against central differences (element-wise), vjp against them (as
/// <vjp(u), v> = <u, fd(v)>), and the dot-product identity
/// <vjp(u), v> = <u, jvp(v)>, for random u and v. `at` is where the
/// transforms run (a layout of `values`), `values` the contiguous inputs
/// the differences are taken from.
std::string check_finite_differences(const Probe& p, const std::vector<Array>& at,
                                     const std::vector<Array>& values, std::mt19937& rng);

/// vjp and jvp give exact zeros with the shapes and dtypes of the primals
/// and outputs.
std::string check_zero_derivatives(const Probe& p, const std::vector<Array>& at,
                                   std::mt19937& rng);

/// vmap over a batch of 3 draws, against f on each draw, bit for bit:
/// every input batched along axis 0, along axis 1 (inputs with axes), and
/// the first input unbatched.
std::string check_vmap(const Probe& p, std::mt19937& rng);

/// The probe of x -> vjp(f)(x, u) for a fixed random cotangent u: its own
/// derivatives are f's second derivatives (rules written with ops are
/// differentiable again), and its vmap is vmap of a gradient.
Probe vjp_of(const Probe& p, std::mt19937& rng);

/// For a primitive without rules (RuleCase::no_rules): transform `which`
/// ("vjp", "jvp" or "vmap") of the probe throws a transform error whose
/// message contains `text`, without evaluating anything.
std::string check_rules_refused(const Probe& p, const std::vector<Array>& inputs,
                                const std::string& which, const std::string& text);

/// With its first input replaced by a failed array, f under vjp, jvp and
/// vmap throws that array's error unchanged (op name and location).
std::string check_failed_input(const Probe& p, const std::vector<Array>& inputs);

}  // namespace nuvec::rulecheck
