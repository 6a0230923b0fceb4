// safetensors: an 8-byte little-endian header length N, N bytes of JSON
// ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, and an
// optional "__metadata__" object of strings}), then the data section, which
// the tensors must cover exactly (no gaps, no overlaps), as the reference
// implementation checks.
#include <algorithm>
#include <cstring>

#include "backend/backend.h"
#include "io/json.h"
#include "io/loaders.h"
#include "nuvec/core/eval.h"
#include "nuvec/io.h"
#include "nuvec/ops/ops.h"

namespace nuvec::io {

namespace detail {

namespace {

// The reference implementation's limit on the header size.
constexpr uint64_t max_header = 100'000'000;

struct DTypeName {
  const char* name;
  DType dtype;
};
// The names of the format; C64 as MLX and safetensors >= 0.6 write it.
constexpr DTypeName dtype_names[] = {
    {"BOOL", bool_},  {"U8", uint8},      {"I8", int8},       {"U16", uint16},
    {"I16", int16},   {"U32", uint32},    {"I32", int32},     {"U64", uint64},
    {"I64", int64},   {"F16", float16},   {"BF16", bfloat16}, {"F32", float32},
    {"F64", float64}, {"C64", complex64},
};

const char* safetensors_name(DType d) {
  for (const auto& e : dtype_names)
    if (e.dtype == d) return e.name;
  return "?";
}

struct Entry {
  const std::string* name;
  DType dtype;
  std::vector<uint64_t> dims;
  uint64_t begin = 0, end = 0;
};

uint64_t read_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

class HeaderReader {
 public:
  HeaderReader(const char* op, const std::string& path, uint64_t data_size)
      : op_(op), path_(path), data_size_(data_size) {}

  Error fail(const std::string& what) const {
    return io_error(op_, path_, what);
  }

  void metadata(const JsonValue& v,
                std::map<std::string, std::string>& out) const {
    if (v.type != JsonValue::Type::object)
      (fail("\"__metadata__\" must be an object of strings")).raise();
    for (const auto& [k, s] : v.members) {
      if (s.type != JsonValue::Type::string)
        (fail("\"__metadata__\" value of " + json_quote(k) +
                   " is not a string")).raise();
      out.emplace(k, s.text);
    }
  }

  Entry tensor(const std::string& name, const JsonValue& v) const {
    std::string who = "tensor " + json_quote(name);
    if (v.type != JsonValue::Type::object)
      (fail(who + " is not a JSON object")).raise();
    const JsonValue *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
    for (const auto& [k, f] : v.members) {
      if (k == "dtype")
        dtype = &f;
      else if (k == "shape")
        shape = &f;
      else if (k == "data_offsets")
        offsets = &f;
      else
        (fail(who + " has an unknown field " + json_quote(k))).raise();
    }
    if (!dtype || !shape || !offsets)
      (fail(who + " lacks \"" +
                 (!dtype   ? "dtype"
                  : !shape ? "shape"
                           : "data_offsets") +
                 "\"")).raise();
    Entry e;
    e.name = &name;
    e.dtype = parse_dtype(who, *dtype);
    e.dims = integers(who, "shape", *shape);
    auto offs = integers(who, "data_offsets", *offsets);
    if (offs.size() != 2)
      (fail(who + ": \"data_offsets\" must hold 2 integers, not " +
                 std::to_string(offs.size()))).raise();
    e.begin = offs[0];
    e.end = offs[1];
    auto size = checked_nbytes(e.dims, e.dtype.size());
    if (!size.fault.empty()) (fail(who + ": " + size.fault)).raise();
    std::string range = std::to_string(e.begin);
    range.insert(0, 1, '[')
        .append(", ")
        .append(std::to_string(e.end))
        .append("]");
    if (e.begin > e.end)
      (fail(who + ": data_offsets " + range + " end before they begin")).raise();
    if (e.end > data_size_)
      (fail(who + ": data_offsets " + range +
                 " lie outside the data section of " +
                 std::to_string(data_size_) + " bytes")).raise();
    if (e.end - e.begin != size.nbytes)
      (fail(who + ": data_offsets " + range + " hold " +
                 std::to_string(e.end - e.begin) + " bytes, but dtype " +
                 safetensors_name(e.dtype) + " and shape " + dims_text(e.dims) +
                 " need " + std::to_string(size.nbytes))).raise();
    return e;
  }

