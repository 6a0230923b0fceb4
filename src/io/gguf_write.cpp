// Writing GGUF version 3 (gguf_format.h) as MLX's save_gguf does: the same
// tensor dtypes and metadata kinds, data aligned to 32 bytes, no padding
// after the last tensor. Keys and tensors are sorted by name, so that the
// bytes depend on the contents only (MLX writes them in hash-map order).
#include <algorithm>
#include <cstring>

#include "backend/backend.h"
#include "io/gguf_format.h"
#include "nuvec/core/eval.h"
#include "nuvec/ops/ops.h"

namespace nuvec::io {

namespace detail {

namespace {

constexpr const char* op = "save_gguf";

struct TypeOf {
  DType dtype;
  uint32_t type;
};
// What MLX writes: tensors of five dtypes, metadata of ten.
const TypeOf tensor_types[] = {
    {float32, gguf_type::f32}, {float16, gguf_type::f16}, {int8, gguf_type::i8},
    {int16, gguf_type::i16},   {int32, gguf_type::i32},
};
const TypeOf value_types[] = {
    {bool_, 7},  {uint8, 0}, {int8, 1},    {uint16, 2}, {int16, 3},
    {uint32, 4}, {int32, 5}, {uint64, 10}, {int64, 11}, {float32, 6},
};

const uint32_t* find_type(const TypeOf* begin, const TypeOf* end, DType d) {
  for (const TypeOf* t = begin; t != end; ++t)
    if (t->dtype == d) return &t->type;
  return nullptr;
}

void put32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>(v >> (8 * i));
}
void put64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>(v >> (8 * i));
}
void put_string(std::string& out, const std::string& s) {
  put64(out, s.size());
  out += s;
}

// An evaluated, row-major copy of `a` (a view is copied).
Array dense(const Array& a) {
  Array x = a.eval();
  if (!is_row_contiguous(x.shape(), x.strides())) x = ops::copy(x).eval();
  return x;
}

std::string bytes_of(const Array& a) {
  if (a.nbytes() == 0) return {};
  const char* p = static_cast<const char*>(backend::host_pointer(a));
  return std::string(p, static_cast<size_t>(a.nbytes()));
}

class Encoder {
 public:
  explicit Encoder(const std::string& path) : path_(path) {}
  Error fail(const std::string& what) const {
    return io_error(op, path_, what);
  }

  // Appends one metadata entry to `out`.
  void entry(std::string& out, const std::string& key, const GGUFMetaData& v) {
    std::string who = "metadata \"" + key + "\"";
    if (std::holds_alternative<std::monostate>(v))
      (fail(who + " holds no value (std::monostate)")).raise();
    if (key == gguf_alignment_key && !std::holds_alternative<Array>(v))
      (fail(who + " must be a uint32 scalar that is a power of two")).raise();
    put_string(out, key);
    if (const auto* s = std::get_if<std::string>(&v)) {
      put32(out, static_cast<uint32_t>(GgufValue::string));
      put_string(out, *s);
      return;
    }
    if (const auto* list = std::get_if<std::vector<std::string>>(&v)) {
      put32(out, static_cast<uint32_t>(GgufValue::array));
      put32(out, static_cast<uint32_t>(GgufValue::string));
      put64(out, list->size());
      for (const auto& s : *list) put_string(out, s);
      return;
    }
    const Array& a = std::get<Array>(v);
    if (a.is_failed()) a.eval();  // rethrows its error as it is
    if (a.ndim() > 1)
      (fail(who + " is an array of " + std::to_string(a.ndim()) +
            " dimensions; GGUF metadata holds scalars (0-d arrays) and "
            "1-d arrays"))
          .raise();
    if (a.size() == 0)
      (fail(who + " is an empty array (as MLX, refused)")).raise();
    const uint32_t* type =
        find_type(std::begin(value_types), std::end(value_types), a.dtype());
    if (!type)
      (fail(who + " has dtype " + std::string(dtype_name(a.dtype())) +
            "; GGUF metadata arrays may be bool, uint8 ... uint64, "
            "int8 ... int64 or float32"))
          .raise();
    Array x = dense(a);
    if (key == gguf_alignment_key) alignment(who, x);
    if (x.ndim() == 0) {
      put32(out, *type);
    } else {
      put32(out, static_cast<uint32_t>(GgufValue::array));
      put32(out, *type);
      put64(out, static_cast<uint64_t>(x.size()));
    }
    out += bytes_of(x);
  }

