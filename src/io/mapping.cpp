// Mapped files, buffers inside them, and the file writer (mapping.h).
#include "io/mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "io/loaders.h"

namespace nuvec::io::detail {

namespace {

std::atomic<int64_t> mapping_count{0};

std::string errno_text(int e) { return std::strerror(e); }

void release_mapping(Data& d) {
  delete static_cast<std::shared_ptr<Mapping>*>(d.context);
}

// Reverses each `unit`-byte word of n bytes (complex64 swaps its two floats
// separately, so its unit is 4).
void swap_bytes(uint8_t* dst, const uint8_t* src, size_t n, int unit) {
  for (size_t i = 0; i < n; i += static_cast<size_t>(unit))
    for (int k = 0; k < unit; ++k) dst[i + k] = src[i + (unit - 1 - k)];
}

}  // namespace

Error io_error(const char* op, const std::string& path,
               const std::string& what) {
  return Error(ErrorKind::io, path + ": " + what, std::string(op));
}

namespace {

// Opens the regular file at `path` read-only; its size in `size`.
int open_regular(const char* op, const std::string& path, size_t& size) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused
  // below); it changes nothing for a regular file.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) (io_error(op, path, "cannot open: " + errno_text(errno))).raise();
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    (io_error(op, path, "cannot stat: " + errno_text(e))).raise();
  }
  // Mapping a FIFO or device would block or mean nothing.
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    (io_error(op, path, "not a regular file")).raise();
  }
  size = static_cast<size_t>(st.st_size);
  return fd;
}

// Closes the descriptor however the scope is left.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

}  // namespace

std::shared_ptr<Mapping> Mapping::map_file(const char* op,
                                           const std::string& path) {
  size_t size = 0;
  int fd = open_regular(op, path, size);
  FdCloser closer{fd};  // the mapping keeps the file open
  std::shared_ptr<Mapping> m(new Mapping());
  m->size_ = size;
  if (m->size_ > 0) {
    void* p = ::mmap(nullptr, m->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
      (io_error(op, path,
                "cannot map " + std::to_string(m->size_) +
                    " bytes: " + errno_text(errno)))
          .raise();
    m->data_ = static_cast<const uint8_t*>(p);
    m->mapped_ = true;
  }
  return m;
}

std::shared_ptr<Mapping> Mapping::read_file(const char* op,
                                            const std::string& path) {
  size_t size = 0;
  int fd = open_regular(op, path, size);
  FdCloser closer{fd};
  std::shared_ptr<Mapping> m(new Mapping());
  m->owned_ = allocate_data(size);  // out_of_memory past the limit
  auto* dst = static_cast<uint8_t*>(m->owned_->ptr);
  size_t done = 0;
  while (done < size) {
    size_t want = std::min(size - done, size_t(1) << 30);
    ssize_t k = ::read(fd, dst + done, want);
    if (k < 0) {
      if (errno == EINTR) continue;
      (io_error(op, path, "read failed: " + errno_text(errno))).raise();
    }
    if (k == 0)
      (io_error(op, path,
                "the file shrank while it was read (" + std::to_string(size) +
                    " bytes expected, " + std::to_string(done) + " read)"))
          .raise();
    done += static_cast<size_t>(k);
  }
  // One more byte means it grew: the copy would be of no single version.
  uint8_t extra;
  ssize_t k;
  do {
    k = ::read(fd, &extra, 1);
  } while (k < 0 && errno == EINTR);
  if (k > 0)
    (io_error(op, path,
              "the file grew while it was read (past " + std::to_string(size) +
                  " bytes)"))
        .raise();
  m->data_ = dst;
  m->size_ = size;
  return m;
}

std::shared_ptr<Mapping> Mapping::copy_of(const void* bytes, size_t n) {
  std::shared_ptr<Mapping> m(new Mapping());
  if (n > 0) {
    auto* p = new uint8_t[n];
    std::memcpy(p, bytes, n);
    m->data_ = p;
  }
  m->size_ = n;
  return m;
}

Mapping::Mapping() { mapping_count.fetch_add(1, std::memory_order_relaxed); }

Mapping::~Mapping() {
  if (mapped_) {
    ::munmap(const_cast<uint8_t*>(data_), size_);
  } else if (!owned_) {
    delete[] data_;
  }
  mapping_count.fetch_sub(1, std::memory_order_relaxed);
}

int64_t live_mappings() {
  return mapping_count.load(std::memory_order_relaxed);
}

std::shared_ptr<Data> data_in(const std::shared_ptr<Mapping>& m, size_t offset,
                              size_t nbytes) {
  auto d = std::make_shared<Data>();
  d->ptr = const_cast<uint8_t*>(m->data()) + offset;
  d->nbytes = nbytes;
  d->capacity = nbytes;
  d->from_allocator = false;  // never donated: the pages are read-only
  d->context = new std::shared_ptr<Mapping>(m);
  d->release = &release_mapping;
  return d;
}

std::shared_ptr<Data> tensor_data(const std::shared_ptr<Mapping>& m,
                                  size_t offset, size_t nbytes, DType dtype,
                                  bool big_endian) {
  const uint8_t* src = m->data() + offset;
  int unit = dtype == complex64 ? 4 : dtype.size();
  bool swap = big_endian && unit > 1 && nbytes > 0;
  bool misaligned =
      nbytes > 0 &&
      reinterpret_cast<uintptr_t>(src) % static_cast<uintptr_t>(dtype.size()) !=
          0;
  bool bad_bool = false;
  if (dtype == bool_)
    for (size_t i = 0; i < nbytes && !bad_bool; ++i) bad_bool = src[i] > 1;
  if (!swap && !misaligned && !bad_bool) return data_in(m, offset, nbytes);

  auto d = allocate_data(nbytes);
  auto* dst = static_cast<uint8_t*>(d->ptr);
  if (swap) {
    swap_bytes(dst, src, nbytes, unit);
  } else if (bad_bool) {
    for (size_t i = 0; i < nbytes; ++i) dst[i] = src[i] != 0;
  } else {
    std::memcpy(dst, src, nbytes);
  }
  return d;
}

SizeCheck checked_nbytes(const std::vector<uint64_t>& dims, int itemsize) {
  SizeCheck r;
  if (dims.size() > max_ndim) {
    r.fault = std::to_string(dims.size()) + " dimensions (at most " +
              std::to_string(max_ndim) + " are supported)";
    return r;
  }
  for (uint64_t d : dims) {
    if (d > static_cast<uint64_t>(INT_MAX)) {
      r.fault = "dimension " + std::to_string(d) + " exceeds " +
                std::to_string(INT_MAX);
      return r;
    }
  }
  // The nonzero dimensions must multiply within int64 even when another is
  // 0: strides are products of dimensions (as numpy's "array is too big").
  uint64_t count = 1;
  for (uint64_t d : dims) {
    if (d == 0) continue;
    if (count > static_cast<uint64_t>(INT64_MAX) / d) {
      r.fault = "shape " + dims_text(dims) +
                " is too large: its nonzero dimensions "
                "multiply to more than 2^63";
      return r;
    }
    count *= d;
  }
  uint64_t size = static_cast<uint64_t>(itemsize);
  if (count > static_cast<uint64_t>(INT64_MAX) / size) {
    r.fault = "shape " + dims_text(dims) + " needs more than 2^63 bytes";
    return r;
  }
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) count = 0;
  r.nbytes = count * size;
  return r;
}

