// Internal entry points of the loaders: they parse bytes already in memory,
// so the fuzzers and tests can feed them without files (include/nuvec/io.h
// is the public interface).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/mapping.h"
#include "nuvec/core/array.h"

namespace nuvec::io::detail {

/// numpy's limit, and far more than any real tensor has.
inline constexpr size_t max_ndim = 64;

struct SafetensorsFile {
  std::map<std::string, Array> arrays;
  std::map<std::string, std::string> metadata;
};

/// Checks every header field of the safetensors bytes in `m` and, when
/// `with_arrays`, makes the arrays (pointing into `m`). `op` and `path` name
/// the call and file in errors.
SafetensorsFile parse_safetensors(const std::shared_ptr<Mapping>& m,
                                  const char* op, const std::string& path,
                                  bool with_arrays);

/// Checks the npy bytes in `m` and makes the array.
Array parse_npy(const std::shared_ptr<Mapping>& m, const std::string& path);

/// The byte size of an array of `dims` and `itemsize`, or the reason it
/// cannot exist: a dimension above INT_MAX (nuvec shapes are int), or an
/// element count or byte size past INT64_MAX.
struct SizeCheck {
  uint64_t nbytes = 0;
  std::string fault;  // empty when fine
};
SizeCheck checked_nbytes(const std::vector<uint64_t>& dims, int itemsize);

/// "(2, 3)" for error messages.
std::string dims_text(const std::vector<uint64_t>& dims);

}  // namespace nuvec::io::detail
