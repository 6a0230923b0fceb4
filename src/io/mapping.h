// The bytes of a file as loaders see them, the buffers that point into them,
// and the writer that saves files (internal to src/io).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "nuvec/core/error.h"
#include "nuvec/core/graph.h"

namespace nuvec::io::detail {

/// An io error: "[op] path: what".
Error io_error(const char* op, const std::string& path,
               const std::string& what);

/// Read-only bytes: a file mapped with mmap(PROT_READ, MAP_PRIVATE), a file
/// read into an allocator buffer (LoadOptions::copy: counted by the memory
/// limit, and immune to the file changing afterwards), or a heap copy (the
/// fuzzers use one so that AddressSanitizer sees every read past the end).
/// Unmapped or freed when the last owner drops it; every array loaded from
/// a file holds one owner.
class Mapping {
 public:
  /// Maps the regular file at `path`; throws an io error naming it.
  static std::shared_ptr<Mapping> map_file(const char* op,
                                           const std::string& path);
  /// Reads the regular file at `path` into one allocator buffer; throws an
  /// io error naming it, or an out_of_memory error past the memory limit.
  static std::shared_ptr<Mapping> read_file(const char* op,
                                            const std::string& path);
  /// read_file when `copy`, else map_file.
  static std::shared_ptr<Mapping> open(const char* op, const std::string& path,
                                       bool copy) {
    return copy ? read_file(op, path) : map_file(op, path);
  }
  /// A heap copy of `n` bytes (exactly `n`, so overreads are detectable).
  static std::shared_ptr<Mapping> copy_of(const void* bytes, size_t n);
  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  Mapping();
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;  // munmap, else delete[] unless owned_
  std::shared_ptr<Data> owned_;  // the allocator buffer of read_file
};

/// Mappings alive in this process (tests check that arrays release them).
int64_t live_mappings();

/// A buffer of `nbytes` at `offset` in `m` that keeps `m` alive. It is not
/// from the allocator, so it is never donated (written) by an operation.
std::shared_ptr<Data> data_in(const std::shared_ptr<Mapping>& m, size_t offset,
                              size_t nbytes);

/// The buffer an array of `dtype` over bytes [offset, offset + nbytes) of
/// `m` gets: the bytes themselves when they may be used as they are, else
/// an allocator copy that is aligned to the element size, byte-swapped when
/// `big_endian`, and with bool bytes other than 0 and 1 made 1 (kernels must
/// never load another bool byte).
std::shared_ptr<Data> tensor_data(const std::shared_ptr<Mapping>& m,
                                  size_t offset, size_t nbytes, DType dtype,
                                  bool big_endian);

/// Writes a file under a temporary name beside `path` and renames it into
/// place on commit(), so that a failed save leaves no partial file and the
/// old file's arrays (mapped from its inode) stay valid. Small writes are
/// buffered; large ones go straight to write().
class FileWriter {
 public:
  FileWriter(const char* op, const std::string& path);
  ~FileWriter();  // removes the temporary file unless committed
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  void write(const void* bytes, size_t n);
  void write(std::string_view s) { write(s.data(), s.size()); }
  void commit();

 private:
  void flush();
  void write_all(const char* p, size_t n);
  const char* op_;
  std::string path_, target_, tmp_;
  int fd_ = -1;
  std::unique_ptr<char[]> buf_;
  size_t used_ = 0;
};

}  // namespace nuvec::io::detail
