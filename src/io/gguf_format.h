// GGUF internals shared by the reader, the converters and the writer
// (include/nuvec/gguf.h is the public interface). The layout, all
// little-endian: "GGUF", u32 version, u64 tensor count, u64 metadata count,
// the metadata (string key, u32 value type, value), the tensor infos
// (string name, u32 n_dims, u64 dims innermost first, u32 type, u64 offset
// into the data section), padding to the alignment, the data section.
// A string is a u64 length and that many bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "io/mapping.h"
#include "nuvec/gguf.h"

namespace nuvec::io::detail {

/// Metadata value types.
enum class GgufValue : uint32_t {
  uint8 = 0,
  int8 = 1,
  uint16 = 2,
  int16 = 3,
  uint32 = 4,
  int32 = 5,
  float32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  uint64 = 10,
  int64 = 11,
  float64 = 12,
};
inline constexpr uint32_t gguf_value_types = 13;

/// The tensor types this code knows by number (GGML's enum).
namespace gguf_type {
inline constexpr uint32_t f32 = 0, f16 = 1, q4_0 = 2, q4_1 = 3, q8_0 = 8,
                          i8 = 24, i16 = 25, i32 = 26, bf16 = 30;
}  // namespace gguf_type

/// "Q6_K" for a GGML tensor type, "?" for a number GGML does not define.
const char* gguf_tensor_type_name(uint32_t type);
/// "uint32" for a metadata value type, "?" for an unknown number.
const char* gguf_value_type_name(uint32_t type);

inline constexpr uint32_t gguf_default_alignment = 32;
inline constexpr char gguf_alignment_key[] = "general.alignment";

/// Checks every field of the GGUF bytes in `m` and makes the arrays (pointing
/// into `m` where their bytes serve as they are) and the metadata. `path`
/// names the file in errors.
GGUFLoad parse_gguf(const std::shared_ptr<Mapping>& m, const std::string& path);

// Conversions into MLX's layouts (gguf_quants.cpp). `src` holds `blocks`
// blocks of 32 weights; `w` receives 16 (4-bit) or 32 (8-bit) bytes per block
// (the uint32 words of the packed weights, little-endian, element 0 in the
// lowest bits) and `scales`, `biases` one float16 (bits) each.

/// Q4_0: 2-byte scale d, 16 bytes of nibbles (weight i low, i + 16 high);
/// a weight is d * (q - 8): scale d, bias -8 d.
void q4_0_to_affine(const uint8_t* src, int64_t blocks, uint8_t* w,
                    uint16_t* scales, uint16_t* biases);
/// Q4_1: scale d, minimum m, 16 bytes of nibbles; d * q + m.
void q4_1_to_affine(const uint8_t* src, int64_t blocks, uint8_t* w,
                    uint16_t* scales, uint16_t* biases);
/// Q8_0: scale d, 32 int8 weights q; stored as q + 128 with bias -128 d.
void q8_0_to_affine(const uint8_t* src, int64_t blocks, uint8_t* w,
                    uint16_t* scales, uint16_t* biases);
/// bfloat16 to float16, rounding to nearest-even; NaN becomes the quiet NaN
/// 0x7e00 with its sign (what MLX's loader gives).
void bf16_to_f16(const uint8_t* src, int64_t n, uint16_t* dst);

}  // namespace nuvec::io::detail
