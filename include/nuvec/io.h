// Reading and writing arrays: safetensors and npy (docs/io.md).
//
// Loading maps the file read-only and the arrays point into the mapping (no
// copy); the mapping lives as long as any of its arrays. Arrays are
// immutable, so a loaded array is never written: operations make new
// buffers. A tensor whose bytes cannot be used as they are (misaligned,
// big-endian, or bool bytes other than 0 and 1) is copied alone.
//
// Every fault in a file (truncated, a header that lies about sizes or
// offsets, an unknown dtype, invalid JSON or UTF-8, ...) and every system
// error throws nuvec::Error of kind ErrorKind::io, whose message names the
// file and the fault ("[load_npy] x.npy: truncated: ..."). Saving evaluates
// the arrays first and rethrows the error of a failed one as it is. Saving
// writes a temporary file beside `path` and renames it into place, so a
// failed save leaves no partial file, and arrays loaded from the old file
// stay valid.
//
// The file must not be modified in place while arrays loaded from it are
// alive (as with numpy's mmap_mode="r"): truncating it makes reads fault
// (SIGBUS). The overloads taking LoadOptions{.copy = true} read the file into
// allocator buffers instead, for files that may change under the process.
#pragma once

#include <concepts>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "nuvec/core/array.h"
#include "nuvec/gguf.h"
#include "nuvec/load_options.h"

namespace nuvec::io {

/// MLX's result of load_safetensors: the tensors by name and the
/// "__metadata__" strings.
using SafetensorsLoad = std::pair<std::unordered_map<std::string, Array>,
                                  std::unordered_map<std::string, std::string>>;

/// The tensors of a safetensors file by name, memory-mapped, and its
/// "__metadata__" strings (MLX's pair: `auto [arrays, meta] =
/// load_safetensors(path)`). dtypes: BOOL, U8, I8, U16, I16, U32, I32, U64,
/// I64, F16, BF16, F32, F64 and C64 (complex64, as MLX writes it); others
/// (F8_E4M3, ...) are an error. `s` is accepted for MLX's signature: the
/// arrays are in host memory, which every device reads.
SafetensorsLoad load_safetensors(const std::string& path, StreamOrDevice s = {});

namespace detail {
SafetensorsLoad load_safetensors_with(const std::string& path,
                                      const LoadOptions& options);
}  // namespace detail

/// load_safetensors with `options`: `load_safetensors(path, {.copy = true})`
/// reads the file into allocator buffers instead of mapping it (LoadOptions).
/// (A template only so that MLX's `load_safetensors(path, {})` still means
/// the stream overload above.)
template <class = void>
SafetensorsLoad load_safetensors(const std::string& path, LoadOptions options,
                                 StreamOrDevice = {}) {
  return detail::load_safetensors_with(path, options);
}

/// The "__metadata__" strings of a safetensors file (empty when absent). The
/// whole header is checked as load_safetensors checks it.
std::map<std::string, std::string> load_safetensors_metadata(
    const std::string& path);

/// Writes `arrays` (evaluated first; any dtype, view or strides) and
/// `metadata` as a safetensors file. The header lists the tensors by name and
/// is padded with spaces to a multiple of 8 bytes; the data is ordered by
/// element size, then name, so that every tensor is aligned. Names and
/// metadata must be valid UTF-8; "__metadata__" cannot name a tensor.
void save_safetensors(std::string path, std::unordered_map<std::string, Array> arrays,
                      std::unordered_map<std::string, std::string> metadata = {});
/// The same from an ordered map of arrays (a template, so that braced lists
/// still choose MLX's unordered maps above).
template <class M>
  requires std::same_as<M, std::map<std::string, Array>>
void save_safetensors(std::string path, const M& arrays,
                      std::unordered_map<std::string, std::string> metadata = {}) {
  save_safetensors(std::move(path), std::unordered_map<std::string, Array>(arrays.begin(), arrays.end()),
                   std::move(metadata));
}

/// The array of an npy file (format versions 1.0, 2.0 and 3.0), memory-mapped.
/// dtypes: '|b1', '|u1', '|i1', '<u2' ... '<i8', '<f2', '<f4', '<f8', '<c8',
/// and '<V2' as bfloat16 (MLX's convention); big-endian ('>i4') data is
/// byte-swapped into a copy; Fortran order gives a transposed view of the
/// mapping (no copy).
Array load_npy(const std::string& path);
/// load_npy with `options`: `load_npy(path, {.copy = true})` reads the file
/// into an allocator buffer instead of mapping it (LoadOptions).
Array load_npy(const std::string& path, LoadOptions options);

/// Writes `a` (evaluated first) as an npy file (version 1.0, or 2.0 when the
/// header needs it): C order, or Fortran order when `a` is a column-major
/// view (a transpose), which is written without a copy. bfloat16 is written
/// as '<V2', as MLX does (numpy reads it as 2-byte void values).
void save_npy(const std::string& path, const Array& a);

/// MLX's save of one array: an npy file (save_npy), at `file` with ".npy"
/// appended when it does not end with it. (`save(path, tree)` of any other
/// tree writes a safetensors checkpoint: trees.md.)
void save(std::string file, const Array& a);
/// MLX's load of one array: the npy file at `file` (load_npy).
Array load(const std::string& file, StreamOrDevice s = {});

}  // namespace nuvec::io

namespace nuvec {
using io::LoadOptions;
using io::SafetensorsLoad;
using io::load;
using io::save;
using io::load_npy;
using io::load_safetensors;
using io::load_safetensors_metadata;
using io::save_npy;
using io::save_safetensors;
}  // namespace nuvec
