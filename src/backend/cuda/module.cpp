// Loading NVRTC-built modules and launching their kernels (module.h).
#include "backend/cuda/module.h"

#include "backend/cuda/cuda.h"

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "nuvec/core/error.h"
#include "nuvec/primitives/fused.h"

namespace nuvec::cuda {

namespace {

void forget_graphs(const std::vector<const void*>& functions);

// A loaded module and the driver functions looked up in it (whose graphs
// go before it is unloaded).
struct Library {
  cudaLibrary_t lib = nullptr;
  std::vector<const void*> functions;
  ~Library() {
    flush();  // no held launch may outlive its kernel (flush() never throws)
    forget_graphs(functions);
    if (lib) cudaLibraryUnload(lib);
  }
};

// The driver's entry points for launching, reached through the runtime
// (no link to libcuda, absent on machines without a GPU). Host time per
// launch as cudaLaunchKernel's within noise (tools/gpu_launch_probe.cu:
// 3.8 against 4.1 us in one run, 3.53 against 3.48 in another). All null
// where the driver does not offer them: then the runtime launches.
struct Driver {
  CUresult (*get_function)(CUfunction*, CUkernel) = nullptr;
  CUresult (*set_attribute)(CUfunction, CUfunction_attribute, int) = nullptr;
  CUresult (*error_name)(CUresult, const char**) = nullptr;
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                     void**, void**) = nullptr;
  // CUDA graphs of one kernel (launch_module_kernel); null where not offered.
  CUresult (*graph_create)(CUgraph*, unsigned) = nullptr;
  CUresult (*add_kernel_node)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t,
                              const CUDA_KERNEL_NODE_PARAMS*) = nullptr;
  CUresult (*instantiate)(CUgraphExec*, CUgraph, unsigned long long) = nullptr;
  CUresult (*set_params)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS*) = nullptr;
  CUresult (*graph_launch)(CUgraphExec, CUstream) = nullptr;
  CUresult (*exec_destroy)(CUgraphExec) = nullptr;
  CUresult (*graph_destroy)(CUgraph) = nullptr;
  // Edges with data (programmatic edges of held chains); null where not offered.
  CUresult (*add_edges)(CUgraph, const CUgraphNode*, const CUgraphNode*, const CUgraphEdgeData*, size_t) = nullptr;
  // A kernel's parameter layout (defer_module_kernel); null where not offered.
  CUresult (*param_info)(CUfunction, size_t, size_t*, size_t*) = nullptr;
};

template <class F>
bool entry_point(const char* name, F* fn, unsigned version = 12000) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !p) {
    cudaGetLastError();
    return false;
  }
  *fn = reinterpret_cast<F>(p);
  return true;
}

const Driver& driver() {
  static const Driver d = [] {
    Driver x;
    if (!entry_point("cuKernelGetFunction", &x.get_function) || !entry_point("cuLaunchKernel", &x.launch) ||
        !entry_point("cuFuncSetAttribute", &x.set_attribute) || !entry_point("cuGetErrorName", &x.error_name))
      return Driver{};
    if (!entry_point("cuGraphCreate", &x.graph_create) || !entry_point("cuGraphAddKernelNode", &x.add_kernel_node) ||
        !entry_point("cuGraphInstantiateWithFlags", &x.instantiate) ||
        !entry_point("cuGraphExecKernelNodeSetParams", &x.set_params) ||
        !entry_point("cuGraphLaunch", &x.graph_launch) || !entry_point("cuGraphExecDestroy", &x.exec_destroy) ||
        !entry_point("cuGraphDestroy", &x.graph_destroy))
      x.graph_create = nullptr;
    if (x.graph_create && !entry_point("cuFuncGetParamInfo", &x.param_info, 12040)) x.param_info = nullptr;
    if (x.graph_create && !entry_point("cuGraphAddDependencies", &x.add_edges, 12030)) x.add_edges = nullptr;
    return x;
  }();
  return d;
}

// Driver calls act on the calling thread's current context, which runtime
// calls make the device's primary context lazily: bound once per thread
// before the first driver call (the backend uses device 0).
void bind_context() {
  thread_local const bool bound = cudaSetDevice(0) == cudaSuccess;
  (void)bound;
}

// Throws Error(backend) "what: <the driver's name of r>" unless r is
// CUDA_SUCCESS.
void check_driver(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (driver().error_name(r, &name) != CUDA_SUCCESS || !name) name = "an unknown CUDA driver error";
  (Error(ErrorKind::backend, std::string(what) + ": " + name)).raise();
}

