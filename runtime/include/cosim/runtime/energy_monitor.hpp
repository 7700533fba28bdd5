#pragma once
// Residual power and residual energy at the co-simulation interface.
//   delta_P = -(P_1 + P_2) with P_i = u~_i . y_i          (000 Eqs. (29)-(32); 002 Eqs. (5)-(8))
//   delta_E = integral of delta_P over the macro step     (000 Eq. (33); 002 Eq. (9))
// approximated by the rectangle rule for ZOH (002 Eq. (10)) and the trapezoidal rule for
// higher extrapolation orders (002 Eq. (11), whose leading minus sign is a misprint: the
// rule integrates delta_P itself). u~ is the value each consumer actually used at the end
// of the step, captured right after that consumer produced its outputs.
#include <cstddef>
#include <vector>

#include "cosim/runtime/system.hpp"

namespace cosim {

class energy_monitor {
 public:
  /// Where the monitor reads producer output `o` of subsystem `s`: the live subsystem
  /// (offline) or a mirror filled from per-step records (threaded executors).
  using output_locator = const double* (*)(void* ctx, std::size_t s, std::size_t o);
  explicit energy_monitor(system& sys, output_locator locate = nullptr, void* ctx = nullptr);
  // The captures point into terms_.
  energy_monitor(const energy_monitor&) = delete;
  energy_monitor& operator=(const energy_monitor&) = delete;

  static constexpr std::size_t max_captures = 32;

  /// Snapshot the bond inputs of subsystem `s` as used at time t (end of its step).
  void capture_inputs(std::size_t s, time_point t) noexcept {
    for (const capture& c : captures_[s]) *c.used = c.port->value_at(t);
  }
  /// Split form of capture_inputs for threaded runs: the subsystem's own thread reads
  /// (read_captures) and the recorder thread stores (store_captures).
  [[nodiscard]] std::size_t capture_count(std::size_t s) const noexcept;
  void read_captures(std::size_t s, time_point t, double* out) const noexcept;
  void store_captures(std::size_t s, const double* values) noexcept;
  /// Close the macro step ending at t of length H: evaluates delta_P(t) and delta_E.
  void close_step(duration H) noexcept;

  [[nodiscard]] bool empty() const noexcept { return terms_.empty(); }
  [[nodiscard]] double residual_power() const noexcept { return dP_; }
  [[nodiscard]] double residual_energy() const noexcept { return dE_; }
  [[nodiscard]] double sum_abs_energy() const noexcept { return sum_abs_dE_; }
  [[nodiscard]] double max_abs_power() const noexcept { return max_abs_dP_; }

  struct bond_totals {
    std::string name;
    double sum_abs_dE = 0.0;
    double max_abs_dP = 0.0;
  };
  [[nodiscard]] const std::vector<bond_totals>& bonds() const noexcept { return bond_totals_; }

 private:
  struct term {
    std::size_t bond = 0;
    double gain = 0.0;
    const double* effort_out = nullptr;  // producer output y_e
    const double* flow_out = nullptr;    // producer output y_f
    std::size_t effort_consumer = 0, effort_input = 0;
    std::size_t flow_consumer = 0, flow_input = 0;
    double effort_used = 0.0;  // u~ of the effort consumer
    double flow_used = 0.0;    // u~ of the flow consumer
  };
  struct capture {
    double* used;  // effort_used or flow_used of its term
    const input_port* port;
  };
  std::vector<term> terms_;
  std::vector<std::vector<capture>> captures_;  // per consumer subsystem, term order
  std::vector<bond_totals> bond_totals_;
  std::vector<double> bond_dP_prev_;
  bool trapezoid_ = false;
  double dP_ = 0.0, dE_ = 0.0, sum_abs_dE_ = 0.0, max_abs_dP_ = 0.0;
};

}  // namespace cosim
