// Reading and writing GGUF files (the format of llama.cpp and GGML), with
// MLX's mapping of tensors and metadata (docs/io.md, "GGUF").
//
// Loading maps the file read-only: F32, F16, I8, I16 and I32 tensors point
// into the mapping (no copy); BF16 and the quantized types are converted into
// new buffers as MLX converts them. Every fault in a file and every system
// error throws nuvec::Error of kind ErrorKind::io naming the file and the
// fault ("[load_gguf] m.gguf: tensor \"w\": ..."); the header is trusted in
// nothing. Saving writes a temporary file beside the target and renames it
// into place, as the other savers of io.h do.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "nuvec/core/array.h"
#include "nuvec/core/device.h"
#include "nuvec/load_options.h"

namespace nuvec::io {

/// A GGUF metadata value: a number or bool (a 0-d array), an array of
/// numbers or bools (a 1-d array), a string, or an array of strings.
using GGUFMetaData =
    std::variant<std::monostate, Array, std::string, std::vector<std::string>>;

/// The tensors of a GGUF file by name, and its metadata by key.
using GGUFLoad = std::pair<std::unordered_map<std::string, Array>,
                           std::unordered_map<std::string, GGUFMetaData>>;

/// The tensors and metadata of a GGUF file (versions 2 and 3, little-endian),
/// as MLX loads them. Shapes are GGML's dimensions reversed (row-major).
/// Tensor types: F32, F16, I8, I16, I32 (memory-mapped), BF16 (converted to
/// float16, rounding to nearest-even, as MLX does), and Q4_0, Q4_1, Q8_0 in
/// MLX's affine quantized layout with group size 32: "x.weight" gives the
/// packed uint32 "x.weight" and float16 "x.scales" and "x.biases" (for a
/// name without ".weight", name + ".scales" and name + ".biases"). Other
/// types (Q4_K, Q6_K, F64, ...) are an error naming the tensor and the type.
/// Metadata: integers and bools are 0-d arrays of their type, float32 and
/// float64 are float32 (as MLX), arrays of them are 1-d arrays, strings and
/// arrays of strings are std::string and std::vector<std::string>; nested
/// arrays are an error. `s` is accepted for MLX's signature; the arrays are
/// constants in host memory.
GGUFLoad load_gguf(const std::string& file, StreamOrDevice s = {});

namespace detail {
GGUFLoad load_gguf_with(const std::string& file, const LoadOptions& options);
}  // namespace detail

/// load_gguf with `options`: `load_gguf(path, {.copy = true})` reads the file
/// into an allocator buffer instead of mapping it (LoadOptions). (A template
/// only so that MLX's `load_gguf(path, {})` still means the overload above.)
template <class = void>
GGUFLoad load_gguf(const std::string& file, LoadOptions options,
                   StreamOrDevice = {}) {
  return detail::load_gguf_with(file, options);
}

/// Writes `array_map` (evaluated first; float32, float16, int8, int16 and
/// int32 only, as MLX) and `meta_data` as a GGUF version 3 file, appending
/// ".gguf" to `file` when it does not end so (as MLX). Metadata: strings,
/// vectors of strings, and 0-d (a scalar) or non-empty 1-d arrays of bool,
/// uint8 ... uint64, int8 ... int64 or float32; anything else (float16,
/// float64, a 2-d or empty array, std::monostate) is an error. Keys and
/// tensors are written sorted by name, tensors aligned to 32 bytes (or to a
/// uint32 "general.alignment" given in `meta_data`).
void save_gguf(std::string file,
               std::unordered_map<std::string, Array> array_map,
               std::unordered_map<std::string, GGUFMetaData> meta_data = {});

}  // namespace nuvec::io

namespace nuvec {
using io::GGUFLoad;
using io::GGUFMetaData;
using io::load_gguf;
using io::save_gguf;
}  // namespace nuvec
