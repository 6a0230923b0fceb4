#include "core/checked.h"

namespace nuvec {

namespace {
std::string text(__int128 x) {
  bool neg = x < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(x) : static_cast<unsigned __int128>(x);
  std::string t;
  do {
    t.insert(t.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u);
  return neg ? "-" + t : t;
}
}  // namespace

Expected<int> checked_dim(__int128 v, const std::string& what) {
  if (v < 0) return op_error(ErrorKind::invalid_shape, what + " " + text(v) + " is negative");
  if (v > 2147483647)
    return op_error(ErrorKind::overflow, what + " " + text(v) + " exceeds the int range");
  return static_cast<int>(v);
}

}  // namespace nuvec
