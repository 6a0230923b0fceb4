// ArraysCache (nuvec/lm/cache.h): the state slots of a recurrent layer, as
// mlx-lm's models/cache.py ArraysCache.
#include "config.h"
#include "nuvec/lm/cache.h"

namespace nuvec::lm {

using detail::fail;

namespace {
void check_slot(int i, int size) {
  if (i < 0 || i >= size)
    fail(ErrorKind::out_of_range, "[ArraysCache] slot " + std::to_string(i) +
                                      " is outside [0, " +
                                      std::to_string(size) + ")");
}
}  // namespace

std::pair<Array, Array> ArraysCache::update_and_fetch(const Array&,
                                                      const Array&) {
  fail(ErrorKind::invalid_argument,
       "[ArraysCache] holds a recurrent layer's state, not keys and values "
       "(update_and_fetch)");
}

Array ArraysCache::attend(const Array&, const Array&, const Array&, float) {
  fail(ErrorKind::invalid_argument,
       "[ArraysCache] holds a recurrent layer's state, not keys and values "
       "(attend)");
}

const std::optional<Array>& ArraysCache::get(int i) const {
  check_slot(i, size());
  return slots_[static_cast<size_t>(i)];
}

void ArraysCache::set(int i, Array a) {
  check_slot(i, size());
  slots_[static_cast<size_t>(i)] = std::move(a);
}

std::vector<Array> ArraysCache::state() const {
  std::vector<Array> out;
  for (const auto& s : slots_) {
    if (!s) break;
    out.push_back(*s);
  }
  return out;
}

void ArraysCache::set_state(std::vector<Array> state, int offset) {
  if (state.size() > slots_.size())
    fail(ErrorKind::invalid_argument,
         "[ArraysCache] a state of " + std::to_string(state.size()) +
             " arrays does not fit " + std::to_string(slots_.size()) +
             " slots");
  if (offset < 0)
    fail(ErrorKind::invalid_argument,
         "[ArraysCache] the offset must not be negative");
  for (auto& s : slots_) s.reset();
  for (size_t i = 0; i < state.size(); ++i) slots_[i] = std::move(state[i]);
  offset_ = offset;
}

}  // namespace nuvec::lm
