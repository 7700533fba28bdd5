#include "cosim/runtime/executor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "run_accounting.hpp"

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

void validate_plan(const system& sys, const run_plan& plan) {
  COSIM_INPUT_CHECK(plan.macro_step.count() > 0, errc::config_value, "macro step must be > 0");
  COSIM_INPUT_CHECK(plan.macro_steps >= 0, errc::config_value, "duration must be >= 0");
  COSIM_INPUT_CHECK(plan.output_every >= 1, errc::config_value,
                    "output interval must be >= 1 step");
  for (std::size_t i = 0; i < sys.size(); ++i) {
    const subsystem& s = sys.at(i);
    const auto h = s.step_size().count();
    COSIM_INPUT_CHECK(h > 0, errc::config_value,
                      "step of subsystem '" + s.name() + "' must be > 0");
    COSIM_INPUT_CHECK(
        h <= plan.macro_step.count() && plan.macro_step.count() % h == 0, errc::config_value,
        "step of subsystem '" + s.name() + "' (" + std::to_string(to_seconds(s.step_size())) +
            " s) must divide the macro step (" + std::to_string(to_seconds(plan.macro_step)) +
            " s)");
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

run_outcome run_offline(system& sys, const run_plan& plan, const safety_limits& limits,
                        row_sink& sink, const std::atomic<bool>* stop_request) {
  validate_plan(sys, plan);
  sys.check_complete();
  const auto wall0 = std::chrono::steady_clock::now();
  run_outcome out;
  energy_monitor mon(sys);
  std::vector<const double*> probes;
  for (const probe& p : sys.probes()) probes.push_back(p.value);
  const auto columns = result_columns(sys);
  detail::run_accounting acc(plan, limits, sink, mon, probes, columns.size());
  sink.begin(columns);

  time_point t = plan.start;
  initialize_and_exchange(sys, plan);
  acc.start(t, out);

  const duration H = plan.macro_step;
  for (std::int64_t n = 0; n < plan.macro_steps; ++n) {
    if (stop_request != nullptr && stop_request->load(std::memory_order_relaxed)) {
      out.status = run_status::safety_stop;
      out.stop_reason = "operator_signal";
      break;
    }
    const time_point t1 = t + H;
    bool ok = true;
    if (plan.scheme == scheme_kind::jacobi) {
      for (std::size_t i : plan.order) {
        ok = scheme::advance(sys.at(i), t, H) && ok;
        mon.capture_inputs(i, t1);
      }
      for (std::size_t i : plan.order) scheme::deliver(sys, i, t1);
    } else {
      for (std::size_t i : plan.order) {
        ok = scheme::advance(sys.at(i), t, H) && ok;
        mon.capture_inputs(i, t1);
        scheme::deliver(sys, i, t1);
      }
    }
    mon.close_step(H);
    t = t1;
    if (!acc.after_step(n, t, ok, out)) break;
  }
  acc.finish(out);
  finish_outcome(out, plan, t, wall0);
  sink.end();
  return out;
}

void initialize_and_exchange(system& sys, const run_plan& plan) {
  // Start-up exchange in scheme order, so that feedthrough outputs at t0 see their
  // producers' initial values.
  for (std::size_t i = 0; i < sys.size(); ++i) sys.at(i).initialize(plan.start);
  for (std::size_t i : plan.order) {
    sys.at(i).update_outputs(plan.start);
    scheme::deliver(sys, i, plan.start);
  }
}

void finish_outcome(run_outcome& out, const run_plan& plan, time_point t,
                    std::chrono::steady_clock::time_point wall0) {
  out.stop_time_s = to_seconds(t);
  out.sim_time_s = to_seconds(t - plan.start);
  if (out.status == run_status::diverged && out.message.empty())
    out.message = "non-finite value at t = " + format_double(to_seconds(t)) + " s";
  if (out.stop_reason == "operator_signal" && out.message.empty())
    out.message = "stop requested by the operator (SIGINT/SIGTERM)";
  out.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
}

}  // namespace cosim
