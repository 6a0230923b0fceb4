// Options of the file loaders (io.h, gguf.h, tree/checkpoint.h).
#pragma once

namespace nuvec::io {

/// How a loader brings a file's bytes into memory. The default maps the file
/// (no copy, pages read on demand), which requires that nobody truncates or
/// rewrites the file in place while its arrays live: reading a truncated
/// page kills the process with SIGBUS. `copy = true` reads the whole file
/// into buffers of the allocator instead (counted by the memory limit: a
/// file above it is an out_of_memory error), so the arrays stay valid
/// whatever later happens to the file; use it for files that other
/// processes may change, e.g. in a server (docs/io.md).
struct LoadOptions {
  bool copy = false;
};

}  // namespace nuvec::io

namespace nuvec {
using io::LoadOptions;
}  // namespace nuvec
