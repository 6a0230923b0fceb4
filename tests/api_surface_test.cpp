// The pinned public surface (the spec's "Stability" section): arrays and
// operations, the fast kernels, compile, random numbers, evaluation, memory
// limits and statistics, safetensors I/O and the attention plan. Each item
// is named in a requires-expression, so a change that drops or renames one
// fails the build of the tests; the few runtime checks make sure the
// surface is the library's (the version agrees with the CMake package's).
#include <gtest/gtest.h>
#include <nuvec/nuvec.h>

#include <optional>
#include <string>
#include <unordered_map>

using namespace nuvec;

namespace {

// Arrays and operations (a representative, MLX-named set).
static_assert(requires(Array a, Array b) {
  { a + b } -> std::same_as<Array>;
  { ops::matmul(a, b) } -> std::same_as<Array>;
  { ops::softmax(a, -1, true) } -> std::same_as<Array>;
  { ops::logsumexp(a, -1, true) } -> std::same_as<Array>;
  { ops::reshape(a, Shape{2, 3}) } -> std::same_as<Array>;
  { ops::take(a, b, 0) } -> std::same_as<Array>;
  { ops::sum(a, -1, true) } -> std::same_as<Array>;
  { a.astype(bfloat16) } -> std::same_as<Array>;
  { a.shape() };
  { a.dtype() } -> std::same_as<DType>;
});

// The fast kernels and the attention plan, with MLX's argument orders.
static_assert(requires(Array x, std::optional<Array> w, std::optional<Array> b) {
  { fast::rms_norm(x, w, 1e-5f) } -> std::same_as<Array>;
  { fast::layer_norm(x, w, b, 1e-5f) } -> std::same_as<Array>;
  { fast::add_rms_norm(x, x, w, 1e-5f) } -> std::same_as<std::pair<Array, Array>>;
  { fast::rope(x, 64, false, 10000.0f, 1.0f, 0) } -> std::same_as<Array>;
  { fast::rope(x, 64, false, std::optional<float>{}, 1.0f, x, w) } -> std::same_as<Array>;
  { fast::scaled_dot_product_attention(x, x, x, 0.125f, "causal", w, b) } -> std::same_as<Array>;
  { fast::plan_attention(x, x, x, "causal") } -> std::same_as<fast::AttentionPlan>;
  { fast::cross_entropy(x, x) } -> std::same_as<Array>;
  { fast::cross_entropy(x, x, fast::CrossEntropyOptions{}) } -> std::same_as<Array>;
});
static_assert(requires(fast::AttentionPlan p) {
  { p.kernel } -> std::convertible_to<std::string>;
  { p.reason } -> std::convertible_to<std::string>;
  { p.fused() } -> std::same_as<bool>;
});
static_assert(requires(fast::CudaKernel k, std::vector<Array> in, fast::CudaKernelCall c) {
  { k(in, c) } -> std::same_as<std::vector<Array>>;
});

// compile, random numbers, evaluation.
static_assert(requires(Array a) {
  compile([](const Array& x) { return x; });
  compile([](const Array& x) { return x; }, true);
  enable_compile();
  disable_compile();
  { random::key(0) } -> std::same_as<Array>;
  { random::split(a) } -> std::same_as<std::pair<Array, Array>>;
  { random::normal(Shape{2}) } -> std::same_as<Array>;
  { random::uniform(0.0f, 1.0f, Shape{2}) } -> std::same_as<Array>;
  eval(std::vector<Array>{a});
  async_eval(std::vector<Array>{a});
  synchronize();
});

// Memory limits and statistics; safetensors I/O.
static_assert(requires(std::unordered_map<std::string, Array> m) {
  { get_active_memory() } -> std::same_as<size_t>;
  { get_peak_memory() } -> std::same_as<size_t>;
  { get_cache_memory() } -> std::same_as<size_t>;
  { set_memory_limit(size_t(1)) } -> std::same_as<size_t>;
  { set_cache_limit(size_t(1)) } -> std::same_as<size_t>;
  reset_peak_memory();
  clear_cache();
  save_safetensors(std::string("f"), m);
  load_safetensors(std::string("f"));
});

}  // namespace

TEST(ApiSurface, VersionIsTheLibrarys) {
  EXPECT_EQ(std::string(version()), std::to_string(NUVEC_VERSION_MAJOR) + "." +
                                        std::to_string(NUVEC_VERSION_MINOR) + "." +
                                        std::to_string(NUVEC_VERSION_PATCH));
  // The CMake package's version (find_package(nuvec VERSION ...)).
  EXPECT_EQ(std::string(version()), NUVEC_PACKAGE_VERSION);
}

TEST(ApiSurface, FastPlanIsPure) {
  // The plan depends on shapes, dtypes, options and the device only.
  Array q = ops::zeros({1, 2, 3, 64}), k = ops::zeros({1, 2, 5, 64});
  auto a = fast::plan_attention(q, k, k, "causal", {}, {}, Device::cpu);
  auto b = fast::plan_attention(ops::ones({1, 2, 3, 64}), k, k, "causal", {}, {}, Device::cpu);
  EXPECT_EQ(a.kernel, b.kernel);
  EXPECT_EQ(a.kernel, "cpu_blocked");
}
