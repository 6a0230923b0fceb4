#include "refs.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nuvec::refs {
namespace {

[[noreturn]] void fail(const std::string& file, int line, const std::string& msg) {
  throw std::runtime_error(file + ":" + std::to_string(line) + ": " + msg);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = s.find(' ', i);
    if (j == std::string::npos) j = s.size();
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

long long to_ll(const std::string& s) {
  if (s.empty()) throw std::invalid_argument("empty integer");
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size())
    throw std::invalid_argument("bad integer '" + s + "'");
  return v;
}

std::size_t numel_of(const std::vector<int>& shape) {
  std::size_t n = 1;
  for (int d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

}  // namespace

std::size_t dtype_size(const std::string& d) {
  static const std::map<std::string, std::size_t> sizes = {
      {"bool", 1},    {"uint8", 1},   {"uint16", 2},   {"uint32", 4},   {"uint64", 8},
      {"int8", 1},    {"int16", 2},   {"int32", 4},    {"int64", 8},    {"float16", 2},
      {"bfloat16", 2}, {"float32", 4}, {"float64", 8}, {"complex64", 8},
  };
  auto it = sizes.find(d);
  if (it == sizes.end()) throw std::runtime_error("unknown dtype '" + d + "'");
  return it->second;
}

std::vector<int> parse_shape(const std::string& s) {
  std::vector<int> out;
  if (s.empty() || s == "-") return out;
  std::size_t i = 0;
  while (true) {
    std::size_t j = s.find(',', i);
    std::string tok = s.substr(i, j == std::string::npos ? std::string::npos : j - i);
    long long v = to_ll(tok);
    if (v < 0) throw std::invalid_argument("negative dimension in '" + s + "'");
    out.push_back(static_cast<int>(v));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return out;
}

std::vector<unsigned char> parse_hex(const std::string& s) {
  std::vector<unsigned char> out;
  if (s == "-") return out;
  if (s.empty() || s.size() % 2 != 0) throw std::invalid_argument("odd-length or empty hex");
  out.reserve(s.size() / 2);
  for (std::size_t i = 0; i < s.size(); i += 2) {
    int hi = hexval(s[i]), lo = hexval(s[i + 1]);
    if (hi < 0 || lo < 0) throw std::invalid_argument("bad hex digit");
    out.push_back(static_cast<unsigned char>(hi * 16 + lo));
  }
  return out;
}

std::size_t Tensor::numel() const { return numel_of(shape); }

std::vector<int> Tensor::view_shape() const {
  if (view == "c") return shape;
  if (view == "t") return std::vector<int>(shape.rbegin(), shape.rend());
  if (view == "s") {
    std::vector<int> s = shape;
    if (!s.empty()) s.back() = (s.back() + 1) / 2;
    return s;
  }
  return broadcast_shape;
}

bool Case::has(const std::string& key) const { return params.count(key) != 0; }

const std::string& Case::param(const std::string& key) const {
  auto it = params.find(key);
  if (it == params.end()) throw std::runtime_error(where() + ": no param '" + key + "'");
  return it->second;
}

double Case::param_double(const std::string& key) const {
  const std::string& s = param(key);
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  // ERANGE is fine for subnormals; only reject text that is not a number
  if (s.empty() || end != s.c_str() + s.size())
    throw std::runtime_error(where() + ": param '" + key + "' = '" + s + "' is not a number");
  return v;
}

long long Case::param_int(const std::string& key) const {
  const std::string& s = param(key);
  try {
    return to_ll(s);
  } catch (const std::exception&) {
    throw std::runtime_error(where() + ": param '" + key + "' = '" + s + "' is not an int");
  }
}

std::vector<int> Case::param_ints(const std::string& key) const {
  const std::string& s = param(key);
  if (s == "[]") return {};
  std::vector<int> out;
  try {
    std::size_t i = 0;
    while (true) {
      std::size_t j = s.find(',', i);
      out.push_back(static_cast<int>(
          to_ll(s.substr(i, j == std::string::npos ? std::string::npos : j - i))));
      if (j == std::string::npos) break;
      i = j + 1;
    }
  } catch (const std::exception&) {
    throw std::runtime_error(where() + ": param '" + key + "' = '" + s + "' is not an int list");
  }
  return out;
}

bool Case::param_bool(const std::string& key) const {
  const std::string& s = param(key);
  if (s == "true") return true;
  if (s == "false") return false;
  throw std::runtime_error(where() + ": param '" + key + "' = '" + s + "' is not true/false");
}

bool Case::crashed() const {
  return error && error->rfind("MLX process crashed", 0) == 0;
}

std::string Case::where() const { return file + ":" + std::to_string(line) + " " + id; }

std::vector<Case> parse(std::istream& in, const std::string& name) {
  std::vector<Case> cases;
  std::optional<Case> cur;
  std::string raw;
  int lineno = 0;

  auto parse_tensor = [&](const std::vector<std::string>& t, bool is_input) {
    const std::size_t want = is_input ? 5 : 4;
    if (t.size() != want)
      fail(name, lineno, std::string(is_input ? "'in'" : "'out'") + " needs " +
                             std::to_string(want - 1) + " fields");
    Tensor x;
    x.dtype = t[1];
    std::size_t isz = 0;
    try {
      isz = dtype_size(x.dtype);
      x.shape = parse_shape(t[2]);
      if (is_input) {
        x.view = t[3];
        if (x.view.rfind("b:", 0) == 0) {
          x.broadcast_shape = parse_shape(x.view.substr(2));
        } else if (x.view != "c" && x.view != "t" && x.view != "s") {
          throw std::invalid_argument("bad view '" + x.view + "'");
        }
      }
      x.bytes = parse_hex(t[want - 1]);
    } catch (const std::exception& e) {
      fail(name, lineno, e.what());
    }
    if (x.bytes.size() != x.numel() * isz)
      fail(name, lineno, "hex has " + std::to_string(x.bytes.size()) + " bytes, shape needs " +
                             std::to_string(x.numel() * isz));
    return x;
  };

  while (std::getline(in, raw)) {
    ++lineno;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (raw.empty() || raw[0] == '#') continue;
    std::vector<std::string> t = split(raw);
    if (t.empty()) continue;
    const std::string& kw = t[0];
    if (kw == "case") {
      if (cur) fail(name, lineno, "'case' before 'end' of case '" + cur->id + "'");
      if (t.size() != 3) fail(name, lineno, "'case' needs <id> <op>");
      cur.emplace();
      cur->id = t[1];
      cur->op = t[2];
      cur->line = lineno;
      cur->file = name;
      continue;
    }
    if (!cur) fail(name, lineno, "'" + kw + "' outside a case");
    if (kw == "param") {
      if (t.size() != 3) fail(name, lineno, "'param' needs <key> <value>");
      if (!cur->params.emplace(t[1], t[2]).second)
        fail(name, lineno, "duplicate param '" + t[1] + "'");
    } else if (kw == "in") {
      if (!cur->outputs.empty() || cur->error) fail(name, lineno, "'in' after results");
      cur->inputs.push_back(parse_tensor(t, true));
    } else if (kw == "out") {
      if (cur->error) fail(name, lineno, "'out' in a case with 'err'");
      cur->outputs.push_back(parse_tensor(t, false));
    } else if (kw == "err") {
      if (!cur->outputs.empty()) fail(name, lineno, "'err' in a case with 'out'");
      if (cur->error) fail(name, lineno, "second 'err'");
      std::size_t p = raw.find("err");
      std::string msg = raw.size() > p + 4 ? raw.substr(p + 4) : std::string();
      cur->error = msg;
    } else if (kw == "end") {
      if (t.size() != 1) fail(name, lineno, "'end' takes no fields");
      if (cur->outputs.empty() && !cur->error) fail(name, lineno, "case without 'out' or 'err'");
      cases.push_back(std::move(*cur));
      cur.reset();
    } else {
      fail(name, lineno, "unknown record '" + kw + "'");
    }
  }
  if (cur) fail(name, lineno, "missing 'end' for case '" + cur->id + "'");
  return cases;
}

std::vector<Case> load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ":0: cannot open");
  return parse(f, path);
}

Promotion parse_promotion(std::istream& in, const std::string& name) {
  Promotion p;
  std::string raw;
  int lineno = 0;
  while (std::getline(in, raw)) {
    ++lineno;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (raw.empty() || raw[0] == '#') continue;
    std::vector<std::string> t = split(raw);
    if (t.size() != 4) fail(name, lineno, "expected 4 fields");
    try {
      dtype_size(t[3]);
      if (t[0] == "promote") {
        dtype_size(t[1]);
        dtype_size(t[2]);
        p.promote.emplace_back(t[1], t[2], t[3]);
      } else if (t[0] == "weak") {
        dtype_size(t[1]);
        if (t[2] != "int" && t[2] != "float" && t[2] != "bool")
          throw std::invalid_argument("bad scalar kind '" + t[2] + "'");
        p.weak.emplace_back(t[1], t[2], t[3]);
      } else {
        throw std::invalid_argument("unknown record '" + t[0] + "'");
      }
    } catch (const std::exception& e) {
      fail(name, lineno, e.what());
    }
  }
  return p;
}

Promotion load_promotion(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ":0: cannot open");
  return parse_promotion(f, path);
}

std::string ref_path(const std::string& file) {
#ifdef NUVEC_REFS_DIR
  std::string dir = NUVEC_REFS_DIR;
#else
  std::string dir = "tests/refs/";
#endif
  if (!dir.empty() && dir.back() != '/') dir += '/';
  return dir + file;
}

}  // namespace nuvec::refs
