#include "cosim/runtime/executor.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>

#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/limits.hpp"
#include "fixed_point.hpp"
#include "offline_supervisor.hpp"
#include "run_accounting.hpp"
#include "run_hooks.hpp"

namespace cosim {

const char* to_string(run_status s) noexcept {
  switch (s) {
    case run_status::completed:
      return "completed";
    case run_status::diverged:
      return "diverged";
    case run_status::safety_stop:
      return "safety_stop";
    case run_status::error:
      return "error";
  }
  return "error";
}

run_status status_of(stop_cause c) noexcept {
  switch (c) {
    case stop_cause::none:
    case stop_cause::model_end:
      return run_status::completed;
    case stop_cause::non_finite:
    case stop_cause::no_convergence:
      return run_status::diverged;
    case stop_cause::operator_signal:
    case stop_cause::stale_input:
    case stop_cause::deadline:
    case stop_cause::stall:
    case stop_cause::energy_residual:
    case stop_cause::residual_power:
    case stop_cause::remote_deadline:
    case stop_cause::remote_lost:
    case stop_cause::alarm:
    case stop_cause::lockstep_device:
      return run_status::safety_stop;
    case stop_cause::output_error:
    case stop_cause::error:
    case stop_cause::model_error:
      return run_status::error;
  }
  return run_status::error;
}

void check_rollback(const system& sys, const run_plan& plan) {
  if (!plan.iteration.enabled()) return;
  for (std::size_t i = 0; i < sys.size(); ++i) {
    const subsystem& s = sys.at(i);
    COSIM_INPUT_CHECK(
        s.can_save_state(), errc::config_value,
        "iterative coupling (run.iterations = " + std::to_string(plan.iteration.max_iterations) +
            ") rolls every subsystem back to the start of the macro step, but "
            "subsystem '" +
            s.name() + "' cannot: " + s.state_refusal());
  }
}

void validate_plan(const system& sys, const run_plan& plan) {
  COSIM_INPUT_CHECK(plan.macro_step.count() > 0, errc::config_value, "macro step must be > 0");
  COSIM_INPUT_CHECK(plan.macro_steps >= 0, errc::config_value, "duration must be >= 0");
  COSIM_INPUT_CHECK(plan.output_every >= 1, errc::config_value,
                    "output interval must be >= 1 step");
  for (std::size_t i = 0; i < sys.size(); ++i) {
    // limits.hpp's rule; a non-matching subsystem has step_size() = H here (multirate.hpp).
    const subsystem& s = sys.at(i);
    const std::string why = limits::internal_step(s.step_size(), plan.macro_step, false);
    COSIM_INPUT_CHECK(why.empty(), errc::config_value,
                      "step of subsystem '" + s.name() + "' (" +
                          format_double(to_seconds(s.step_size())) + " s) " + why);
  }
  COSIM_INPUT_CHECK(plan.order.size() == sys.size(), errc::config_value,
                    "scheme order must list every subsystem exactly once");
  std::vector<bool> seen(sys.size(), false);
  for (std::size_t i : plan.order) {
    COSIM_INPUT_CHECK(i < sys.size() && !seen[i], errc::config_value,
                      "scheme order must list every subsystem exactly once");
    seen[i] = true;
  }
}

std::vector<std::string> result_columns(const system& sys) {
  std::vector<std::string> cols{"t"};
  for (const probe& p : sys.probes()) cols.push_back(p.column);
  cols.insert(cols.end(), {"dP", "dE", "sum_abs_dE"});
  return cols;
}

std::vector<std::string> result_units(const system& sys) {
  std::vector<std::string> units{"s"};
  for (const probe& p : sys.probes()) units.push_back(p.unit);
  units.insert(units.end(), {"W", "J", "J"});
  return units;
}

namespace {
std::atomic<std::int64_t> g_runs_started{0};
}  // namespace

std::int64_t runs_started() noexcept {
  return g_runs_started.load(std::memory_order_acquire);
}

namespace detail {
void count_run_start() noexcept {
  g_runs_started.fetch_add(1, std::memory_order_acq_rel);
}
}  // namespace detail

run_outcome run_offline(system& sys, const run_plan& plan, const safety_limits& limits,
                        row_sink& sink, const stop_source* stop) {
  detail::count_run_start();
  validate_plan(sys, plan);
  sys.check_complete();
  const auto wall0 = std::chrono::steady_clock::now();
  run_outcome out;
  energy_monitor mon(sys);
  std::vector<const double*> probes;
  for (const probe& p : sys.probes()) probes.push_back(p.value);
  auto columns = result_columns(sys);
  // Iterative coupling: checks that every subsystem can roll back before anything runs.
  std::optional<detail::fixed_point> iterate;
  double iterations = 0.0, defect = 0.0;  // of the latest macro step, for the rows
  if (plan.iteration.enabled()) {
    iterate.emplace(sys, plan);
    columns.insert(columns.end(), {"iterations", "defect"});
    out.iteration.enabled = true;
  }
  detail::run_accounting acc(plan, limits, sink, mon, probes, columns);
  if (iterate) {
    acc.add_tail(&iterations);
    acc.add_tail(&defect);
  }
  auto units = result_units(sys);
  units.resize(columns.size());  // iterations and defect: counts and a scaled norm, no unit
  sink.units(units);
  sink.begin(columns);

  time_point t = plan.start;
  stop_source run_stop(stop);
  // Only a stop decided on another thread (the operator's) can meet the model thread inside
  // a model; the run's own causes are raised on it, between steps.
  detail::started_subsystems* started = nullptr;
  std::optional<detail::offline_supervisor> supervisor;
  if (stop != nullptr)
    supervisor.emplace(sys, run_stop, limits.grace_ns, [&](std::size_t stuck) {
      // The model thread is parked inside subsystem `stuck`: the results are ours.
      const std::size_t none[1] = {stuck};
      if (started != nullptr) started->finish_except(none);
      out.abandoned.push_back(sys.at(stuck).name());
      acc.finish(out);
      finish_outcome(out, plan, t, wall0, &run_stop);
      detail::end_sink(sink);
      detail::abandon_run(limits, out);
    });
  const auto enter = [&](std::size_t i) noexcept {
    if (supervisor) supervisor->at(i);
  };
  detail::supervised_initialize(sys, plan, supervisor ? &*supervisor : nullptr);
  // Started first: a subsystem whose start-up exchange failed raises its own cause, which a
  // non-finite value it left behind must not replace.
  detail::started_subsystems hooks(sys, run_stop);
  started = &hooks;
  // A value already non-finite at t0 stops the run before its first step (the loop sees it).
  (void)acc.start(t, out, run_stop);
  bool stopped = false;
  const duration H = plan.macro_step;
  for (std::int64_t n = 0; n < plan.macro_steps; ++n) {
    if (run_stop.stop_requested()) {
      stopped = true;
      break;
    }
    const time_point t1 = t + H;
    bool ok = true;
    const char* failed = nullptr;  // the first subsystem whose step failed
    bool unconverged = false;
    if (supervisor) supervisor->enter();
    if (iterate) {
      ok = iterate->step(t, mon);
      iterations = iterate->iterations();
      defect = iterate->defect();
      iteration_stats& st = out.iteration;
      ++st.steps;
      st.total_iterations += iterate->iterations();
      st.max_iterations = std::max(st.max_iterations, iterate->iterations());
      if (ok) st.max_defect = std::max(st.max_defect, defect);
      unconverged = ok && !iterate->converged();
      if (unconverged) ++st.not_converged;
    } else {
      // Every subsystem steps even after one failed; the first failure is named.
      const auto advance = [&](std::size_t i) {
        enter(i);
        if (!scheme::advance(sys.at(i), t, H) && ok) {
          ok = false;
          failed = sys.at(i).name().c_str();
        }
        mon.capture_inputs(i, t1);
      };
      if (plan.scheme == scheme_kind::jacobi) {
        for (std::size_t i : plan.order) advance(i);
        for (std::size_t i : plan.order) scheme::deliver(sys, i, t1);
      } else {
        for (std::size_t i : plan.order) {
          advance(i);
          scheme::deliver(sys, i, t1);
        }
      }
    }
    if (supervisor) supervisor->leave();
    mon.close_step(H);
    // A model that ended the simulation or failed inside this step ends the run at its start
    // (the last row); its values at t1 are not written.
    if (ok || !ends_at_step_start(run_stop.cause())) t = t1;
    if (!acc.after_step(n, t, ok, out, run_stop, failed)) {
      stopped = true;
      break;
    }
    if (unconverged && plan.iteration.stop_on_no_convergence) {
      run_stop.raise(stop_cause::no_convergence);
      out.message = "the macro step ending at t = " + format_double(to_seconds(t)) +
                    " s did not converge within " + std::to_string(plan.iteration.max_iterations) +
                    " iterations (defect " + format_double(defect) + " x the tolerance)";
      stopped = true;
      break;
    }
  }
  if (out.iteration.not_converged > 0)
    out.warnings.push_back(
        std::to_string(out.iteration.not_converged) + " of " + std::to_string(out.iteration.steps) +
        " macro steps did not converge within " + std::to_string(plan.iteration.max_iterations) +
        " iterations (largest defect " + format_double(out.iteration.max_defect) +
        " x the tolerance)");
  hooks.finish(!stopped);
  acc.finish(out);
  finish_outcome(out, plan, t, wall0, stopped ? &run_stop : nullptr);
  sink.end();
  return out;
}

namespace {

// The default message of an early stop, from the cause's details.
std::string stop_message(const stop_source& s, time_point t) {
  const char* who = s.who();
  switch (s.cause()) {
    case stop_cause::non_finite:
      if (who != nullptr && s.code() == detail::non_finite_subsystem)
        return std::string("subsystem '") + who +
               "' diverged: its step failed or gave a non-finite output, in the macro step "
               "ending at t = " +
               format_double(to_seconds(t)) + " s";
      return std::string("non-finite value") + (who != nullptr ? std::string(" of ") + who : "") +
             " at t = " + format_double(to_seconds(t)) + " s";
    case stop_cause::operator_signal: {
      const char* sig = s.code() > 0 ? sigabbrev_np(s.code()) : nullptr;
      return std::string("stop requested by the operator") +
             (sig != nullptr ? std::string(" (SIG") + sig + ")" : "");
    }
    case stop_cause::stale_input:
      if (who != nullptr && s.code() == stale_input_message) return who;
      return std::string("no fresh input from driver '") + (who != nullptr ? who : "?") +
             "' within its stop_after";
    case stop_cause::model_end:
    case stop_cause::model_error:
    case stop_cause::lockstep_device:
      return who != nullptr ? who : "";
    case stop_cause::alarm:
      return std::string("alarm '") + (who != nullptr ? who : "?") +
             "' fired at t = " + format_double(to_seconds(t)) + " s";
    case stop_cause::remote_deadline:
      return std::string("remote subsystem '") + (who != nullptr ? who : "?") +
             "' did not answer within dds.timeout";
    case stop_cause::remote_lost: {
      // code: how a worker process the master started ended (host = "process").
      const std::string head =
          std::string("remote subsystem '") + (who != nullptr ? who : "?") + "' lost: ";
      const int c = s.code();
      if (c >= 256)
        return head + "its worker process exited with status " + std::to_string(c - 256);
      const char* sig = c > 0 ? sigabbrev_np(c) : nullptr;
      if (c > 0)
        return head + "its worker process was killed by " +
               (sig != nullptr ? std::string("SIG") + sig : std::string("a signal")) + " (signal " +
               std::to_string(c) + ")";
      return head + "its worker's liveliness lease (dds.lease) expired";
    }
    default:
      return "";
  }
}

}  // namespace

namespace detail {

void supervised_initialize(system& sys, const run_plan& plan, offline_supervisor* supervisor) {
  if (supervisor == nullptr) {
    initialize_and_exchange(sys, plan);
    return;
  }
  supervisor->enter();
  try {
    initialize_and_exchange(sys, plan, supervisor);
  } catch (...) {
    supervisor->leave();
    throw;
  }
  supervisor->leave();
}

void end_sink(row_sink& sink) noexcept {
  try {
    sink.end();
  } catch (...) {
    // The rows written so far stay; the summary still tells why the run ended.
  }
}

}  // namespace detail

void initialize_and_exchange(system& sys, const run_plan& plan,
                             detail::offline_supervisor* supervisor) {
  // Start-up exchange in scheme order, so that feedthrough outputs at t0 see their
  // producers' initial values.
  for (std::size_t i = 0; i < sys.size(); ++i) {
    if (supervisor != nullptr) supervisor->at(i);
    sys.at(i).initialize(plan.start);
  }
  sys.resolve_routes();
  for (std::size_t i : plan.order) {
    sys.at(i).update_outputs(plan.start);
    sys.at(i).capture_partials(plan.start);
    scheme::deliver(sys, i, plan.start);
  }
  for (std::size_t i = 0; i < sys.size(); ++i) sys.at(i).capture_inputs(plan.start);
}

void finish_outcome(run_outcome& out, const run_plan& plan, time_point t,
                    std::chrono::steady_clock::time_point wall0, const stop_source* stopped) {
  out.stop_time_s = to_seconds(t);
  out.sim_time_s = to_seconds(t - plan.start);
  if (stopped != nullptr) {
    const stop_cause c = stopped->cause();
    out.status = status_of(c);
    out.stop_reason = to_string(c);
    if (out.message.empty()) out.message = stop_message(*stopped, t);
  }
  out.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
}

}  // namespace cosim
