// The cosim program's entry (commands.hpp): every subcommand and the global options. A library
// function rather than main(), so that the CLI tests run the very same parse in-process.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "commands.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/rt_log.hpp"

namespace cosim::cli {

int main_entry(int argc, char** argv) {
  CLI::App app{
      "cosim: real-time hardware-in-the-loop co-simulation runtime.\n"
      "Runs co-simulation scenarios (TOML files in rt_config/scenarios/) and works with their\n"
      "results. Exit codes: 0 completed, 1 run stopped early (diverged, safety stop or a model\n"
      "error; results up to the stop are kept), 2 bad input or I/O error (the message names the\n"
      "file, key or option)."};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  std::string log_level = "info";
  auto* level = app.add_option("--log-level", log_level,
                               "Runtime log lines shown: trace, debug, info, warn, error or off "
                               "(default info; they go to stderr)")
                    ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_flag_callback(
         "--quiet,-q", [&log_level] { log_level = "error"; },
         "Same as --log-level error: no overrun or other warnings (summary.json "
         "and timing.csv keep them)")
      ->excludes(level);
  app.fallthrough();  // the options above also work after the subcommand
  const std::vector<command> commands{
      add_run_command(app),    add_compare_command(app), add_reference_command(app),
      add_sweep_command(app),  add_tune_command(app),    add_doctor_command(app),
      add_keys_command(app),   add_types_command(app),   add_inspect_command(app),
      add_report_command(app), add_worker_command(app),  add_check_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  cosim::configure_runtime_log(*cosim::parse_log_level(log_level));
  try {
    for (const auto& c : commands)
      if (c.app->parsed()) return c.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cosim: error: %s\n", e.what());
    return 2;
  }
  return 2;
}

}  // namespace cosim::cli
