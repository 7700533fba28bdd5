// cosim: run co-simulation scenarios and work with their results.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "commands.hpp"
#include "cosim/runtime/error.hpp"

int main(int argc, char** argv) {
  using namespace cosim::cli;
  CLI::App app{
      "cosim: real-time hardware-in-the-loop co-simulation runtime.\n"
      "Runs co-simulation scenarios (TOML files in rt_config/scenarios/) and works with their\n"
      "results. Exit codes: 0 completed, 1 run stopped early (diverged or safety stop; results\n"
      "up to the stop are kept), 2 bad input or I/O error (nothing that looks like a result is\n"
      "written)."};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  const std::vector<command> commands{add_run_command(app), add_compare_command(app),
                                      add_reference_command(app), add_sweep_command(app),
                                      add_tune_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    for (const auto& c : commands)
      if (c.app->parsed()) return c.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cosim: error: %s\n", e.what());
    return 2;
  }
  return 2;
}
