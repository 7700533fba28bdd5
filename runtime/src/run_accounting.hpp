#pragma once
// What happens after each macro step, shared by every executor so that all modes
// produce byte-identical rows and identical stop decisions: assemble the row, check it
// is finite, apply output thinning, the safety limits and the alarms (alarm.hpp), keep the
// newest unrecorded row so that a stop between output points loses nothing.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cosim/runtime/alarm.hpp"
#include "cosim/runtime/energy_monitor.hpp"
#include "cosim/runtime/executor.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/rt_thread.hpp"
#include "cosim/runtime/stop_source.hpp"

namespace cosim::detail {

/// stop_source code of a non_finite stop whose `who` names a subsystem (else a column).
constexpr int non_finite_subsystem = 1;

class run_accounting {
 public:
  /// probe_values[i] points at the value of probe i (live or mirrored); `columns` (the
  /// results' header, kept by the caller for the run) names a non-finite value.
  run_accounting(const run_plan& plan, const safety_limits& limits, row_sink& sink,
                 const energy_monitor& mon, std::vector<const double*> probe_values,
                 const std::vector<std::string>& columns)
      : plan_(plan),
        limits_(limits),
        sink_(sink),
        mon_(mon),
        probes_(std::move(probe_values)),
        columns_(columns),
        alarms_(limits.alarms, columns),
        row_(columns.size(), 0.0),
        last_good_(columns.size(), 0.0) {}

  /// Columns after the energy-residual ones (iteration count and defect), read like probes.
  void add_tail(const double* value) { tail_.push_back(value); }

  /// Row of the start-up state at t0. False (non_finite raised in `stop`, naming the column;
  /// or a stop alarm) when a value is not finite or beyond an alarm's limit already there:
  /// the run must not step.
  bool start(time_point t0, run_outcome& out, stop_source& stop) noexcept {
    if (!fill(t0)) {
      raise_non_finite(stop);
      return false;
    }
    const std::size_t alarm = alarms_.start(t0, row_);
    sink_.write(row_);
    ++out.rows;
    if (alarm == alarm_monitor::none) return true;
    (void)raise_alarm(alarm, stop);
    return false;
  }

  /// After macro step n (ending at t). Returns false when the run must stop; the cause is
  /// then raised in `stop`. `failed`: the name of the first subsystem whose step failed or
  /// gave a non-finite output (when !ok and known).
  bool after_step(std::int64_t n, time_point t, bool ok, run_outcome& out, stop_source& stop,
                  const char* failed = nullptr) noexcept {
    ++out.macro_steps;
    if (!ok) {
      stop.raise(stop_cause::non_finite, failed != nullptr ? non_finite_subsystem : 0, failed);
      return false;
    }
    if (!fill(t)) {
      raise_non_finite(stop);
      return false;
    }
    const bool tripped_energy = mon_.sum_abs_energy() > limits_.energy_residual;
    const bool tripped_power = std::abs(mon_.residual_power()) > limits_.residual_power;
    const std::size_t alarm =
        alarms_.empty() ? alarm_monitor::none : alarms_.check(t, plan_.macro_step, row_);
    const bool tripped_alarm = alarm != alarm_monitor::none;
    const bool record = --until_output_ == 0;
    if (record) until_output_ = plan_.output_every;
    if (record || tripped_energy || tripped_power || tripped_alarm || n + 1 == plan_.macro_steps) {
      sink_.write(row_);
      ++out.rows;
      pending_ = false;
    } else {
      std::copy(row_.begin(), row_.end(), last_good_.begin());
      pending_ = true;
    }
    if (sink_.failed()) {
      stop.raise(stop_cause::output_error);
      return false;
    }
    if (tripped_energy || tripped_power) {
      const stop_cause c =
          tripped_energy ? stop_cause::energy_residual : stop_cause::residual_power;
      if (stop.raise(c)) {  // its message is written by finish(), off the stepping path
        trip_ = c;
        trip_t_ = t;
        trip_value_ = tripped_energy ? mon_.sum_abs_energy() : mon_.residual_power();
      }
      return false;
    }
    if (tripped_alarm) {
      (void)raise_alarm(alarm, stop);
      return false;
    }
    // Warn alarms: at most one line per alarm per second of wall-clock time.
    if (alarms_.log_pending()) alarms_.log_warnings(monotonic_now_ns(), false);
    return true;
  }

