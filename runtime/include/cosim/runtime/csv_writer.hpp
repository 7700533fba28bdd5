#pragma once
// Recorder that writes results as CSV: header row, comma-separated, SI units, numbers in
// the shortest form that reads back to the same double (so identical runs give
// byte-identical files). Rows are flushed to the OS every `flush_every` rows so that a
// crash loses at most that many.
#include <cstdio>
#include <string>
#include <vector>

#include "cosim/runtime/executor.hpp"

namespace cosim {

class csv_writer final : public row_sink {
 public:
  /// Remembers the path only: the file is created (truncated) by begin(), once the
  /// executor has validated and allocated everything, so a run that fails to start never
  /// touches an earlier run's results.
  explicit csv_writer(const std::string& path, std::int64_t flush_every = 1000);
  ~csv_writer() override;

  /// Opens the file and writes the header; throws cosim::error (io) naming the path.
  void begin(std::span<const std::string> columns) override;
  void write(std::span<const double> row) noexcept override;
  /// Flushes. Never throws: a failed write (full disk, file size limit) shows in failed()
  /// and failure(), so the caller can still report the run that produced the rows.
  void end() override;
  [[nodiscard]] bool failed() const noexcept override { return failed_; }
  /// "error writing PATH: REASON" after a failure, else empty.
  [[nodiscard]] std::string failure() const;

 private:
  void fail() noexcept;

  std::string path_;
  std::FILE* file_ = nullptr;
  std::int64_t flush_every_;
  std::int64_t rows_ = 0;
  bool failed_ = false;
  int errno_ = 0;  // first OS error seen
  // One row's text, sized by begin() for the column count (allocation-free in write()).
  std::vector<char> line_;
};

}  // namespace cosim
