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
  DType dtype;
  std::vector<uint64_t> dims;
  uint64_t begin = 0, end = 0;
};

uint64_t read_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Reads the header with a pull reader, keeping only what the file describes
// (the entries and the metadata strings): a field of the wrong kind, a shape
// past max_ndim entries or data_offsets past 2 are refused at the byte that
// shows it, so memory stays a small multiple of the header's size. A value
// of the wrong kind is first checked as JSON, so that a syntax error in it
// is reported as such.
class HeaderReader {
 public:
  HeaderReader(const char* op, const std::string& path, std::string_view text,
               uint64_t data_size)
      : op_(op), path_(path), r_(text), data_size_(data_size) {}

  Error fail(const std::string& what) const {
    return io_error(op_, path_, what);
  }

  void read(std::map<std::string, Entry>& entries,
            std::map<std::string, std::string>& metadata) {
    r_.begin_object();
    std::string name;
    bool seen_metadata = false;
    while (r_.next_member(name)) {
      if (name == "__metadata__") {
        if (seen_metadata) duplicate(name);
        seen_metadata = true;
        read_metadata(metadata);
      } else {
        if (entries.count(name)) duplicate(name);
        Entry e = tensor(name);
        entries.emplace(std::move(name), std::move(e));
      }
    }
    r_.finish();
  }

  // The tensors must tile [0, data_size) exactly.
  void check_coverage(const std::map<std::string, Entry>& by_name) const {
    using Item = std::pair<const std::string, Entry>;
    std::vector<const Item*> entries;
    entries.reserve(by_name.size());
    for (const auto& item : by_name) entries.push_back(&item);
    std::sort(entries.begin(), entries.end(),
              [](const Item* a, const Item* b) {
                const Entry &x = a->second, &y = b->second;
                return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
              });
    uint64_t expected = 0;
    const Item* prev = nullptr;
    for (const Item* item : entries) {
      const Entry& e = item->second;
      if (e.begin < expected)
        (fail("tensor " + json_quote(item->first) + " overlaps tensor " +
              json_quote(prev->first) + " in the data section"))
            .raise();
      if (e.begin > expected)
        (fail("bytes [" + std::to_string(expected) + ", " +
              std::to_string(e.begin) +
              ") of the data section belong to no tensor"))
            .raise();
      expected = e.end;
      if (e.end > e.begin) prev = item;
    }
    if (expected != data_size_)
      (fail("bytes [" + std::to_string(expected) + ", " +
            std::to_string(data_size_) +
            ") of the data section belong to no tensor"))
          .raise();
  }

 private:
  using Kind = JsonReader::Kind;

  [[noreturn]] void duplicate(const std::string& key) const {
    throw JsonError("duplicate key " + json_quote(key), r_.key_offset());
  }

  // Refuses the next value, after checking that it is valid JSON.
  [[noreturn]] void refuse(const std::string& what) {
    r_.skip_value();
    (fail(what)).raise();
  }

  void read_metadata(std::map<std::string, std::string>& out) {
    if (r_.peek() != Kind::object)
      refuse("\"__metadata__\" must be an object of strings");
    r_.begin_object();
    std::string key;
    while (r_.next_member(key)) {
      if (r_.peek() != Kind::string)
        refuse("\"__metadata__\" value of " + json_quote(key) +
               " is not a string");
      std::string value = r_.string_value();
      if (!out.emplace(key, std::move(value)).second) duplicate(key);
    }
  }