// CUDA graphs of kernel nodes in a chain, one per sequence of (function,
// launch shape, stream): a single launch is a chain of one, held launches
// (defer_module_kernel) launched together a longer one. Launches of one
// executable graph are ordered after each other, so streams do not share
// one. A launch sets the nodes' parameters and launches the graph: host
// time on the H200 1.74 us for one node, against 3.56 us for
// cuLaunchKernel (tools/gpu_launch_probe.cu, one run).
struct GraphKey {
  const void* fn;
  unsigned dims[6];
  size_t shared;
  CUstream stream;
  bool operator==(const GraphKey& o) const {
    return fn == o.fn && std::memcmp(dims, o.dims, sizeof dims) == 0 && shared == o.shared && stream == o.stream;
  }
};
struct ChainKeyHash {
  size_t operator()(const std::vector<GraphKey>& key) const {
    size_t h = key.size();
    for (const GraphKey& k : key) {
      size_t g = std::hash<const void*>()(k.fn) ^ std::hash<const void*>()(k.stream) * 31;
      for (unsigned d : k.dims) g = g * 1000003u + d;
      h = h * 1000003u ^ (g ^ k.shared);
    }
    return h;
  }
};
struct ChainGraph {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;  // null: building it failed, launch directly
  std::vector<CUgraphNode> nodes;
};
struct Graphs {
  std::mutex mu;
  std::unordered_map<std::vector<GraphKey>, ChainGraph, ChainKeyHash> chains;
};
constexpr size_t kMaxGraphs = 1024;  // then new shapes launch directly

// Never destroyed: CUDA may be gone when static objects are.
Graphs& graphs() {
  static Graphs* g = new Graphs;
  return *g;
}

// The parameter layouts of kernels held back (defer_module_kernel), kept
// per kernel until its module is unloaded (a later module's kernel may
// have the same handle).
using Layout = std::vector<std::pair<size_t, size_t>>;
struct Layouts {
  std::mutex mu;
  std::unordered_map<CUfunction, Layout> map;
};
Layouts& layouts() {
  static Layouts* l = new Layouts;  // never destroyed (as graphs())
  return *l;
}

void drop(const ChainGraph& g) {
  if (g.exec) driver().exec_destroy(g.exec);
  if (g.graph) driver().graph_destroy(g.graph);
}

void forget_graphs(const std::vector<const void*>& functions) {
  if (functions.empty() || !driver().graph_create) return;
  {
    Layouts& ls = layouts();
    std::lock_guard<std::mutex> lock(ls.mu);
    for (const void* f : functions) ls.map.erase(reinterpret_cast<CUfunction>(const_cast<void*>(f)));
  }
  Graphs& gs = graphs();
  std::lock_guard<std::mutex> lock(gs.mu);
  for (auto it = gs.chains.begin(); it != gs.chains.end();) {
    bool mine = false;
    for (const GraphKey& k : it->first)
      for (const void* f : functions) mine = mine || k.fn == f;
    if (mine) {
      drop(it->second);
      it = gs.chains.erase(it);
    } else {
      ++it;
    }
  }
}

// NUVEC_GPU_GRAPHS (read once, for tuning): 0 no graphs at all (nothing
// held either), 1 every launch, unset the default below.
int graphs_mode() {
  static const int mode = [] {
    const char* e = std::getenv("NUVEC_GPU_GRAPHS");
    return e ? std::atoi(e) : -1;
  }();
  return mode;
}

// Which launches go through graphs: grids of at most 256 blocks by default
// (calls on small arrays, whose time is the host's).
bool graph_launch_wanted(dim3 grid) {
  const int mode = graphs_mode();
  if (mode == 0 || !driver().graph_create) return false;
  return mode == 1 || static_cast<unsigned long long>(grid.x) * grid.y * grid.z <= 256;
}

// One launch of a graph: a kernel's parameters and the name its errors
// give.
struct Launch {
  const CUDA_KERNEL_NODE_PARAMS* p;
  const char* what;
};

// Whether held chains link their kernels by programmatic edges: each
// kernel's blocks may be scheduled once its predecessor's have all begun
// (and have passed their enter_held_kernel, launch.cuh), hiding a launch's
// fixed latency; each waits there for its predecessor's completion, so the
// order and the values are those of plain edges. On devices of compute
// capability 9.0 and later; NUVEC_GPU_PDL=0 (read once) turns it off.
bool programmatic_chains() {
  static const bool on = [] {
    const char* e = std::getenv("NUVEC_GPU_PDL");
    if ((e && std::atoi(e) == 0) || !driver().add_edges) return false;
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return major >= 9;
  }();
  return on;
}

