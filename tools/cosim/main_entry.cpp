// The cosim program's entry (commands.hpp): every subcommand and the global options. A library
// function rather than main(), so that the CLI tests run the very same parse in-process.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "commands.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/rt_log.hpp"
#include "cosim/runtime/version.hpp"

namespace cosim::cli {

namespace {

/// One line per command in `cosim --help`, in plain words; the command's own --help keeps its
/// whole description (paper references, formulas, options).
const std::map<std::string, std::string>& one_liners() {
  static const std::map<std::string, std::string> lines{
      {"run", "Run a scenario, system file or SSP; writes DIR/results.csv and DIR/summary.json"},
      {"report", "Write DIR/report.html: plots of a run's results, energy and timing"},
      {"compare", "Compare two results.csv files column by column (max and RMS difference)"},
      {"keys", "List every key a scenario or system file reads, with its meaning"},
      {"types", "List the subsystem types, their parameters (units, defaults) and ports"},
      {"inspect", "Show what an FMU or SSP contains: variables, ports, experiment"},
      {"reference", "Write a ground-truth solution to compare a run with"},
      {"sweep", "Run a scenario once per value of one key, in parallel"},
      {"tune", "Search the coupling settings and macro step that keep a scenario accurate"},
      {"doctor", "Check whether this host can run in real time, and what to change"},
      {"worker", "Run a subsystem for a master in another process (docs/distributed.md)"},
  };
  return lines;
}

/// Gives each command its one line in the command list and moves its full description to the
/// end of its own --help.
void shorten_descriptions(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    const std::string full = sub->get_description();
    std::string line;
    if (const auto it = one_liners().find(sub->get_name()); it != one_liners().end()) {
      line = it->second;
    } else {
      const auto end = full.find_first_of(".\n");
      line = full.substr(0, end);
    }
    if (line == full) continue;
    const std::string footer = sub->get_footer();
    sub->description(line);
    sub->footer(full + (footer.empty() ? "" : "\n\n" + footer));
  }
}

}  // namespace

int main_entry(int argc, char** argv) {
  CLI::App app{
      "cosim: real-time hardware-in-the-loop co-simulation runtime.\n"
      "First steps: `cosim run FILE.toml --out DIR` runs a scenario (rt_config/scenarios/) or a\n"
      "system file (rt_config/systems/); `cosim report DIR` plots it; `cosim keys` and `cosim\n"
      "types` list what a file may say. `cosim COMMAND --help` explains a command in full.\n"
      "Documentation: README.md and docs/ (docs/tools.md: every command; docs/systems.md:\n"
      "writing a system file).\n"
      "Exit codes: 0 completed; 1 the run stopped early (diverged, safety stop, model error;\n"
      "the results up to the stop are kept); 2 bad input or I/O error (the message names the\n"
      "file, key or option); 3 a subsystem did not return and was abandoned."};
  app.require_subcommand(1);
  app.set_version_flag("--version", cosim::version_line("cosim"),
                       "Print the version, commit, build type and compiler, and exit");
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
  shorten_descriptions(app);
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
