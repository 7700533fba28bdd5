#pragma once
// Models known to the scenario reader. Each model lists its subsystems (with default
// steps and integrator choices), reads its own [model] keys and builds the system.
#include <functional>
#include <string>
#include <vector>

#include "cosim/rt_config/config_reader.hpp"
#include "cosim/rt_config/scenario.hpp"

namespace cosim::config {

struct subsystem_spec {
  std::string name;
  /// Default internal step for macro step H [s].
  std::function<double(double H)> default_step;
  std::vector<std::string> integrators;  // first is the default
};

struct model_entry {
  std::string name;
  std::string description;
  std::vector<subsystem_spec> subsystems;  // in default scheme order
  /// Reads model.* keys into sc.options / sc.params (model.name is already read).
  std::function<void(config_reader&, scenario&)> read;
  std::function<void(const scenario&, built_scenario&)> build;
  std::vector<key_doc> keys;  // model-specific keys for --help and README
};

const std::vector<model_entry>& models();
const model_entry* find_model(const std::string& name);

// One function per model, defined in that model's own source file.
model_entry crane_model_entry();

/// Largest step <= limit that divides H exactly in nanoseconds.
double dividing_step(double H, double limit);
/// Checks that `value` is one of `allowed`, else fails naming the key.
void check_choice(config_reader& r, const std::string& key, const std::string& value,
                  const std::vector<std::string>& allowed);
void check_positive(config_reader& r, const std::string& key, double v);

}  // namespace cosim::config
