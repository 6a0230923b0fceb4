// GGUF's block formats into MLX's affine quantized layout (gguf_format.h).
// MLX's layout for group size 32: weight w = scale * q + bias, with q an
// unsigned 4- or 8-bit integer packed into uint32 words from the lowest bits
// up. A GGUF block of 32 weights becomes one group.
#include <cstring>

#include "io/gguf_format.h"
#include "nuvec/kernels/half.h"

namespace nuvec::io::detail {

namespace {

uint16_t le16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

// -k * d, rounded to float16 as MLX computes it (in float32, then rounded
// once; the product is exact in float32, so only overflow to -inf rounds).
uint16_t neg_times(uint16_t d, float k) {
  return kernels::float_to_half_bits(-k * kernels::half_bits_to_float(d));
}

// 32 nibbles (weight i in the low half of byte i, weight i + 16 in its high
// half) into 16 bytes in element order, two per byte, low nibble first.
void repack_nibbles(const uint8_t* q, uint8_t* w) {
  for (int k = 0; k < 8; ++k) {
    w[k] = static_cast<uint8_t>((q[2 * k] & 0x0f) | (q[2 * k + 1] << 4));
    w[8 + k] = static_cast<uint8_t>((q[2 * k] >> 4) | (q[2 * k + 1] & 0xf0));
  }
}

}  // namespace

void q4_0_to_affine(const uint8_t* src, int64_t blocks, uint8_t* w,
                    uint16_t* scales, uint16_t* biases) {
  for (int64_t b = 0; b < blocks; ++b, src += 18, w += 16) {
    uint16_t d = le16(src);
    scales[b] = d;
    biases[b] = neg_times(d, 8.0f);
    repack_nibbles(src + 2, w);
  }
}

void q4_1_to_affine(const uint8_t* src, int64_t blocks, uint8_t* w,
                    uint16_t* scales, uint16_t* biases) {
  for (int64_t b = 0; b < blocks; ++b, src += 20, w += 16) {
    scales[b] = le16(src);
    biases[b] = le16(src + 2);
    repack_nibbles(src + 4, w);
  }
}

void q8_0_to_affine(const uint8_t* src, int64_t blocks, uint8_t* w,
                    uint16_t* scales, uint16_t* biases) {
  for (int64_t b = 0; b < blocks; ++b, src += 34, w += 32) {
    uint16_t d = le16(src);
    scales[b] = d;
    biases[b] = neg_times(d, 128.0f);
    // int8 q as the unsigned q + 128: flipping the sign bit.
    for (int j = 0; j < 32; ++j) w[j] = static_cast<uint8_t>(src[2 + j] ^ 0x80);
  }
}

void bf16_to_f16(const uint8_t* src, int64_t n, uint16_t* dst) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t b = le16(src + 2 * i);
    if ((b & 0x7fff) > 0x7f80) {
      dst[i] = static_cast<uint16_t>((b & 0x8000) | 0x7e00);
    } else {
      dst[i] = kernels::float_to_half_bits(kernels::bfloat_bits_to_float(b));
    }
  }
}

}  // namespace nuvec::io::detail
