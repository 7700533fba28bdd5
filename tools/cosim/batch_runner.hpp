#pragma once
// The batch runner of cosim tune and cosim sweep: many runs of one scenario file, each with
// its own --set overrides, in this process and in parallel. Each run is loaded and built in
// memory (no scenario file is written for it) and its rows go to an in-memory table, so the
// caller computes errors from the rows themselves, never from a results.csv read back.
// Optionally a run also writes a results folder exactly as `cosim run --out DIR` does.
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "commands.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI
#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/executor.hpp"
#include "csv_table.hpp"
#include "progress.hpp"

namespace cosim::cli {

/// Rows of a run kept in memory: the column names and the values row after row in one
/// array (one allocation for the run, not one per row).
struct row_table {
  std::string path;  // where the same rows were written, or "(in memory)"
  std::vector<std::string> columns;
  std::vector<double> values;  // row-major: row i is values[i * width, (i + 1) * width)

  [[nodiscard]] std::size_t width() const noexcept { return columns.size(); }
  [[nodiscard]] std::size_t rows() const noexcept {
    return columns.empty() ? 0 : values.size() / columns.size();
  }
  [[nodiscard]] double at(std::size_t row, std::size_t col) const noexcept {
    return values[row * columns.size() + col];
  }
  /// The same rows as a csv_table (for compare() and the error measures).
  [[nodiscard]] csv_table to_csv_table() const;
};

/// Keeps recorded rows in memory: every column, or t and the named ones. Storage failure
/// (out of memory) shows in failed(), which stops the run (output_error).
class memory_sink final : public row_sink {
 public:
  /// Every column.
  memory_sink() = default;
  /// t and `columns` (in this order); columns the run does not record are listed by missing().
  explicit memory_sink(std::vector<std::string> columns);

  /// Room for n rows up front (the run's expected row count), so that write() rarely grows.
  void reserve_rows(std::size_t n) { rows_hint_ = n; }
  void begin(std::span<const std::string> columns) override;
  void write(std::span<const double> row) noexcept override;
  void end() override {}
  [[nodiscard]] bool failed() const noexcept override { return failed_; }

  [[nodiscard]] const std::vector<std::string>& missing() const noexcept { return missing_; }
  [[nodiscard]] row_table take() { return std::move(table_); }

 private:
  bool all_ = true;
  std::vector<std::string> wanted_;
  std::vector<std::size_t> index_;  // source column of each kept column
  std::vector<std::string> missing_;
  std::size_t rows_hint_ = 0;
  row_table table_;
  bool failed_ = false;
};

/// One run of a batch.
struct batch_run {
  std::vector<std::string> sets;  // --set KEY=VALUE on top of the scenario file
  /// Non-empty: the run also writes this results folder (results.csv, summary.json), as
  /// `cosim run --out` does, with the executor of the scenario's run mode. Empty: nothing
  /// is written and the run is offline (deterministic, as fast as possible).
  std::string out_dir;
  /// Rows kept in memory: none, t and `columns`, or every column (all_columns).
  bool all_columns = false;
  std::vector<std::string> columns;
};

struct batch_result {
  bool started = false;
  /// completed | diverged | safety_stop | error (the executor's status), interrupted (an
  /// operator signal stopped it), or error with stop_reason bad_input (load, build or the
  /// results folder failed; message says why).
  std::string status = "error";
  std::string stop_reason = "bad_input";
  std::string message;
  std::optional<run_outcome> outcome;  // once the executor ran
  std::optional<config::scenario> sc;  // the scenario as run, once it loaded
  row_table rows;                      // path: the folder's results.csv, or "(in memory)"
  std::vector<std::string> missing;    // requested columns the run does not record
  double wall_s = 0.0;                 // load, build and run
};

/// One run, in this thread. Never throws: failures are in the result. `stop` ends the run
/// within a macro step (status interrupted).
batch_result run_one(const std::string& scenario, const batch_run& run,
                     const stop_source& stop = operator_stop());

/// Calls job(0..n-1) on up to `jobs` threads (this one included); after `stop` is set no
/// further job starts.
void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& job,
                  const stop_source& stop = operator_stop());

/// Called on the worker thread as soon as run i has finished, e.g. to compute its errors
/// in parallel and drop its rows.
using batch_done = std::function<void(std::size_t i, batch_result& result)>;

/// Every run of `runs` with run_one on `jobs` threads; `done` (optional) sees each result
/// first, then `bar` (optional) advances by one. After `stop` no further run starts: those
/// keep started = false.
std::vector<batch_result> run_batch(const std::string& scenario, const std::vector<batch_run>& runs,
                                    int jobs, progress* bar = nullptr, const batch_done& done = {},
                                    const stop_source& stop = operator_stop());

/// --jobs 0 (unset): one per hardware thread.
int default_jobs();

/// Adds --jobs N to `cmd`: a whole number >= 0, 0 meaning one job per hardware thread.
void add_jobs_option(CLI::App& cmd, int& jobs);

/// Refuses an empty value (e.g. --out ''), which would otherwise silently mean the default.
CLI::Option* non_empty(CLI::Option* opt);

}  // namespace cosim::cli
