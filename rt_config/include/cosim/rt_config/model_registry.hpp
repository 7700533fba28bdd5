#pragma once
// Models known to the scenario reader. Each model lists its subsystems (with default
// steps and integrator choices), reads its own [model] keys and builds the system.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cosim/rt_config/config_reader.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/subsystems/oscillator.hpp"

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
  /// Expands the preset into the open description (system_spec.hpp): its subsystems by
  /// registered type, initialisation steps, connections, bonds, sources and columns.
  std::function<system_spec(const scenario&)> expand;
  /// Transitional: models not yet expanded build their system directly.
  std::function<void(const scenario&, built_scenario&)> build;
  std::vector<key_doc> keys;  // model-specific keys for --help and README
  /// Optional: run.macro_step when the file omits it (e.g. 004: H = h2 follows FR).
  std::function<double(const scenario&)> default_macro_step;
  /// The key default_macro_step follows (004: model.fr), named when that default is wrong.
  std::string default_macro_step_key;
  /// Optional: the subsystems with run.delivery = "fast-step" (sc.run.fast_step is set),
  /// when their default steps differ (004: H = h1, the slow mass steps h2 = FR h1).
  std::function<std::vector<subsystem_spec>(const scenario&)> fast_step_subsystems;
  /// Reads model.interface: its multibody can output the effective mass matrix and force
  /// (001 Eqs. (12)-(13)) that a reduced interface model (RIM) needs.
  bool reduced_interface = false;
};

const std::vector<model_entry>& models();
const model_entry* find_model(const std::string& name);

// One function per model, defined in that model's own source file.
model_entry crane_model_entry();
model_entry crane2_model_entry();                // 001 Sect. 4.1.1
model_entry oscillator2_model_entry();           // 000 App. A.1
model_entry oscillator3_model_entry();           // 000 App. A.2
model_entry oscillator_nonlinear_model_entry();  // 000 App. A.3
model_entry oscillator004_model_entry();         // 004 Sect. 3
/// The monolithic system behind an oscillator scenario (closed forms, error measures);
/// nullopt for other models. Columns: x1..xn, v1..vn.
std::optional<osc::oscillator_definition> oscillator_definition_of(const scenario& sc);

/// Reads [threads.*], [watchdog] and run.ring_capacity / run.lock_memory / run.timing_csv.
void read_realtime(config_reader& r, scenario& sc);

/// Largest step <= limit that divides H exactly in nanoseconds.
double dividing_step(double H, double limit);
/// Checks that `value` is one of `allowed`, else fails naming the key.
void check_choice(config_reader& r, const std::string& key, const std::string& value,
                  const std::vector<std::string>& allowed);
void check_positive(config_reader& r, const std::string& key, double v);

}  // namespace cosim::config
