#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace nuvec::cpu {
namespace {

// Above zero while this thread runs a block (always on pool workers): nested
// calls then run inline instead of waiting on the pool they occupy.
thread_local int t_in_task = 0;

struct InTask {
  InTask() { ++t_in_task; }
  ~InTask() { --t_in_task; }
};

// Waking a sleeping thread costs tens of microseconds here, more than many
// kernels, so waits poll this long before they block.
constexpr std::chrono::microseconds kSpinTime{100};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `done` for up to kSpinTime; returns its last value. Yields now and
// then: with more runnable threads than free cores (shared machines), a
// spinning thread must not keep the one it waits for off the CPU.
template <class Done>
bool spin_until(Done done) {
  auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
    std::this_thread::yield();
  }
}

// One parallel_for call; lives on the caller's stack until every worker that
// joined it has left.
struct Job {
  Job(detail::TaskRef t, BlockRanges b) : task(t), blocks(b) {}
  detail::TaskRef task;
  BlockRanges blocks;
  std::atomic<long long> next{0};  // next block to claim
  std::atomic<bool> failed{false};
  std::exception_ptr error;  // written once, by the thread that set failed
  // Workers inside run_blocks: raised under Pool::mu_ while the job is
  // listed, lowered under it too; the job may die once it reads 0.
  std::atomic<int> workers{0};

  bool has_work() const {
    return next.load(std::memory_order_relaxed) < blocks.size();
  }
};

void run_blocks(Job& job) {
  InTask in_task;
  const long long count = job.blocks.size();
  for (;;) {
    long long i = job.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= count) return;
    BlockRange r = job.blocks[i];
    try {
      job.task.call(job.task.obj, r.begin, r.end);
    } catch (...) {
      if (!job.failed.exchange(true)) job.error = std::current_exception();
      job.next.store(count, std::memory_order_relaxed);  // skip the rest
    }
  }
}

class Pool {
 public:
  explicit Pool(int workers) {
    jobs_.reserve(64);
    for (int i = 0; i < workers; ++i) {
      try {
        threads_.emplace_back([this] { loop(); });
      } catch (const std::system_error&) {
        break;  // run with the threads the system gave us
      }
    }
  }

  void run(Job& job) {
    long long wake;
    {
      std::lock_guard lock(mu_);
      jobs_.push_back(&job);
      wake = std::min<long long>(job.blocks.size() - 1, idle_);
      posted_.fetch_add(1, std::memory_order_relaxed);
    }
    for (long long i = 0; i < wake; ++i) work_.notify_one();
    run_blocks(job);
    {
      std::lock_guard lock(mu_);  // after this no worker can join
      jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
    }
    auto left = [&] {
      return job.workers.load(std::memory_order_acquire) == 0;
    };
    if (!spin_until(left)) {
      std::unique_lock lock(mu_);
      left_.wait(lock, left);
    }
  }

 private:
  void loop() {
    ++t_in_task;  // for the thread's lifetime
    std::unique_lock lock(mu_);
    for (;;) {
      auto it = std::find_if(jobs_.begin(), jobs_.end(),
                             [](const Job* j) { return j->has_work(); });
      if (it == jobs_.end()) {
        if (idle_spin(lock)) continue;
        ++idle_;
        work_.wait(lock);
        --idle_;
        continue;
      }
      Job& job = **it;
      job.workers.fetch_add(1, std::memory_order_relaxed);
      lock.unlock();
      run_blocks(job);
      lock.lock();
      // The last access to the job; left_ belongs to the pool.
      if (job.workers.fetch_sub(1, std::memory_order_release) == 1) {
        left_.notify_all();
      }
    }
  }

  // Polls for a newly posted job before the worker sleeps. Called and
  // returns with the lock held; true when a job was posted meanwhile.
  bool idle_spin(std::unique_lock<std::mutex>& lock) {
    const unsigned long long seen = posted_.load(std::memory_order_relaxed);
    lock.unlock();
    spin_until([&] { return posted_.load(std::memory_order_relaxed) != seen; });
    lock.lock();
    // Checked under the lock, as posting is: a job posted after this sees
    // the worker counted in idle_ and wakes it.
    return posted_.load(std::memory_order_relaxed) != seen;
  }

  std::mutex mu_;
  std::atomic<unsigned long long> posted_{0};  // jobs posted so far
  std::condition_variable work_;               // a job was posted
  std::condition_variable left_;               // a job's last worker left it
  std::vector<Job*> jobs_;  // calls in progress, oldest first; under mu_
  int idle_ = 0;            // workers waiting on work_; under mu_
  std::vector<std::thread> threads_;
};

Pool& pool() {
  // Leaked on purpose: workers block forever and the process may call
  // parallel_for from static destructors.
  static Pool* p = new Pool(num_threads() - 1);
  return *p;
}

int read_num_threads() {
  if (const char* env = std::getenv("NUVEC_NUM_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1 && v <= 4096) {
      return static_cast<int>(v);
    }
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(std::min(hw, 4096u));
}

}  // namespace

int num_threads() {
  static const int n = read_num_threads();
  return n;
}

void detail::parallel_for(long long n, long long grain, TaskRef task) {
  BlockRanges blocks(n, grain);
  if (blocks.size() == 0) return;
  if (blocks.size() == 1 || t_in_task > 0 || num_threads() == 1) {
    for (long long i = 0; i < blocks.size(); ++i) {
      BlockRange r = blocks[i];
      task.call(task.obj, r.begin, r.end);
    }
    return;
  }
  Job job(task, blocks);
  pool().run(job);
  if (job.error) std::rethrow_exception(job.error);
}

void parallel_for(long long n, long long grain,
                  const std::function<void(long long, long long)>& fn) {
  parallel_for<const std::function<void(long long, long long)>&>(n, grain, fn);
}

}  // namespace nuvec::cpu
