// npy: "\x93NUMPY", a version (1.0: 2-byte header length; 2.0 and 3.0:
// 4 bytes), then a Python dict literal {'descr': '<f4', 'fortran_order':
// False, 'shape': (2, 3), } padded with spaces and a newline, then the data.
#include <climits>
#include <cstring>

#include "backend/backend.h"
#include "io/loaders.h"
#include "nuvec/core/eval.h"
#include "nuvec/io.h"
#include "nuvec/ops/ops.h"

namespace nuvec::io {

namespace detail {

namespace {

constexpr char magic[] = "\x93NUMPY";
constexpr size_t magic_size = 6;

struct Descr {
  const char* code;  // kind and size, without the byte-order character
  DType dtype;
};
// '<V2' is bfloat16: MLX writes it so, and ml_dtypes' bfloat16 saved by numpy
// gets the same descr (numpy itself has no bfloat16).
constexpr Descr descrs[] = {
    {"b1", bool_},   {"u1", uint8},     {"i1", int8},     {"u2", uint16},
    {"i2", int16},   {"u4", uint32},    {"i4", int32},    {"u8", uint64},
    {"i8", int64},   {"f2", float16},   {"V2", bfloat16}, {"f4", float32},
    {"f8", float64}, {"c8", complex64},
};

struct Header {
  DType dtype;
  bool big_endian = false;
  bool fortran = false;
  std::vector<uint64_t> dims;
};

// The dict literal numpy writes, parsed strictly: the three keys, each once,
// in any order, an optional trailing comma, whitespace between tokens.
class HeaderParser {
 public:
  HeaderParser(std::string_view s, const std::string& path, size_t base,
               bool allow_long)
      : s_(s), path_(path), base_(base), allow_long_(allow_long) {}

  Header parse() {
    Header h;
    bool seen[3] = {false, false, false};
    ws();
    expect('{');
    for (;;) {
      ws();
      if (peek() == '}') break;
      std::string key = quoted();
      ws();
      expect(':');
      ws();
      int k = key == "descr"           ? 0
              : key == "fortran_order" ? 1
              : key == "shape"         ? 2
                                       : -1;
      if (k < 0) (fail("the header has an unknown key '" + key + "'")).raise();
      if (seen[k]) (fail("the header repeats the key '" + key + "'")).raise();
      seen[k] = true;
      if (k == 0)
        descr(h);
      else if (k == 1)
        h.fortran = boolean();
      else
        h.dims = tuple();
      ws();
      if (peek() != ',') break;
      ++pos_;
    }
    expect('}');
    ws();
    if (pos_ != s_.size()) (fail("unexpected data after the header dict")).raise();
    for (int k = 0; k < 3; ++k)
      if (!seen[k])
        (fail(std::string("the header lacks '") +
                   (k == 0   ? "descr"
                    : k == 1 ? "fortran_order"
                             : "shape") +
                   "'")).raise();
    return h;
  }

 private:
  Error fail(const std::string& what) const {
    return io_error("load_npy", path_, what);
  }
  Error syntax(const std::string& what) const {
    return fail("the header is not an npy dict: " + what + " at byte " +
                std::to_string(base_ + pos_));
  }

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void ws() {
    while (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')
      ++pos_;
  }
  void expect(char c) {
    if (peek() != c) (syntax(std::string("expected '") + c + "'")).raise();
    ++pos_;
  }

  std::string quoted() {
    char q = peek();
    if (q != '\'' && q != '"') (syntax("expected a string")).raise();
    size_t start = ++pos_;
    while (pos_ < s_.size() && s_[pos_] != q) {
      unsigned char c = static_cast<unsigned char>(s_[pos_]);
      // Keys and dtype codes are plain ASCII; escapes never occur in them.
      if (c < 0x20 || c >= 0x7F || c == '\\')
        (syntax("unexpected character in a string")).raise();
      ++pos_;
    }
    if (pos_ >= s_.size()) (syntax("unterminated string")).raise();
    return std::string(s_.substr(start, pos_++ - start));
  }

  void descr(Header& h) {
    if (peek() == '[') (fail("structured dtypes are not supported")).raise();
    std::string d = quoted();
    std::string_view code = d;
    char order = '=';
    if (!code.empty() && (code[0] == '<' || code[0] == '>' || code[0] == '|' ||
                          code[0] == '=')) {
      order = code[0];
      code.remove_prefix(1);
    }
    for (const auto& e : descrs) {
      if (code == e.code) {
        h.dtype = e.dtype;
        h.big_endian = order == '>';
        return;
      }
    }
    (fail("unsupported dtype '" + d + "'")).raise();
  }

  bool boolean() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    (syntax("expected True or False")).raise();
  }

