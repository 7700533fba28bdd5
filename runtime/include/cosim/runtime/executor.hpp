#pragma once
// Schemes and the offline executor.
//
// One macro step [t_n, t_n + H] (Jacobi): every subsystem takes H/h internal steps with its
// inputs extrapolated from samples up to t_n, then evaluates its outputs at t_n + H; only
// then are all outputs delivered. Gauss-Seidel: subsystems run one after the other in the
// configured order and each delivers its outputs before the next one steps, so later
// subsystems see their predecessors' samples at t_n + H (000 Sect. 2).
#include <chrono>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "cosim/runtime/alarm.hpp"
#include "cosim/runtime/energy_monitor.hpp"
#include "cosim/runtime/scheme.hpp"
#include "cosim/runtime/stop_source.hpp"
#include "cosim/runtime/system.hpp"

namespace cosim {

enum class scheme_kind { jacobi, gauss_seidel };
/// "jacobi", "gauss-seidel" (the run.scheme values).
[[nodiscard]] constexpr const char* to_string(scheme_kind s) noexcept {
  return s == scheme_kind::jacobi ? "jacobi" : "gauss-seidel";
}

/// How iteration k's residual r_k = y_k - u_k updates the iterate (run.relaxation).
enum class relaxation_kind {
  constant,  // u_{k+1} = u_k + omega r_k
  aitken,    // the same with Aitken's dynamic omega
  iqn,       // interface quasi-Newton, IQN-ILS (fixed_point.hpp)
};

/// Iterative co-simulation (000 Sect. 2.3, Fig. 8), offline only: every macro step becomes
/// a fixed-point iteration on the coupling variables at t_n + H, with rollback of every
/// subsystem (subsystem::save_state). Iteration k restores the states at t_n, advances with
/// the inputs interpolated between the sample at t_n and the current iterate u_k at
/// t_n + H, and updates the iterate from the residual r_k = y_k - u_k (relaxation_kind).
/// Converged when |y_k - u_k| <= abs_tol + rel_tol |y_k| for every connection.
/// max_iterations = 1 is the plain non-iterative scheme.
struct iteration_options {
  int max_iterations = 1;
  double rel_tol = 1e-6;
  double abs_tol = 1e-9;
  /// Constant relaxation; Aitken's initial omega; quasi-Newton's omega while it has no
  /// secant yet (the first iteration of the run, or of every step with iqn_reuse = 0).
  double omega = 1.0;
  relaxation_kind relaxation = relaxation_kind::constant;
  int iqn_reuse = 8;  // quasi-Newton: past macro steps whose secants are kept
  bool stop_on_no_convergence = false;
  [[nodiscard]] bool enabled() const noexcept { return max_iterations > 1; }
};

/// Per-run iteration counts (summary.json); only meaningful with iterations enabled.
struct iteration_stats {
  bool enabled = false;
  std::int64_t steps = 0;
  std::int64_t total_iterations = 0;
  int max_iterations = 0;
  double max_defect = 0.0;  // largest final scaled defect (<= 1: within tolerance)
  std::int64_t not_converged = 0;
};

struct run_plan {
  time_point start{};
  duration macro_step{0};
  std::int64_t macro_steps = 0;
  scheme_kind scheme = scheme_kind::jacobi;
  std::vector<std::size_t> order;  // Gauss-Seidel order; Jacobi uses it for the start-up exchange
  std::int64_t output_every = 1;   // record every k-th macro step
  iteration_options iteration;     // offline only
};

/// Checks the plan against the system: steps positive and dividing H, order a permutation.
void validate_plan(const system& sys, const run_plan& plan);
/// Iterative coupling (plan.iteration enabled) rolls every subsystem back: throws
/// cosim::error naming the first one that cannot, and why. No-op otherwise. Setup only.
void check_rollback(const system& sys, const run_plan& plan);

struct run_outcome;

/// The process exit code of a run whose supervisor abandoned a subsystem thread that did not
/// return from its step within the grace (the results up to the stop are kept).
inline constexpr int exit_abandoned = 3;

/// Ends the process after a supervisor abandoned a stuck subsystem thread. Called once, on
/// the supervising thread, with the run's outcome once every row is in the sink and the sink
/// ended; it writes what it must (summary.json) and ends the process (never returns: the
/// stuck thread still uses the run's state). Null: _exit(exit_abandoned).
using abandon_handler = void (*)(void* ctx, run_outcome& out) noexcept;

struct safety_limits {
  double energy_residual = std::numeric_limits<double>::infinity();  // on sum |delta_E| [J]
  double residual_power = std::numeric_limits<double>::infinity();   // on |delta_P| [W]
  /// After a stop is decided (any cause, a signal included), how long the supervisor waits
  /// for a subsystem still inside its step before abandoning it (watchdog.grace).
  std::int64_t grace_ns = 300'000'000;
  abandon_handler abandon = nullptr;
  void* abandon_ctx = nullptr;
  std::vector<alarm_spec> alarms;  // on results columns, judged after every macro step
};

enum class run_status { completed, diverged, safety_stop, error };
const char* to_string(run_status s) noexcept;
/// The status of a run that stopped for cause c (completed for none).
run_status status_of(stop_cause c) noexcept;

/// What a real-time thread was granted and how it behaved (threaded/realtime modes).
struct thread_report {
  std::string name;
  int cpu_requested = -1;
  int cpu_granted = -1;
  int priority_requested = 0;
  int priority_granted = 0;
  double wakeup_p50_us = 0.0, wakeup_p99_us = 0.0, wakeup_max_us = 0.0;
  double exec_p50_us = 0.0, exec_p99_us = 0.0, exec_max_us = 0.0;
  std::int64_t overruns = 0;
  std::int64_t steps = 0;
};

struct run_outcome {
  run_status status = run_status::completed;
  std::string stop_reason = "end_time";  // end_time, non_finite, energy_residual, ...
  std::string message;
  double stop_time_s = 0.0;
  std::int64_t macro_steps = 0;
  double sim_time_s = 0.0;
  double wall_time_s = 0.0;
  double energy_residual = 0.0;
  double max_residual_power = 0.0;
  std::vector<energy_monitor::bond_totals> bonds;
  std::int64_t rows = 0;
  // Threaded and realtime modes only.
  std::string mode = "offline";
  std::vector<thread_report> threads;
  std::int64_t deadline_misses = 0;
  std::uint64_t ring_drops = 0;
  bool memory_locked = false;
  std::vector<std::string> warnings;
  iteration_stats iteration;
  /// Subsystems whose thread was abandoned inside a step (the process then ends).
  std::vector<std::string> abandoned;
  std::vector<alarm_report> alarms;  // one per safety_limits::alarms entry
};

/// Receives recorded rows. write() is called on the stepping thread and must not throw.
class row_sink {
 public:
  row_sink() = default;
  row_sink(const row_sink&) = delete;
  row_sink& operator=(const row_sink&) = delete;
  virtual ~row_sink() = default;
  /// Just before begin(): each column's unit ("" where none is declared), in begin()'s
  /// column order. Sinks that only store numbers ignore it.
  virtual void units(std::span<const std::string> /*units*/) {}
  virtual void begin(std::span<const std::string> columns) = 0;
  virtual void write(std::span<const double> row) noexcept = 0;
  virtual void end() = 0;
  /// True once a row could not be stored (full disk, ...): the run stops with status
  /// error and stop_reason output_error rather than compute results nobody keeps.
  [[nodiscard]] virtual bool failed() const noexcept { return false; }
};

/// Column names of a run: t, the system's probes, then the energy-residual columns.
std::vector<std::string> result_columns(const system& sys);
/// The unit of each of result_columns(sys): s, the probes' units, W, J, J.
std::vector<std::string> result_units(const system& sys);

namespace detail {
class offline_supervisor;
}
/// Initialises every subsystem at plan.start and performs the start-up exchange;
/// `supervisor` (optional) is told which subsystem is being initialised.
void initialize_and_exchange(system& sys, const run_plan& plan,
                             detail::offline_supervisor* supervisor = nullptr);
/// Fills stop time, simulated time and wall time; for a run that ended early because
/// `stopped` was raised, also status, stop reason and (unless set) the message.
void finish_outcome(run_outcome& out, const run_plan& plan, time_point t,
                    std::chrono::steady_clock::time_point wall0, const stop_source* stopped);

/// Runs whose executor started in this process so far (run_offline, run_threaded): from
/// then on a supervisor answers the run's stop; before, a caller's start-up may not.
std::int64_t runs_started() noexcept;

/// Single thread, deterministic, as fast as possible. `stop` (optional, not owned) is
/// checked once per macro step; the run's own causes (safety limits, ...) are raised in a
/// source linked to it, so `stop` itself is never raised.
run_outcome run_offline(system& sys, const run_plan& plan, const safety_limits& limits,
                        row_sink& sink, const stop_source* stop = nullptr);

}  // namespace cosim
