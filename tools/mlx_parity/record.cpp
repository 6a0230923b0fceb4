// Records MLX's results of the parity cases (tests/parity/cases_*.inc) into
// tests/refs/parity.ref: the same source the nuvec test compiles, compiled
// here against MLX's C++ library. Built and run by
// tools/record_mlx_parity.sh; never needed by the build or the tests.
#include <mlx/mlx.h>

#include <complex>
#include <iostream>
#include <tuple>

#include "parity/harness.h"

namespace NS = mlx::core;

namespace {

using parity::Value;

std::string dtype_text(NS::Dtype d) {
  std::ostringstream os;
  os << d;
  return os.str();
}

// Element i of a (row-major over its shape, through its strides) as text.
template <class T>
std::string element(const NS::array& a, int64_t offset) {
  T v = a.data<T>()[offset];
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else if constexpr (std::is_same_v<T, NS::complex64_t>) {
    return parity::float_text(v.real()) + "," + parity::float_text(v.imag());
  } else if constexpr (std::is_floating_point_v<T> ||
                       std::is_same_v<T, NS::float16_t> ||
                       std::is_same_v<T, NS::bfloat16_t>) {
    return parity::float_text(static_cast<double>(static_cast<float>(v)));
  } else {
    return std::to_string(v);
  }
}
template <>
std::string element<double>(const NS::array& a, int64_t offset) {
  return parity::float_text(a.data<double>()[offset]);
}

template <class T>
void read_all(const NS::array& a, Value& out) {
  int64_t n = a.size();
  int nd = a.ndim();
  std::vector<int64_t> idx(nd, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int d = 0; d < nd; ++d) off += idx[d] * a.strides()[d];
    out.data.push_back(element<T>(a, off));
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[d] < a.shape(d)) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

namespace parity {

Value V(const NS::array& x) {
  NS::array a = x;
  a.eval();
  Value v;
  v.kind = 'A';
  v.dtype = dtype_text(a.dtype());
  for (auto d : a.shape()) v.shape.push_back(d);
  switch (a.dtype()) {
    case NS::bool_: read_all<bool>(a, v); break;
    case NS::uint8: read_all<uint8_t>(a, v); break;
    case NS::uint16: read_all<uint16_t>(a, v); break;
    case NS::uint32: read_all<uint32_t>(a, v); break;
    case NS::uint64: read_all<uint64_t>(a, v); break;
    case NS::int8: read_all<int8_t>(a, v); break;
    case NS::int16: read_all<int16_t>(a, v); break;
    case NS::int32: read_all<int32_t>(a, v); break;
    case NS::int64: read_all<int64_t>(a, v); break;
    case NS::float16: read_all<NS::float16_t>(a, v); break;
    case NS::bfloat16: read_all<NS::bfloat16_t>(a, v); break;
    case NS::float32: read_all<float>(a, v); break;
    case NS::float64: read_all<double>(a, v); break;
    case NS::complex64: read_all<NS::complex64_t>(a, v); break;
  }
  return v;
}
Value V(const std::vector<NS::array>& xs) {
  Value v;
  v.kind = 'L';
  for (auto& x : xs) v.items.push_back(V(x));
  return v;
}
Value V(const std::pair<NS::array, NS::array>& p) {
  return V(std::vector<NS::array>{p.first, p.second});
}
Value V(const std::tuple<NS::array, NS::array>& p) {
  return V(std::vector<NS::array>{std::get<0>(p), std::get<1>(p)});
}
Value V(const NS::Shape& s) {
  std::string t;
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return scalar("shape:" + t);
}
Value V(const NS::Strides& s) {
  std::string t;
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return scalar("strides:" + t);
}
Value V(NS::Dtype d) { return scalar("dtype:" + dtype_text(d)); }

}  // namespace parity

using parity::V;

#include "parity/cases_all.inc"

namespace {

class Recorder : public parity::Sink {
 public:
  void put(const char* name, double, const std::function<Value()>& f) override {
    NS::set_default_device(NS::Device::cpu);
    parity::write_value(std::cout, name, parity::run_case(f));
  }
};

}  // namespace

int main() {
  std::cout << "# MLX " << NS::version()
            << " (C++ library of the pip package), recorded by "
               "tools/record_mlx_parity.sh\n";
  Recorder r;
#define RUN_GROUP(g)                   \
  std::cout << "@group " #g "\n";      \
  group_##g(r);
  PARITY_GROUPS(RUN_GROUP)
  return 0;
}
