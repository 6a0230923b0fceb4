// The CPU JIT's disk cache. It holds code we execute, so (DESIGN.md
// section 10): the directory is ours and private (0700, not a symlink, not
// group- or world-writable), files are written under temporary names and
// renamed, opened without following links, checked with fstat, and loaded
// through /proc/self/fd; no disk cache when running setuid.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>

#include "compile/jit.h"

extern char** environ;

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

// Runs argv with stdout and stderr into `log`; the exit status, or -1 when
// it could not start or ran past the time limit (then it is killed).
int run(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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
  if (!make_dirs(dir)) {
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

void* load_checked(const std::string& path, int& fd) {
  fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st;
  void* handle = nullptr;
  if (trusted(fd, st)) {
    std::string proc = "/proc/self/fd/" + std::to_string(fd);
    handle = dlopen(proc.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (!handle) {
    close(fd);
    fd = -1;
  }
  return handle;
}

std::string compile_to(const std::string& dir, const std::string& key, const std::string& source,
                       const std::string& compiler, const std::vector<std::string>& flags) {
  std::string src = temp_name(dir, key, ".cpp");
  std::string obj = temp_name(dir, key, ".so");
  std::string log = temp_name(dir, key, ".log");
  if (!write_file(src, source)) return "cannot write " + src + ": " + std::strerror(errno);
  std::vector<std::string> args{compiler};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"-x", "c++", src, "-o", obj});
  int rc = run(args, log);
  std::string error;
  if (rc != 0) {
    error = rc < 0 ? "the compiler " + compiler + " did not run to completion"
                   : "the compiler failed: " + read_head(log, 2000);
  } else if (chmod(obj.c_str(), 0700) != 0 ||
             rename(obj.c_str(), (dir + "/" + key + ".so").c_str()) != 0) {
    error = "cannot install " + obj + ": " + std::strerror(errno);
  }
  unlink(src.c_str());
  unlink(log.c_str());
  unlink(obj.c_str());  // gone already when renamed
  return error;
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
    if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
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
