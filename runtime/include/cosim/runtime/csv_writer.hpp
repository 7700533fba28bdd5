#pragma once
// Recorder that writes results as CSV: header row, comma-separated, SI units, numbers in
// the shortest form that reads back to the same double (so identical runs give
// byte-identical files). Rows go to the OS every `flush_every` rows, at least once a second
// of wall time (a slow realtime run's file grows as it runs: `tail -f` sees it) and whenever
// the buffer fills, so that a kill -9 loses at most that many. A crash of the process while
// the file is open (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, e.g. inside an FMU) or an
// exit() from inside a run (an FMU calling exit) loses none: the rows completed so far are
// written by the signal / exit handler before the process ends, with a line on stderr.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cosim/runtime/executor.hpp"

namespace cosim {

/// A header field as RFC 4180 writes it: quoted (with "" for ") when it holds ',' or '"'
/// (an FMU variable "a[1,2]", an alias) or starts or ends with a space, else as is. A line
/// break cannot be written.
[[nodiscard]] std::string csv_header_field(const std::string& name);
/// The fields of a CSV header line, RFC 4180 quotes undone; leading and trailing spaces of
/// an unquoted field are dropped, and a trailing '\r' (CRLF line ends) is ignored.
[[nodiscard]] std::vector<std::string> csv_header_fields(const std::string& line);

class csv_writer final : public row_sink {
 public:
  /// Remembers the path only: the file is created (truncated) by begin(), once the
  /// executor has validated and allocated everything, so a run that fails to start never
  /// touches an earlier run's results.
  explicit csv_writer(const std::string& path, std::int64_t flush_every = 1000);
  ~csv_writer() override;
  csv_writer(const csv_writer&) = delete;
  csv_writer& operator=(const csv_writer&) = delete;

  /// prepare() then open().
  void begin(std::span<const std::string> columns) override;
  /// Checks the columns and allocates the buffer, without touching the file: throws
  /// cosim::error (config_value) naming a column that appears twice or holds a line break.
  void prepare(std::span<const std::string> columns);
  /// Creates (truncates) the file, never through a symbolic link, and writes the header
  /// (after prepare()); throws cosim::error (io) naming the path.
  void open();
  void write(std::span<const double> row) noexcept override;
  /// Flushes, fsyncs and closes the file. Never throws: a failed write (full disk, file size
  /// limit) shows in failed() and failure(), so the caller can still report the run that
  /// produced the rows.
  void end() override;
  [[nodiscard]] bool failed() const noexcept override { return failed_; }
  /// "error writing PATH: REASON" after a failure, else empty.
  [[nodiscard]] std::string failure() const;

  /// For the crash and exit handlers only (async-signal-safe): writes the completed rows
  /// not yet written and returns the rows in the file.
  std::int64_t flush_for_crash() noexcept;

 private:
  void fail() noexcept;
  /// Writes the completed rows (write(2) until done); false on an OS error.
  bool flush_buffer() noexcept;

  std::string path_;
  int fd_ = -1;
  std::int64_t flush_every_;
  std::int64_t rows_ = 0;
  std::int64_t last_flush_ns_ = 0;  // CLOCK_MONOTONIC_COARSE of the last write to the OS
  bool failed_ = false;
  int errno_ = 0;  // first OS error seen
  // Rows formatted but not yet written. buf_[0, committed_) holds whole rows only; whoever
  // takes them (the writer's flush or a crash handler) exchanges committed_ for 0 first, so
  // no row is written twice and a handler never writes a half-formatted row.
  std::vector<char> buf_;
  std::size_t used_ = 0;
  std::atomic<std::size_t> committed_{0};
  std::atomic<std::int64_t> rows_written_{0};
  std::size_t line_max_ = 0;  // longest possible row, from the column count
};

}  // namespace cosim
