#pragma once
// Double-actuated crane of 001 Sect. 4.1.1: the crane of 003 with a second, identical
// cylinder between P (middle of link 1) and the middle of link 2 (kinematics in
// rim_crane.hpp). Initial static equilibrium (001 Sect. 4.3, Eq. (41); 001 Table 3) and the
// valve law of actuator 2 (001 Eq. (35)).
#include <array>

#include "cosim/runtime/port.hpp"
#include "cosim/subsystems/crane_model.hpp"

namespace cosim::crane {

/// Static equilibrium of both actuators; act[0] is B-P, act[1] is P-mid(link 2).
struct crane2_equilibrium {
  std::array<equilibrium, 2> act;
  int iterations = 0;  // Newton iterations of the slower actuator
};

/// 001 Algorithm 1, lines 2-4: with q = q0 and qd = 0, the actuator forces that hold the
/// mechanism, f_h = -Mt A M^-1 (f - c) (001 Eq. (13) with wd_i = 0, the two-actuator form
/// of 003 Eq. (15)), then per cylinder Newton-Raphson on 003 Eq. (17) for (p1, p2, kappa)
/// from 003's guess (3.3 MPa, 4.4 MPa, 0.5) until the update is negligible (001 Eq. (41)).
crane2_equilibrium solve_crane2_equilibrium(const mechanical_params& mp, const hydraulic_params& hp,
                                            int max_iterations = 50);

/// Newton-Raphson on 003 Eq. (17) for one cylinder of length s0 that must deliver f_h at
/// rest; the Jacobian is by central differences. Stops when the relative update is below
/// 1e-12 or after max_iterations. Returns the number of iterations in `iterations`.
equilibrium solve_cylinder_equilibrium(const hydraulic_params& hp, double s0, double fh,
                                       int max_iterations, int& iterations);

/// Valve law of actuator 2, 001 Eq. (35): kappa_{2,0} - 0.0025 t up to t_a = 2 s, then
/// kappa_{2,0} - 0.005.
[[nodiscard]] double kappa2_law(double t, double kappa20) noexcept;

class kappa2_manoeuvre final : public signal_source {
 public:
  explicit kappa2_manoeuvre(double kappa20) noexcept : kappa20_(kappa20) {}
  [[nodiscard]] double value(time_point t) const noexcept override {
    return kappa2_law(to_seconds(t), kappa20_);
  }

 private:
  double kappa20_;
};

}  // namespace cosim::crane
