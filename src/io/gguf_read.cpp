// Reading GGUF (gguf_format.h): every count, length, dimension and offset is
// checked against the bytes that are there before anything is allocated, so
// a header that lies gives an io error, never a crash or a huge allocation.
#include <climits>
#include <cstring>
#include <unordered_set>

#include "io/gguf_format.h"
#include "io/loaders.h"
#include "nuvec/ops/creation.h"

namespace nuvec::io {

namespace detail {

namespace {

// GGUF's limit on key lengths; tensor names are held to it as well.
constexpr uint64_t max_name = 65535;
// Bounds on the counts, far above any real file (a model has some 10^3
// tensors and 10^2 metadata entries; a tokenizer is one entry): each entry
// costs a few hundred bytes in memory however few bytes it takes in the file,
// so these bound what a header of tiny entries can make a load allocate.
constexpr uint64_t max_metadata = uint64_t(1) << 16,
                   max_tensors = uint64_t(1) << 18;
// The fewest bytes a metadata entry (empty key, u8 value) and a tensor info
// (empty name, no dimensions) can take.
constexpr uint64_t min_entry = 8 + 4 + 1, min_info = 8 + 4 + 4 + 8;

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '"' || c == '\\') {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Bytes per value of the fixed-size metadata types, 0 for the others.
int value_size(uint32_t t) {
  switch (static_cast<GgufValue>(t)) {
    case GgufValue::uint8:
    case GgufValue::int8:
    case GgufValue::boolean:
      return 1;
    case GgufValue::uint16:
    case GgufValue::int16:
      return 2;
    case GgufValue::uint32:
    case GgufValue::int32:
    case GgufValue::float32:
      return 4;
    case GgufValue::uint64:
    case GgufValue::int64:
    case GgufValue::float64:
      return 8;
    default:
      return 0;
  }
}

// The array dtype of a fixed-size value type (float64 becomes float32, as
// MLX maps it).
DType value_dtype(uint32_t t) {
  switch (static_cast<GgufValue>(t)) {
    case GgufValue::uint8:
      return uint8;
    case GgufValue::int8:
      return int8;
    case GgufValue::uint16:
      return uint16;
    case GgufValue::int16:
      return int16;
    case GgufValue::uint32:
      return uint32;
    case GgufValue::int32:
      return int32;
    case GgufValue::uint64:
      return uint64;
    case GgufValue::int64:
      return int64;
    case GgufValue::boolean:
      return bool_;
    default:
      return float32;
  }
}

// `n` values of type `t` at `p` (unaligned, little-endian) as an array of
// `shape`: bools as 0/1 (any nonzero byte is true), float64 rounded to
// float32.
Array values_array(const uint8_t* p, uint64_t n, uint32_t t, Shape shape) {
  DType d = value_dtype(t);
  if (t == static_cast<uint32_t>(GgufValue::float64)) {
    std::vector<float> v(n);
    for (uint64_t i = 0; i < n; ++i) {
      double x;
      std::memcpy(&x, p + 8 * i, 8);
      v[i] = static_cast<float>(x);
    }
    return nuvec::detail::array_from_bytes(v.data(), std::move(shape), d);
  }
  if (d == bool_) {
    std::vector<uint8_t> v(p, p + n);
    for (auto& b : v) b = b != 0;
    return nuvec::detail::array_from_bytes(v.data(), std::move(shape), d);
  }
  return nuvec::detail::array_from_bytes(p, std::move(shape), d);
}

struct TensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // GGML's order: innermost first
  uint32_t type = 0;
  uint64_t offset = 0;
};

class Reader {
 public:
  Reader(const std::shared_ptr<Mapping>& m, const std::string& path)
      : m_(m), p_(m->data()), size_(m->size()), path_(path) {}

  Error fail(const std::string& what) const {
    return io_error("load_gguf", path_, what);
  }

  GGUFLoad read() {
    header();
    for (uint64_t i = 0; i < kv_count_; ++i) entry(i);
    if (tensor_count_ > left() / min_info)
      (fail("the header claims " + std::to_string(tensor_count_) +
            " tensors, but the " + std::to_string(left()) +
            " bytes after the metadata hold at most " +
            std::to_string(left() / min_info)))
          .raise();
    std::unordered_set<std::string> names;
    for (uint64_t i = 0; i < tensor_count_; ++i) {
      infos_.push_back(info(i));
      if (!names.insert(infos_.back().name).second)
        (fail("two tensors are named " + quoted(infos_.back().name))).raise();
    }
    // The data section starts at the next multiple of the alignment.
    data_start_ = pos_ + (alignment_ - pos_ % alignment_) % alignment_;
    for (const auto& t : infos_) tensor(t);
    return std::move(out_);
  }

