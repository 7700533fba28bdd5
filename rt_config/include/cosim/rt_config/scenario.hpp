#pragma once
// Scenario schema: plain structs with defaults, filled and validated once from TOML.
// Generic sections ([run], [coupling], [safety], one table per subsystem) are read here;
// model-specific keys ([model] and any model tables) by the model's entry in the
// registry (model_registry.hpp).
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cosim/drivers/driver_config.hpp"
#include "cosim/rt_config/system_spec.hpp"
#include "cosim/runtime/executor.hpp"
#include "cosim/runtime/scheme.hpp"
#include "cosim/runtime/system.hpp"
#include "cosim/runtime/threaded_executor.hpp"

namespace cosim::config {

/// Which executor runs the system (executor.hpp, threaded_executor.hpp).
// lockstep: the offline executor, with the UDP drivers exchanging one datagram pair per macro
// step with devices that follow simulation time (drivers/PROTOCOL.md, "Lockstep").
enum class run_mode { offline, threaded, realtime, lockstep };
const char* to_string(run_mode m) noexcept;

struct run_config {
  run_mode mode = run_mode::offline;
  double duration = 10.0;    // [s]
  double macro_step = 1e-3;  // H [s]
  scheme_kind scheme = scheme_kind::jacobi;
  std::vector<std::string> order;    // Gauss-Seidel order (subsystem names)
  double output_interval = 0.0;      // [s]; 0 = every macro step
  std::optional<scheme::sync> sync;  // Gauss-Seidel order by step size (004 Sect. 2.1)
  // run.delivery = "fast-step": H is the fastest step; slower subsystems step on their own
  // grid, ahead (slowest-first) or behind (fastest-first), 004 Sect. 2.1.
  bool fast_step = false;
  // run.fast_step_timing = "table1": the fast side sees the slow samples as in 004 Table 1.
  bool table1_timing = false;
  iteration_options iteration;  // run.iterations etc. (offline only)
};

struct subsystem_config {
  double step = 0.0;      // [s], resolved
  bool step_set = false;  // explicitly given
  std::string integrator;
  bool smoothing = false;     // deliver interval averages (004 Sect. 2.2)
  bool non_matching = false;  // own time grid; step need not divide H
  bool remote = false;        // host = "dds" or "process": runs in a `cosim worker`
  bool process = false;       // host = "process": the master starts that worker itself
  /// FMU: the log categories it is asked for (fmi2/3SetDebugLogging; empty: logging off);
  /// unset: logging on as the FMU chooses.
  std::optional<std::vector<std::string>> log_categories;
  // FMUs (system files): what a parameter the FMU changes in initialisation does, outputs
  // without declared dependencies declared without direct feedthrough, and the start-up
  // probe of that.
  bool refuse_changed_parameters = false;  // changed_parameters = "refuse" (default "warn")
  bool no_feedthrough = false;
  bool probe_feedthrough = false;
};

/// [dds]: where remote subsystems (host = "dds") are found (docs/distributed.md).
struct dds_config {
  std::int64_t domain = 0;          // DDS domain id (Cyclone: 0-230)
  std::string partition = "cosim";  // DDS partition of the step topics
  double lease = 1.0;               // [s] liveliness lease of master and worker
  double timeout = 5.0;             // [s] longest wait for one reply: then remote_deadline
  double discovery_timeout = 30.0;  // [s] wait for the worker at start-up
  std::int64_t max_missed = 0;      // consecutive timed-out replies held before remote_deadline
  bool shared_memory = false;       // Cyclone over iceoryx on one host (iox-roudi running)
  /// [dds.security]: DDS Security files, absolute (given relative to the system file);
  /// all empty: no security.
  struct security_files {
    std::string identity_ca, identity_certificate, private_key, permissions_ca, governance,
        permissions;
  } security;
};

struct coupling_config {
  int extrapolation = 0;             // polynomial order 0-4 for every coupling input
  std::map<std::string, int> order;  // per consumer input "subsystem.input": 0-4
  bool energy_correction = false;    // every bond input (energy_correction.hpp)
  /// Method of every corrected input: "remove" (default) or "balance".
  std::string energy_correction_method = "remove";
  bool feedthrough_correction = false;  // every eligible input (feedthrough_correction.hpp)
};

struct safety_config {
  double energy_residual_limit = std::numeric_limits<double>::infinity();  // [J]
  double residual_power_limit = std::numeric_limits<double>::infinity();   // [W]
};

/// One [[alarms]] table (alarm.hpp); spec.variable is the results column it watches.
struct alarm_config {
  alarm_spec spec;
  origin at;  // "alarms[i]" and where each of its keys is
};

/// [threads.<subsystem>], [watchdog] and the real-time keys of [run].
struct realtime_config {
  std::map<std::string, thread_setup> threads;  // by subsystem name
  watchdog_setup watchdog;
  std::size_t ring_capacity = 16;
  bool lock_memory = true;
  bool timing_csv = false;        // write DIR/timing.csv
  bool trace = false;             // write DIR/trace.json (trace-event JSON)
  bool require_realtime = false;  // refuse to start without SCHED_FIFO, affinity, mlockall
};

struct scenario {
  std::string file;
  std::vector<std::string> plugins;  // plugins = [...]: absolute paths, loaded (plugin.hpp)
  std::string model;                 // model.name
  std::map<std::string, std::string> options;  // model-specific choices (model.*)
  std::map<std::string, double> params;        // model-specific numbers (model.*)
  run_config run;
  std::map<std::string, subsystem_config> subsystems;  // by subsystem name
  coupling_config coupling;
  safety_config safety;
  std::vector<alarm_config> alarms;  // [[alarms]] (alarm_keys.cpp)
  realtime_config rt;
  std::vector<drivers::driver_config> drivers;  // [drivers.<name>] (driver_config.cpp)
  struct event {
    double time = 0.0;   // [s] simulation time
    std::string action;  // "silence"
    std::string driver;  // its target
  };
  std::vector<event> events;  // [[events]] (driver_config.cpp, read_events)
  dds_config dds;             // [dds] (dds_config.cpp)
  /// The open description: read from a system file, or expanded from the [model] preset.
  system_spec system;
  bool preset = false;  // true: from [model] (model/options/params set), false: a system file
  /// The --set overrides it was read with: a worker the master starts (host = "process")
  /// reads the same file with the same overrides.
  std::vector<std::string> sets;

