// The interface a distributed backend implements (DESIGN.md section 2: the
// distributed backends sit beside the compute backends; the Collective
// primitive's CPU eval calls these on host buffers).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "nuvec/core/dtype.h"
#include "nuvec/primitives/distributed.h"

namespace nuvec::distributed::detail {

class GroupImpl {
 public:
  virtual ~GroupImpl() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const char* backend() const = 0;
  virtual std::shared_ptr<GroupImpl> split(int color, int key) = 0;
  /// Whether the collectives run on GPU streams (nccl): the host-buffer
  /// calls below then fail.
  virtual bool on_gpu() const { return false; }

  // Collectives on dense row-major host buffers. `what` describes the call
  // for messages ("all_sum float32 [4, 3]"); `signature` is equal on every
  // rank for matching calls (op, dtype, shape), so a mismatch fails on all
  // ranks. `in` and `out` may be the same buffer where the output has the
  // input's size.

  /// all_sum, all_max, all_min over `count` elements.
  virtual void all_reduce(CollectiveOp op, const void* in, void* out, int64_t count, DType dtype,
                          uint64_t signature, const std::string& what) = 0;
  /// `bytes` from every rank into out, in rank order.
  virtual void all_gather(const void* in, void* out, int64_t bytes, uint64_t signature,
                          const std::string& what) = 0;
  /// in holds size() blocks of `count` elements; out gets the rank-order
  /// sum of block rank() over the ranks.
  virtual void reduce_scatter(const void* in, void* out, int64_t count, DType dtype,
                              uint64_t signature, const std::string& what) = 0;
  virtual void send(const void* in, int64_t bytes, int dst, uint64_t signature,
                    const std::string& what) = 0;
  virtual void recv(void* out, int64_t bytes, int src, uint64_t signature,
                    const std::string& what) = 0;
};

/// out = parts[0] op parts[1] op ... op parts[n - 1], element by element, in
/// that order (the rank order every backend reduces in), with the
/// element-wise kernels' Add, Maximum and Minimum. `out` may be parts[0].
void combine(CollectiveOp op, DType dtype, const void* const* parts, int n, void* out, int64_t count);

/// The group of one process.
std::shared_ptr<GroupImpl> single_group();

/// The MPI world group, or nullptr with `why` set when MPI cannot start
/// (src/distributed/mpi.cpp).
std::shared_ptr<GroupImpl> mpi_world(std::string& why);
/// Whether this process was started by an MPI launcher (mpirun).
bool launched_by_mpi();
/// Whether the MPI library can be loaded here.
bool mpi_loadable();

/// The nccl world group (src/backend/cuda/nccl.cpp, through
/// src/backend/gpu.cpp), or nullptr with `why` set.
std::shared_ptr<GroupImpl> nccl_world(std::string& why);
/// Whether NCCL's library (libnccl.so.2) and a GPU are there.
bool nccl_loadable();

/// A launch through the environment (NUVEC_WORLD_SIZE, NUVEC_RANK,
/// NUVEC_COORDINATOR, default 127.0.0.1:29517); size 0 when not set.
struct EnvLaunch {
  int rank = 0;
  int size = 0;
  std::string coordinator;
};
EnvLaunch env_launch();
/// Rank 0's `bytes` on every rank, through TCP on the coordinator's
/// address (src/distributed/bootstrap.cpp); Error after the timeout.
std::string share_from_rank0(const EnvLaunch& e, const std::string& bytes);

/// Seconds a rank waits for its peers before the collective fails
/// (NUVEC_DISTRIBUTED_TIMEOUT, default 300).
double timeout_seconds();

}  // namespace nuvec::distributed::detail