// The graph of the chain ls[0..n): kernel nodes, each after the one before
// (by a programmatic edge where `programmatic`), instantiated; false (and
// nothing kept) where the driver refuses it.
bool build_chain(const Launch* ls, size_t n, bool programmatic, ChainGraph& g) {
  const Driver& d = driver();
  bool ok = d.graph_create(&g.graph, 0) == CUDA_SUCCESS;
  for (size_t i = 0; ok && i < n; ++i) {
    CUgraphNode node = nullptr;
    const bool linked = !g.nodes.empty() && !programmatic;
    ok = d.add_kernel_node(&node, g.graph, linked ? &g.nodes.back() : nullptr, linked ? 1 : 0, ls[i].p) ==
         CUDA_SUCCESS;
    if (ok && programmatic && !g.nodes.empty()) {
      CUgraphEdgeData e{};
      e.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
      e.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
      ok = d.add_edges(g.graph, &g.nodes.back(), &node, &e, 1) == CUDA_SUCCESS;
    }
    g.nodes.push_back(node);
  }
  ok = ok && d.instantiate(&g.exec, g.graph, 0) == CUDA_SUCCESS;
  if (!ok) {
    drop(g);
    g = ChainGraph{};
  }
  return ok;
}

// Launches `ls[0..n)` (in order) on `stream` as one graph whose nodes form a
// chain: built on the first launch of the sequence, later launches set
// each node's parameters. False where it has none (the cache is full or
// building it failed), for direct launches.
bool launch_graph(const Launch* ls, size_t n, CUstream stream, bool programmatic = false) {
  thread_local std::vector<GraphKey> key;  // (no allocation per launch)
  key.clear();
  for (size_t i = 0; i < n; ++i) {
    const auto& p = *ls[i].p;
    key.push_back({p.func, {p.gridDimX, p.gridDimY, p.gridDimZ, p.blockDimX, p.blockDimY, p.blockDimZ},
                   p.sharedMemBytes, stream});
  }
  const Driver& d = driver();
  Graphs& gs = graphs();
  std::lock_guard<std::mutex> lock(gs.mu);
  auto it = gs.chains.find(key);
  if (it == gs.chains.end()) {
    if (gs.chains.size() >= kMaxGraphs) return false;
    ChainGraph g;
    const bool ok = (programmatic && build_chain(ls, n, true, g)) || build_chain(ls, n, false, g);
    it = gs.chains.emplace(key, std::move(g)).first;
    if (!ok) return false;
  } else {
    if (!it->second.exec) return false;
    for (size_t i = 0; i < n; ++i)
      check_driver(d.set_params(it->second.exec, it->second.nodes[i], ls[i].p), ls[i].what);
  }
  check_driver(d.graph_launch(it->second.exec, stream), ls[0].what);
  nuvec::detail::graph_launches().fetch_add(n, std::memory_order_relaxed);
  return true;
}

CUDA_KERNEL_NODE_PARAMS node_params(const void* fn, dim3 grid, dim3 block, void** args, size_t shared) {
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = reinterpret_cast<CUfunction>(const_cast<void*>(fn));
  p.gridDimX = grid.x, p.gridDimY = grid.y, p.gridDimZ = grid.z;
  p.blockDimX = block.x, p.blockDimY = block.y, p.blockDimZ = block.z;
  p.sharedMemBytes = static_cast<unsigned>(shared);
  p.kernelParams = args;
  return p;
}

// A launch now: through its graph where wanted, else cuLaunchKernel.
void launch_now(const CUDA_KERNEL_NODE_PARAMS& p, CUstream stream, const char* what) {
  const Launch one{&p, what};
  if (graph_launch_wanted(dim3(p.gridDimX, p.gridDimY, p.gridDimZ)) && launch_graph(&one, 1, stream)) return;
  check_driver(driver().launch(p.func, p.gridDimX, p.gridDimY, p.gridDimZ, p.blockDimX, p.blockDimY, p.blockDimZ,
                               p.sharedMemBytes, stream, p.kernelParams, nullptr),
               what);
}

// How many launches a stream holds back at most (NUVEC_GPU_BATCH, read
// once; 0 or 1: none, and none without cuFuncGetParamInfo).
size_t batch_limit() {
  static const size_t n = [] {
    const char* e = std::getenv("NUVEC_GPU_BATCH");
    long v = e ? std::atol(e) : 16;
    return v > 1 && driver().param_info ? static_cast<size_t>(v) : size_t{0};
  }();
  return n;
}

