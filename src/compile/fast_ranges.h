// Which checks of a generated kernel's pass through fast variants
// (kernels::Small) are implied by the checks before them (DESIGN.md
// section 10; docs/compile.md, "Generated GPU kernels").
#pragma once

#include <vector>

#include "compile/emit_cpp.h"

namespace nuvec::compiler {

/// Per operation of the region: whether the `outside` check of its fast
/// variant can be left out of a pass through the fast variants, because
/// the checks emitted before it already bound its arguments to its range.
/// `fast[j]` says whether operation j calls its fast variant (and would
/// check); `trig_first[j]` is true for the second of a Sin/Cos pair that
/// shares the first's SinCos call (its check is the first's).
///
/// Sound because a pass through the fast variants is kept only when no
/// check failed: inside a kept pass, every checked argument is inside its
/// range, so the float32 values computed from them lie in ranges found by
/// interval arithmetic (widened outward by far more than the rounding of
/// any operation), and a check whose argument ranges lie inside its range
/// cannot fail. Values of other dtypes, and of operations the analysis does
/// not know, have no range. NUVEC_IMPLIED_CHECKS=0 (read once) keeps every
/// check, for measuring.
std::vector<bool> implied_checks(const EmitRegion& r, const std::vector<bool>& fast,
                                 const std::vector<bool>& shares_call);

}  // namespace nuvec::compiler
