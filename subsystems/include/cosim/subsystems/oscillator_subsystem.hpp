#pragma once
// One point mass of an oscillator as a co-simulation unit (000 Sect. 1.2 and App. A;
// 004 Sect. 3).
//
// The mass m is tied to the ground by a spring k and a damper c (power laws of 000 Eqs.
// (55)-(56)). It may own coupling elements (links) to neighbours whose displacement and
// velocity arrive on inputs "x<tag>", "v<tag>": that is 000 Eq. (12) (force-displacement,
// the force owner) and Eqs. (40)-(41) (displacement-displacement, both sides own a copy of
// the element, 000 Eq. (19)). A force-owner also sends its element's force on the
// neighbour, f = k (x - xi) + c (x' - xi') (000 Eq. (13)), on output "f": direct
// feedthrough, evaluated with the inputs extrapolated to the output time (000 Eq. (24)).
// Forces received from a neighbour's link arrive on inputs "f<tag>" (000 Eq. (14)).
//
// Ports: outputs "x" [m], "v" [m/s] (flow), "f" [N] (effort, force owners only);
// inputs "x<tag>" [m], "v<tag>" [m/s] (flow), "f<tag>" [N] (effort).
// Variables: "x", "v", "a" (acceleration at the last step end).
//
// Integrators: semi-implicit Euler (symplectic, order 1), trapezoidal rule (order 2; 004
// uses it for the slow subsystem) and classical RK4 (004 Eq. (1), order 4, Simulink ode4,
// 004's fast subsystem). step() is noexcept and allocation-free.
#include <cstddef>
#include <string>
#include <tuple>
#include <vector>

#include "cosim/runtime/subsystem.hpp"

namespace cosim::osc {

enum class integrator { semi_implicit_euler, trapezoidal, rk4 };
/// "semi-implicit-euler", "trapezoidal", "rk4"; returns false for anything else.
bool parse_integrator(const std::string& text, integrator& out) noexcept;

struct mass_spec {
  double m = 1.0;  // [kg]
  double k = 0.0;  // ground spring
  double c = 0.0;  // ground damper
  double spring_exponent = 1.0;
  double damper_exponent = 1.0;
  double x0 = 0.0, v0 = 0.0;
};

class oscillator_mass final : public subsystem {
 public:
  oscillator_mass(std::string name, const mass_spec& spec, integrator integ);

  /// A coupling spring-damper (k, c) to a neighbour whose state arrives on inputs
  /// "x<tag>" and "v<tag>" (initial values x0, v0 of the neighbour). With send_force the
  /// element's force on the neighbour is the output "f" (at most one such link).
  void add_link(const std::string& tag, double k, double c, double neighbour_x0,
                double neighbour_v0, bool send_force);
  /// A force from a neighbour's link on input "f<tag>", with its value at t0.
  void add_force(const std::string& tag, double f0);

  [[nodiscard]] double x() const noexcept { return x_; }
  [[nodiscard]] double v() const noexcept { return v_; }

  static constexpr std::size_t out_x = 0, out_v = 1, out_f = 2;

  /// f uses the sending link's neighbour x and v at t (000 Eq. (13)), nothing else.
  [[nodiscard]] bool output_depends_on(std::size_t o, std::size_t i) const noexcept override;
  /// d f / d x<tag> and d f / d v<tag> of the sending link (000 Eq. (13)).
  [[nodiscard]] bool provides_partial(std::size_t o, std::size_t i) const noexcept override {
    return output_depends_on(o, i);
  }

 private:
  void do_initialize(time_point t0) override;
  bool do_step(time_point t, duration h) noexcept override;
  void do_update_outputs(time_point t) noexcept override;
  double do_output_partial(std::size_t o, std::size_t i) noexcept override;
  // Everything step() changes (rollback, iterative coupling).
  auto state() noexcept { return std::tie(x_, v_, a_); }
  bool do_can_save_state() const noexcept override { return true; }
  bool do_save_state() noexcept override {
    saved_ = state();
    return true;
  }
  bool do_restore_state() noexcept override {
    state() = saved_;
    return true;
  }

  struct link_in {
    double k, c;
    std::size_t in_x, in_v;
    double x0, v0;
  };
  struct force_in {
    std::size_t in_f;
    double f0;
  };
  /// Acceleration at time t for state (x, v), inputs extrapolated to t; optionally the
  /// partial derivatives with respect to x and v (for the trapezoidal Newton iteration).
  double accel(time_point t, double x, double v, double* da_dx = nullptr,
               double* da_dv = nullptr) const noexcept;
  [[nodiscard]] double link_force(const link_in& l, time_point t) const noexcept;

  mass_spec spec_;
  integrator integrator_;
  std::vector<link_in> links_;
  std::vector<force_in> forces_;
  std::size_t sending_link_ = npos;
  double x_ = 0.0, v_ = 0.0, a_ = 0.0;
  time_point t_out_{};  // the last update_outputs time (do_output_partial)
  std::tuple<double, double, double> saved_;
};

}  // namespace cosim::osc
