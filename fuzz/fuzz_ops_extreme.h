// Ops at extreme sizes (issue 26), shared by the op fuzz test
// (tests/fuzz_ops_test.cpp, a seeded generator) and the libFuzzer target
// fuzz/fuzz_ops.cpp (bytes): dimensions and arguments near 2^31 - 1,
// products of 2^31 +- 1, 2^32, 2^62 and 2^64 / itemsize, and zero
// dimensions next to huge ones. Every array built must be failed (with a
// kind other than internal) or obey the size rule (docs/semantics.md,
// "Sizes"); each result is then evaluated under a small memory limit
// (the caller sets it), where a refused allocation is a pass. Huge
// operands are broadcasts of a scalar, so they take no memory.
#pragma once

#include <climits>
#include <cstdint>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "nuvec/nuvec.h"

namespace nuvec::fuzz {

/// Where the choices come from: `pick(lo, hi)` gives an int in [lo, hi].
template <class Source>
class ExtremeOps {
 public:
  explicit ExtremeOps(Source& src) : src_(src) {}

  /// What went wrong with the last case, empty when nothing did.
  const std::string& fault() const { return fault_; }

  /// How the results ended, over all cases so far: failed when built,
  /// evaluated, refused by the memory limit at evaluation.
  struct Counts {
    int failed = 0, evaluated = 0, refused = 0;
  };
  const Counts& counts() const { return counts_; }

  /// Builds one op from the source's choices and settles its result.
  void run_one() {
    fault_.clear();
    int c = -1;
    std::string operands;
    try {
      Array x = operand(), y = operand();
      operands = describe(x) + " and " + describe(y);
      c = pick(0, 33);
      run_case(c, x, y);
    } catch (const std::exception& e) {  // ops never throw
      fault_ = std::string("an op threw: ") + e.what();
    }
    if (!fault_.empty())
      fault_ = "case " + std::to_string(c) + " on " + operands + ": " + fault_;
  }

 private:
  void run_case(int c, const Array& x, const Array& y) {
    switch (c) {
      case 0:
        settle(ops::reshape(x, shape_or_infer()), true);
        break;
      case 1:
        settle(ops::flatten(x, pick(-3, 3), pick(-3, 3)), true);
        break;
      case 2:
        settle(ops::broadcast_to(x, shape()), true);
        break;
      case 3:
        settle(ops::add(x, y), true);
        break;
      case 4:
        settle(ops::exp(ops::astype(x, dtype())), true);
        break;
      case 5:
        settle(ops::copy(x), true);
        break;
      case 6:
        settle(ops::concatenate({x, y}, pick(-3, 3)), true);
        break;
      case 7:
        settle(ops::take(x, index_array(), pick(-3, 3)), true);
        break;
      case 8:
        settle(ops::take(x, index_array()), true);
        break;
      case 9:
        settle(ops::pad(x, extreme_int()), true);
        break;
      case 10:
        settle(ops::repeat(x, extreme_int(), pick(-3, 3)), true);
        break;
      case 11:
        settle(ops::tile(x, {extreme_int(), pick(0, 3)}), true);
        break;
      case 12:
        settle(ops::diag(small_operand(), extreme_int()), true);
        break;
      case 13:
        settle(ops::diagonal(x, extreme_int(), pick(-3, 3), pick(-3, 3)), true);
        break;
      case 14:
        settle(ops::kron(x, y), true);
        break;
      case 15:
        settle(ops::view(x, dtype()), true);
        break;
      case 16:
        settle(ops::slice(x, {extreme_int(), extreme_int()},
                          {extreme_int(), extreme_int()},
                          {extreme_int(), extreme_int()}),
               true);
        break;
      case 17:
        settle(ops::zeros(shape(), dtype()), true);
        break;
      case 18:
        settle(ops::arange(double(extreme_int()), double(extreme_int()),
                           double(pick(0, 1) ? extreme_int() : 1), dtype()),
               true);
        break;
      case 19:
        settle(ops::conv_transpose1d(small_conv_input(), small_conv_weight(),
                                     positive_extreme(), extreme_int(),
                                     positive_extreme(), extreme_int()),
               true);
        break;
      case 20:
        settle(
            ops::conv1d(small_conv_input(), small_conv_weight(),
                        positive_extreme(), extreme_int(), positive_extreme()),
            true);
        break;
      case 21:
        settle(ops::tri(extreme_int(), extreme_int(), extreme_int(), int32),
               true);
        break;
      case 22:
        settle(ops::eye(extreme_int(), extreme_int(), extreme_int()), true);
        break;
      case 23:
        settle(array(std::vector<float>{}, shape()), true);
        break;
      case 24:
        settle(ops::roll(x, extreme_int(), pick(-3, 3)), true);
        break;
      case 25:
        settle(ops::split(x, pick(1, 4), pick(-3, 3)).at(0), true);
        break;
      case 26:
        settle(ops::expand_dims(ops::transpose(x), pick(-4, 4)), true);
        break;
      case 27:
        settle(ops::meshgrid({x, y}).at(0), true);
        break;
      case 28:
        settle(ops::linspace(0.0, 1.0, extreme_int()), true);
        break;
      // Ops whose work is not bounded by their output: evaluated only on
      // small operands.
      case 29:
        settle(ops::sum(x, pick(-3, 3)), small(x));
        break;
      case 30:
        settle(ops::matmul(x, y), small(x) && small(y));
        break;
      case 31:
        settle(ops::argmax(x), small(x));
        break;
      case 32:
        settle(ops::tensordot(x, y, pick(0, 2)), small(x) && small(y));
        break;
      default:
        settle(ops::cumsum(x, pick(-3, 3)), small(x));
        break;
    }
  }

