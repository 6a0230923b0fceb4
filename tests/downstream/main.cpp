#include <nuvec/lm.h>
#include <nuvec/nn.h>
#include <nuvec/nuvec.h>

#include <iostream>

int main() {
  using namespace nuvec;
  Array a = array({{1.0, 2.0, 3.0}});
  float v = a.matmul(a.t()).sum().item<float>();
  nn::Linear layer(3, 2);  // nuvec::nn from the same package
  Shape out = layer(a).shape();
  auto types = lm::supported_model_types();  // nuvec::lm too
  std::cout << "downstream: " << v << ", Linear(3, 2) gives " << out[0] << "x" << out[1] << ", "
            << types.size() << " model types\n";
  return v == 14.0f && out == Shape{1, 2} && !types.empty() ? 0 : 1;
}
