#pragma once
// Subcommands of the cosim program. Each returns the process exit code:
// 0 completed, 1 run ended early (diverged or safety stop), 2 bad input or I/O error.
#include <functional>
#include <string>
#include <vector>

#include "cosim/rt_config/run.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/executor.hpp"
#include "cosim/runtime/stop_source.hpp"

// CLI11 is declared, not included: its header costs every file that includes it about 3 s to
// parse and 14 s to compile under the sanitizers (global validator objects), so only the files
// that build options include <CLI/CLI.hpp>.
namespace CLI {
class App;
}  // namespace CLI

namespace cosim::cli {

// The run entry lives in the library (rt_config/run.hpp).
using config::exit_code;
using config::run_report;
using config::run_request;
using config::run_scenario;

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
command add_doctor_command(CLI::App& app);   // doctor_command.cpp (doctor.hpp)
command add_types_command(CLI::App& app);    // types_command.cpp (type_registry.hpp)
command add_inspect_command(CLI::App& app);  // inspect_command.cpp (an FMU's declarations)
// report_command.cpp (report.hpp)
command add_report_command(CLI::App& app);
command add_worker_command(CLI::App& app);  // worker_command.cpp (docs/distributed.md)
command add_check_command(CLI::App& app);   // check_command.cpp (docs/ci.md)

/// Text listing every --set key (for help footers); keys_command.cpp.
std::string keys_help();
/// The same keys as a Markdown table (README.md's key table).
std::string keys_markdown();
command add_keys_command(CLI::App& app);

/// `cosim ARGS...` (argv[0] is the program's name): every subcommand, the global options, the
/// documented exit codes. main() is this; the CLI tests call it in-process.
int main_entry(int argc, char** argv);

/// The process-wide operator stop source: every run links its own source to it.
stop_source& operator_stop() noexcept;
/// SIGINT, SIGTERM and SIGHUP raise it (operator_signal, with the signal number, so the
/// run's message names the signal).
void install_signal_handlers();

}  // namespace cosim::cli