  // The tensors must tile [0, data_size) exactly.
  void check_coverage(std::vector<Entry>& entries) const {
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) {
                return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
              });
    uint64_t expected = 0;
    const Entry* prev = nullptr;
    for (const auto& e : entries) {
      if (e.begin < expected)
        (fail("tensor " + json_quote(*e.name) + " overlaps tensor " +
                   json_quote(*prev->name) + " in the data section")).raise();
      if (e.begin > expected)
        (fail("bytes [" + std::to_string(expected) + ", " +
                   std::to_string(e.begin) +
                   ") of the data section belong to no tensor")).raise();
      expected = e.end;
      if (e.end > e.begin) prev = &e;
    }
    if (expected != data_size_)
      (fail("bytes [" + std::to_string(expected) + ", " +
                 std::to_string(data_size_) +
                 ") of the data section belong to no tensor")).raise();
  }

 private:
  DType parse_dtype(const std::string& who, const JsonValue& v) const {
    if (v.type != JsonValue::Type::string)
      (fail(who + ": \"dtype\" is not a string")).raise();
    for (const auto& e : dtype_names)
      if (v.text == e.name) return e.dtype;
    (fail(who + ": unsupported dtype " + json_quote(v.text))).raise();
  }

  std::vector<uint64_t> integers(const std::string& who, const char* field,
                                 const JsonValue& v) const {
    std::string where = who + ": \"" + field + "\"";
    if (v.type != JsonValue::Type::array)
      (fail(where + " is not an array")).raise();
    std::vector<uint64_t> out;
    for (const auto& x : v.items) {
      if (json_negative(x))
        (fail(where + " holds a negative number " + x.text)).raise();
      auto u = json_uint(x);
      if (!u) {
        (fail(where +
                   (x.type == JsonValue::Type::number
                        ? " holds " + x.text + ", not an integer below 2^64"
                        : std::string(" holds something other than integers")))).raise();
      }
      out.push_back(*u);
    }
    return out;
  }

  const char* op_;
  const std::string& path_;
  uint64_t data_size_;
};

}  // namespace

SafetensorsFile parse_safetensors(const std::shared_ptr<Mapping>& m,
                                  const char* op, const std::string& path,
                                  bool with_arrays) {
  size_t size = m->size();
  if (size < 8)
    (io_error(op, path,
                   "truncated: the file has " + std::to_string(size) +
                       " bytes, the 8-byte header length is missing")).raise();
  uint64_t n = read_le64(m->data());
  if (n > size - 8)
    (io_error(op, path,
                   "header length " + std::to_string(n) +
                       " runs past the end of the file (" +
                       std::to_string(size - 8) + " bytes follow it)")).raise();
  if (n > max_header)
    (io_error(op, path,
                   "header length " + std::to_string(n) +
                       " exceeds the limit of " + std::to_string(max_header) +
                       " bytes")).raise();
  std::string_view text(reinterpret_cast<const char*>(m->data()) + 8, n);
  if (text.empty() || text[0] != '{')
    (io_error(op, path, "header is not JSON (it must start with '{')")).raise();
  JsonValue root;
  try {
    root = parse_json(text);
  } catch (const JsonError& e) {
    (io_error(op, path,
                   std::string("header is not valid JSON: ") + e.what() +
                       " at byte " + std::to_string(8 + e.offset()))).raise();
  }
  uint64_t data_start = 8 + n;
  HeaderReader reader(op, path, size - data_start);
  SafetensorsFile out;
  std::vector<Entry> entries;
  for (const auto& [name, v] : root.members) {
    if (name == "__metadata__")
      reader.metadata(v, out.metadata);
    else
      entries.push_back(reader.tensor(name, v));
  }
  reader.check_coverage(entries);
  if (!with_arrays) return out;
  for (const auto& e : entries) {
    size_t nbytes = static_cast<size_t>(e.end - e.begin);
    auto data = tensor_data(m, static_cast<size_t>(data_start + e.begin),
                            nbytes, e.dtype,
                            /*big_endian=*/false);
    Shape shape(e.dims.begin(), e.dims.end());
    out.arrays.emplace(
        *e.name, make_constant(std::move(data), std::move(shape), e.dtype));
  }
  return out;
}

}  // namespace detail

