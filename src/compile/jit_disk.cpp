// The CPU JIT's disk cache. It holds code we execute, so (DESIGN.md
// section 10): the cache root and each directory under it are ours and
// private (not a symlink, not group- or world-writable), files are written
// under temporary names and renamed, opened without following links,
// checked with fstat, carry a hash of their bytes that is checked before
// anything is loaded, and are loaded from a sealed copy in memory through
// /proc/self/fd; no disk cache when running setuid.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <string_view>

#include "compile/jit.h"

namespace nuvec::jit_detail {

namespace {

bool private_dir(const std::string& dir, std::string& why) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    why = "cannot stat " + dir + ": " + std::strerror(errno);
    return false;
  }
  if (S_ISLNK(st.st_mode)) why = dir + " is a symbolic link";
  else if (!S_ISDIR(st.st_mode)) why = dir + " is not a directory";
  else if (st.st_uid != geteuid()) why = dir + " belongs to another user";
  else if (st.st_mode & (S_IWGRP | S_IWOTH)) why = dir + " is writable by group or others";
  else return true;
  return false;
}

// mkdir -p, new directories private.
bool make_dirs(const std::string& dir) {
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i < dir.size() && dir[i] != '/') continue;
    std::string part = dir.substr(0, i);
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  return true;
}

std::string temp_name(const std::string& dir, const std::string& key, const char* ext) {
  static std::atomic<unsigned> counter{0};
  return dir + "/" + key + "." + std::to_string(getpid()) + "." + std::to_string(counter++) +
         ".tmp" + ext;
}

bool write_file(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < text.size()) {
    ssize_t w = write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  close(fd);
  return done == text.size();
}

// Whether the open file is a regular file of ours nobody else can write.
bool trusted(int fd, struct stat& st) {
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
         !(st.st_mode & (S_IWGRP | S_IWOTH));
}

std::string read_head(const std::string& path, size_t max) {
  std::string out;
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return out;
  out.resize(max);
  ssize_t r = read(fd, out.data(), max);
  close(fd);
  out.resize(r > 0 ? static_cast<size_t>(r) : 0);
  return out;
}

}  // namespace

std::string cache_directory(const std::string& requested, std::string& why) {
  if (getuid() != geteuid() || getgid() != getegid()) {
    why = "running setuid: no disk cache";
    return "";
  }
  std::string dir = requested;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty() || dir[0] != '/') {
    why = "the cache directory must be an absolute path (" + requested + ")";
    return "";
  }
  // The root (the parent: $NUVEC_CACHE_DIR) is made with its parents and
  // checked before anything is made in it, so nothing is created through
  // a link; then the directory itself. mkdir never follows a link that is
  // its last component.
  size_t slash = dir.rfind('/');
  std::string root = slash == 0 ? "/" : dir.substr(0, slash);
  if (!make_dirs(root)) {
    why = "cannot create " + root + ": " + std::strerror(errno);
    return "";
  }
  if (!private_dir(root, why)) return "";
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    why = "cannot create " + dir + ": " + std::strerror(errno);
    return "";
  }
  return private_dir(dir, why) ? dir : "";
}

