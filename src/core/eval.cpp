// The evaluator: orders the pending graph iteratively, runs each node once
// (claimed by compare-and-swap across threads), and detaches finished nodes
// so that intermediates are freed as soon as nothing needs them.
#include "nuvec/core/eval.h"

#include <condition_variable>
#include <algorithm>
#include <deque>
#include <new>
#include <thread>
#include <unordered_set>

#include "backend/backend.h"
#include "core/checked.h"
#include "core/eval_stats.h"
#include "nuvec/core/graph.h"

namespace nuvec {

namespace {
std::atomic<uint64_t> executed_nodes{0};
}  // namespace

uint64_t detail::executed_node_count() { return executed_nodes.load(); }

namespace {

using NodePtr = std::shared_ptr<Node>;

// The pending producers of `a`'s node inputs, read under the node's lock
// (another thread may be detaching it).
std::vector<NodePtr> pending_inputs(Node& n) {
  std::vector<NodePtr> out;
  std::lock_guard<std::mutex> lock(n.mu);
  for (const auto& in : n.inputs) {
    const auto& p = in.desc()->node;
    if (p && p->state.load(std::memory_order_acquire) != Node::State::done)
      out.push_back(p);
  }
  return out;
}

// Post-order of the pending nodes below `roots`, without recursion.
std::vector<NodePtr> topological_order(const std::vector<NodePtr>& roots) {
  std::vector<NodePtr> order;
  // One node whose inputs are all done (a replayed call's fused kernel, an
  // op evaluated as it is built): no search.
  if (roots.size() == 1 && pending_inputs(*roots[0]).empty()) {
    order.push_back(roots[0]);
    return order;
  }
  std::unordered_set<Node*> seen;
  struct Frame {
    NodePtr node;
    std::vector<NodePtr> children;
    size_t next = 0;
  };
  std::vector<Frame> stack;
  for (const auto& r : roots) {
    if (!seen.insert(r.get()).second) continue;
    stack.push_back({r, pending_inputs(*r)});
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.children.size()) {
        NodePtr c = f.children[f.next++];
        if (seen.insert(c.get()).second) stack.push_back({c, pending_inputs(*c)});
      } else {
        order.push_back(std::move(f.node));
        stack.pop_back();
      }
    }
  }
  return order;
}

bool can_donate(const Array& in, const ArrayDesc& out) {
  const auto& d = in.desc();
  return d.use_count() == 1 && d->data && d->data.use_count() == 1 &&
         d->data->from_allocator && d->row_contiguous && d->offset == 0 &&
         d->size == out.size && in.dtype().size() == out.dtype.size();
}

void execute(Node& n) {
  for (const auto& in : n.inputs) {
    const auto& p = in.desc()->node;
    if (p && p->error) {
      n.error = p->error;
      return;
    }
  }
  std::vector<Array> outs;
  bool needs_kernel = false;
  bool elementwise = is_elementwise(n.primitive->id());
  // A scatter (slice_update, at(...).set) may write into its first input
  // when nothing else holds it: the kernels copy only when the buffers
  // differ, so a KV-cache update costs the update, not the cache.
  const bool scatter = n.primitive->id() == PrimitiveId::Scatter;
  const bool gpu = n.stream.device == Device::gpu;
  for (size_t i = 0; i < n.specs.size(); ++i) {
    auto desc = n.outputs[i].lock();
    const OutputSpec& spec = n.specs[i];
    // The only output, and nobody holds it (it was dropped while this
    // evaluation ran): nothing can read the result. Its shape is in that
    // descriptor, not in the spec (Node::specs).
    if (!desc && n.specs.size() == 1) return;
    if (!desc) {  // nobody holds this output: compute into scratch
      desc = new_desc();
      desc->shape = spec.shape;
      desc->strides = row_major_strides(spec.shape);
      desc->size = shape_size(spec.shape);
      desc->dtype = spec.dtype;
    }
    if (spec.is_view) {
      desc->data = n.inputs[spec.view_of].desc()->data;
    } else {
      needs_kernel = true;
      for (auto& in : n.inputs) {
        // An element-wise kernel may write over an input nothing else
        // holds; on the GPU when that input was written on this stream
        // (other streams' reads are then waited for on the GPU).
        const bool may_donate = elementwise || (scatter && &in == &n.inputs.front());
        if (may_donate && !n.keep_graph && can_donate(in, *desc)) {
          const Data& d = *in.desc()->data;
          if (gpu ? d.device == Device::gpu && backend::gpu_donate(d, n.stream) : d.device == Device::cpu) {
            desc->data = in.desc()->data;
            break;
          }
        }
      }
      // Checked again here (builder.cpp checked the spec): the buffer's size
      // must never wrap into a small allocation the kernel overruns. The
      // descriptor's shape, not the spec's (which may have been moved from).
      auto count = checked_size(desc->shape, spec.dtype.size(), "output");
      if (!count) count.error().raise();
      auto bytes = checked_bytes(*count, spec.dtype.size(), "output");
      if (!bytes) bytes.error().raise();
      if (!desc->data) desc->data = gpu ? backend::allocate_gpu(*bytes, n.stream) : allocate_data(*bytes);
    }
    outs.emplace_back(std::move(desc));
  }
  if (!needs_kernel) return;
  if (gpu) backend::eval_gpu(*n.primitive, n.inputs, outs, n.stream);
  else backend::eval_cpu(*n.primitive, backend::on_host(n.inputs), outs);
}

