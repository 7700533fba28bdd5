#pragma once
// Scenario schema: plain structs with defaults, filled and validated once from TOML.
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cosim/runtime/executor.hpp"
#include "cosim/runtime/system.hpp"

namespace cosim::config {

struct model_config {
  std::string name = "crane";         // crane
  std::string coupling = "f-s";       // f-s | p-s
  std::string manoeuvre = "M1";       // M1 | M2 | hold
};

struct run_config {
  std::string mode = "offline";       // offline (threaded, realtime: runtime issue)
  double duration = 10.0;             // [s]
  double macro_step = 1e-3;           // H [s]
  std::string scheme = "jacobi";      // jacobi | gauss-seidel
  std::vector<std::string> order;     // Gauss-Seidel order (subsystem names)
  double output_interval = 0.0;       // [s]; 0 = every macro step
};

struct subsystem_config {
  double step = 0.0;                  // [s], resolved
  bool step_set = false;              // explicitly given
  std::string integrator;
};

struct coupling_config {
  int extrapolation = 0;              // polynomial order 0-4 for every coupling input
};

struct safety_config {
  double energy_residual_limit = std::numeric_limits<double>::infinity();  // [J]
  double residual_power_limit = std::numeric_limits<double>::infinity();   // [W]
};

struct scenario {
  std::string file;
  model_config model;
  run_config run;
  subsystem_config multibody;
  subsystem_config hydraulics;
  coupling_config coupling;
  safety_config safety;
};

/// Reads and validates a scenario file with --set overrides applied. Throws cosim::error
/// naming file, line, key and value.
scenario load_scenario(const std::string& path, const std::vector<std::string>& sets = {});
scenario parse_scenario(const std::string& text, const std::string& name,
                        const std::vector<std::string>& sets = {});

/// Every key `--set` accepts, with a one-line description (for README and --help).
struct key_doc {
  const char* key;
  const char* doc;
};
const std::vector<key_doc>& documented_keys();

/// The system, its plan and safety limits, ready for an executor.
struct built_scenario {
  system sys;
  run_plan plan;
  safety_limits limits;
  std::vector<std::unique_ptr<signal_source>> sources;
};
std::unique_ptr<built_scenario> build(const scenario& sc);

/// The resolved configuration as a JSON object (for summary.json).
std::string to_json(const scenario& sc);

}  // namespace cosim::config