  uint64_t alignment() const { return alignment_; }

 private:
  // A "general.alignment" the caller gives is the alignment the file uses.
  void alignment(const std::string& who, const Array& x) {
    uint32_t a = x.dtype() == uint32 && x.ndim() == 0 ? x.item<uint32_t>() : 0;
    if (a == 0 || (a & (a - 1)) != 0)
      (fail(who + " must be a uint32 scalar that is a power of two")).raise();
    alignment_ = a;
  }

  const std::string& path_;
  uint64_t alignment_ = gguf_default_alignment;
};

uint64_t padding(uint64_t offset, uint64_t alignment) {
  return (alignment - offset % alignment) % alignment;
}

void write_zeros(FileWriter& out, uint64_t n) {
  static const char zeros[4096] = {};
  for (; n > 0; n -= std::min<uint64_t>(n, sizeof(zeros)))
    out.write(zeros, static_cast<size_t>(std::min<uint64_t>(n, sizeof(zeros))));
}

}  // namespace

}  // namespace detail

void save_gguf(std::string file,
               std::unordered_map<std::string, Array> array_map,
               std::unordered_map<std::string, GGUFMetaData> meta_data) {
  using namespace detail;
  constexpr std::string_view ext = ".gguf";
  if (file.size() < ext.size() || file.substr(file.size() - ext.size()) != ext)
    file += ext;
  Encoder enc(file);

  std::vector<const std::string*> keys;
  for (const auto& [k, v] : meta_data) keys.push_back(&k);
  std::sort(keys.begin(), keys.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  std::string kv;
  for (const std::string* k : keys) enc.entry(kv, *k, meta_data.at(*k));

  std::vector<std::string> names;
  for (const auto& [k, a] : array_map) names.push_back(k);
  std::sort(names.begin(), names.end());
  std::vector<Array> arrays;
  for (const auto& name : names) {
    const Array& a = array_map.at(name);
    if (!a.is_failed() &&
        !find_type(std::begin(tensor_types), std::end(tensor_types), a.dtype()))
      (enc.fail("tensor \"" + name + "\" has dtype " +
                std::string(dtype_name(a.dtype())) +
                "; GGUF tensors may be float32, float16, int8, int16 "
                "or int32 (as MLX)"))
          .raise();
    arrays.push_back(a);
  }
  eval(arrays);  // rethrows the error of a failed array as it is
  for (auto& a : arrays) a = dense(a);

  std::string head = "GGUF";
  put32(head, 3);
  put64(head, names.size());
  put64(head, keys.size());
  head += kv;
  uint64_t alignment = enc.alignment(), offset = 0;
  std::vector<uint64_t> pads;
  for (size_t i = 0; i < names.size(); ++i) {
    const Array& a = arrays[i];
    put_string(head, names[i]);
    put32(head, static_cast<uint32_t>(a.ndim()));
    for (int k = a.ndim(); k-- > 0;)  // GGML's order: innermost first
      put64(head, static_cast<uint64_t>(a.shape()[static_cast<size_t>(k)]));
    put32(head, *find_type(std::begin(tensor_types), std::end(tensor_types),
                           a.dtype()));
    pads.push_back(padding(offset, alignment));
    offset += pads.back();
    put64(head, offset);
    offset += static_cast<uint64_t>(a.nbytes());
  }
  FileWriter out(op, file);
  out.write(head);
  // The data section starts aligned; no data, no padding (as MLX).
  if (!names.empty()) write_zeros(out, padding(head.size(), alignment));
  for (size_t i = 0; i < arrays.size(); ++i) {
    write_zeros(out, pads[i]);
    if (arrays[i].nbytes() > 0)
      out.write(backend::host_pointer(arrays[i]),
                static_cast<size_t>(arrays[i].nbytes()));
  }
  out.commit();
}

}  // namespace nuvec::io
