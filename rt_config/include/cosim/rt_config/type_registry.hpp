#pragma once
// Registered subsystem types and initialisation steps: what a system file may name in
// `type = "..."` and `[[initialization]] type = "..."`. Each type declares its parameters
// (name, unit, default, range), its integrators and its default step; its ports are those
// of an instance (`cosim types NAME` builds one with the defaults and lists them).
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cosim/rt_config/system_spec.hpp"
#include "cosim/runtime/subsystem.hpp"

namespace cosim::config {

enum class param_kind { real, integer, boolean, text, reals, texts };
const char* to_string(param_kind k) noexcept;

/// What the builder tells a type's prepare(): the run's length and the subsystem's options
/// from its system file section (FMUs).
struct prepare_options {
  double run_length = 0.0;                 // [s], whole macro steps
  bool refuse_changed_parameters = false;  // subsystems.NAME.changed_parameters = "refuse"
  bool no_feedthrough = false;             // subsystems.NAME.no_feedthrough
  bool probe_feedthrough = false;          // subsystems.NAME.probe_feedthrough
};

struct param_decl {
  std::string name;
  param_kind kind = param_kind::real;
  std::string unit;  // "" for dimensionless or non-numbers
  std::string doc;   // one line, with the paper reference
  param_value def;   // default (of the declared kind)
  /// Range of a real/integer (each element of a list): min <= v <= max, or min < v when
  /// min_exclusive.
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  std::vector<std::string> choices;  // text: allowed values (empty: any)
  /// Written by an initialisation step (start values); a file may set it only when no
  /// initialisation step of the system writes it.
  bool start_value = false;
  /// Non-empty: the parameter is declared (listed by `cosim types`) but cannot be set, for
  /// this reason (an FMU's string or array parameter); a file that sets it is refused so.
  std::string not_settable;
};

struct subsystem_type {
  std::string name;         // "crane.multibody"
  std::string description;  // one line, with the paper reference
  std::vector<param_decl> parameters;
  std::vector<std::string> integrators;  // first is the default
  /// Internal step [s] when the file gives none, for macro step H [s] and the resolved
  /// parameters.
  std::function<double(double H, const param_set&)> default_step;
  /// Input -> parameter holding its start value; manoeuvres and test inputs on that input
  /// are offsets to it (e.g. the crane's valve command kappa -> kappa0).
  std::map<std::string, std::string> start_params;
  /// Input -> its start value where no parameter holds it (an FMU input's start in
  /// modelDescription.xml); manoeuvres and test inputs on that input are offsets to it.
  std::map<std::string, double> input_starts;
  /// Builds an instance from resolved parameters (every declared one present, checked).
  std::function<std::unique_ptr<subsystem>(const std::string& name, const param_set& p,
                                           const std::string& integrator)>
      create;
  /// Optional: an instance with the ports, variables and step create() would give, whose
  /// model is not started (an FMU without an instance), for a subsystem that runs in a worker
  /// process (host = "process"): its model lives there only, from instantiation to free.
  /// Gets the options prepare() would (those about the description, no_feedthrough, apply).
  std::function<std::unique_ptr<subsystem>(const std::string& name, const prepare_options& o)>
      describe;
  /// Inputs nothing feeds keep their start value instead of failing the build (FMUs).
  bool unfed_inputs_keep_start = false;
  /// Called by the builder right after create() with the run's length [s] (an FMU sets up
  /// its experiment with it, so a model that fails to initialise stops the build). Optional.
  std::function<void(subsystem& s, const prepare_options& o)> prepare;
  /// create() gets only the parameters the file sets; the model keeps its own value of the
  /// others (an FMU's binary default may differ from the start its description declares).
  bool only_given_parameters = false;
  /// run.duration / run.macro_step [s] when a file leaves them out and this is the one such
  /// type of the system (an FMU's DefaultExperiment).
  std::optional<double> default_duration, default_macro_step;
};

struct init_role {
  std::string name;                // "multibody"
  std::vector<std::string> types;  // subsystem types the role accepts
};

struct init_type {
  std::string name;  // "crane.equilibrium"
  std::string description;
  std::vector<init_role> roles;
  /// Computes start values from the roles' resolved parameters and writes them into
  /// them (only parameters declared start_value). Throws cosim::error on failure.
  std::function<void(const std::map<std::string, param_set*>& by_role)> apply;
};

/// The built-in types.
const std::vector<subsystem_type>& subsystem_types();
/// The built-in types and those registered since (plugin.hpp), in that order.
std::vector<const subsystem_type*> all_subsystem_types();
const subsystem_type* find_subsystem_type(const std::string& name);
const std::vector<init_type>& init_types();
const init_type* find_init_type(const std::string& name);

/// Checks `given` against t's declarations and fills defaults. Throws cosim::error naming
/// `where` (or, for a parameter in `where_of`, its own place: its line, or "--set KEY"), the
/// key "<key>.parameters.<name>", the value and the allowed range.
param_set resolve_parameters(const subsystem_type& t, const param_set& given,
                             const std::string& where, const std::string& key,
                             const std::map<std::string, std::string>* where_of = nullptr);

// Registration, one function per family, in that family's source file.
std::vector<subsystem_type> crane_subsystem_types();       // types_crane.cpp
std::vector<init_type> crane_init_types();                 // types_crane.cpp
std::vector<subsystem_type> oscillator_subsystem_types();  // types_oscillator.cpp
std::vector<init_type> oscillator_init_types();            // types_oscillator.cpp
/// The type of the FMU at `path` ("fmu:" + absolute path names it), cached per path.
/// Throws cosim::error naming the FMU when it cannot be read or run here.
const subsystem_type* fmu_subsystem_type(const std::string& path);  // types_fmu.cpp
/// The type of the system's only FMU subsystem; nullptr for none or several.
const subsystem_type* single_fmu_type(const system_spec& s);  // types_fmu.cpp

}  // namespace cosim::config