void run_node(const NodePtr& n) {
  auto expected = Node::State::pending;
  if (!n->state.compare_exchange_strong(expected, Node::State::running,
                                        std::memory_order_acq_rel)) {
    if (expected == Node::State::running) {
      for (auto st = Node::State::running; st != Node::State::done;
           st = n->state.load(std::memory_order_acquire))
        n->state.wait(st, std::memory_order_acquire);
    }
    return;
  }
  executed_nodes.fetch_add(1, std::memory_order_relaxed);
  try {
    execute(*n);
  } catch (const Error& e) {
    n->error = std::make_shared<const Error>(e.kind(), e.message(),
                                             std::string(n->op_name), n->loc);
  } catch (const std::bad_alloc&) {
    // A kernel's own scratch (outside the allocator) could not be had.
    n->error = std::make_shared<const Error>(ErrorKind::out_of_memory,
                                             "a kernel's scratch memory could not be allocated",
                                             std::string(n->op_name), n->loc);
  } catch (const std::exception& e) {
    n->error = std::make_shared<const Error>(ErrorKind::internal, e.what(),
                                             std::string(n->op_name), n->loc);
  }
  std::vector<Array> dropped;
  std::shared_ptr<const Primitive> prim;
  {
    std::lock_guard<std::mutex> lock(n->mu);
    if (!n->keep_graph.load(std::memory_order_acquire)) {
      dropped.swap(n->inputs);
      prim.swap(n->primitive);
    }
    n->state.store(Node::State::done, std::memory_order_release);
  }
  n->state.notify_all();
}

void wait_for_async_submissions();

// The nodes the arrays still need, each after its inputs (failed arrays
// are skipped; with `throw_failed` the first one's error is thrown).
std::vector<NodePtr> pending_order(const std::vector<Array>& arrays, bool throw_failed) {
  std::vector<NodePtr> roots;
  for (const auto& a : arrays) {
    if (a.is_failed()) {
      if (throw_failed) (a.error())->raise();
      continue;
    }
    const auto& n = a.desc()->node;
    if (n && n->state.load(std::memory_order_acquire) != Node::State::done)
      roots.push_back(n);
  }
  // Roots are ordered last first: trees list leaves in forward order (a
  // gradient tree: first layer first), and a backward pass produces the last
  // ones first, so this order frees each cotangent and recomputed block as
  // soon as its gradient is done (measured in bench/transforms_bench: the
  // peak of a 20-block backward pass halves).
  std::reverse(roots.begin(), roots.end());
  return topological_order(roots);
}

// eval's end: the values exist, GPU work included (as MLX's eval: the
// work that writes these arrays, not later work other threads or
// async_eval enqueued meanwhile, so that reading a token does not wait for
// the next step); the first failure is thrown.
void finish(const std::vector<Array>& arrays) {
  for (const auto& a : arrays) {
    const auto& d = a.desc()->data;
    if (d && d->device == Device::gpu) backend::gpu_wait(*d);
  }
  for (const auto& a : arrays) {
    if (a.is_failed()) (a.error())->raise();
    const auto& n = a.desc()->node;
    if (n && n->error) (n->error)->raise();
  }
}

// Whether every array's producer has run (nothing left to enqueue).
bool all_run(const std::vector<Array>& arrays) {
  for (const auto& a : arrays) {
    const auto& n = a.desc()->node;
    if (n && n->state.load(std::memory_order_acquire) != Node::State::done) return false;
  }
  return true;
}

