#include <nuvec/nuvec.h>

#include <iostream>

int main() {
  using namespace nuvec;
  Array a = array({{1.0, 2.0, 3.0}});
  float v = a.matmul(a.t()).sum().item<float>();
  std::cout << "downstream: " << v << "\n";
  return v == 14.0f ? 0 : 1;
}