bool store_file(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::string tmp = temp_name(dir, name, "");
  if (!write_file(tmp, bytes) || rename(tmp.c_str(), (dir + "/" + name).c_str()) != 0) {
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

std::optional<std::string> read_checked(const std::string& path, size_t max) {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::optional<std::string> out;
  if (trusted(fd, st) && static_cast<size_t>(st.st_size) <= max) {
    std::string bytes(static_cast<size_t>(st.st_size), '\0');
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t r = read(fd, bytes.data() + done, bytes.size() - done);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      done += static_cast<size_t>(r);
    }
    if (done == bytes.size()) out = std::move(bytes);
  }
  close(fd);
  return out;
}

namespace {

// A kernel file is the compiler's shared object followed by this trailer:
// the magic, the 32 hex digits of Hash128 over the object's bytes, '\n'.
// The loader ignores bytes past the object's sections, so the file stays a
// shared object that nm and objdump read.
constexpr char kMagic[] = "\nnuvec-kernel-hash ";
constexpr size_t kMagicSize = sizeof kMagic - 1;
constexpr size_t kTrailerSize = kMagicSize + 32 + 1;
constexpr size_t kMaxKernel = 256u << 20;

std::string trailer(std::string_view object) {
  Hash128 h;
  h.add(object);
  return std::string(kMagic, kMagicSize) + h.hex() + "\n";
}

// The whole file behind `fd` (at most kMaxKernel bytes).
std::optional<std::string> read_all(int fd, const struct stat& st) {
  if (st.st_size < 0 || static_cast<size_t>(st.st_size) > kMaxKernel) return std::nullopt;
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t r = read(fd, bytes.data() + done, bytes.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return std::nullopt;
    done += static_cast<size_t>(r);
  }
  return bytes;
}

// A sealed in-memory file holding `object` (nobody can change it between
// the check and dlopen); -1 where the kernel offers none.
int sealed_copy(std::string_view object) {
  int fd = memfd_create("nuvec-kernel", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < object.size()) {
    ssize_t w = write(fd, object.data() + done, object.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      close(fd);
      return -1;
    }
    done += static_cast<size_t>(w);
  }
  fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  return fd;
}

}  // namespace

void* load_checked(const std::string& path, int& fd) {
  fd = -1;
  int file = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (file < 0) return nullptr;
  struct stat st;
  std::optional<std::string> bytes;
  if (trusted(file, st)) bytes = read_all(file, st);
  // A file without its trailer, or whose bytes do not match it (damaged,
  // truncated, written by someone else), is never loaded.
  size_t object = bytes && bytes->size() > kTrailerSize ? bytes->size() - kTrailerSize : 0;
  if (object == 0 ||
      bytes->compare(object, kTrailerSize, trailer(std::string_view(*bytes).substr(0, object))) != 0) {
    close(file);
    return nullptr;
  }
  int copy = sealed_copy(std::string_view(*bytes).substr(0, object));
  if (copy >= 0) {
    close(file);
    file = copy;
  }  // else the checked file itself, through the descriptor that read it
  std::string proc = "/proc/self/fd/" + std::to_string(file);
  void* handle = dlopen(proc.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    close(file);
    return nullptr;
  }
  fd = file;
  return handle;
}

BuildResult compile_to(const std::string& dir, const std::string& key, const std::string& source,
                       const std::string& compiler, const std::vector<std::string>& flags,
                       double timeout_s, bool idle) {
  // Everything of this build (the source, the object, the log and the
  // compiler's own temporary files: TMPDIR) lives in one directory of its
  // own, removed at the end, at exit, or by a later trim_cache.
  BuildResult r;
  std::string work = temp_name(dir, key, "dir");
  if (mkdir(work.c_str(), 0700) != 0) {
    r.error = "cannot create " + work + ": " + std::strerror(errno);
    return r;
  }
  std::string src = work + "/k.cpp", obj = work + "/k.so", log = work + "/k.log";
  if (!write_file(src, source)) {
    r.error = "cannot write " + src + ": " + std::strerror(errno);
    remove_tree(work);
    return r;
  }
  std::vector<std::string> args{compiler};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"-x", "c++", src, "-o", obj});
  RunResult run = run_compiler(args, log, work, timeout_s, idle);
  if (run.end == RunEnd::cancelled) {
    r.cancelled = true;
    r.error = "the process is exiting";
  } else if (run.end == RunEnd::timed_out) {
    r.timed_out = true;
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", timeout_s);
    r.error = "the compiler " + compiler + " ran past the time limit of " + limit +
              " s (NUVEC_JIT_TIMEOUT) and was killed";
  } else if (run.end == RunEnd::failed_to_start || run.status < 0) {
    r.error = "the compiler " + compiler + " did not run to completion";
  } else if (run.status != 0) {
    r.error = "the compiler failed: " + read_head(log, 2000);
  } else {
    int fd = open(obj.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    std::optional<std::string> bytes;
    if (fd >= 0 && trusted(fd, st)) bytes = read_all(fd, st);
    bool sealed = false;
    if (bytes && !bytes->empty()) {
      std::string t = trailer(*bytes);
      sealed = pwrite(fd, t.data(), t.size(), static_cast<off_t>(bytes->size())) ==
               static_cast<ssize_t>(t.size());
    }
    if (fd >= 0) close(fd);
    if (!sealed) {
      r.error = "cannot read the built kernel " + obj;
    } else if (chmod(obj.c_str(), 0700) != 0 ||
               rename(obj.c_str(), (dir + "/" + key + ".so").c_str()) != 0) {
      r.error = "cannot install " + obj + ": " + std::strerror(errno);
    }
  }
  remove_tree(work);
  return r;
}

void trim_cache(const std::string& dir, long long max_bytes) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  struct Entry {
    std::string path;
    time_t mtime;
    long long bytes;
  };
  std::vector<Entry> kernels;
  long long total = 0;
  time_t now = time(nullptr);
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    std::string path = dir + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode) && name.size() > 7 &&
        name.compare(name.size() - 7, 7, ".tmpdir") == 0) {
      if (now - st.st_mtime > 3600) remove_tree(path);  // a build killed with its process
      continue;
    }
    if (!S_ISREG(st.st_mode)) continue;
    if (name.find(".tmp") != std::string::npos) {
      if (now - st.st_mtime > 3600) unlink(path.c_str());  // left by a killed process
    } else if ((name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0) ||
               (name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0)) {
      kernels.push_back({path, st.st_mtime, static_cast<long long>(st.st_size)});
      total += st.st_size;
    }
  }
  closedir(d);
  if (total <= max_bytes) return;
  std::sort(kernels.begin(), kernels.end(),
            [](const Entry& a, const Entry& b) { return a.mtime < b.mtime; });
  for (const auto& k : kernels) {
    if (total <= max_bytes * 3 / 4) break;
    unlink(k.path.c_str());  // a loaded module stays mapped
    total -= k.bytes;
  }
}

}  // namespace nuvec::jit_detail