  Entry tensor(const std::string& name) {
    std::string who = "tensor " + json_quote(name);
    if (r_.peek() != Kind::object) refuse(who + " is not a JSON object");
    r_.begin_object();
    Entry e;
    std::vector<uint64_t> offs;
    bool seen[3] = {false, false, false};
    std::string field;
    while (r_.next_member(field)) {
      int k = field == "dtype"          ? 0
              : field == "shape"        ? 1
              : field == "data_offsets" ? 2
                                        : -1;
      if (k < 0) refuse(who + " has an unknown field " + json_quote(field));
      if (seen[k]) duplicate(field);
      seen[k] = true;
      if (k == 0)
        e.dtype = parse_dtype(who);
      else if (k == 1)
        e.dims = integers(who, "shape", max_ndim);
      else
        offs = integers(who, "data_offsets", 2);
    }
    if (!seen[0] || !seen[1] || !seen[2])
      (fail(who + " lacks \"" +
            (!seen[0]   ? "dtype"
             : !seen[1] ? "shape"
                        : "data_offsets") +
            "\""))
          .raise();
    if (offs.size() != 2)
      (fail(who + ": \"data_offsets\" must hold 2 integers, not " +
            std::to_string(offs.size())))
          .raise();
    e.begin = offs[0];
    e.end = offs[1];
    auto size = checked_nbytes(e.dims, e.dtype.size());
    if (!size.fault.empty()) (fail(who + ": " + size.fault)).raise();
    // Built by appending: gcc 12 warns falsely (-Wrestrict) on "[" + s.
    std::string range = std::to_string(e.begin);
    range.insert(0, 1, '[').append(", ").append(std::to_string(e.end)).append(
        "]");
    if (e.begin > e.end)
      (fail(who + ": data_offsets " + range + " end before they begin"))
          .raise();
    if (e.end > data_size_)
      (fail(who + ": data_offsets " + range +
            " lie outside the data section of " + std::to_string(data_size_) +
            " bytes"))
          .raise();
    if (e.end - e.begin != size.nbytes)
      (fail(who + ": data_offsets " + range + " hold " +
            std::to_string(e.end - e.begin) + " bytes, but dtype " +
            safetensors_name(e.dtype) + " and shape " + dims_text(e.dims) +
            " need " + std::to_string(size.nbytes)))
          .raise();
    return e;
  }

  DType parse_dtype(const std::string& who) {
    if (r_.peek() != Kind::string) refuse(who + ": \"dtype\" is not a string");
    std::string name = r_.string_value();
    for (const auto& e : dtype_names)
      if (name == e.name) return e.dtype;
    (fail(who + ": unsupported dtype " + json_quote(name))).raise();
  }

  // An array of at most `max` integers in [0, 2^64), refused at entry
  // max + 1 before it is read.
  std::vector<uint64_t> integers(const std::string& who, const char* field,
                                 size_t max) {
    std::string where = who + ": \"" + field + "\"";
    if (r_.peek() != Kind::array) refuse(where + " is not an array");
    r_.begin_array();
    std::vector<uint64_t> out;
    while (r_.next_item()) {
      if (out.size() == max)
        (fail(max == 2 ? where + " must hold 2 integers, not 3 or more"
                       : where + " holds " + std::to_string(max + 1) +
                             " dimensions or more (at most " +
                             std::to_string(max) + " are supported)"))
            .raise();
      if (r_.peek() != Kind::number)
        refuse(where + " holds something other than integers");
      std::string_view x = r_.number_value();
      if (json_negative(x))
        (fail(where + " holds a negative number " + std::string(x))).raise();
      auto u = json_uint(x);
      if (!u)
        (fail(where + " holds " + std::string(x) +
              ", not an integer below 2^64"))
            .raise();
      out.push_back(*u);
    }
    return out;
  }

  const char* op_;
  const std::string& path_;
  JsonReader r_;
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
  uint64_t data_start = 8 + n;
  HeaderReader reader(op, path, text, size - data_start);
  SafetensorsFile out;
  std::map<std::string, Entry> entries;
  try {
    reader.read(entries, out.metadata);
  } catch (const JsonError& e) {
    (io_error(op, path,
              std::string("header is not valid JSON: ") + e.what() +
                  " at byte " + std::to_string(8 + e.offset())))
        .raise();
  }
  reader.check_coverage(entries);
  if (!with_arrays) return out;
  for (const auto& [name, e] : entries) {
    size_t nbytes = static_cast<size_t>(e.end - e.begin);
    auto data = tensor_data(m, static_cast<size_t>(data_start + e.begin),
                            nbytes, e.dtype,
                            /*big_endian=*/false);
    Shape shape(e.dims.begin(), e.dims.end());
    out.arrays.emplace(
        name, make_constant(std::move(data), std::move(shape), e.dtype));
  }
  return out;
}

}  // namespace detail

SafetensorsLoad load_safetensors(const std::string& path, StreamOrDevice) {
  return detail::load_safetensors_with(path, {});
}

SafetensorsLoad detail::load_safetensors_with(const std::string& path,
                                              const LoadOptions& options) {
  const char* op = "load_safetensors";
  auto parsed = parse_safetensors(Mapping::open(op, path, options.copy), op,
                                  path, true);
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
