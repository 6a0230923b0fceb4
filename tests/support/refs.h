// Reader for the MLX reference files under tests/refs/ (written by
// tools/record_mlx_refs.py).  Standard library only.
//
// Record format, one per line, tokens separated by single spaces:
//   # comment
//   case <case_id> <op_name>
//   param <key> <value>
//   in <dtype> <shape> <view> <hex>
//   out <dtype> <shape> <hex>
//   err <free text>
//   end
// shape: "2,3" or "-" for 0-d.  hex: little-endian bytes of the C-contiguous
// data, "-" when empty.  view: "c", "t", "s" or "b:<shape>".
// promotion.ref holds "promote <a> <b> <r>" and "weak <a> <int|float|bool> <r>".
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace nuvec::refs {

// Bytes per element of an MLX dtype name ("bool" .. "complex64"); throws
// std::runtime_error for an unknown name.
std::size_t dtype_size(const std::string& dtype);

struct Tensor {
  std::string dtype;
  std::vector<int> shape;  // empty for 0-d
  // How the op's operand is built from the stored array:
  //   "c": as is; "t": transpose all axes (stored has the reversed shape);
  //   "s": stored[..., ::2]; "b:<shape>": broadcast_to(stored, broadcast_shape).
  std::string view = "c";
  std::vector<unsigned char> bytes;  // C-contiguous, little-endian
  std::vector<int> broadcast_shape;  // for "b:" views

  std::size_t numel() const;  // elements of the stored array
  bool is_broadcast() const { return view.rfind("b:", 0) == 0; }
  // Shape the op sees after applying the view.
  std::vector<int> view_shape() const;
  // Element i of the stored array reinterpreted as T (sizeof(T) must equal
  // dtype_size(dtype)); no conversion is done.
  template <class T>
  T at(std::size_t i) const;
};

struct Case {
  std::string id, op;
  std::map<std::string, std::string> params;
  std::vector<Tensor> inputs, outputs;
  std::optional<std::string> error;  // MLX raised (or crashed) for this case
  int line = 0;                      // line of the "case" record
  std::string file;                  // file it came from (for messages)

  bool has(const std::string& key) const;
  // The raw text; throws std::runtime_error if missing.
  const std::string& param(const std::string& key) const;
  // "1.5", "nan", "-inf", "2" (an int is accepted as a double).
  double param_double(const std::string& key) const;
  long long param_int(const std::string& key) const;
  // "1,2,3" or "[]" (empty list); a single "4" gives {4}.
  std::vector<int> param_ints(const std::string& key) const;
  // "true" / "false".
  bool param_bool(const std::string& key) const;
  // True when the error records that MLX itself died (e.g. SIGFPE in integer
  // division): no value exists; the C++ side must fail or define its own.
  bool crashed() const;
  // "file:line id" for test messages.
  std::string where() const;
};

// Parse a reference file; throws std::runtime_error("<file>:<line>: ...") on
// malformed input.
std::vector<Case> load(const std::string& path);
// Same, from a stream; `name` is used in messages.
std::vector<Case> parse(std::istream& in, const std::string& name);

struct Promotion {
  // (a, b, result) from "promote a b result"
  std::vector<std::tuple<std::string, std::string, std::string>> promote;
  // (array_dtype, "int"|"float"|"bool", result) from "weak ..."
  std::vector<std::tuple<std::string, std::string, std::string>> weak;
};
Promotion load_promotion(const std::string& path);
Promotion parse_promotion(std::istream& in, const std::string& name);

// Resolves "unary.ref" against NUVEC_REFS_DIR (a string literal compile
// definition, e.g. -DNUVEC_REFS_DIR="\"/abs/tests/refs\"") if defined, else
// against "tests/refs/" (relative to the working directory).
std::string ref_path(const std::string& file);

// Parse helpers, exposed for tests.
std::vector<int> parse_shape(const std::string& s);  // "2,3" / "-" / "" -> dims
std::vector<unsigned char> parse_hex(const std::string& s);  // "-" -> empty

template <class T>
T Tensor::at(std::size_t i) const {
  T v{};
  static_assert(std::is_trivially_copyable_v<T>);
  const std::size_t n = sizeof(T);
  if ((i + 1) * n > bytes.size()) throw std::out_of_range("refs::Tensor::at");
  // the files are little-endian; so is every machine nuvec targets
  unsigned char* dst = reinterpret_cast<unsigned char*>(&v);
  for (std::size_t k = 0; k < n; ++k) dst[k] = bytes[i * n + k];
  return v;
}

}  // namespace nuvec::refs