 private:
  size_t left() const { return size_ - pos_; }

  const uint8_t* take(uint64_t n, const std::string& what) {
    if (n > left())
      (fail("truncated: " + what + " needs " + std::to_string(n) +
            " bytes at byte " + std::to_string(pos_) + ", the file has " +
            std::to_string(left()) + " more"))
          .raise();
    const uint8_t* p = p_ + pos_;
    pos_ += static_cast<size_t>(n);
    return p;
  }
  uint32_t u32(const std::string& what) {
    const uint8_t* p = take(4, what);
    return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
           static_cast<uint32_t>(p[2]) << 16 |
           static_cast<uint32_t>(p[3]) << 24;
  }
  uint64_t u64(const std::string& what) {
    const uint8_t* p = take(8, what);
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
  }
  // A string no longer than `max` (and than the bytes left).
  std::string_view str(const std::string& what, uint64_t max = UINT64_MAX) {
    uint64_t n = u64("the length of " + what);
    if (n > max)
      (fail(what + " is " + std::to_string(n) + " bytes long (at most " +
            std::to_string(max) + " are allowed)"))
          .raise();
    const uint8_t* p = take(n, what + " of " + std::to_string(n) + " bytes");
    return {reinterpret_cast<const char*>(p), static_cast<size_t>(n)};
  }

  void header() {
    if (size_ < 4 || std::memcmp(p_, "GGUF", 4) != 0)
      (fail(size_ < 4 ? "truncated: the file has " + std::to_string(size_) +
                            " bytes, the magic \"GGUF\" is missing"
                      : std::string("not a GGUF file (the magic \"GGUF\" "
                                    "is missing)")))
          .raise();
    pos_ = 4;
    uint32_t version = u32("the version");
    if (version == 0x02000000u || version == 0x03000000u)
      (fail("big-endian GGUF files are not supported")).raise();
    if (version != 2 && version != 3)
      (fail("unsupported GGUF version " + std::to_string(version) +
            " (versions 2 and 3 are supported)"))
          .raise();
    tensor_count_ = u64("the tensor count");
    kv_count_ = u64("the metadata count");
    if (kv_count_ > max_metadata)
      (fail("the header claims " + std::to_string(kv_count_) +
            " metadata entries (at most " + std::to_string(max_metadata) +
            " are supported)"))
          .raise();
    if (tensor_count_ > max_tensors)
      (fail("the header claims " + std::to_string(tensor_count_) +
            " tensors (at most " + std::to_string(max_tensors) +
            " are supported)"))
          .raise();
    if (kv_count_ > left() / min_entry)
      (fail("the header claims " + std::to_string(kv_count_) +
            " metadata entries, but the " + std::to_string(left()) +
            " bytes after it hold at most " +
            std::to_string(left() / min_entry)))
          .raise();
  }

  void entry(uint64_t i) {
    std::string_view key =
        str("the key of metadata entry " + std::to_string(i), max_name);
    std::string who = "metadata " + quoted(key);
    uint32_t type = u32("the value type of " + who);
    GGUFMetaData v = value(who, type);
    if (key == gguf_alignment_key) alignment(who, type, v);
    if (!out_.second.emplace(std::string(key), std::move(v)).second)
      (fail("the metadata key " + quoted(key) + " appears twice")).raise();
  }

