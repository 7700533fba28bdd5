// cosim: run co-simulation scenarios and compare their results.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "cosim/runtime/error.hpp"
#include "csv_table.hpp"

namespace {

using namespace cosim;
using namespace cosim::cli;

std::string keys_help() {
  std::string s = "Keys accepted by --set (see README.md):\n";
  for (const auto& k : config::documented_keys()) {
    s += "  " + k.key;
    s.append(k.key.size() < 32 ? 32 - k.key.size() : 1, ' ');
    s += k.doc;
    s += '\n';
  }
  return s;
}

int do_run(const run_request& req) {
  install_signal_handlers();
  const run_report rep = run_scenario(req, &operator_stop_flag());
  const run_outcome& o = rep.outcome;
  std::printf("%s: %s (%s) after %.6g s simulated in %.3g s wall, %lld macro steps\n",
              req.scenario.c_str(), to_string(o.status), o.stop_reason.c_str(), o.sim_time_s,
              o.wall_time_s, static_cast<long long>(o.macro_steps));
  if (!o.message.empty()) std::printf("  %s\n", o.message.c_str());
  std::printf("  energy residual sum|dE| = %.6g J, max |dP| = %.6g W\n", o.energy_residual,
              o.max_residual_power);
  std::printf("  results: %s\n  summary: %s\n", rep.results_csv.c_str(), rep.summary_json.c_str());
  return exit_code(o);
}

int do_compare(const std::string& a_path, const std::string& b_path, std::vector<std::string> cols) {
  const csv_table a = read_csv(a_path);
  const csv_table b = read_csv(b_path);
  if (cols.empty()) {
    for (std::size_t i = 1; i < b.columns.size(); ++i)
      if (a.column(b.columns[i]) >= 0) cols.push_back(b.columns[i]);
  }
  const auto diffs = compare(a, b, cols);
  std::printf("%-14s %14s %14s %12s %8s\n", "column", "max_abs", "rms", "t_at_max", "samples");
  for (const auto& d : diffs)
    std::printf("%-14s %14.6e %14.6e %12.6g %8zu\n", d.column.c_str(), d.max_abs, d.rms, d.t_at_max,
                d.samples);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "cosim: real-time hardware-in-the-loop co-simulation runtime.\n"
      "Runs co-simulation scenarios (TOML files in rt_config/scenarios/) and compares results.\n"
      "Exit codes: 0 run completed, 1 run stopped early (diverged or safety stop; results up to\n"
      "the stop are kept), 2 bad input or I/O error (nothing that looks like a result is written)."};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");

  run_request req;
  auto* run = app.add_subcommand(
      "run",
      "Run a scenario. Writes DIR/results.csv (one row per macro step or per output interval)\n"
      "and DIR/summary.json (status, stop reason, timing, energy residuals, resolved config).");
  run->add_option("scenario", req.scenario, "Scenario TOML file")->required()->check(CLI::ExistingFile);
  run->add_option("--set", req.sets, "Override a scenario key, e.g. --set run.macro_step=0.01 (repeatable)")
      ->type_name("KEY=VALUE");
  run->add_option("--out", req.out_dir, "Output directory (default: results/<scenario name>)");
  run->footer(keys_help());

  std::string a_path, b_path;
  std::vector<std::string> columns;
  auto* cmp = app.add_subcommand(
      "compare",
      "Compare two results.csv files: max and RMS differences of each column on the time grid\n"
      "of B, with A linearly interpolated to B's times.");
  cmp->add_option("a", a_path, "First CSV (interpolated)")->required()->check(CLI::ExistingFile);
  cmp->add_option("b", b_path, "Second CSV (its time grid is used)")->required()->check(CLI::ExistingFile);
  cmp->add_option("--columns", columns, "Columns to compare (default: all common columns)")
      ->delimiter(',');

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (run->parsed()) {
      if (req.out_dir.empty())
        req.out_dir = "results/" + std::filesystem::path(req.scenario).stem().string();
      return do_run(req);
    }
    if (cmp->parsed()) return do_compare(a_path, b_path, columns);
  } catch (const cosim::error& e) {
    std::fprintf(stderr, "cosim: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cosim: error: %s\n", e.what());
    return 2;
  }
  return 2;
}