std::string dims_text(const std::vector<uint64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + (dims.size() == 1 ? ",)" : ")");
}

FileWriter::FileWriter(const char* op, const std::string& path)
    : op_(op), path_(path), target_(path), buf_(new char[1 << 20]) {
  // Saving over a symbolic link writes the file it points to, as open()
  // would; the temporary file sits beside that target so rename() works.
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      target_ = real;
      std::free(real);
    }
  }
  static std::atomic<uint64_t> counter{0};
  tmp_ = target_ + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1));
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0)
    (io_error(op_, path_, "cannot create: " + errno_text(errno))).raise();
  // Replacing a file keeps its permissions.
  if (::stat(target_.c_str(), &st) == 0) ::fchmod(fd_, st.st_mode & 07777);
}

FileWriter::~FileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void FileWriter::write_all(const char* p, size_t n) {
  while (n > 0) {
    ssize_t k = ::write(fd_, p, n < (size_t(1) << 30) ? n : (size_t(1) << 30));
    if (k < 0) {
      if (errno == EINTR) continue;
      (io_error(op_, path_, "write failed: " + errno_text(errno))).raise();
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
}

void FileWriter::flush() {
  write_all(buf_.get(), used_);
  used_ = 0;
}

void FileWriter::write(const void* bytes, size_t n) {
  constexpr size_t cap = 1 << 20;
  if (used_ + n <= cap) {
    if (n > 0) std::memcpy(buf_.get() + used_, bytes, n);
    used_ += n;
    return;
  }
  flush();
  if (n >= cap / 4) {
    write_all(static_cast<const char*>(bytes), n);
  } else {
    std::memcpy(buf_.get(), bytes, n);
    used_ = n;
  }
}

void FileWriter::commit() {
  flush();
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp_.c_str());
    (io_error(op_, path_, "write failed: " + errno_text(e))).raise();
  }
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp_.c_str());
    (io_error(op_, path_, "cannot replace the file: " + errno_text(e))).raise();
  }
}

}  // namespace nuvec::io::detail
