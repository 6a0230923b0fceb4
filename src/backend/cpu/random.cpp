// Random bits from Threefry-2x32 keys, in MLX's counter layout.
//
// Each key fills its own block of `bytes` output bytes, seen as n = ceil(bytes
// / 4) little-endian 32-bit words. With h = n / 2 and o = n % 2, the hash of
// counter (j, j + h + o) gives words j and j + h + o for j < h; when n is
// odd, the first word of the hash of counter (h, 0) is word h. The last word
// keeps only its leading bytes when bytes is not a multiple of 4 (widths 1
// and 2 with odd counts).
#include <cstring>
#include <functional>

#include "backend/cpu/cpu.h"
#include "backend/cpu/loops.h"
#include "nuvec/kernels/binary.h"
#include "nuvec/kernels/cast.h"
#include "nuvec/kernels/threefry.h"

namespace nuvec::cpu {

namespace {

using kernels::U32Pair;

// Word `w` of a block of `bytes` bytes, truncated when it is the partial last.
inline void put_word(unsigned char* base, int64_t bytes, int64_t w, uint32_t v) {
  int64_t n = bytes - 4 * w;
  std::memcpy(base + 4 * w, &v, n >= 4 ? 4 : static_cast<size_t>(n));
}

// Pairs j in [j0, j1) of one key's block; none of them touches a partial word.
inline void full_pairs(U32Pair key, unsigned char* base, int64_t j0, int64_t j1,
                       int64_t second) {
  for (int64_t j = j0; j < j1; ++j) {
    U32Pair r = kernels::threefry2x32(
        key, {static_cast<uint32_t>(j), static_cast<uint32_t>(j + second)});
    std::memcpy(base + 4 * j, &r.x0, 4);
    std::memcpy(base + 4 * (j + second), &r.x1, 4);
  }
}

// Pairs per parallel block (each pair is 20 rounds on two words).
constexpr int64_t kPairGrain = 1 << 13;

// The unit-uniform epilogue: the steps random::uniform takes with ops
// (convert, divide, minimum, convert), through the same functors.
template <class T>
struct UnitUniformStore {
  T* dst;
  float upper;
  void operator()(int64_t i, uint32_t w) const {
    float f = kernels::Divide{}(kernels::Cast<float>{}(w), 4294967295.0f);
    dst[i] = kernels::Cast<T>{}(kernels::Minimum{}(f, upper));
  }
};

// Width-4 draws with the epilogue: whole words only, so element = word.
template <class T>
void unit_uniform(const RandomBits& p, int64_t num_keys, Array& out,
                  const std::function<U32Pair(int64_t)>& key_at) {
  const int64_t count = out.size() / num_keys;
  const int64_t half = count / 2, second = half + count % 2;
  UnitUniformStore<T> store{ptr<T>(out), p.unit_uniform()->upper};
  const int64_t blocks = std::max<int64_t>(1, (half + kPairGrain - 1) / kPairGrain);
  parallel_for(num_keys * blocks, 1, [&](long long t0, long long t1) {
    for (long long t = t0; t < t1; ++t) {
      int64_t k = t / blocks, b = t % blocks;
      U32Pair key = key_at(k);
      int64_t base = k * count;
      int64_t j1 = std::min(half, (b + 1) * kPairGrain);
      for (int64_t j = b * kPairGrain; j < j1; ++j) {
        U32Pair r = kernels::threefry2x32(
            key, {static_cast<uint32_t>(j), static_cast<uint32_t>(j + second)});
        store(base + j, r.x0);
        store(base + j + second, r.x1);
      }
      if (count % 2 && b == 0)
        store(base + half, kernels::threefry2x32(key, {static_cast<uint32_t>(half), 0u}).x0);
    }
  });
}

}  // namespace

void eval(const RandomBits& p, const Arrays& in, Arrays& out) {
  const Array& keys = in[0];
  int64_t num_keys = keys.size() / 2;
  if (out[0].size() == 0 || num_keys == 0) return;
  const int64_t bytes = out[0].size() / num_keys * p.width();
  const int64_t words = (bytes + 3) / 4, half = words / 2, odd = words % 2;
  const int64_t second = half + odd;  // where the second word of pair j goes
  // The pair whose second word is the last word stays out of the fast loop
  // when that word is partial.
  const int64_t fast_end = (bytes % 4 != 0 && half > 0) ? half - 1 : half;
  auto* dst = static_cast<unsigned char*>(out[0].desc()->data->ptr) +
              out[0].desc()->offset * out[0].itemsize();
  const uint32_t* kp = ptr<uint32_t>(keys);
  const Shape& ks = keys.shape();
  const Strides& kst = keys.strides();

  auto key_at = [&](int64_t i) {
    // Key i is row i of the keys seen as (num_keys, 2), any strides.
    int64_t off = 0, rem = i;
    for (int d = keys.ndim() - 2; d >= 0; --d) {
      off += (rem % ks[d]) * kst[d];
      rem /= ks[d];
    }
    return U32Pair{kp[off], kp[off + kst.back()]};
  };
  if (p.unit_uniform()) {
    DType d = p.unit_uniform()->dtype;
    if (d == float32) return unit_uniform<float>(p, num_keys, out[0], key_at);
    if (d == float16) return unit_uniform<float16_t>(p, num_keys, out[0], key_at);
    return unit_uniform<bfloat16_t>(p, num_keys, out[0], key_at);
  }

  const int64_t blocks = half > kPairGrain ? (half + kPairGrain - 1) / kPairGrain : 1;
  const int64_t keys_per_task = blocks > 1 ? 1 : std::max<int64_t>(1, kPairGrain / (half + 1));
  const int64_t tasks = blocks > 1 ? num_keys * blocks : (num_keys + keys_per_task - 1) / keys_per_task;
  parallel_for(tasks, 1, [&](long long t0, long long t1) {
    for (long long t = t0; t < t1; ++t) {
      int64_t k0 = blocks > 1 ? t / blocks : t * keys_per_task;
      int64_t k1 = blocks > 1 ? k0 + 1 : std::min(num_keys, k0 + keys_per_task);
      for (int64_t k = k0; k < k1; ++k) {
        U32Pair key = key_at(k);
        unsigned char* base = dst + k * bytes;
        int64_t b = blocks > 1 ? t % blocks : 0;
        int64_t j0 = b * kPairGrain, j1 = blocks > 1 ? std::min(half, j0 + kPairGrain) : half;
        full_pairs(key, base, j0, std::min(j1, fast_end), second);
        if (j1 > fast_end && fast_end < half) {
          U32Pair r = kernels::threefry2x32(
              key, {static_cast<uint32_t>(half - 1), static_cast<uint32_t>(half - 1 + second)});
          put_word(base, bytes, half - 1, r.x0);
          put_word(base, bytes, half - 1 + second, r.x1);
        }
        if (odd && b == 0)
          put_word(base, bytes, half,
                   kernels::threefry2x32(key, {static_cast<uint32_t>(half), 0u}).x0);
      }
    }
  });
}

}  // namespace nuvec::cpu
