#include "core/checked.h"

#include <algorithm>
#include <sstream>
#include <vector>

namespace nuvec {

namespace {
constexpr __int128 int64_max = INT64_MAX;
constexpr __int128 saturation = static_cast<__int128>(1) << 126;

// a * b for 0 <= a <= 2^126 and 0 <= b < 2^31, saturated at 2^126.
__int128 saturating_mul(__int128 a, int b) {
  // The usual case in 64 bits: a 128-bit division per dimension was a few
  // percent of building a graph (every node's shape is checked).
  int64_t p = 0;
  if (a <= int64_max && !__builtin_mul_overflow(static_cast<int64_t>(a), static_cast<int64_t>(b), &p)) return p;
  if (b != 0 && a > saturation / b) return saturation;
  return std::min(a * b, saturation);
}

std::string shape_text(const Shape& shape) {
  std::ostringstream os;
  os << shape;
  return os.str();
}
}  // namespace

std::string wide_text(__int128 x) {
  bool neg = x < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(x)
                            : static_cast<unsigned __int128>(x);
  std::string t;
  do {
    t.insert(t.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u);
  return neg ? "-" + t : t;
}

Expected<int> checked_dim(__int128 v, const std::string& what) {
  if (v < 0)
    return op_error(ErrorKind::invalid_shape,
                    what + " " + wide_text(v) + " is negative");
  if (v > 2147483647)
    return op_error(ErrorKind::overflow,
                    what + " " + wide_text(v) + " exceeds the int range");
  return static_cast<int>(v);
}

__int128 wide_size(const Shape& shape) {
  __int128 n = 1;
  for (int d : shape) {
    if (d == 0) return 0;
    n = saturating_mul(n, d);
  }
  return n;
}

std::string shape_size_text(const Shape& shape, bool nonzero_only) {
  // Little-endian base-10^9 limbs: exact for any number of dimensions.
  std::vector<uint64_t> limbs{1};
  for (int d : shape) {
    if (d == 0 && nonzero_only) continue;
    uint64_t carry = 0;
    for (auto& l : limbs) {
      uint64_t v =
          l * static_cast<uint64_t>(d < 0 ? -static_cast<int64_t>(d) : d) +
          carry;
      l = v % 1000000000u;
      carry = v / 1000000000u;
    }
    while (carry) limbs.push_back(carry % 1000000000u), carry /= 1000000000u;
  }
  std::string t = std::to_string(limbs.back());
  for (size_t i = limbs.size() - 1; i-- > 0;) {
    std::string part = std::to_string(limbs[i]);
    t += std::string(9 - part.size(), '0') + part;
  }
  return t;
}

Expected<int64_t> checked_size(const Shape& shape, int64_t itemsize,
                               const std::string& what) {
  for (int d : shape)
    if (d < 0)
      return op_error(
          ErrorKind::invalid_shape,
          what + " shape " + shape_text(shape) + " has a negative dimension");
  bool has_zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
  __int128 nonzero = 1;
  for (int d : shape)
    if (d != 0) nonzero = saturating_mul(nonzero, d);
  if (nonzero > int64_max) {
    if (has_zero)
      return op_error(ErrorKind::overflow,
                      what + " shape " + shape_text(shape) +
                          " is too large: its nonzero dimensions multiply to " +
                          shape_size_text(shape, true) +
                          ", past the int64 range");
    return op_error(ErrorKind::overflow, what + " shape " + shape_text(shape) +
                                             " has " + shape_size_text(shape) +
                                             " elements, past the int64 range");
  }
  if (nonzero * itemsize > int64_max)
    return op_error(ErrorKind::overflow, what + " shape " + shape_text(shape) +
                                             " of " + std::to_string(itemsize) +
                                             "-byte items needs " +
                                             wide_text(nonzero * itemsize) +
                                             " bytes, past the int64 range");
  return has_zero ? int64_t{0} : static_cast<int64_t>(nonzero);
}

Expected<size_t> checked_bytes(int64_t count, int64_t itemsize,
                               const std::string& what) {
  __int128 n = static_cast<__int128>(count) * itemsize;
  if (count < 0 || n > int64_max)
    return op_error(ErrorKind::overflow,
                    what + " of " + std::to_string(count) + " elements of " +
                        std::to_string(itemsize) + " bytes needs " +
                        wide_text(n) + " bytes, past the int64 range");
  return static_cast<size_t>(n);
}

}  // namespace nuvec
