#pragma once
// Subcommands of the cosim program. Each returns the process exit code:
// 0 completed, 1 run ended early (diverged or safety stop), 2 bad input or I/O error.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/executor.hpp"

namespace cosim::cli {

struct run_request {
  std::string scenario;
  std::vector<std::string> sets;
  std::string out_dir;
  bool quiet = false;
};

struct run_report {
  config::scenario sc;
  run_outcome outcome;
  std::string results_csv;
  std::string summary_json;
};

/// Loads, builds and runs a scenario, writing DIR/results.csv and DIR/summary.json.
/// Throws cosim::error on bad input before anything is written.
run_report run_scenario(const run_request& req, const std::atomic<bool>* stop_request);

int exit_code(const run_outcome& o) noexcept;

/// A subcommand: its CLI11 app (options bound to captured state) and what runs it.
struct command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};
/// Each subcommand registers itself; defined in <name>_command.cpp.
command add_run_command(CLI::App& app);
command add_compare_command(CLI::App& app);
command add_tune_command(CLI::App& app);  // tune_command.cpp (002 Sect. 2.4)
command add_reference_command(CLI::App& app);
command add_sweep_command(CLI::App& app);
command add_doctor_command(CLI::App& app);  // doctor_command.cpp (doctor.hpp)

/// Text listing every --set key (for help footers); keys_command.cpp.
std::string keys_help();
/// The same keys as a Markdown table (README.md's key table).
std::string keys_markdown();
command add_keys_command(CLI::App& app);

/// The process-wide stop flag set by SIGINT/SIGTERM.
std::atomic<bool>& operator_stop_flag() noexcept;
/// SIGINT, SIGTERM and SIGHUP set the flag (and remember which signal it was).
void install_signal_handlers();
/// "stop requested by the operator (SIGHUP)" for the last signal received.
std::string operator_stop_message();

}  // namespace cosim::cli