// A kernel's parameters: (offset, size) each, from the driver.
// (The map's entries stay where they are until their module goes.)
const Layout& layout_of(CUfunction f) {
  Layouts& ls = layouts();
  std::lock_guard<std::mutex> lock(ls.mu);
  auto it = ls.map.find(f);
  if (it != ls.map.end()) return it->second;
  Layout l;
  size_t offset = 0, size = 0;
  while (driver().param_info(f, l.size(), &offset, &size) == CUDA_SUCCESS) l.emplace_back(offset, size);
  return ls.map.emplace(f, std::move(l)).first->second;
}

// A launch held back: its node's parameters, with copies of the argument
// values (`args[i]` points into `bytes`).
struct Held {
  CUDA_KERNEL_NODE_PARAMS p{};
  std::vector<unsigned char> bytes;
  std::vector<void*> args;
  const char* what;
};
struct Batches {
  std::mutex mu;  // held while a batch launches, so launches keep their order
  std::unordered_map<CUstream, std::vector<Held>> held;
  // Per stream, the byte ranges [first, second) the held chain's
  // primitives write (note_held_writes).
  std::unordered_map<CUstream, std::vector<std::pair<uintptr_t, uintptr_t>>> writes;
  std::atomic<size_t> count{0};  // launches held on all streams
};
Batches& batches() {
  static Batches* b = new Batches;  // never destroyed (as graphs())
  return *b;
}

// Launches `held` (in order) on `stream` as one chain graph; one by one
// where the graph cannot be had. With batches().mu held.
void launch_chain(std::vector<Held>& held, CUstream stream) {
  if (held.size() > 1) {
    std::vector<Launch> ls;
    ls.reserve(held.size());
    for (const Held& h : held) ls.push_back({&h.p, h.what});
    if (launch_graph(ls.data(), ls.size(), stream, programmatic_chains())) return;
  }
  for (const Held& h : held) launch_now(h.p, stream, h.what);
}

// Launches what `stream` holds; with batches().mu held.
void flush_locked(Batches& b, CUstream stream) {
  if (auto w = b.writes.find(stream); w != b.writes.end()) w->second.clear();
  auto it = b.held.find(stream);
  if (it == b.held.end() || it->second.empty()) return;
  std::vector<Held> held = std::move(it->second);
  it->second.clear();
  b.count.fetch_sub(held.size(), std::memory_order_acq_rel);
  launch_chain(held, stream);
}

}  // namespace

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    (Error(ErrorKind::backend,
                std::string(what) + ": " + cudaGetErrorString(e))).raise();
}

const void* module_kernel(const GpuModule& m, const std::string& name) {
  std::lock_guard<std::mutex> lock(m.mu);
  for (const auto& [n, fn] : m.kernels)
    if (n == name) return fn;
  if (!m.loaded) {
    auto l = std::make_shared<Library>();
    check(cudaLibraryLoadData(&l->lib, m.binary.data(), nullptr, nullptr, 0,
                              nullptr, nullptr, 0),
          "loading a kernel built with NVRTC");
    m.loaded = l;
  }
  cudaKernel_t k;
  check(cudaLibraryGetKernel(&k, static_cast<Library*>(m.loaded.get())->lib,
                             name.c_str()),
        ("the kernel " + name).c_str());
  const void* fn = reinterpret_cast<const void*>(k);
  if (driver().launch) {
    CUfunction f = nullptr;
    bind_context();
    check_driver(driver().get_function(&f, reinterpret_cast<CUkernel>(k)), ("the kernel " + name).c_str());
    fn = reinterpret_cast<const void*>(f);
    static_cast<Library*>(m.loaded.get())->functions.push_back(fn);
  }
  m.kernels.emplace_back(name, fn);
  return m.kernels.back().second;
}

