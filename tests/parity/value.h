// A library-neutral record of one result of an MLX-style call: an array
// (dtype, shape, exact element texts), a scalar, or the standard exception
// class it threw. The recorder (tools/mlx_parity/record.cpp, linked with
// MLX) and the test (tests/mlx_parity_test.cpp, linked with nuvec) both turn
// their library's results into Values, so the two sides are compared
// through this one format (tests/refs/parity.ref).
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace parity {

struct Value {
  // "A" array, "S" scalar text, "E" exception class, "L" list of values.
  char kind = 'S';
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<std::string> data;  // element texts (see element_text)
  std::string text;               // scalar text or exception class
  std::vector<Value> items;       // kind 'L'
};

/// Exact text of a floating value: C99 hex ("%a") of the double, so float16,
/// bfloat16, float32 and float64 values round-trip; NaN has no sign.
inline std::string float_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}
inline double parse_float(const std::string& t) {
  if (t == "nan") return NAN;
  if (t == "inf") return INFINITY;
  if (t == "-inf") return -INFINITY;
  return std::strtod(t.c_str(), nullptr);
}

inline Value scalar(std::string t) {
  Value v;
  v.kind = 'S';
  v.text = std::move(t);
  return v;
}
// The scalar results of cases, the same text on both sides (arrays,
// shapes and dtypes are converted by each side's own V).
inline Value V(bool b) { return scalar(b ? "true" : "false"); }
inline Value V(int i) { return scalar("int:" + std::to_string(i)); }
inline Value V(int64_t i) { return scalar("int:" + std::to_string(i)); }
inline Value V(double d) { return scalar("float:" + float_text(d)); }
inline Value V(float d) { return scalar("float:" + float_text(d)); }
inline Value V(const std::complex<float>& c) {
  return scalar("complex:" + float_text(c.real()) + "," + float_text(c.imag()));
}
inline Value V(const std::string& s) { return scalar("str:" + s); }

inline Value error_value(std::string cls) {
  Value v;
  v.kind = 'E';
  v.text = std::move(cls);
  return v;
}

/// Runs `f`, turning an exception into its standard class's name (the most
/// derived of the classes MLX throws).
inline Value run_case(const std::function<Value()>& f) {
  try {
    return f();
  } catch (const std::invalid_argument&) {
    return error_value("invalid_argument");
  } catch (const std::out_of_range&) {
    return error_value("out_of_range");
  } catch (const std::length_error&) {
    return error_value("length_error");
  } catch (const std::logic_error&) {
    return error_value("logic_error");
  } catch (const std::overflow_error&) {
    return error_value("overflow_error");
  } catch (const std::runtime_error&) {
    return error_value("runtime_error");
  } catch (const std::exception&) {
    return error_value("exception");
  }
}

/// One line per value: `name<TAB>kind<TAB>...`; a list writes its items as
/// name#0, name#1, ... after its own line.
inline void write_value(std::ostream& os, const std::string& name,
                        const Value& v) {
  os << name << '\t' << v.kind;
  if (v.kind == 'A') {
    os << '\t' << v.dtype << '\t';
    for (size_t i = 0; i < v.shape.size(); ++i)
      os << (i ? "," : "") << v.shape[i];
    os << '\t';
    for (size_t i = 0; i < v.data.size(); ++i) os << (i ? " " : "") << v.data[i];
  } else if (v.kind == 'L') {
    os << '\t' << v.items.size();
  } else {
    os << '\t' << v.text;
  }
  os << '\n';
  for (size_t i = 0; i < v.items.size(); ++i)
    write_value(os, name + "#" + std::to_string(i), v.items[i]);
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

/// Parses one line written by write_value (without the list's items, which
/// are lines of their own): returns the name and the value.
inline std::pair<std::string, Value> read_line(const std::string& line) {
  auto f = split(line, '\t');
  Value v;
  if (f.size() < 2 || f[1].size() != 1) return {"", v};
  v.kind = f[1][0];
  if (v.kind == 'A' && f.size() >= 5) {
    v.dtype = f[2];
    for (auto& d : split(f[3], ','))
      if (!d.empty()) v.shape.push_back(std::stoll(d));
    for (auto& e : split(f[4], ' '))
      if (!e.empty()) v.data.push_back(e);
  } else if (f.size() >= 3) {
    v.text = f[2];
  }
  return {f[0], v};
}

}  // namespace parity
