#pragma once
// Recorder that writes results as CSV: header row, comma-separated, SI units, numbers in
// the shortest form that reads back to the same double (so identical runs give
// byte-identical files). Rows are flushed to the OS every `flush_every` rows so that a
// crash loses at most that many.
#include <cstdio>
#include <string>

#include "cosim/runtime/executor.hpp"

namespace cosim {

class csv_writer final : public row_sink {
 public:
  /// Opens (truncates) the file; throws cosim::error (io) naming the path on failure.
  explicit csv_writer(const std::string& path, std::int64_t flush_every = 1000);
  ~csv_writer() override;

  void begin(std::span<const std::string> columns) override;
  void write(std::span<const double> row) noexcept override;
  void end() override;
  [[nodiscard]] bool failed() const noexcept { return failed_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::int64_t flush_every_;
  std::int64_t rows_ = 0;
  bool failed_ = false;
  char line_[4096];
};

}  // namespace cosim