void allow_shared_memory(const void* fn, int bytes, const char* what) {
  if (!driver().launch) {
    check(cudaKernelSetAttributeForDevice(static_cast<cudaKernel_t>(const_cast<void*>(fn)),
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, bytes, 0),
          what);
    return;
  }
  bind_context();
  check_driver(driver().set_attribute(reinterpret_cast<CUfunction>(const_cast<void*>(fn)),
                                      CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
               what);
}

void launch_module_kernel(const void* fn, dim3 grid, dim3 block, void** args, size_t shared,
                          cudaStream_t s, const char* what) {
  if (!driver().launch) {
    check(cudaLaunchKernel(fn, grid, block, args, shared, s), what);
    return;
  }
  bind_context();
  flush_launches(s);
  launch_now(node_params(fn, grid, block, args, shared), reinterpret_cast<CUstream>(s), what);
}

namespace {

// Holds the launch of driver function `fn` on `s` (its parameters copied by
// their layout); launches what `s` holds once batch_limit() are.
void hold(const void* fn, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t s, const char* what) {
  Held h;
  h.p = node_params(fn, grid, block, nullptr, shared);
  h.what = what;
  const Layout& layout = layout_of(h.p.func);
  size_t bytes = 0;
  for (const auto& [offset, size] : layout) bytes = std::max(bytes, offset + size);
  h.bytes.resize(bytes);
  for (size_t i = 0; i < layout.size(); ++i) {
    std::memcpy(h.bytes.data() + layout[i].first, args[i], layout[i].second);
    h.args.push_back(h.bytes.data() + layout[i].first);
  }
  h.p.kernelParams = h.args.data();  // stays valid: the vector's buffer moves with it
  Batches& b = batches();
  std::lock_guard<std::mutex> lock(b.mu);
  auto& held = b.held[reinterpret_cast<CUstream>(s)];
  held.push_back(std::move(h));
  b.count.fetch_add(1, std::memory_order_acq_rel);
  if (held.size() >= batch_limit()) flush_locked(b, reinterpret_cast<CUstream>(s));
}

// The driver's function of a kernel of the library's own code (null where
// it cannot be had: then the runtime launches it), looked up once.
CUfunction static_function(const void* host_fn) {
  static std::mutex mu;
  static auto* known = new std::unordered_map<const void*, CUfunction>;  // never destroyed (as graphs())
  std::lock_guard<std::mutex> lock(mu);
  auto it = known->find(host_fn);
  if (it != known->end()) return it->second;
  cudaFunction_t f = nullptr;
  if (cudaGetFuncBySymbol(&f, host_fn) != cudaSuccess) {
    cudaGetLastError();
    f = nullptr;
  }
  return known->emplace(host_fn, reinterpret_cast<CUfunction>(f)).first->second;
}

thread_local bool holding_allowed = false;  // HoldingScope

// Whether launches may be held at all (the driver's entry points, a batch
// limit, graphs not turned off).
bool holding() {
  static const bool on = driver().launch && driver().graph_create && batch_limit() > 0 && graphs_mode() != 0;
  return on;
}

}  // namespace

void defer_module_kernel(const void* fn, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t s,
                         const char* what) {
  if (!driver().launch || batch_limit() == 0 || !graph_launch_wanted(grid)) {
    launch_module_kernel(fn, grid, block, args, shared, s, what);
    return;
  }
  bind_context();
  hold(fn, grid, block, args, shared, s, what);
}

void defer_kernel(const void* host_fn, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t s,
                  const char* what) {
  CUfunction f = nullptr;
  if (holding_allowed && holding()) {
    bind_context();
    f = static_function(host_fn);
  }
  if (!f) {
    flush_launches(s);
    check(cudaLaunchKernel(host_fn, grid, block, args, shared, s), what);
    return;
  }
  hold(reinterpret_cast<const void*>(f), grid, block, args, shared, s, what);
}

HoldingScope::HoldingScope(bool allow) : before_(holding_allowed) { holding_allowed = allow; }
HoldingScope::~HoldingScope() { holding_allowed = before_; }

void note_held_writes(cudaStream_t s, const void* p, size_t bytes) {
  Batches& b = batches();
  std::lock_guard<std::mutex> lock(b.mu);
  auto it = b.held.find(reinterpret_cast<CUstream>(s));
  if (it == b.held.end() || it->second.empty()) return;  // nothing held: nothing can overlap
  const auto at = reinterpret_cast<uintptr_t>(p);
  b.writes[reinterpret_cast<CUstream>(s)].emplace_back(at, at + bytes);
}

bool unwritten_by_held(cudaStream_t s, const void* p, size_t bytes) {
  Batches& b = batches();
  std::lock_guard<std::mutex> lock(b.mu);
  auto it = b.writes.find(reinterpret_cast<CUstream>(s));
  if (it == b.writes.end()) return true;
  const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + bytes;
  for (const auto& [first, last] : it->second)
    if (first < hi && lo < last) return false;
  return true;
}

void flush_launches(cudaStream_t s) {
  Batches& b = batches();
  if (b.count.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(b.mu);
  flush_locked(b, reinterpret_cast<CUstream>(s));
}

void flush_all_launches() {
  Batches& b = batches();
  if (b.count.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(b.mu);
  for (auto& [stream, held] : b.held) flush_locked(b, stream);
}

}  // namespace nuvec::cuda
