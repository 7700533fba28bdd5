#include "cosim/rt_config/results_folder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "cosim/runtime/errno_text.hpp"
#include "cosim/runtime/error.hpp"

namespace cosim::config {

namespace fs = std::filesystem;

namespace {

std::string os_error(int e) {
  return errno_text(e);
}

/// The pid written by the run holding the lock ("unknown" while it is still writing it).
std::string holder_pid(int fd) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    if (n > 0) {
      std::string s(buf, static_cast<std::size_t>(n));
      while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
      if (!s.empty()) return s;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return "unknown";
}

void write_all(int fd, const std::string& text, const fs::path& path) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    COSIM_INPUT_CHECK(n > 0, errc::io, "error writing " + path.string() + ": " + os_error(errno));
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

/// A file of the folder that is a symbolic link: refused, never followed (a link to another
/// run's results, or to any file, must not be overwritten through the folder).
void refuse_link(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return;
  std::error_code ec;
  const fs::path target = fs::read_symlink(path, ec);
  throw error(errc::io, path.string() + " is a symbolic link" +
                            (ec ? std::string() : " (to " + target.string() + ")") +
                            ": files in a results folder are never written through links; "
                            "remove it or choose another --out");
}

/// Why opening `path` failed: a link (O_NOFOLLOW's ELOOP, a link made after the check) is
/// named as such.
std::string open_error(const fs::path& path, int e) {
  if (e == ELOOP) return path.string() + " is a symbolic link: not followed";
  return path.string() + ": " + os_error(e);
}

}  // namespace

void write_file_atomically(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path path = dir / name;
  const fs::path tmp = dir / (name + ".tmp");
  refuse_link(path);
  // O_NOFOLLOW: a temporary planted as a link is refused, not written through.
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  COSIM_INPUT_CHECK(fd >= 0, errc::io, "cannot write " + open_error(tmp, errno));
  try {
    write_all(fd, text, path);
    COSIM_INPUT_CHECK(::fsync(fd) == 0, errc::io,
                      "error writing " + path.string() + ": " + os_error(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  const bool closed = ::close(fd) == 0;
  const int close_errno = errno;
  // rename(2) replaces the name itself (a link put there meanwhile is replaced, its target
  // untouched).
  if (!closed || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = closed ? errno : close_errno;
    ::unlink(tmp.c_str());
    throw error(errc::io, "error writing " + path.string() + ": " + os_error(e));
  }
  // The rename is durable only once the folder's entry is: without this, a power cut can
  // leave the old name (or none) after the new data reached the disk.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  COSIM_INPUT_CHECK(dfd >= 0, errc::io, "cannot sync folder " + open_error(dir, errno));
  const bool synced = ::fsync(dfd) == 0;
  const int sync_errno = errno;
  ::close(dfd);
  COSIM_INPUT_CHECK(synced, errc::io,
                    "error syncing folder " + dir.string() + ": " + os_error(sync_errno));
}

results_folder::results_folder(fs::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  COSIM_INPUT_CHECK(!ec, errc::io,
                    "cannot create output directory " + dir_.string() + ": " + ec.message());
  // Checked before anything in the folder is created, opened or removed.
  for (const char* name : own_files) refuse_link(dir_ / name);
  const fs::path lock = dir_ / lock_name;
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  COSIM_INPUT_CHECK(lock_fd_ >= 0, errc::io, "cannot create lock file " + open_error(lock, errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    const std::string pid = e == EWOULDBLOCK ? holder_pid(lock_fd_) : "";
    ::close(lock_fd_);
    lock_fd_ = -1;
    COSIM_INPUT_CHECK(e != EWOULDBLOCK, errc::io,
                      "output directory " + dir_.string() +
                          " is in use by another cosim run (pid " + pid +
                          "); wait for it to finish or choose another --out");
    throw error(errc::io, "cannot lock " + lock.string() + ": " + os_error(e));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd_, 0) == 0) (void)::pwrite(lock_fd_, pid.data(), pid.size(), 0);
  // A temporary left by a run killed while writing its summary is garbage: remove it now
  // that no other run can be writing one.
  for (const auto& e : fs::directory_iterator(dir_, ec))
    if (e.path().extension() == ".tmp") fs::remove(e.path(), ec);
}

results_folder::~results_folder() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

void results_folder::start_run() {
  std::error_code ec;
  // fs::remove unlinks the name: a link (made after the constructor's check) goes, its
  // target stays.
  for (const char* stale : {"summary.json", "timing.csv", "trace.json", "report.html"}) {
    fs::remove(dir_ / stale, ec);
    COSIM_INPUT_CHECK(!ec, errc::io,
                      "cannot remove " + (dir_ / stale).string() + ": " + ec.message());
  }
}

void results_folder::write_atomically(const std::string& name, const std::string& text) const {
  write_file_atomically(dir_, name, text);
}

void results_folder::sync(const std::string& name) const {
  const fs::path path = dir_ / name;
  // Read-only is enough for fsync(2); O_NOFOLLOW: never a link's target.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == ENOENT) return;
  COSIM_INPUT_CHECK(fd >= 0, errc::io, "cannot sync " + open_error(path, errno));
  const bool synced = ::fsync(fd) == 0;
  const int e = errno;
  ::close(fd);
  COSIM_INPUT_CHECK(synced, errc::io, "error writing " + path.string() + ": " + os_error(e));
}

}  // namespace cosim::config