  // A Python tuple of non-negative integers: (), (3,), (2, 3) or (2, 3,).
  std::vector<uint64_t> tuple() {
    expect('(');
    std::vector<uint64_t> dims;
    bool comma = false;
    for (;;) {
      ws();
      if (peek() == ')') break;
      if (!dims.empty() && !comma) (syntax("expected ',' in the shape")).raise();
      if (dims.size() >= max_ndim)
        (fail("the shape has more than " + std::to_string(max_ndim) +
                   " dimensions")).raise();
      dims.push_back(integer());
      ws();
      comma = peek() == ',';
      if (comma) ++pos_;
    }
    ++pos_;
    if (dims.size() == 1 && !comma)
      (syntax("a one-element shape needs a trailing comma")).raise();
    return dims;
  }

  // A Python int literal as numpy's literal_eval reads it: decimal digits
  // without a leading zero ("01" is a SyntaxError in Python 3; "0" and "00"
  // are zero).
  uint64_t integer() {
    if (peek() == '-') (fail("the shape has a negative dimension")).raise();
    if (peek() < '0' || peek() > '9') (syntax("expected an integer")).raise();
    size_t start = pos_;
    uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (peek() != '0' && s_[start] == '0')
        (syntax("a dimension has a leading zero")).raise();
      // Saturate: anything above INT_MAX is rejected later with its value.
      v = v > (uint64_t(1) << 40)
              ? v
              : v * 10 + static_cast<uint64_t>(peek() - '0');
      ++pos_;
    }
    if (allow_long_ && (peek() == 'L' || peek() == 'l'))
      ++pos_;  // Python 2 files
    return v;
  }

