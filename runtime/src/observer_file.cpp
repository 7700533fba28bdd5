#include "observer_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "cosim/runtime/errno_text.hpp"

namespace cosim::detail {

bool observer_file::open(const std::string& path) {
  (void)close();
  path_ = path;
  failure_.clear();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int e = errno;
    failure_ = "cannot write " + path + ": " +
               (e == ELOOP ? std::string("it is a symbolic link (not followed)") : errno_text(e));
    return false;
  }
  f_ = ::fdopen(fd, "w");
  if (f_ == nullptr) {
    failure_ = "cannot write " + path + ": " + errno_text(errno);
    ::close(fd);
    return false;
  }
  return true;
}

void observer_file::fail(int err) noexcept {
  if (!failure_.empty()) return;
  try {
    failure_ = "error writing " + path_ + ": " + errno_text(err);
  } catch (...) {
    // Out of memory while describing it: ok() and close() still return false.
  }
}

bool observer_file::ok() noexcept {
  if (f_ == nullptr) return failure_.empty();
  if (std::ferror(f_) != 0) fail(errno != 0 ? errno : EIO);
  return failure_.empty();
}

bool observer_file::close() noexcept {
  if (f_ == nullptr) return failure_.empty();
  (void)ok();
  if (std::fflush(f_) != 0) fail(errno);
  if (::fsync(::fileno(f_)) != 0) fail(errno);
  if (std::fclose(f_) != 0) fail(errno);
  f_ = nullptr;
  return failure_.empty();
}

}  // namespace cosim::detail
