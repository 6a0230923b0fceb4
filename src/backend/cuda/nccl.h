// The "nccl" distributed backend (nccl.cpp): one process per GPU, NCCL
// loaded with dlopen when a group is first made (nuvec links no NCCL), the
// collectives enqueued on the arrays' CUDA streams. docs/distributed.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "distributed/group.h"
#include "nuvec/core/graph.h"
#include "nuvec/primitives/distributed.h"

namespace nuvec::cuda {

/// The group of every rank (bootstrapped through MPI when started by
/// mpirun, else through NUVEC_WORLD_SIZE / NUVEC_RANK / NUVEC_COORDINATOR,
/// else a group of one), or nullptr with `why` set.
std::shared_ptr<distributed::detail::GroupImpl> nccl_world(std::string& why);
/// Whether libnccl.so.2 loads and a GPU is there.
bool nccl_loadable();

/// Enqueues a Collective of an nccl group on `stream` (inputs and outputs
/// on the device); sums in rank order, as the mpi backend.
void launch_nccl(const Collective& p, const std::vector<Array>& in, std::vector<Array>& out, void* stream,
                 Stream s);

/// Makes the next synchronize or wait_written throw `e` (an asynchronous
/// failure found off the stream: a collective that timed out).
void report_async_error(const Error& e);

}  // namespace nuvec::cuda
