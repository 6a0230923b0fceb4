// Replaying MLX reference cases (tests/refs/*.ref) against nuvec: building
// operands from refs::Tensor, comparing outputs (bit-exact, within ULPs, or
// within a summation-order tolerance) and tallying what was checked.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nuvec/nuvec.h>

#include "support/refs.h"

namespace nuvec::conformance {

/// The nuvec dtype of an MLX dtype name; throws std::runtime_error.
DType dtype_from_name(const std::string& name);

/// The operand the op sees: the stored array with the tensor's view applied.
Array make_input(const refs::Tensor& t);
std::vector<Array> make_inputs(const refs::Case& c);

/// A weak scalar from params scalar/scalar_type ("int", "float", "bool").
Operand weak_scalar(const refs::Case& c, const std::string& value_key,
                    const std::string& type_key);

/// How output values are compared (dtype and shape are always exact).
struct Tolerance {
  enum class Kind { exact, ulp, reduction };
  Kind kind = Kind::exact;
  // ulp: maximum distance in units in the last place of the output format
  // (float32 / float64 / float16 and bfloat16); complex64 compares each
  // component within ulp32 * eps * |z|.
  int ulp32 = 4, ulp64 = 4, ulp16 = 1;
  // reduction: |got - want| <= (terms + 2) * eps * (|want| + scale).
  double terms = 1, scale = 0;

  static Tolerance exact() { return {}; }
  static Tolerance ulps(int u32 = 4, int u64 = 4, int u16 = 1) {
    Tolerance t;
    t.kind = Kind::ulp;
    t.ulp32 = u32, t.ulp64 = u64, t.ulp16 = u16;
    return t;
  }
  static Tolerance reduction(double terms, double scale) {
    Tolerance t;
    t.kind = Kind::reduction;
    t.terms = terms, t.scale = scale;
    return t;
  }
};

/// Why element `i` (row-major, of output `out`) is not compared, or null.
using SkipElement = std::function<const char*(size_t out, size_t i)>;

/// An independent float64 (libm) value of element `i`, for math functions
/// where MLX's own result is less accurate than the tolerance: a value that
/// misses MLX's but is within the ULP tolerance of this one is accepted (and
/// counted). NaN means "no reference for this element".
using LibmValue = std::function<double(size_t i)>;

/// Counts over one reference file.
struct Tally {
  std::string file;
  int cases = 0, matched = 0, failed = 0, skipped = 0, xfail = 0;
  int skipped_values = 0;
  std::map<std::string, int> reasons;  // skip reason -> cases or values
  ~Tally();                            // prints the summary line
};

/// Case ids known to disagree beyond tolerance, with the reason (math
/// functions owned elsewhere); they are run and reported, not failed.
using ExpectedFailures = std::map<std::string, std::string>;

/// Runs one case: `build` returns nuvec's outputs (it may return failed
/// arrays or throw nuvec::Error). Adds a gtest failure on a mismatch.
void run_case(const refs::Case& c,
              const std::function<std::vector<Array>()>& build,
              const Tolerance& tol, Tally& tally,
              const ExpectedFailures& xfail = {},
              const SkipElement& skip = {}, const LibmValue& libm = {});

/// The values the op sees from `t` (view applied, then broadcast to
/// `shape`), in row-major order, as double (complex: the real part); empty
/// when `t` has more axes than `shape`.
std::vector<double> op_values(const refs::Tensor& t, const std::vector<int>& shape);

/// Largest |x| over the finite values of an input (0 when none), as double.
double max_abs(const refs::Tensor& t);
/// Element i of a stored tensor as double (complex: the real part).
double value_at(const refs::Tensor& t, size_t i);

/// The cases of a file.
std::vector<refs::Case> load_cases(const std::string& file);

/// How run_file treats each case; every hook is optional.
struct FileHooks {
  std::function<Tolerance(const refs::Case&)> tolerance;  // default exact
  ExpectedFailures xfail;
  std::function<SkipElement(const refs::Case&)> skip;
  std::function<LibmValue(const refs::Case&)> libm;
};

/// Replays every case of `file` with run_case and prints the tally; `build`
/// gives nuvec's outputs for a case.
void run_file(const std::string& file,
              const std::function<std::vector<Array>(const refs::Case&)>& build,
              const FileHooks& hooks = {});

}  // namespace nuvec::conformance
