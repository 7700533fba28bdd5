#include "cosim/runtime/executor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "cosim/runtime/error.hpp"

namespace cosim {

const char* to_string(run_status s) noexcept {
  switch (s) {
    case run_status::completed: return "completed";
    case run_status::diverged: return "diverged";
    case run_status::safety_stop: return "safety_stop";
    case run_status::error: return "error";
  }
  return "error";
}

void validate_plan(const system& sys, const run_plan& plan) {
  COSIM_INPUT_CHECK(plan.macro_step.count() > 0, errc::config_value, "macro step must be > 0");
  COSIM_INPUT_CHECK(plan.macro_steps >= 0, errc::config_value, "duration must be >= 0");
  COSIM_INPUT_CHECK(plan.output_every >= 1, errc::config_value, "output interval must be >= 1 step");
  for (std::size_t i = 0; i < sys.size(); ++i) {
    const subsystem& s = sys.at(i);
    const auto h = s.step_size().count();
    COSIM_INPUT_CHECK(h > 0, errc::config_value, "step of subsystem '" + s.name() + "' must be > 0");
    COSIM_INPUT_CHECK(h <= plan.macro_step.count() && plan.macro_step.count() % h == 0,
                      errc::config_value,
                      "step of subsystem '" + s.name() + "' (" + std::to_string(to_seconds(s.step_size())) +
                          " s) must divide the macro step (" +
                          std::to_string(to_seconds(plan.macro_step)) + " s)");
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


namespace {

// Fills the row at time t; returns false if any recorded value is not finite.
bool fill_row(const system& sys, const energy_monitor& mon, time_point t, std::vector<double>& row) {
  std::size_t i = 0;
  row[i++] = to_seconds(t);
  for (const probe& p : sys.probes()) row[i++] = *p.value;
  row[i++] = mon.residual_power();
  row[i++] = mon.residual_energy();
  row[i++] = mon.sum_abs_energy();
  for (double v : row)
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

run_outcome run_offline(system& sys, const run_plan& plan, const safety_limits& limits,
                        row_sink& sink, const std::atomic<bool>* stop_request) {
  validate_plan(sys, plan);
  sys.check_complete();
  const auto wall0 = std::chrono::steady_clock::now();
  run_outcome out;
  energy_monitor mon(sys);
  const auto columns = result_columns(sys);
  std::vector<double> row(columns.size(), 0.0);
  std::vector<double> last_good(columns.size(), 0.0);  // newest unrecorded finite row
  sink.begin(columns);

  // Start-up exchange in scheme order, so that feedthrough outputs at t0 see their
  // producers' initial values.
  time_point t = plan.start;
  for (std::size_t i = 0; i < sys.size(); ++i) sys.at(i).initialize(t);
  for (std::size_t i : plan.order) {
    sys.at(i).update_outputs(t);
    scheme::deliver(sys, i, t);
  }
  bool row_pending = false;
  if (fill_row(sys, mon, t, row)) {
    sink.write(row);
    ++out.rows;
  }

  const duration H = plan.macro_step;
  for (std::int64_t n = 0; n < plan.macro_steps; ++n) {
    if (stop_request != nullptr && stop_request->load(std::memory_order_relaxed)) {
      out.status = run_status::safety_stop;
      out.stop_reason = "operator_signal";
      out.message = "stop requested by the operator";
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
    ++out.macro_steps;
    if (!ok || !fill_row(sys, mon, t, row)) {
      out.status = run_status::diverged;
      out.stop_reason = "non_finite";
      out.message = "non-finite value at t = " + std::to_string(to_seconds(t)) + " s";
      break;
    }
    const bool tripped_energy = mon.sum_abs_energy() > limits.energy_residual;
    const bool tripped_power = std::abs(mon.residual_power()) > limits.residual_power;
    const bool record = (out.macro_steps % plan.output_every) == 0;
    if (record || tripped_energy || tripped_power || n + 1 == plan.macro_steps) {
      sink.write(row);
      ++out.rows;
      row_pending = false;
    } else {
      std::copy(row.begin(), row.end(), last_good.begin());
      row_pending = true;
    }
    if (tripped_energy || tripped_power) {
      out.status = run_status::safety_stop;
      out.stop_reason = tripped_energy ? "energy_residual" : "residual_power";
      break;
    }
  }
  if (row_pending) {  // a run that stops between output points keeps its last state
    sink.write(last_good);
    ++out.rows;
  }
  out.stop_time_s = to_seconds(t);
  out.sim_time_s = to_seconds(t - plan.start);
  out.energy_residual = mon.sum_abs_energy();
  out.max_residual_power = mon.max_abs_power();
  out.bonds = mon.bonds();
  sink.end();
  out.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return out;
}

}  // namespace cosim