  /// A run that stops between output points keeps its last finite state.
  void finish(run_outcome& out) noexcept {
    if (pending_) {
      sink_.write(last_good_);
      ++out.rows;
      pending_ = false;
    }
    out.energy_residual = mon_.sum_abs_energy();
    out.max_residual_power = mon_.max_abs_power();
    out.bonds = mon_.bonds();
    if (trip_ != stop_cause::none && out.message.empty()) {
      try {
        out.message = trip_message();
      } catch (...) {
        // Out of memory: the stop reason alone still says what stopped the run.
      }
    }
    if (alarms_.empty()) return;
    alarms_.log_warnings(monotonic_now_ns(), true);
    out.alarms = alarms_.reports();
    if (fired_ != alarm_monitor::none) out.message = alarms_.stop_message(fired_);
  }

 private:
  bool fill(time_point t) noexcept {
    std::size_t i = 0;
    row_[i++] = to_seconds(t);
    for (const double* p : probes_) row_[i++] = *p;
    row_[i++] = mon_.residual_power();
    row_[i++] = mon_.residual_energy();
    row_[i++] = mon_.sum_abs_energy();
    for (const double* p : tail_) row_[i++] = *p;
    for (std::size_t c = 0; c < row_.size(); ++c)
      if (!std::isfinite(row_[c])) {
        bad_column_ = c;
        return false;
      }
    return true;
  }
  /// The safety limit that stopped the run: value, limit and time, and the bond with the
  /// largest share of the residual (sum |dE| or max |dP|).
  [[nodiscard]] std::string trip_message() const {
    const bool energy = trip_ == stop_cause::energy_residual;
    std::string m = energy ? "energy residual sum |dE| = " + format_double(trip_value_) +
                                 " J exceeded safety.energy_residual_limit = " +
                                 format_double(limits_.energy_residual) + " J"
                           : "residual power |dP| = " + format_double(std::abs(trip_value_)) +
                                 " W exceeded safety.residual_power_limit = " +
                                 format_double(limits_.residual_power) + " W";
    m += " at t = " + format_double(to_seconds(trip_t_)) + " s";
    const auto& bonds = mon_.bonds();
    const auto share = [&](const energy_monitor::bond_totals& b) {
      return energy ? b.sum_abs_dE : b.max_abs_dP;
    };
    const auto top =
        std::max_element(bonds.begin(), bonds.end(),
                         [&](const auto& a, const auto& b) { return share(a) < share(b); });
    if (top != bonds.end())
      m += " (bond '" + top->name + "': " + (energy ? "sum |dE| = " : "max |dP| = ") +
           format_double(share(*top)) + (energy ? " J)" : " W)");
    return m;
  }

  void raise_non_finite(stop_source& stop) const noexcept {
    stop.raise(stop_cause::non_finite, 0, columns_[bad_column_].c_str());
  }
  // True when the alarm became the run's cause (not an earlier one, e.g. the operator's).
  bool raise_alarm(std::size_t i, stop_source& stop) noexcept {
    if (!stop.raise(stop_cause::alarm, static_cast<int>(i), limits_.alarms[i].name.c_str()))
      return false;
    fired_ = i;
    return true;
  }

  const run_plan& plan_;
  const safety_limits& limits_;
  row_sink& sink_;
  const energy_monitor& mon_;
  std::vector<const double*> probes_;
  std::vector<const double*> tail_;
  const std::vector<std::string>& columns_;
  alarm_monitor alarms_;
  std::size_t fired_ = alarm_monitor::none;  // the stop alarm that ended the run
  std::size_t bad_column_ = 0;               // the first non-finite value of the last fill()
  std::vector<double> row_;
  std::vector<double> last_good_;
  bool pending_ = false;
  std::int64_t until_output_ = plan_.output_every;  // macro steps to the next recorded row
  stop_cause trip_ = stop_cause::none;  // the safety limit that stopped the run, if it did
  time_point trip_t_{};
  double trip_value_ = 0.0;
};

}  // namespace cosim::detail
