#pragma once
// A diagnostic file the recording thread writes beside results.csv (timing.csv, trace.json).
// Every write is checked and the first OS error kept, and close() syncs the data, so a full
// disk or a file-size limit (EFBIG) shows as a failed run instead of a silently short file.
// Opened without following a symbolic link: a link planted in the results folder is refused
// rather than its target overwritten.
#include <cstdio>
#include <string>

namespace cosim::detail {

class observer_file {
 public:
  observer_file() = default;
  observer_file(const observer_file&) = delete;
  observer_file& operator=(const observer_file&) = delete;
  ~observer_file() { (void)close(); }

  /// Creates (truncates) path; false with failure() set if it cannot.
  bool open(const std::string& path);
  [[nodiscard]] bool is_open() const noexcept { return f_ != nullptr; }
  [[nodiscard]] std::FILE* get() const noexcept { return f_; }
  /// False once a write failed (stdio's error flag; checked after each batch of writes).
  [[nodiscard]] bool ok() noexcept;
  /// Flushes, fsyncs and closes; false (failure() set) if any of it failed. Idempotent.
  bool close() noexcept;
  /// "error writing PATH: REASON" once something failed, else empty.
  [[nodiscard]] const std::string& failure() const noexcept { return failure_; }

 private:
  void fail(int err) noexcept;
  std::FILE* f_ = nullptr;
  std::string path_;
  std::string failure_;
};

}  // namespace cosim::detail
