// slice_update on the GPU when its positions are a host constant (a
// KV-cache write): data::scatter writes the affine block directly, without
// the upload and the sort (src/backend/cuda/scatter.cu), and must give the
// CPU's bits, in place (a donated buffer) or not; positions that are not
// such a block (repeated, computed on the device) take the sorted path.
// A paged cache's slots (distinct, not one block) are written without the
// sort too; a slot written twice keeps the last write. Skipped without a
// GPU.
#include <gtest/gtest.h>

#include <nuvec/fast.h>

#include "support/gpu.h"

using namespace nuvec;
using namespace nuvec::testing;

namespace {

Array values(DType dt, const Shape& shape, uint32_t seed) {
  return ops::astype(random::normal(shape, random::key(seed), kCpu), dt, kCpu);
}

TEST(GpuScatterBlock, CacheWritesMatchTheCpu) {
  NUVEC_GPU_REQUIRED();
  for (DType dt : {float32, bfloat16, float16, int32, int8}) {
    for (int at : {0, 1, 7, 30}) {
      for (int len : {1, 2}) {
        const Shape buf_shape{2, 3, 32, 8};
        Array buf = values(dt, buf_shape, 1);
        Array upd = values(dt, {2, 3, len, 8}, 2);
        // a transposed update (the values' [B, L, H, D] -> [B, H, L, D])
        Array upd_t = values(dt, {2, len, 3, 8}, 3);
        const std::string what = std::string(dtype_name(dt)) + " at " + std::to_string(at) + " len " + std::to_string(len);
        expect_same([&](StreamOrDevice s) {
          return ops::slice_update(buf, upd, {0, 0, at, 0}, {2, 3, at + len, 8}, s);
        }, "contiguous " + what);
        expect_same([&](StreamOrDevice s) {
          return ops::slice_update(buf, ops::transpose(upd_t, {0, 2, 1, 3}, s), {0, 0, at, 0},
                                   {2, 3, at + len, 8}, s);
        }, "transposed " + what);
        // in place: the buffer made on the device and held by nothing else
        expect_same([&](StreamOrDevice s) {
          Array b = ops::add(buf, ops::astype(array(1), dt, s), s);
          return ops::slice_update(b, upd, {0, 0, at, 0}, {2, 3, at + len, 8}, s);
        }, "donated " + what);
      }
    }
  }
}

TEST(GpuScatterBlock, StridedBroadcastAndComputedPositions) {
  NUVEC_GPU_REQUIRED();
  Array x = values(float32, {6, 10}, 4);
  expect_same([&](StreamOrDevice s) {
    return ops::slice_update(x, values(float32, {3, 4}, 5), {0, 1}, {6, 9}, {2, 2}, s);
  }, "strided block");
  expect_same([&](StreamOrDevice s) {
    return ops::slice_update(x, array(2.5f), {1, 2}, {4, 7}, s);
  }, "a broadcast scalar");
  expect_same([&](StreamOrDevice s) {  // positions computed from an array start
    return ops::slice_update(x, values(float32, {2, 3}, 6), array({3, 5}), {0, 1}, s);
  }, "dynamic start");
  expect_same([&](StreamOrDevice s) {  // repeated indices: the last write wins
    return ops::put_along_axis(x, array({1, 1, 3}, Shape{1, 3}), values(float32, {6, 3}, 7), 1, s);
  }, "repeated indices");
  EXPECT_GT(cases_checked(), 0);
}

TEST(GpuScatterBlock, PagedSlotsMatchTheCpu) {
  NUVEC_GPU_REQUIRED();
  for (DType dt : {float32, bfloat16}) {
    Array kp = values(dt, {6, 2, 4, 8}, 8), vp = values(dt, {6, 2, 4, 8}, 9);
    Array k = values(dt, {3, 2, 2, 8}, 10), v = values(dt, {3, 2, 2, 8}, 11);
    // rows 0 and 2 share block 5: with positions 3 and 3 they write the
    // same slots (the last row wins), else distinct slots
    for (int shared : {0, 1}) {
      Array table = array({1, 4, 0, 5, shared ? 1 : 2, shared ? 4 : 3}, Shape{3, 2});
      Array pos = array({3, 6, 3});
      for (int which : {0, 1})
        expect_same([&](StreamOrDevice s) {
          auto [a, b] = fast::paged_write(kp, vp, k, v, table, pos, s);
          return which == 0 ? a : b;
        }, std::string("paged_write ") + std::string(dtype_name(dt)) + (shared ? " shared" : " distinct"));
    }
  }
}

}  // namespace
