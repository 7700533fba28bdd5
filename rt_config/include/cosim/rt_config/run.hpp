#pragma once
// The library's one run entry: loads and checks a scenario, builds its system, runs it with
// the executor its run mode names (offline, threaded or realtime), and writes the results
// folder (results_folder.hpp): DIR/results.csv streamed, DIR/summary.json atomically last.
#include <functional>
#include <string>
#include <vector>

#include "cosim/rt_config/provenance.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/executor.hpp"

namespace cosim {
class timing_observer;  // threaded_executor.hpp
}

namespace cosim::config {

struct run_request {
  std::string scenario;           // scenario file
  std::vector<std::string> sets;  // --set KEY=VALUE overrides
  std::string out_dir;            // results folder
  bool quiet = false;
  /// Optional, not owned: receives every row results.csv receives, so that a caller judging
  /// the run in memory (cosim sweep) need not read results.csv back.
  row_sink* also = nullptr;
  /// Optional, not owned: the threaded executor's live per-thread timing (cosim run
  /// --serve); offline runs have no threads and ignore it.
  timing_observer* observer = nullptr;
  /// Optional: called when the run's supervisor abandoned a subsystem stuck inside its step
  /// (watchdog.grace), after the rows and summary.json are durable and just before the
  /// process ends with exit_abandoned (run_scenario never returns then). Prints the result.
  std::function<void(const struct run_report&)> on_abandon;
};

struct run_report {
  scenario sc;
  run_outcome outcome;
  std::string results_csv;
  std::string summary_json;
  std::string started_at;  // UTC, ISO 8601: when the executor was started
  host_info host;          // the machine the run ran on (provenance.hpp)
};

/// Throws cosim::error (config_*) on bad input before the results folder is touched, and
/// (io) when the folder is locked by another run or the results cannot be written; then
/// no summary.json marks the run as finished.
/// `stop` (optional, not owned): the operator's stop source, checked once per macro step;
/// causes raised during the run (drivers, safety limits) stay in the run.
run_report run_scenario(const run_request& req, const stop_source* stop);

/// 0 completed, 1 stopped early (diverged, safety stop, operator signal), 2 error; a run
/// whose supervisor abandoned a stuck subsystem ends the process with exit_abandoned (3).
int exit_code(const run_outcome& o) noexcept;

}  // namespace cosim::config