  [[nodiscard]] const std::string& option(const std::string& key) const { return options.at(key); }
  [[nodiscard]] double param(const std::string& key) const { return params.at(key); }
  [[nodiscard]] const subsystem_config& sub(const std::string& name) const {
    return subsystems.at(name);
  }
};

/// Reads and validates a scenario file with --set overrides applied. Throws cosim::error
/// naming file, line, key and value.
scenario load_scenario(const std::string& path, const std::vector<std::string>& sets = {});
scenario parse_scenario(const std::string& text, const std::string& name,
                        const std::vector<std::string>& sets = {});

/// Every key `--set` accepts, with a one-line description (for README and --help).
struct key_doc {
  std::string key;
  std::string doc;
};
std::vector<key_doc> documented_keys();

/// The system, its plan and safety limits, ready for an executor.
struct built_scenario {
  system sys;
  run_plan plan;
  safety_limits limits;
  std::vector<std::unique_ptr<signal_source>> sources;
  /// The operator's stop source while remote subsystems set up (see build()).
  const stop_source* setup_stop = nullptr;
};
/// `setup_stop` (optional, not owned, must outlive the run): remote subsystems (host = "dds"
/// or "process") stop waiting for their workers when a cause is raised there.
std::unique_ptr<built_scenario> build(const scenario& sc, const stop_source* setup_stop = nullptr);

/// The resolved configuration as a JSON object (for summary.json).
std::string to_json(const scenario& sc);

/// The scenario as a system file (`cosim run X --print-system`): a preset's expansion, or
/// a system file written back; it runs to the same results.csv.
std::string system_toml(const scenario& sc);

/// Builds the threaded-executor options of a scenario (per subsystem index of b.sys).
threaded_options make_threaded_options(const scenario& sc, const built_scenario& b);

/// run.require_realtime = true: locks memory (mlockall, kept) and tries every thread's
/// SCHED_FIFO priority and CPU on a short-lived thread; throws cosim::error (config_value)
/// naming what was refused. Called before the results folder is touched. Does nothing
/// when the key is false.
void require_realtime(const scenario& sc, const built_scenario& b);

/// Fills plan and limits from the generic sections; run.order names are resolved
/// against the built system.
void fill_plan(const scenario& sc, built_scenario& b);

}  // namespace cosim::config
