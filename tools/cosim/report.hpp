#pragma once
// `cosim report`: one self-contained HTML file (inline SVG, no script, no network) of a
// results folder: status, recorded columns over time (with a reference or a second run and
// the difference), the energy residual and |dP| against the safety limits, per-thread
// wake-up latency and step-time histograms, counters and the resolved configuration.
#include <string>

namespace cosim::cli {

struct report_request {
  std::string dir;        // results folder: results.csv and summary.json, timing.csv if any
  std::string reference;  // optional reference CSV (e.g. from cosim reference)
  std::string compare;    // optional second results folder
};

/// The report's HTML. Throws cosim::error naming the file on missing or malformed input.
std::string make_report(const report_request& req);

/// Writes DIR/report.html atomically (a temporary file renamed) and returns its path.
std::string write_report(const report_request& req);

}  // namespace cosim::cli
