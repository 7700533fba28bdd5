#pragma once
// cosim tune's options: the command line (tune_options.cpp registers the arguments and the
// --help text), the scenario's [tune] table under them, the defaults that depend on the
// scenario, and their validation. Also the small helpers the search (tune_search.cpp) and
// the largest-step search (tune_largest_step.cpp) share.
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "progress.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace cosim::cli::tune {

struct tune_options {
  double H_ini = 1e-3;  // 002 Table 4: H_ini = 1 ms
  double H_inc = 1e-3;
  double H_max = 0.03;
  std::vector<std::string> test_inputs{"step", "ramp", "impulse", "sine"};
  std::vector<double> sine_frequencies{2.0, 10.0};  // [Hz]
  double amplitude = 0.01;                          // valve-command increment
  double width = 0.1;                               // impulse width [s]
  double duration = 1.0;                            // 002 Sect. 2.4.1: 1-s tests
  std::vector<int> orders{0, 1, 2, 3, 4};
  std::vector<std::string> interfaces;     // default: scenario's, plus rim if possible
  std::vector<std::string> schemes;        // default: the scenario's
  std::vector<std::string> force_outputs;  // default: sample (rim only)
  /// none, feedthrough (coupling.feedthrough_correction; direct Jacobi only). Default: the
  /// scenario's.
  std::vector<std::string> corrections;
  std::map<std::string, std::vector<std::string>> integrators;  // default: the scenario's
  double linear_factor = 2.0;
  // --largest-step
  double fine_step = 5e-5;  // 003 Sect. 4 reference step
  double tolerance = 2e-3;  // [m]
  std::vector<std::string> manoeuvres{"M1", "M2"};
  std::string column;  // default: s, else s_1
};

struct cli_overrides {
  std::optional<double> H_ini, H_inc, H_max, factor, tolerance;
  std::vector<int> orders;
  std::vector<std::string> interfaces, test_inputs, schemes, manoeuvres, corrections;
};

struct tune_request {
  std::string scenario;
  std::vector<std::string> sets;
  std::string out;
  int jobs = 0;
  bool largest_step = false;
  cli_overrides cli;
  progress_mode progress = progress_mode::automatic;
};

/// Adds the `tune` subcommand with its arguments (bound to `req`) and help text.
CLI::App* add_tune_arguments(CLI::App& app, tune_request& req);

/// Reads [tune] (after --set overrides), then the command-line options on top; fills the
/// defaults that depend on the scenario. Throws cosim::error naming the key and value.
tune_options read_options(const tune_request& req, const config::scenario& sc);

// ---- Shared by the search and the largest-step search ---------------------------------

inline constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();

/// Shortest round-trip text of v; nan, inf, -inf.
std::string num(double v);
/// A TOML string literal.
std::string toml_string(const std::string& s);
/// "KEY=VALUE" for --set.
std::string set(const std::string& key, const std::string& value);
/// Throws cosim::error (config_value) with `what`.
[[noreturn]] void refuse(const std::string& what);

/// The grid H_ini, H_ini + H_inc, ... <= H_max, rounded to whole nanoseconds.
std::vector<double> h_grid(const tune_options& o);
/// Equal grid steps (relative 1e-9).
bool same_h(double a, double b);

/// Whether a result sits at an end of the searched grid, where the grid, not the system,
/// may have decided it.
struct bound_note {
  std::string at;       // "", "H_max" or "H_ini"
  std::string message;  // empty when not at a bound
};
/// "at_bound" (null or the bound) and "bound_message".
void write_bound(json_writer& j, const bound_note& b);

/// Writes `text` to `path`; throws cosim::error (io) naming the file.
void write_text(const std::filesystem::path& path, const std::string& text);

}  // namespace cosim::cli::tune
