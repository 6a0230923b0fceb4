// One spare object per thread for the transforms' engines (a tape, the
// cotangent table), kept between transforms so that their vectors keep
// their capacity.
//
// Why: a transform of a 1,000-node graph otherwise grows a few vectors of
// 10-100 KiB each time. Each request that large made glibc first
// consolidate every small block freed since the last one (the forward
// trace's temporaries): a third of the time of walking the tape
// (docs/performance.md, Transforms). With a spare, a transform of a graph
// the size of the last one makes no large allocation.
#pragma once

#include <optional>
#include <utility>

namespace nuvec::transforms {

/// T has clear() (empties, keeps capacity) and worth_keeping() (false when
/// a huge graph left it huge: that memory goes back).
template <class T>
class Spare {
 public:
  /// The thread's spare, or a new T when there is none (a transform nested
  /// in a rule of another one, which holds the spare).
  static T take() {
    std::optional<T>& s = slot();
    if (!s) return T();
    T t = std::move(*s);
    s.reset();
    return t;
  }
  /// Empties `t` and keeps it as the thread's spare unless one is kept.
  static void give(T& t) {
    t.clear();
    std::optional<T>& s = slot();
    if (!s && t.worth_keeping()) s.emplace(std::move(t));
  }

 private:
  static std::optional<T>& slot() {
    thread_local std::optional<T> s;
    return s;
  }
};

}  // namespace nuvec::transforms
