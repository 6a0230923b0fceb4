// Distributed communication with MLX's names (mlx.core.distributed): a
// Group of processes and collectives that are graph primitives, lazy and
// evaluated like any op, with MLX's transform rules. Backends: "mpi" (CPU
// arrays, Debian's OpenMPI loaded when a group is first made), "nccl" (GPU
// arrays, one process per GPU, NCCL loaded when a group is first made),
// and a group of one process where every collective is a copy.
// docs/distributed.md.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "nuvec/core/array.h"
#include "nuvec/core/device.h"
#include "nuvec/core/error.h"

namespace nuvec::distributed {

namespace detail {
class GroupImpl;
}

/// A set of processes that take part in collectives together.
class Group {
 public:
  explicit Group(std::shared_ptr<detail::GroupImpl> impl);
  int rank() const;
  int size() const;
  /// "mpi", "nccl" or "single".
  std::string backend() const;
  /// The processes of this group that pass the same `color`, ranked by
  /// `key` (-1: by their rank here), as MPI_Comm_split. Every process of
  /// the group must call it.
  Group split(int color, int key = -1) const;
  const std::shared_ptr<detail::GroupImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<detail::GroupImpl> impl_;
};

/// Whether `backend` ("any", "mpi", "nccl", "single") can make a group
/// here: "mpi" needs Debian's OpenMPI library (libmpi.so.40) at run time,
/// "nccl" a GPU and libnccl.so.2.
bool is_available(const std::string& backend = "any");

/// The group of all processes (made once per backend, then the same
/// group). "any" is MPI when this process was started by mpirun, NCCL when
/// it was started through NUVEC_WORLD_SIZE / NUVEC_RANK /
/// NUVEC_COORDINATOR, else a group of one. A backend that cannot start
/// throws nuvec::Error when `strict`, else gives the group of one.
Group init(bool strict = false, const std::string& backend = "any");
/// init(false, backend): `init("mpi")` names a backend, not `strict`.
Group init(const char* backend);
Group init(const std::string& backend);

/// The sum over the group, element by element, in rank order:
/// ((x_0 + x_1) + x_2) + ..., the same bits on every rank and on every run
/// with this group size. Every rank passes the same shape and dtype.
Array all_sum(const Array& x, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});
Array all_max(const Array& x, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});
Array all_min(const Array& x, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});
/// The ranks' arrays concatenated along axis 0 in rank order (a scalar
/// counts as shape [1]).
Array all_gather(const Array& x, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});
/// The sum over the group of x, of which this rank keeps its block of
/// rows: axis 0 is split into `size` equal blocks (it must divide).
Array reduce_scatter(const Array& x, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});
/// MLX's name for reduce_scatter.
Array sum_scatter(const Array& x, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});
/// Sends x to rank `dst`; the result holds x's values once the receiver
/// took it (evaluate it, or depend on it, for the send to happen).
Array send(const Array& x, int dst, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});
/// Receives an array of this shape and dtype from rank `src`.
Array recv(Shape shape, DType dtype, int src, std::optional<Group> group = std::nullopt,
           StreamOrDevice s = {});
/// recv with x's shape and dtype.
Array recv_like(const Array& x, int src, std::optional<Group> group = std::nullopt, StreamOrDevice s = {});

}  // namespace nuvec::distributed