  GGUFMetaData value(const std::string& who, uint32_t type) {
    if (int size = value_size(type))
      return values_array(
          take(static_cast<uint64_t>(size), "the value of " + who), 1, type,
          {});
    if (type == static_cast<uint32_t>(GgufValue::string))
      return std::string(str("the string of " + who));
    if (type != static_cast<uint32_t>(GgufValue::array))
      (fail(who + " has the unknown value type " + std::to_string(type)))
          .raise();
    uint32_t etype = u32("the element type of " + who);
    uint64_t n = u64("the length of " + who);
    if (etype == static_cast<uint32_t>(GgufValue::array))
      (fail(who + " is an array of arrays (nested arrays are not "
                  "supported)"))
          .raise();
    if (etype == static_cast<uint32_t>(GgufValue::string)) {
      // Each string takes at least its 8-byte length.
      if (n > left() / 8)
        (fail(who + " claims " + std::to_string(n) + " strings, but the " +
              std::to_string(left()) + " bytes left hold at most " +
              std::to_string(left() / 8)))
            .raise();
      // Grown as strings are read, not reserved from the claim: a header
      // that lies then costs only what the file really holds.
      std::vector<std::string> strings;
      for (uint64_t k = 0; k < n; ++k) {
        // Tokenizers hold 10^5 strings: the message is built on failure only.
        if (left() >= 8) {
          uint64_t len = 0;
          for (int i = 7; i >= 0; --i) len = (len << 8) | p_[pos_ + i];
          if (len <= left() - 8) {
            strings.emplace_back(reinterpret_cast<const char*>(p_ + pos_ + 8),
                                 static_cast<size_t>(len));
            pos_ += 8 + static_cast<size_t>(len);
            continue;
          }
        }
        str("string " + std::to_string(k) + " of " + who);  // throws
      }
      return strings;
    }
    int size = value_size(etype);
    if (size == 0)
      (fail(who + " is an array of the unknown value type " +
            std::to_string(etype)))
          .raise();
    if (n > static_cast<uint64_t>(INT_MAX))
      (fail(who + " claims " + std::to_string(n) + " elements (at most " +
            std::to_string(INT_MAX) + " are supported)"))
          .raise();
    const uint8_t* p =
        take(n * static_cast<uint64_t>(size), "the " + std::to_string(n) + " " +
                                                  gguf_value_type_name(etype) +
                                                  " values of " + who);
    return values_array(p, n, etype, {static_cast<int>(n)});
  }

  // "general.alignment" sets the data alignment: a uint32 power of two.
  void alignment(const std::string& who, uint32_t type, const GGUFMetaData& v) {
    if (type != static_cast<uint32_t>(GgufValue::uint32))
      (fail(who + " must be a uint32, not " +
            (type < gguf_value_types ? std::string(gguf_value_type_name(type))
                                     : "type " + std::to_string(type))))
          .raise();
    uint32_t a = std::get<Array>(v).item<uint32_t>();
    if (a == 0 || (a & (a - 1)) != 0)
      (fail(who + " is " + std::to_string(a) + ", not a power of two")).raise();
    alignment_ = a;
  }

  TensorInfo info(uint64_t i) {
    TensorInfo t;
    std::string who = "tensor info " + std::to_string(i);
    t.name = std::string(str("the name of " + who, max_name));
    who = "tensor " + quoted(t.name);
    uint32_t ndim = u32("the dimension count of " + who);
    if (ndim > max_ndim)
      (fail(who + " has " + std::to_string(ndim) + " dimensions (at most " +
            std::to_string(max_ndim) + " are supported)"))
          .raise();
    for (uint32_t k = 0; k < ndim; ++k)
      t.dims.push_back(u64("dimension " + std::to_string(k) + " of " + who));
    t.type = u32("the type of " + who);
    t.offset = u64("the offset of " + who);
    return t;
  }

  void add(const std::string& name, Array a, const std::string& from) {
    if (!out_.first.emplace(name, std::move(a)).second)
      (fail("tensor " + quoted(from) + " gives the array " + quoted(name) +
            ", which another tensor already gave"))
          .raise();
  }

  void tensor(const TensorInfo& t);

