// The key table of `cosim keys` and README.md: every key a scenario or system file reads,
// gathered from the readers' own tables (iteration, DDS, each registered model).
#include "alarm_keys.hpp"
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "dds_config.hpp"
#include "iteration_keys.hpp"

namespace cosim::config {

std::vector<key_doc> documented_keys() {
  std::vector<key_doc> keys{
      // System files (docs/systems.md); `cosim types` lists types and their parameters.
      {"plugins",
       "top level: shared libraries with subsystem types (cosim/rt_config/plugin.hpp, "
       "examples/my_models), loaded before the subsystems are read; paths relative to the file"},
      {"subsystems.<name>.type", "system file: registered subsystem type (`cosim types`)"},
      {"subsystems.<name>.fmu",
       "system file, instead of type: an FMI 2.0/3.0 co-simulation FMU (path relative to the "
       "file; `cosim inspect`)"},
      {"subsystems.<name>.step", "internal step [s]; default: the type's (e.g. H)"},
      {"subsystems.<name>.integrator", "one of the type's integrators (first is the default)"},
      {"subsystems.<name>.smoothing, non_matching", "as <subsystem>.smoothing / non_matching"},
      {"subsystems.<name>.host",
       "\"local\" (default), \"dds\": runs in `cosim worker` (docs/distributed.md), or "
       "\"process\": in a `cosim worker` the master starts and owns"},
      {"subsystems.<name>.log_categories",
       "FMU: the log categories it is asked for, e.g. [\"logStatusError\"] (fmi2/3SetDebugLogging; "
       "[]: logging off); default: logging on, the FMU's own choice"},
      {"subsystems.<name>.parameters.<p>",
       "a parameter the type declares (unit, default, range: `cosim types TYPE`); an FMU gets "
       "only those set, the others keep the binary's own values"},
      {"subsystems.<name>.changed_parameters",
       "FMU: \"warn\" (default) or \"refuse\" when the FMU changed a parameter it was given "
       "during initialisation (read back after it)"},
      {"subsystems.<name>.no_feedthrough",
       "FMU: true declares its outputs that list no dependencies (FMI 2.0: assumed to depend "
       "on every input) without direct feedthrough, for Gauss-Seidel and iterative schemes"},
      {"subsystems.<name>.probe_feedthrough",
       "FMU: true sets each Real input at start-up and reports which outputs with undeclared "
       "dependencies move without a step (state restored where the FMU can)"},
      {"initialization[i].type, .<role>",
       "[[initialization]]: a step computing start values across subsystems, e.g. "
       "crane.equilibrium (003 Sect. 1.3) with multibody = \"mbs\", hydraulics = \"hyd\""},
      {"connections[i].from, .to",
       "[[connections]]: \"subsystem.output\" -> \"subsystem.input\"; "
       "units must match; each input fed once"},
      {"connections[i].extrapolation", "that input's order 0-4 (default: [coupling])"},
      {"connections[i].hold", "true: hold the last value (ZOH whatever [coupling] says)"},
      {"connections[i].energy_correction",
       "true: remove the energy this bond input's extrapolation injected (docs/coupling.md)"},
      {"connections[i].feedthrough_correction",
       "true: correct this input for its producer's direct feedthrough from this subsystem's "
       "outputs (Jacobi; docs/coupling.md)"},
      {"bonds[i].energy_correction", "true: energy correction of every input of the bond"},
      {"bonds[i].name, .terms",
       "[[bonds]]: power bond, terms = [{effort = \"a.x -> b.y\", flow = \"b.z -> a.w\", gain = "
       "1}] "
       "(000 Sect. 3.1)"},
      {"sources[i].to, .signal",
       "[[sources]]: manoeuvre:M1|M2|hold|M1_kappa2, step|ramp|impulse|sine (002, with amplitude, "
       "time, width, frequency), constant:V, csv:FILE:COLUMN, driver:NAME.CHANNEL"},
      {"output.record",
       "columns: [\"sub.var\", {ref = \"sub.var\", as = \"name\"}]; a variable, an output or "
       "an input (as the subsystem sees it at the row's time)"},
      // Presets and the common sections.
      {"model.name", "preset model to expand (see below); `cosim run X --print-system` shows it"},
      {"run.mode",
       "executor: offline (default; one thread, deterministic), threaded, realtime, lockstep "
       "(offline, with UDP devices paced by simulation time: drivers/PROTOCOL.md)"},
      {"run.duration",
       "simulated time [s], required (a system of one FMU without it runs the FMU's "
       "DefaultExperiment); rounded up to whole macro steps (times are kept in integer "
       "nanoseconds: a step or duration is first rounded to 1 ns, so `macro_step = "
       "0.3333333333333333` runs 333333333 ns steps)"},
      {"run.macro_step", "communication step H [s]"},
      {"run.scheme", "jacobi (default) or gauss-seidel"},
      {"run.order",
       "subsystem order for Gauss-Seidel and start-up, e.g. [\"multibody\", \"hydraulics\"]"},
      {"run.output_interval",
       "time between rows of results.csv [s]; a multiple of H; 0 = every macro step"},
      {"run.delivery",
       "macro-step (default) or fast-step: exchange at the fastest step, slower subsystems on "
       "their own grid ahead (slowest-first) or behind (fastest-first) (004 Sect. 2.1); "
       "needs run.sync"},
      {"run.fast_step_timing",
       "newest (default) or table1: with fast-step delivery the fast subsystem sees the slower "
       "one's samples as in 004 Table 1 (only those stepped while t2 < t1, or t2 + h2 < t1)"},
      {"run.sync",
       "slowest-first or fastest-first: Gauss-Seidel, largest (smallest) step first (004 Sect. "
       "2.1); replaces run.order"},
      {"<subsystem>.step",
       "internal step of that subsystem [s]; must divide H unless non_matching"},
      {"<subsystem>.integrator", "integrator of that subsystem (choices per model)"},
      {"<subsystem>.non_matching",
       "true: own time grid, step need not divide H; samples at own grid times (004 Sect. 2)"},
      {"<subsystem>.smoothing",
       "true: deliver outputs averaged over the internal steps of each interval (004 Sect. 2.2)"},
      {"coupling.extrapolation",
       "input extrapolation order 0-4 (0 = ZOH) for every coupling input; default 0"},
      {"coupling.energy_correction",
       "true: energy-based correction of every bond input (docs/coupling.md); default false"},
      {"coupling.feedthrough_correction",
       "true: feedthrough correction of every input whose producer depends directly on this "
       "subsystem's outputs (Jacobi; docs/coupling.md); default false"},
      {"coupling.energy_correction_method",
       "remove (default: one-sided, accumulated) or balance (two-sided: half the last step's "
       "residual, either sign) for every corrected input (docs/coupling.md)"},
      {"coupling.order.\"<sub>.<input>\"",
       "order 0-4 for one consumer input, e.g. [coupling.order] \"mass2.f1\" = 1"},
      {"safety.energy_residual_limit", "safety stop when sum |delta E| exceeds this [J]"},
      {"safety.residual_power_limit", "safety stop when |delta P| exceeds this [W]"},
      // Threaded and realtime executors (realtime_config.cpp).
      {"run.ring_capacity",
       "coupling ring slots per connection, a power of two from 4 to 65536 (default 16)"},
      {"run.lock_memory", "mlockall before the threads start (default true)"},
      {"run.require_realtime",
       "true: refuse to start (exit 2, nothing written) unless SCHED_FIFO at every thread's "
       "priority, its CPU and locked memory are granted (realtime mode; default false)"},
      {"run.timing_csv",
       "true: write DIR/timing.csv with each thread's wake-up latency and step time per step"},
      {"run.trace", "true: write DIR/trace.json, each thread's steps for ui.perfetto.dev"},
      {"threads.<subsystem>.cpu", "CPU to pin that subsystem's (or driver's) thread to; -1 = any"},
      {"threads.<subsystem>.priority", "SCHED_FIFO priority 1-99 (absent: normal scheduling)"},
      {"threads.<subsystem>.stack_size", "thread stack in bytes, >= 65536 (default 262144)"},
      {"threads.<subsystem>.budget",
       "expected worst-case step time [s]; threads sharing a CPU must fit in H"},
      {"watchdog.priority",
       "watchdog SCHED_FIFO priority; above every thread's (default: highest + 1)"},
      {"watchdog.cpu", "watchdog CPU (-1: not pinned)"},
      {"watchdog.max_overruns",
       "leaky-bucket capacity: safety stop 'deadline' when reached (default 10)"},
      {"watchdog.leak_steps", "one overrun forgiven per this many macro steps (default 100)"},
      {"watchdog.grace",
       "[s] after any stop, how long a subsystem still inside its step is waited for; then it "
       "is abandoned and the process exits 3 with the results kept (default 0.3, every mode)"},
      // UDP bench drivers (driver_config.cpp, drivers/PROTOCOL.md); realtime mode only for
      // input drivers.
      {"drivers.<name>.direction", "input (from the bench) or output (to the bench)"},
      {"drivers.<name>.backend", "asio (default) or io_uring"},
      {"drivers.<name>.bind", "local IPv4 \"host:port\" (default 127.0.0.1:0)"},
      {"drivers.<name>.type",
       "message type: command (input default), valve_command (output default), valve_feedback"},
      {"drivers.<name>.channels", "1-16 channel names; datagrams must carry exactly this many"},
      {"drivers.<name>.units",
       "per-channel unit of the channel's port, checked against what it connects to (default "
       "\"1\"), e.g. [\"m\"]"},
      {"drivers.<name>.min", "per-channel lower limit (values are clamped, clamps counted)"},
      {"drivers.<name>.max", "per-channel upper limit"},
      {"drivers.<name>.peers", "input: allowlist of sender \"host:port\" addresses (required)"},
      {"drivers.<name>.initial", "input: per-channel value before the first datagram"},
      {"drivers.<name>.stale_after",
       "input: no fresh datagram for this long [s]: hold the last value, count (default 0.05)"},
      {"drivers.<name>.stop_after",
       "input: no fresh datagram for this long [s]: safety stop stale_input (default 0.5)"},
      {"drivers.<name>.startup_timeout",
       "input: longest wait for the first datagram [s] (default 5)"},
      {"events[i].time, .action, .driver, .count",
       "[[events]]: at simulation time [s] (the first communication point at or after it) do "
       "action on driver; \"silence\": nothing the input driver receives is used from then on "
       "(its stale-input logic sees a silent device); \"drop\": the next count new values are "
       "discarded; listed in summary.json"},
      {"drivers.<name>.lockstep_timeout",
       "run.mode = \"lockstep\": longest wall-clock wait for the device's answer to one macro "
       "step [s], 0.001-60 (default 1); then safety stop lockstep_device"},
      {"drivers.<name>.to", "output: destination IPv4 \"host:port\" (required)"},
      {"drivers.<name>.from",
       "output: the \"subsystem.port\" feeding each channel (required, one per channel)"},
      {"drivers.<name>.safe_value", "output: per-channel value sent on any stop (default 0)"},
      {"drivers.<name>.safe_repeats", "output: times the safe value is sent, 1-1000 (default 5)"},
      {"drivers.<name>.auth",
       "hmac-sha512-256 (default: keyed MAC, sessions, strict replay window) or none "
       "(unauthenticated version 1: warned about, recorded in summary.json and on the "
       "dashboard)"},
      {"drivers.<name>.key_file",
       "the driver's shared key, 64 hex digits, mode 0600 (cosim-device keygen FILE); required "
       "unless auth = \"none\""},
      {"drivers.<name>.cpu", "I/O thread CPU (-1: not pinned)"},
      {"drivers.<name>.priority", "I/O thread SCHED_FIFO priority 1-99"},
  };
  for (auto& k : alarm_keys::docs()) keys.push_back(std::move(k));
  for (auto& k : iteration_keys::docs()) keys.push_back(std::move(k));
  for (auto& k : dds_keys()) keys.push_back(std::move(k));
  for (const auto& m : models()) {
    keys.push_back({"model.name = " + m.name, m.description});
    for (const auto& k : m.keys) keys.push_back(k);
  }
  return keys;
}

}  // namespace cosim::config
