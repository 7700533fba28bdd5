#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "report.hpp"

namespace cosim::cli {

command add_report_command(CLI::App& app) {
  auto req = std::make_shared<report_request>();
  auto* cmd = app.add_subcommand(
      "report",
      "Write DIR/report.html: one self-contained page (no network access) with the run's\n"
      "status and stop time, every column of results.csv over time, the energy residual and\n"
      "|dP| against the safety limits, per-thread wake-up latency and step-time histograms\n"
      "(from timing.csv, run.timing_csv = true), counters and the resolved configuration.\n"
      "Plots keep each pixel column's minimum and maximum, so no spike is lost.");
  cmd->add_option("dir", req->dir, "Results folder (results.csv, summary.json)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--reference", req->reference,
                  "Reference CSV overlaid on the columns it shares, with the difference")
      ->check(CLI::ExistingFile);
  cmd->add_option("--compare", req->compare,
                  "Second results folder overlaid on the columns it shares, with the difference")
      ->check(CLI::ExistingDirectory);
  return {cmd, [req] {
            if (!req->reference.empty() && !req->compare.empty()) {
              std::fprintf(stderr, "cosim report: give --reference or --compare, not both\n");
              return 2;
            }
            std::printf("%s\n", write_report(*req).c_str());
            return 0;
          }};
}

}  // namespace cosim::cli