  std::string_view s_;
  const std::string& path_;
  size_t base_;
  bool allow_long_;
  size_t pos_ = 0;
};

std::string descr_of(DType d) {
  for (const auto& e : descrs)
    if (e.dtype == d)
      return std::string(d.size() == 1 ? "|" : "<").append(e.code);
  return "?";
}

bool is_col_contiguous(const Shape& shape, const Strides& strides) {
  int64_t expected = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return true;
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

}  // namespace

Array parse_npy(const std::shared_ptr<Mapping>& m, const std::string& path) {
  auto fail = [&](const std::string& what) {
    return io_error("load_npy", path, what);
  };
  const uint8_t* p = m->data();
  size_t size = m->size();
  if (size < 10)
    (fail("truncated: the file has " + std::to_string(size) +
               " bytes, less than the 10-byte preamble")).raise();
  if (std::memcmp(p, magic, magic_size) != 0)
    (fail("not an npy file (the magic string \\x93NUMPY is missing)")).raise();
  int major = p[6], minor = p[7];
  if (major < 1 || major > 3 || minor != 0)
    (fail("unsupported npy format version " + std::to_string(major) + "." +
               std::to_string(minor))).raise();
  size_t len_size = major == 1 ? 2 : 4;
  if (size < 8 + len_size) (fail("truncated in the header length")).raise();
  uint64_t hlen = 0;
  for (size_t i = len_size; i-- > 0;) hlen = (hlen << 8) | p[8 + i];
  size_t start = 8 + len_size;
  if (hlen > size - start)
    (fail("header length " + std::to_string(hlen) +
               " runs past the end of the file (" +
               std::to_string(size - start) + " bytes follow it)")).raise();
  std::string_view text(reinterpret_cast<const char*>(p) + start, hlen);
  // numpy accepts Python 2's long suffix ("3L") in versions 1.0 and 2.0.
  Header h = HeaderParser(text, path, start, major <= 2).parse();

  auto need = checked_nbytes(h.dims, h.dtype.size());
  if (!need.fault.empty()) (fail(need.fault)).raise();
  size_t data_start = start + static_cast<size_t>(hlen);
  uint64_t have = size - data_start;
  if (have != need.nbytes)
    (fail(
        std::string(have < need.nbytes ? "truncated: " : "trailing bytes: ") +
        "shape " + dims_text(h.dims) + " of " + descr_of(h.dtype) + " needs " +
        std::to_string(need.nbytes) + " bytes of data, the file has " +
        std::to_string(have))).raise();

  auto data = tensor_data(m, data_start, static_cast<size_t>(need.nbytes),
                          h.dtype, h.big_endian);
  Shape shape(h.dims.begin(), h.dims.end());
  if (!h.fortran || shape.size() < 2)
    return make_constant(std::move(data), shape, h.dtype);
  // Fortran order: the bytes are the C-order array of the reversed shape,
  // whose transpose is the array (a view, no copy).
  return ops::transpose(make_constant(
      std::move(data), Shape(shape.rbegin(), shape.rend()), h.dtype));
}

}  // namespace detail

Array load_npy(const std::string& path) {
  return detail::parse_npy(detail::Mapping::map_file("load_npy", path), path);
}

Array load_npy(const std::string& path, LoadOptions options) {
  return detail::parse_npy(
      detail::Mapping::open("load_npy", path, options.copy), path);
}

void save_npy(const std::string& path, const Array& a) {
  using namespace detail;
  a.eval();
  Array x = a;
  bool fortran = false;
  if (!is_row_contiguous(x.shape(), x.strides())) {
    fortran = x.ndim() > 1 && is_col_contiguous(x.shape(), x.strides());
    if (!fortran) x = ops::copy(x).eval();
  }
  std::string header = "{'descr': '" + descr_of(x.dtype()) +
                       "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': (";
  for (int k = 0; k < x.ndim(); ++k) {
    if (k) header += ", ";
    header += std::to_string(x.shape()[static_cast<size_t>(k)]);
  }
  header += x.ndim() == 1 ? ",), }" : "), }";
  // numpy pads preamble + header + '\n' to a multiple of 64 bytes, so that
  // the data is aligned; version 2.0 only when the length needs 4 bytes.
  auto padded = [&](size_t preamble) {
    return (preamble + header.size() + 1 + 63) / 64 * 64;
  };
  size_t preamble = padded(10) - 10 <= 65535 ? 10 : 12;
  size_t total = padded(preamble);
  header.append(total - preamble - header.size() - 1, ' ');
  header += '\n';

  FileWriter out("save_npy", path);
  uint8_t pre[12];
  std::memcpy(pre, magic, magic_size);
  pre[6] = preamble == 10 ? 1 : 2;
  pre[7] = 0;
  for (size_t k = 0; k < preamble - 8; ++k)
    pre[8 + k] = static_cast<uint8_t>(header.size() >> (8 * k));
  out.write(pre, preamble);
  out.write(header);
  if (x.nbytes() > 0)
    out.write(backend::host_pointer(x), static_cast<size_t>(x.nbytes()));
  out.commit();
}

void save(std::string file, const Array& a) {
  if (file.size() < 4 || file.compare(file.size() - 4, 4, ".npy") != 0) file += ".npy";
  save_npy(file, a);
}

// The mapping is host memory that every device reads; the stream is MLX's
// argument, accepted for its signature.
Array load(const std::string& file, StreamOrDevice) { return load_npy(file); }

}  // namespace nuvec::io