SafetensorsLoad load_safetensors(const std::string& path, StreamOrDevice) {
  const char* op = "load_safetensors";
  auto parsed =
      detail::parse_safetensors(detail::Mapping::map_file(op, path), op, path, true);
  SafetensorsLoad out;
  out.first.insert(parsed.arrays.begin(), parsed.arrays.end());
  out.second.insert(parsed.metadata.begin(), parsed.metadata.end());
  return out;
}

std::map<std::string, std::string> load_safetensors_metadata(
    const std::string& path) {
  const char* op = "load_safetensors_metadata";
  return detail::parse_safetensors(detail::Mapping::map_file(op, path), op,
                                   path, false)
      .metadata;
}

void save_safetensors(std::string path,
                      std::unordered_map<std::string, Array> unordered_arrays,
                      std::unordered_map<std::string, std::string> unordered_metadata) {
  using namespace detail;
  // Sorted by name: the file's header lists them in that order.
  const std::map<std::string, Array> arrays(unordered_arrays.begin(), unordered_arrays.end());
  const std::map<std::string, std::string> metadata(unordered_metadata.begin(),
                                                    unordered_metadata.end());
  const char* op = "save_safetensors";
  for (const auto& [name, a] : arrays) {
    if (!valid_utf8(name))
      (io_error(op, path, "a tensor name is not valid UTF-8")).raise();
    if (name == "__metadata__")
      (io_error(op, path,
                     "\"__metadata__\" is reserved and cannot name a tensor")).raise();
  }
  for (const auto& [k, v] : metadata)
    if (!valid_utf8(k) || !valid_utf8(v))
      (io_error(op, path, "a metadata key or value is not valid UTF-8")).raise();

  // Dense row-major arrays, evaluated together.
  std::vector<std::string> names;
  std::vector<Array> dense;
  for (const auto& [name, a] : arrays) {
    names.push_back(name);
    dense.push_back(a);
  }
  eval(dense);
  for (auto& a : dense)
    if (!is_row_contiguous(a.shape(), a.strides())) a = ops::copy(a);
  eval(dense);

  // Data ordered by element size, largest first, then by name (as the
  // reference implementation): every tensor is aligned, with no padding.
  std::vector<size_t> order(names.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return dense[x].itemsize() > dense[y].itemsize();
  });
  std::vector<uint64_t> begin(names.size());
  uint64_t offset = 0;
  for (size_t i : order) {
    begin[i] = offset;
    offset += static_cast<uint64_t>(dense[i].nbytes());
  }

  // The header lists the tensors by name.
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      if (!first) header += ',';
      first = false;
      header += json_quote(k) + ":" + json_quote(v);
    }
    header += "}";
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (header.size() > 1) header += ',';
    header += json_quote(names[i]) + ":{\"dtype\":\"" +
              safetensors_name(dense[i].dtype()) + "\",\"shape\":[";
    for (int k = 0; k < dense[i].ndim(); ++k) {
      if (k) header += ',';
      header += std::to_string(dense[i].shape()[static_cast<size_t>(k)]);
    }
    header +=
        "],\"data_offsets\":[" + std::to_string(begin[i]) + "," +
        std::to_string(begin[i] + static_cast<uint64_t>(dense[i].nbytes())) +
        "]}";
  }
  header += "}";
  // Spaces pad the header so that the data section starts 8-byte aligned.
  header.append((8 - header.size() % 8) % 8, ' ');

  FileWriter out(op, path);
  uint8_t len[8];
  for (int k = 0; k < 8; ++k)
    len[k] = static_cast<uint8_t>(header.size() >> (8 * k));
  out.write(len, 8);
  out.write(header);
  for (size_t i : order)
    if (dense[i].nbytes() > 0)
      out.write(backend::host_pointer(dense[i]),
                static_cast<size_t>(dense[i].nbytes()));
  out.commit();
}

}  // namespace nuvec::io
