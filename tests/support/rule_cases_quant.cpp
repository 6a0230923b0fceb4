// Rule cases of the quantization primitives (include/nuvec/primitives/
// quantized.h): derivatives through x, the dense operands of gather_mm and
// the affine scales and biases (float64 finite differences; the packed
// codes are constants of the probes), none through quantize's codes; vmap
// against a loop over the batch.
#include "support/rule_cases.h"

namespace nuvec::rulecases {

namespace {

using Arrays = std::vector<Array>;

// A packed float64 matrix of shape [rows, cols] (group 32, 4 bits).
std::vector<Array> packed(const Shape& shape, std::mt19937& rng) {
  return ops::quantize(draw(dom::real, shape, rng), 32, 4);
}

}  // namespace

RuleCase Case<PrimitiveId::Quantize>::make(std::mt19937&) {
  return {{probe("codes of affine 4-bit", [](const Arrays& a) { return Arrays{ops::quantize(a[0], 32, 4)[0]}; },
                 {{2, 64}})
               .zero_grad("quantize's codes are piecewise constant; quantize is treated as a constant")}};
}

RuleCase Case<PrimitiveId::Dequantize>::make(std::mt19937& rng) {
  Array wq = packed({3, 64}, rng)[0];
  return {{probe("scales and biases", [wq](const Arrays& a) {
                   return Arrays{ops::dequantize(wq, a[0], a[1], 32, 4)};
                 },
                 {{3, 2}, {3, 2}})}};
}

RuleCase Case<PrimitiveId::QuantizedMatmul>::make(std::mt19937& rng) {
  auto t = packed({16, 64}, rng);
  auto n = packed({32, 64}, rng);
  return {{probe("x @ W^T", [t](const Arrays& a) {
                   return Arrays{ops::quantized_matmul(a[0], t[0], t[1], t[2], true, 32, 4)};
                 },
                 {{3, 64}}),
           probe("x @ W, batched x", [n](const Arrays& a) {
                   return Arrays{ops::quantized_matmul(a[0], n[0], n[1], n[2], false, 32, 4)};
                 },
                 {{2, 3, 32}}),
           probe("through scales and biases", [t](const Arrays& a) {
                   return Arrays{ops::quantized_matmul(a[0], t[0], a[1], a[2], true, 32, 4)};
                 },
                 {{2, 64}, {16, 2}, {16, 2}})}};
}

RuleCase Case<PrimitiveId::GatherMM>::make(std::mt19937&) {
  Array lhs = array({0, 2, 1, 1}), rhs = array({1, 0, 0, 1});
  return {{probe("both gathered", [lhs, rhs](const Arrays& a) {
                   return Arrays{ops::gather_mm(a[0], a[1], lhs, rhs)};
                 },
                 {{3, 2, 4}, {2, 4, 5}}),
           probe("experts only, sorted", [](const Arrays& a) {
                   return Arrays{ops::gather_mm(a[0], a[1], std::nullopt, array({0, 0, 1}), true)};
                 },
                 {{3, 1, 4}, {2, 4, 3}})}};
}

RuleCase Case<PrimitiveId::GatherQMM>::make(std::mt19937& rng) {
  auto w = ops::quantize(draw(dom::real, {2, 16, 64}, rng), 32, 4);
  Array lhs = array({0, 2, 1}), rhs = array({1, 1, 0});
  return {{probe("tokens against experts", [w, lhs, rhs](const Arrays& a) {
                   return Arrays{ops::gather_qmm(a[0], w[0], w[1], w[2], lhs, rhs, true, 32, 4)};
                 },
                 {{3, 1, 64}})}};
}

}  // namespace nuvec::rulecases