  std::shared_ptr<Mapping> m_;
  const uint8_t* p_;
  size_t size_;
  const std::string& path_;
  size_t pos_ = 0;
  uint64_t tensor_count_ = 0, kv_count_ = 0;
  uint64_t alignment_ = gguf_default_alignment;
  size_t data_start_ = 0;
  std::vector<TensorInfo> infos_;
  GGUFLoad out_;
};

struct Quant {
  uint32_t type;
  int bits;
  uint64_t block_bytes;
  void (*convert)(const uint8_t*, int64_t, uint8_t*, uint16_t*, uint16_t*);
};
constexpr Quant quants[] = {
    {gguf_type::q4_0, 4, 18, &q4_0_to_affine},
    {gguf_type::q4_1, 4, 20, &q4_1_to_affine},
    {gguf_type::q8_0, 8, 34, &q8_0_to_affine},
};

struct Plain {
  uint32_t type;
  DType dtype;
};
const Plain plains[] = {
    {gguf_type::f32, float32}, {gguf_type::f16, float16},
    {gguf_type::i8, int8},     {gguf_type::i16, int16},
    {gguf_type::i32, int32},   {gguf_type::bf16, bfloat16},
};

std::shared_ptr<Data> buffer(uint64_t nbytes) {
  return allocate_data(static_cast<size_t>(nbytes));
}

void Reader::tensor(const TensorInfo& t) {
  std::string who = "tensor " + quoted(t.name);
  const Quant* quant = nullptr;
  const Plain* plain = nullptr;
  for (const auto& q : quants)
    if (q.type == t.type) quant = &q;
  for (const auto& p : plains)
    if (p.type == t.type) plain = &p;
  std::string type_name = gguf_tensor_type_name(t.type);
  if (!quant && !plain)
    (fail(who + " has " +
          (type_name == "?" ? "the unknown GGUF type "
                            : "the GGUF type " + type_name + " = ") +
          std::to_string(t.type) +
          ", which is not supported (F32, F16, BF16, I8, I16, I32, "
          "Q4_0, Q4_1 and Q8_0 are)"))
        .raise();
  std::vector<uint64_t> dims(t.dims.rbegin(), t.dims.rend());
  auto size = checked_nbytes(dims, plain ? plain->dtype.size() : 1);
  if (!size.fault.empty()) (fail(who + ": " + size.fault)).raise();
  uint64_t nbytes = size.nbytes;
  if (quant) {
    // Blocks of 32 weights run along the innermost dimension.
    if (dims.empty())
      (fail(who + " is " + type_name + " with no dimensions")).raise();
    if (dims.back() % 32 != 0)
      (fail(who + " is " + type_name + " of shape " + dims_text(dims) +
            ": its last dimension is not a multiple of the block size 32"))
          .raise();
    nbytes = nbytes / 32 * quant->block_bytes;  // count <= 2^63: no overflow
  }
  if (t.offset % alignment_ != 0)
    (fail(who + ": offset " + std::to_string(t.offset) +
          " is not a multiple of the alignment " + std::to_string(alignment_)))
        .raise();
  size_t begin = 0;
  if (nbytes > 0) {
    uint64_t avail = data_start_ <= size_ ? size_ - data_start_ : 0;
    if (t.offset > avail || nbytes > avail - t.offset)
      (fail(who + ": its " + std::to_string(nbytes) + " bytes of " + type_name +
            " at offset " + std::to_string(t.offset) +
            " of the data section run past the end of the file (the "
            "data section has " +
            std::to_string(avail) + " bytes)"))
          .raise();
    begin = data_start_ + static_cast<size_t>(t.offset);
  }
  Shape shape(dims.begin(), dims.end());
  if (plain && t.type != gguf_type::bf16) {
    add(t.name,
        make_constant(tensor_data(m_, begin, static_cast<size_t>(nbytes),
                                  plain->dtype, false),
                      shape, plain->dtype),
        t.name);
    return;
  }
  if (plain) {  // BF16: float16, as MLX gives it
    auto d = buffer(nbytes);
    bf16_to_f16(p_ + begin, static_cast<int64_t>(nbytes / 2),
                static_cast<uint16_t*>(d->ptr));
    add(t.name, make_constant(d, shape, float16), t.name);
    return;
  }
  int64_t blocks = static_cast<int64_t>(size.nbytes / 32);
  Shape wshape = shape, gshape = shape;
  wshape.back() = wshape.back() / 32 * quant->bits;
  gshape.back() /= 32;
  auto w = buffer(static_cast<uint64_t>(blocks) * 4 *
                  static_cast<uint64_t>(quant->bits));
  auto scales = buffer(static_cast<uint64_t>(blocks) * 2);
  auto biases = buffer(static_cast<uint64_t>(blocks) * 2);
  quant->convert(p_ + begin, blocks, static_cast<uint8_t*>(w->ptr),
                 static_cast<uint16_t*>(scales->ptr),
                 static_cast<uint16_t*>(biases->ptr));
  // MLX's names: "x.weight" gives "x.scales" and "x.biases".
  std::string_view stem = t.name;
  constexpr std::string_view suffix = ".weight";
  if (stem.size() >= suffix.size() &&
      stem.substr(stem.size() - suffix.size()) == suffix)
    stem.remove_suffix(suffix.size());
  add(t.name, make_constant(w, wshape, uint32), t.name);
  add(std::string(stem) + ".scales", make_constant(scales, gshape, float16),
      t.name);
  add(std::string(stem) + ".biases", make_constant(biases, gshape, float16),
      t.name);
}

}  // namespace

GGUFLoad parse_gguf(const std::shared_ptr<Mapping>& m,
                    const std::string& path) {
  return Reader(m, path).read();
}

}  // namespace detail

GGUFLoad load_gguf(const std::string& file, StreamOrDevice) {
  return detail::parse_gguf(detail::Mapping::map_file("load_gguf", file), file);
}

GGUFLoad detail::load_gguf_with(const std::string& file,
                                const LoadOptions& options) {
  return parse_gguf(Mapping::open("load_gguf", file, options.copy), file);
}

}  // namespace nuvec::io
