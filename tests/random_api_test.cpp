// nuvec::random has MLX's C++ overloads: every form compiles, none is
// ambiguous where MLX's is not, and each binds its arguments as MLX does
// (checked here against the explicit form of the same draw; MLX's own
// values are in random_test.cpp and tests/parity/cases_random.inc). Also:
// the MLX-formula primitives fuse under compile to the same bits, and a
// failing call takes no key from the thread's sequence.
#include <gtest/gtest.h>
#include <nuvec/nuvec.h>

#include <limits>
#include <type_traits>

#include "random/internal.h"

namespace nuvec {
namespace {

std::vector<float> f32(const Array& a) {
  return a.astype(float32).to_vector<float>();
}

const Shape kS{3, 4};

static_assert(std::is_same_v<decltype(random::split(std::declval<Array>())),
                             std::pair<Array, Array>>);
static_assert(
    std::is_same_v<decltype(random::split(std::declval<Array>(), 3)), Array>);

// MLX calls whose resolution is delicate, compiled (never run): a brace
// `{}` where MLX's Dtype and array (no default constructors) cannot take
// it, a stream after a defaulted key, int and braced sizes.
[[maybe_unused]] void mlx_calls_compile(const Array& k, const Array& lo,
                                        const Array& hi) {
  random::bits({2}, {});
  random::bits({2}, k, Device::cpu);
  random::uniform({2}, {});
  random::uniform({2}, {}, Device::cpu);
  random::uniform(lo, hi, {});
  random::uniform(0.0f, 1, {2});
  random::normal({2}, {});
  random::normal({2}, {}, Device::cpu);
  random::normal({2}, float16, {}, Device::cpu);
  random::normal({2}, float32, 0, 1);
  random::normal({2}, 0.0, 2.0, k);
  random::laplace({2}, {});
  random::laplace({2}, float16, {}, Device::cpu);
  random::gumbel({2}, float32, {}, Device::cpu);
  random::truncated_normal(lo, hi, {});
  random::truncated_normal(lo, hi, {2, 3}, float16);
  random::truncated_normal(lo, hi, float16, {});
  random::truncated_normal(lo, hi);
  random::bernoulli();
  random::bernoulli(0.5);
  random::bernoulli(0.5, {2});
  random::bernoulli(lo, {2}, {}, Device::cpu);
  random::bernoulli(std::nullopt, Device::cpu);
  random::randint(0, 10, {2});
  random::randint(lo, 10, {2}, int8, k);
  random::categorical(lo, 0, 5);
  random::categorical(lo, 0, {5});
  random::categorical(lo, 0, {2, 3});
  random::categorical(lo, -1, {}, Device::cpu);
  random::permutation(5);
  random::permutation(lo, 0, k, Device::cpu);
  random::multivariate_normal(lo, hi, {}, float32);
  random::split(k, Device::cpu);
}

TEST(RandomApi, KeyAndSplitForms) {
  Array k = random::key(77);
  auto [a, b] = random::split(k);
  Array rows = random::split(k, 2);
  EXPECT_EQ(a.shape(), Shape{2});
  EXPECT_EQ(a.to_vector<uint32_t>(), rows.i(0).to_vector<uint32_t>());
  EXPECT_EQ(b.to_vector<uint32_t>(), rows.i(1).to_vector<uint32_t>());
  EXPECT_EQ(random::split_pair(k).second.to_vector<uint32_t>(),
            b.to_vector<uint32_t>());
  EXPECT_EQ(random::bits(kS, k).to_vector<uint32_t>(),
            random::bits(kS, 4, k).to_vector<uint32_t>());
  EXPECT_EQ(&random::KeySequence::default_(),
            &random::KeySequence::thread_default());
}

TEST(RandomApi, UniformForms) {
  Array k = random::key(78);
  auto u = f32(random::uniform(kS, k));
  EXPECT_EQ(f32(random::uniform(kS, float32, k)), u);
  // MLX's uniform(shape, dtype) is uniform(0, 1) of that dtype.
  EXPECT_EQ(f32(random::uniform(0, 1, kS, float32, k)), u);
  EXPECT_EQ(f32(random::uniform(array(0.0f), array(1.0f), kS, float32, k)), u);
  EXPECT_EQ(f32(random::uniform(kS, float16, k)),
            f32(random::uniform(0.0, 1.0, kS, float16, k)));
}

TEST(RandomApi, NormalForms) {
  Array k = random::key(79);
  auto z = f32(random::normal(kS, k));
  // The key is never taken for the mean (the old trap): all these are
  // the standard normal with key k.
  EXPECT_EQ(f32(random::normal(kS, float32, k)), z);
  EXPECT_EQ(f32(random::normal(kS, float32, std::nullopt, std::nullopt, k)), z);
  EXPECT_EQ(f32(random::normal(kS, float32, 0.0f, 1.0f, k)), z);
  EXPECT_EQ(f32(random::normal(kS, 0.0f, 1.0f, k)), z);
  // Float mean and scale are arrays of the dtype.
  EXPECT_EQ(f32(random::normal(kS, float16, 2.0f, 0.5f, k)),
            f32(random::normal(kS, float16, array(2.0f, float16),
                               array(0.5f, float16), k)));
  EXPECT_EQ(f32(random::normal(kS, -1.0f, 3.0f, k)),
            f32(random::normal(kS, float32, array(-1.0f), array(3.0f), k)));
}

TEST(RandomApi, BernoulliForms) {
  Array k = random::key(80);
  // bernoulli(k) takes k as the probability, as MLX's overloads do.
  Array as_p = random::bernoulli(k);
  ASSERT_TRUE(as_p.is_failed());
  EXPECT_EQ(as_p.error()->kind(), ErrorKind::unsupported_dtype);
  Array half = random::bernoulli(random::Key(k));
  EXPECT_EQ(half.shape(), Shape{});
  EXPECT_EQ(half.item<bool>(),
            random::bernoulli(array(0.5f), random::Key(k)).item<bool>());
  EXPECT_EQ(random::bernoulli(0.25, kS, k).to_vector<bool>(),
            random::bernoulli(array(0.25f), kS, k).to_vector<bool>());
  Array p = array({0.1f, 0.9f, 0.5f});
  EXPECT_EQ(random::bernoulli(p, random::Key(k)).to_vector<bool>(),
            random::bernoulli(p, Shape{3}, k).to_vector<bool>());
}

TEST(RandomApi, TruncatedNormalLaplaceGumbelForms) {
  Array k = random::key(81);
  Array lo = array({-1.0f, 0.0f, 0.5f}), hi = array({1.0f}, {1, 1});
  EXPECT_EQ(f32(random::truncated_normal(lo, hi, float32, k)),
            f32(random::truncated_normal(lo, hi, Shape{1, 3}, float32, k)));
  EXPECT_EQ(random::truncated_normal(array(-1.0f), array(1.0f), {}, float32, k)
                .shape(),
            Shape{});
  auto l = f32(random::laplace(kS, k));
  EXPECT_EQ(f32(random::laplace(kS, float32, k)), l);
  EXPECT_EQ(f32(random::laplace(kS, float32, 0.0f, 1.0f, k)), l);
  EXPECT_EQ(f32(random::laplace(kS, 0.0f, 1.0f, k)), l);
  EXPECT_EQ(f32(random::gumbel(kS, float32, k)),
            f32(random::gumbel(kS, float32, random::Key(k))));
}

TEST(RandomApi, CategoricalRandintPermutationForms) {
  Array k = random::key(82);
  Array logits = array({0.5f, -1.0f, 2.0f, 0.1f});
  // An int and a braced int are num_samples; a Shape is the sample shape.
  EXPECT_EQ(random::categorical(logits, 0, 5, k).shape(), Shape{5});
  EXPECT_EQ(random::categorical(logits, 0, {5}, k).to_vector<uint32_t>(),
            random::categorical(logits, 0, 5, k).to_vector<uint32_t>());
  EXPECT_EQ(random::categorical(logits, 0, Shape{2, 3}, k).shape(),
            (Shape{2, 3}));
  EXPECT_EQ(random::categorical(logits, -1, k).shape(), Shape{});
  EXPECT_EQ(
      random::randint(0, 10, kS, int32, k).to_vector<int32_t>(),
      random::randint(array(0), array(10), kS, int32, k).to_vector<int32_t>());
  EXPECT_EQ(random::permutation(5, k).to_vector<uint32_t>(),
            random::permutation(ops::arange(5), 0, k)
                .astype(uint32)
                .to_vector<uint32_t>());
}

TEST(RandomApi, BracesAndStreamsTakeTheSequence) {
  // `{}` in the key's place is "no key": the thread's next key, as MLX.
  random::seed(12);
  auto a = f32(random::normal(kS, {}));
  auto b = f32(random::uniform(kS, {}, Device::cpu));
  random::seed(12);
  EXPECT_EQ(f32(random::normal(kS)), a);
  EXPECT_EQ(f32(random::uniform(kS)), b);
}

TEST(RandomApi, FailedCallsTakeNoKey) {
  random::seed(13);
  EXPECT_TRUE(random::normal({2}, int32).is_failed());
  EXPECT_TRUE(random::uniform({2}, float64).is_failed());
  EXPECT_TRUE(random::bernoulli(array({0.5f, 0.5f}), {3}).is_failed());
  EXPECT_TRUE(random::categorical(array({1.0f}), 3).is_failed());
  EXPECT_TRUE(
      random::truncated_normal(array({0.0f, 1.0f}), array({1.0f, 2.0f, 3.0f}))
          .is_failed());
  auto after_failures = f32(random::uniform({4}));
  random::seed(13);
  EXPECT_EQ(f32(random::uniform({4})), after_failures);
}

// The MLX-formula primitives are element-wise registry entries: compile
// fuses them (the generated kernel includes kernels/mlx_math.h), with the
// eager bits.
TEST(RandomApi, MlxFormulasFuseToTheSameBits) {
  auto f = [](const Array& x) {
    Array e = random::detail::mlx_erfinv(x * 0.999f, {}, NUVEC_LOC);
    Array g = random::detail::mlx_erf(e, {}, NUVEC_LOC);
    return random::detail::mlx_exp(g - x, {}, NUVEC_LOC) * 2.0f;
  };
  for (DType dt : {float32, float16, bfloat16, float64}) {
    Array x = random::uniform(-1.0f, 1.0f, {1001}, float32, random::key(83))
                  .astype(dt);
    EXPECT_EQ(f32(compile(f)(x)), f32(f(x))) << dtype_name(dt);
  }
}

}  // namespace
}  // namespace nuvec
