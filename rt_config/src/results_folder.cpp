#include "cosim/rt_config/results_folder.hpp"

#include <fcntl.h>
#include <sys/file.h>
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

}  // namespace

results_folder::results_folder(fs::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  COSIM_INPUT_CHECK(!ec, errc::io,
                    "cannot create output directory " + dir_.string() + ": " + ec.message());
  const fs::path lock = dir_ / lock_name;
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  COSIM_INPUT_CHECK(lock_fd_ >= 0, errc::io,
                    "cannot create lock file " + lock.string() + ": " + os_error(errno));
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
  for (const char* stale : {"summary.json", "timing.csv", "trace.json", "report.html"}) {
    fs::remove(dir_ / stale, ec);
    COSIM_INPUT_CHECK(!ec, errc::io,
                      "cannot remove " + (dir_ / stale).string() + ": " + ec.message());
  }
}

void results_folder::write_atomically(const std::string& name, const std::string& text) const {
  const fs::path path = dir_ / name;
  const fs::path tmp = dir_ / (name + ".tmp");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  COSIM_INPUT_CHECK(fd >= 0, errc::io, "cannot write " + tmp.string() + ": " + os_error(errno));
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
  if (!closed || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = closed ? errno : close_errno;
    ::unlink(tmp.c_str());
    throw error(errc::io, "error writing " + path.string() + ": " + os_error(e));
  }
}

}  // namespace cosim::config