  int pick(int lo, int hi) { return src_.pick(lo, hi); }

  static std::string describe(const Array& a) {
    if (a.is_failed()) return "a failed array";
    std::ostringstream os;
    os << dtype_name(a.dtype()) << a.shape();
    return os.str();
  }

  int extreme_dim() {
    static constexpr int dims[] = {
        0,       1,           2,         3,       65535,
        65536,   65537,       1 << 29,   1 << 30, (1 << 30) + 1,
        INT_MAX, INT_MAX - 1, 715827883, 46341,   1 << 20};
    return dims[pick(0, static_cast<int>(std::size(dims)) - 1)];
  }
  int extreme_int() {
    static constexpr int vals[] = {INT_MIN, INT_MIN + 1, -65536, -2, -1,
                                   0,       1,           2,      3,  65536,
                                   1 << 30, INT_MAX - 1, INT_MAX};
    return vals[pick(0, static_cast<int>(std::size(vals)) - 1)];
  }
  int positive_extreme() {
    static constexpr int vals[] = {1, 2, 65536, 1 << 30, INT_MAX};
    return vals[pick(0, static_cast<int>(std::size(vals)) - 1)];
  }
  Shape shape() {
    // Products of 2^31 - 1, 2^31 + 1, 2^32, 2^62, 2^64 / itemsize, 2^64,
    // and zeros next to huge dimensions; or a random mix.
    static const Shape canned[] = {{INT_MAX},
                                   {3, 715827883},
                                   {65536, 65536},
                                   {1 << 30, 1 << 30, 4},
                                   {1 << 30, 1 << 30, 2},
                                   {1 << 30, 1 << 30, 8},
                                   {1 << 30, 1 << 30, 16},
                                   {65536, 65536, 65536, 65536},
                                   {0, 1 << 30, 1 << 30, 1 << 30},
                                   {1 << 30, 0, 1 << 30, 1 << 30, 4},
                                   {0, 65536, 65536, 65536, 65536},
                                   {2, 3},
                                   {}};
    if (pick(0, 1))
      return canned[pick(0, static_cast<int>(std::size(canned)) - 1)];
    Shape s(static_cast<size_t>(pick(0, 5)));
    for (int& d : s) d = pick(0, 2) ? extreme_dim() : pick(0, 4);
    if (!s.empty() && pick(0, 3) == 0)
      s[static_cast<size_t>(pick(0, int(s.size()) - 1))] = 0;
    return s;
  }
  Shape shape_or_infer() {
    Shape s = shape();
    if (!s.empty() && pick(0, 2) == 0)
      s[static_cast<size_t>(pick(0, int(s.size()) - 1))] = -1;
    return s;
  }
  DType dtype() {
    return DType(static_cast<DType::Val>(pick(0, DType::count - 1)));
  }
  // A huge broadcast of one scalar (no memory), or a small dense array.
  Array operand() {
    DType t = dtype();
    if (pick(0, 2)) return ops::broadcast_to(ops::astype(array(1), t), shape());
    return small_operand(t);
  }
  Array small_operand() { return small_operand(dtype()); }
  Array small_operand(DType t) {
    Shape s(static_cast<size_t>(pick(1, 2)));
    for (int& d : s) d = pick(1, 3);
    return ops::astype(
        ops::arange(0.0, double(shape_size(s)), 1.0, float32).reshape(s), t);
  }
  Array index_array() {
    return ops::broadcast_to(array(int32_t(pick(-2, 2))), shape());
  }
  Array small_conv_input() {
    return ops::ones({1, pick(1, 4), 1}, pick(0, 1) ? float32 : float16);
  }
  Array small_conv_weight() { return ops::ones({1, pick(1, 2), 1}, float32); }
  static bool small(const Array& a) {
    return !a.is_failed() && a.size() <= (1 << 16);
  }

  // Checks the result and evaluates it when its work is bounded (by its
  // output, which the memory limit bounds, or by small operands).
  void settle(const Array& a, bool evaluate) {
    if (a.is_failed()) {
      ++counts_.failed;
      if (a.error()->kind() == ErrorKind::internal) fault_ = a.error()->what();
      try {
        a.eval();
        fault_ = "a failed array evaluated without an error";
      } catch (const Error&) {
      }
      return;
    }
    // The size rule: dimensions non-negative, the nonzero ones and their
    // bytes within int64, size() their product.
    __int128 nonzero = 1;
    bool zero = false;
    for (int d : a.shape()) {
      if (d < 0) fault_ = "negative dimension in a valid array";
      if (d == 0)
        zero = true;
      else
        nonzero *= d;
      if (nonzero > INT64_MAX) break;
    }
    if (nonzero * a.itemsize() > INT64_MAX)
      fault_ = "a valid array past the byte-size rule";
    else if (a.size() != (zero ? 0 : static_cast<int64_t>(nonzero)))
      fault_ = "size() is not the product of the dimensions";
    if (!fault_.empty() || !evaluate) return;
    try {
      a.eval();
      // Read a small result through its strides (a sanitizer sees any read
      // past the buffer).
      if (a.size() <= 4096)
        (void)ops::copy(a).astype(float32).sum().item<float>();
      ++counts_.evaluated;
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::out_of_memory) ++counts_.refused;
      if (e.kind() == ErrorKind::internal) fault_ = e.what();
    }
  }

  Source& src_;
  std::string fault_;
  Counts counts_;
};

}  // namespace nuvec::fuzz