void eval_impl(const std::vector<Array>& arrays, bool throw_errors) {
  // An eval that has work to enqueue waits until the async worker enqueued
  // what was submitted before; one of arrays already run does not.
  if (throw_errors && !all_run(arrays)) wait_for_async_submissions();
  for (const auto& n : pending_order(arrays, throw_errors)) run_node(n);
  backend::gpu_flush();
  if (!throw_errors) return;  // async_eval: GPU work may still run
  finish(arrays);
}

// One background worker for async_eval, started on first use. eval() on
// another thread first waits until the worker has run every job submitted
// before it (drain), so that one thread at a time enqueues GPU work: two
// threads launching at once (the worker on the first calls, eval on the
// last) made each launch and event record about twice as slow on the H200
// (host time measured inside the backend, 2000 16-element calls).
class AsyncWorker {
 public:
  // A job: arrays to evaluate, with their order when schedule made it.
  struct Job {
    std::vector<Array> arrays;
    std::shared_ptr<const std::vector<NodePtr>> order;
  };
  void submit(Job job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
      queue_.push_back(std::move(job));
      ++submitted_;
    }
    cv_.notify_one();
  }
  void drain() {
    if (in_worker()) return;  // a job's own eval: nothing else to wait for
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t upto = submitted_;  // later submissions are not waited for
    if (finished_ >= upto) return;
    ++waiting_;
    idle_.wait(lock, [&] { return finished_ >= upto; });
    --waiting_;
  }
  ~AsyncWorker() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  static bool& in_worker() {
    thread_local bool flag = false;
    return flag;
  }
  void loop() {
    in_worker() = true;
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      // Errors stay on the nodes for readers.
      if (job.order) {
        for (const auto& n : *job.order) run_node(n);
        backend::gpu_flush();
      } else {
        eval_impl(job.arrays, false);
      }
      job = Job{};
      bool wake;
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++finished_;
        wake = waiting_ > 0;
      }
      if (wake) idle_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_, idle_;
  std::deque<Job> queue_;
  uint64_t submitted_ = 0, finished_ = 0;  // jobs, in submission order
  int waiting_ = 0;                         // threads in drain()
  bool stop_ = false;
  std::thread thread_;
};

AsyncWorker& async_worker() {
  static AsyncWorker worker;
  return worker;
}

void wait_for_async_submissions() { async_worker().drain(); }


// While compile traces a function its placeholders have no values: eval,
// item and to_vector throw when they reach one, and so does async_eval
// (on the worker the error would only mark the nodes, silently).
void refuse_placeholders(const std::vector<NodePtr>& order) {
  for (const auto& n : order)
    if (n->primitive && n->primitive->id() == PrimitiveId::Placeholder)
      (Error(ErrorKind::transform,
                  "the function called async_eval on an array while compile traced it "
                  "(values do not exist during the trace); evaluate outside the compiled "
                  "function",
                  std::string("async_eval"))).raise();
}

}  // namespace

void eval(const std::vector<Array>& arrays) { eval_impl(arrays, true); }

void async_eval(const std::vector<Array>& arrays) {
  if (detail::trace_depth() > 0) refuse_placeholders(pending_order(arrays, false));
  async_worker().submit({arrays, nullptr});
}

Scheduled schedule(const std::vector<Array>& arrays) {
  Scheduled s;
  s.arrays_ = arrays;
  s.order_ = std::make_shared<const std::vector<NodePtr>>(pending_order(arrays, false));
  return s;
}

void Scheduled::async_eval() const {
  if (order_ && detail::trace_depth() > 0) refuse_placeholders(*order_);
  if (order_) async_worker().submit({arrays_, order_});
}

void Scheduled::eval() const {
  wait_for_async_submissions();
  for (const auto& a : arrays_)
    if (a.is_failed()) (a.error())->raise();
  if (order_)
    for (const auto& n : *order_) run_node(n);
  backend::gpu_flush();
  finish(arrays_);
}

const Array& Array::eval() const {
  eval_impl({*this}, true);
  return *this;
}

bool Array::is_available() const {
  if (desc_->error) return false;
  const auto& n = desc_->node;
  return !n || (n->state.load(std::memory_order_acquire) == Node::State::done &&
                !n->error);
}

void synchronize() {
  wait_for_async_submissions();
  if (backend::gpu_available()) backend::gpu_synchronize();
}
void synchronize(Stream) { synchronize(); }

}  // namespace nuvec
