// The CUDA backend's interface to the rest of the library (plain C++: no
// CUDA header). Built when the CUDA toolkit is found (NUVEC_WITH_CUDA);
// src/backend/gpu.cpp forwards to it. docs/gpu-status.md says what runs.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nuvec/core/graph.h"
#include "nuvec/primitives/cuda_kernel.h"
#include "nuvec/primitives/fused.h"
#include "nuvec/primitives/fused_reduce.h"
#include "nuvec/primitives/quantized.h"
#include "nuvec/primitives/linalg.h"
#include "nuvec/primitives/random.h"
#include "nuvec/primitives/reduce.h"

namespace nuvec::cuda {

/// Whether a CUDA device is present and usable (checked once).
bool available();
/// Why not ("" when available).
std::string unavailable_reason();

/// A device buffer of `nbytes` for work on stream `s`, from the caching
/// allocator (out_of_memory Error beyond the memory limit or when the device
/// refuses). Freed buffers are reused by the same stream only (stream order
/// makes that safe while earlier kernels may still read them).
std::shared_ptr<Data> allocate(size_t nbytes, Stream s);

/// Waits for all GPU work; throws an Error for a kernel that failed.
void synchronize();
/// Waits for the last write enqueued into `d` (and the work before it on
/// its stream), not for other streams or later work; throws as synchronize.
void wait_written(const Data& d);

/// Launches the generated kernels held back on every stream (module.h's
/// defer_module_kernel); an eval calls it when its nodes are enqueued.
/// Never throws: a launch error is thrown by the next synchronize.
void flush();

/// Enqueues `p` on the GPU stream `s` (returns before it runs): outputs are
/// device buffers; inputs on the host are uploaded first, inputs made on
/// other streams are waited for through their events. Throws Error(unsupported_dtype / backend) when
/// there is no GPU kernel for the primitive or dtype; never falls back.
void eval(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out, Stream s);

/// A host copy of a device buffer, once the work that writes it is done.
std::shared_ptr<Data> to_host(const Data& d);
/// Whether a kernel on `s` may write into `d`, an input only that kernel
/// holds (buffer donation): when `d`'s writer ran on `s`; `s` then waits
/// for the reads of other streams.
bool donate(const Data& d, Stream s);

/// The architecture generated code is compiled for ("sm_90", "" without a
/// GPU) and the identity of NVRTC and the driver (nvrtc.cpp).
std::pair<std::string, std::string> code_target();
/// NVRTC: `source` into a cubin for `arch`; "" or the log.
std::string compile_program(const std::string& source, const std::string& arch, std::string& binary);

struct Stats {
  size_t active = 0;  // bytes in arrays (rounded sizes)
  size_t peak = 0;
  size_t cached = 0;  // freed bytes kept for reuse
  size_t limit = 0;
  size_t cache_limit = 0;
};
Stats stats();
void reset_peak();
/// Return the previous limit; the cache is trimmed to meet the new one.
size_t set_memory_limit(size_t bytes);
size_t set_cache_limit(size_t bytes);
void clear_cache();

/// Whether `a` lives on the host and holds one value (read through zero
/// strides): binary kernels take such an operand by value.
bool host_scalar(const Array& a);

// Kernels (elementwise.cu). Arrays are device-resident; `stream` is a
// cudaStream_t.
void launch_unary(PrimitiveId id, const Array& in, Array& out, void* stream);
void launch_binary(PrimitiveId id, const Array& a, const Array& b, Array& out, void* stream);
void launch_select(const Array& c, const Array& x, const Array& y, Array& out, void* stream);
void launch_cast(const Array& in, Array& out, void* stream);
void launch_reduce(const Reduce& p, const Array& in, Array& out, void* stream);
void launch_random_bits(const RandomBits& p, const Array& keys, Array& out, void* stream);
void launch_matmul(const Array& a, const Array& b, Array& out, void* stream, Stream s);
/// AddMM through cuBLASLt (addmm.cpp): the bias epilogue for a row-vector c
/// with beta 1, else c copied into `out` and C = D; separate kernels where
/// cuBLASLt offers no algorithm. `c` is read broadcast to out's shape.
void launch_addmm(const AddMM& p, const Array& a, const Array& b, const Array& c, Array& out,
                  void* stream, Stream s);

/// `a` with its data on the device (host data uploaded, through pinned
/// staging when small; data written on another stream waited for).
Array device_array(const Array& a, void* stream, Stream s);

/// A fused region (inputs as given: launch_fused uploads what it reads):
/// its generated kernels when compile built them, else one
/// element-wise kernel per operation (fused.cpp).
void launch_fused(const Fused& p, const std::vector<Array>& in, std::vector<Array>& out, void* stream,
                  Stream s);

/// A fused reduction over rows (fused_reduce.cpp): the generated row kernel
/// when compile built it and the inputs allow it, else its members one by
/// one through the eager kernels. Inputs as given (uploaded here).
void launch_fused_reduce(const FusedReduce& p, const std::vector<Array>& in, std::vector<Array>& out,
                         void* stream, Stream s);

/// The 16-bit patterns in order, into `out` (65536 2-byte words): the
/// inputs of the kernels that write fused regions' lookup tables (table.cu).
void launch_all_patterns(void* out, void* stream);

/// A fast::CudaKernel call (cuda_kernel.cpp): inputs are device-resident;
/// temporaries (row-contiguous copies) come from stream `s`.
void launch_cuda_kernel(const CudaKernel& p, const std::vector<Array>& in, std::vector<Array>& out,
                        void* stream, Stream s);

// Kernels of the remaining primitives, by family. Each runs `p` and returns
// true when the primitive is of its family, else returns false untouched.
// Inputs are device-resident (or host scalars never: these families get
// every input uploaded); outputs have dense device buffers.
/// Take, Scatter, Concatenate, BitCast, DivMod, NumberOf, Depends,
/// ArgReduce, Im2Col, Custom, Linalg (data.cpp and its .cu files).
/// `stream` is the CUDA stream of nuvec stream `s` (whose allocator cache
/// their scratch buffers come from).
bool launch_data(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out,
                 void* stream, Stream s);
/// Sort, ArgSort, Partition, ArgPartition, Scan (sort_scan.cpp and its .cu files).
bool launch_sort_scan(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out,
                      void* stream, Stream s);

}  // namespace nuvec::cuda
