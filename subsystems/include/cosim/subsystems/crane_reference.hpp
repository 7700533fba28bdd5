#pragma once
// Monolithic reference solver of the hydraulic crane (003 Sect. 4, Eqs. (21)-(30)):
// index-3 augmented Lagrangian formulation in natural coordinates, trapezoidal rule,
// Newton-Raphson on the dynamic equilibrium with Lagrange-multiplier updates, then
// velocity and acceleration projections. The pressures are integrated with the same
// trapezoidal rule in the same Newton system (monolithic, 003 Eq. (23)).
//
// Coordinates (deviation from 003 Eq. (21)):
//   z = [x_P, y_P, x_Q, y_Q, x_R, y_R, s1, p1, p2]
// Eq. (21) lists only P, Q and s1, which describe link 1 alone; the crane has a second
// d.o.f. (link 2, a massless rod Q-R with point mass m_h at R). We add the point R as two
// more natural coordinates and one more constraint, so the mass matrix stays constant and
// diagonal and every constraint stays quadratic (constant Hessians, exact tangent):
//   Phi_1 = x_P^2 + y_P^2 - (L/2)^2            (003 Eq. (22), A at the origin)
//   Phi_2 = x_Q - 2 x_P,  Phi_3 = y_Q - 2 y_P   (003 Eq. (22))
//   Phi_4 = (x_P - x_B)^2 + (y_P - y_B)^2 - s1^2 (003 Eq. (22))
//   Phi_5 = (x_R - x_Q)^2 + (y_R - y_Q)^2 - L_h^2 (added: link 2)
// 7 mechanical coordinates - 5 constraints = 2 d.o.f. (theta1, theta2).
//
// Mass matrix: diag(0, 0, m/3 + m_p, m/3 + m_p, m_h, m_h, 0). A uniform rod pivoting at the
// fixed point A has kinetic energy (1/2)(m/3)|dQ/dt|^2 (inertia m L^2/3 about A), so the
// rod lumps m/3 on Q in natural coordinates; m_p sits at Q and m_h at R. P and s1 carry no
// mass; the constraints fix them. Gravity: the rod's weight acts at Q/2, so the generalized
// force on y_Q is -g (m/2 + m_p) and on y_R it is -g m_h. In theta coordinates this is
// exactly the corrected 003 Eq. (2) (docs/coupling.md, "Where the code departs from the
// printed papers"): M11 = L^2 (m/3 + m_p + m_h),
// f1 = -g L (m/2 + m_p + m_h) cos(theta1).
// The actuator force f_h = (p2 - p1) a_p - c ds1/dt (003 Eq. (8)) is the generalized force
// conjugate to s1: Phi_4 makes s1 the length B-P, so f_h does virtual work f_h ds1.
//
// Residual and tolerance: the Newton residual is that of 003 Eqs. (25)/(27) without the
// factor h^2/4 and in engineering units,
//   b = [ (M q'' + Phi_q^T (alpha Phi + lambda) - Q) in kN ; (p' - h) in MPa/s ],
// and the iteration stops when ||b||_2 < tolerance (1e-5: 0.01 N of force imbalance and
// 10 Pa/s of pressure-rate error). The paper's h^2/4 scaling is not used for the test: at
// h = 0.05 ms it would accept 16 kN of imbalance, i.e. constraint violations ~3e-8 m after
// one iteration. The round-off floor is ~4e-7 (alpha times the round-off of Phi; a 1e-7
// tolerance cannot be met at h = 0.05 ms). At least one Newton correction is made every
// step. The augmented-Lagrangian update (Eq. (28)) converges linearly with factor ~
// M / (M + h^2/4 alpha |Phi_q|^2), ~0.7 at h = 0.05 ms: transients take up to ~20 iterations.
#include <vector>

#include "cosim/runtime/stop_source.hpp"
#include "cosim/subsystems/crane_model.hpp"
#include "cosim/subsystems/manoeuvre.hpp"

namespace cosim::crane {

struct reference_options {
  manoeuvre_kind manoeuvre = manoeuvre_kind::m1;
  double step = 5e-5;              // h [s] (003 Sect. 4: 0.05 ms)
  double duration = 10.0;          // [s]
  double output_interval = 0.01;   // [s], must be a multiple of step
  int max_newton_iterations = 50;  // corrections per step before giving up
  double tolerance = 1e-5;         // on ||b||_2 in kN and MPa/s, see above
  double penalty = 1e12;           // alpha of 003 Eq. (23)
  int projections = 3;             // velocity and acceleration projections (003 Eq. (29))
  /// Polled at every output row: once raised (an operator signal), the run ends there with
  /// the rows so far and reference_result::stopped set.
  const cosim::stop_source* stop = nullptr;
};

/// One output row; the first seven columns match the co-simulation CSV contract
/// t,kappa,s,sd,p1,p2,fh.
struct reference_sample {
  double t = 0.0;
  double kappa = 0.0;
  double s = 0.0;                     // actuator length s1 [m]
  double sd = 0.0;                    // ds1/dt [m/s]
  double p1 = 0.0;                    // [Pa]
  double p2 = 0.0;                    // [Pa]
  double fh = 0.0;                    // 003 Eq. (8) [N]
  double constraint_violation = 0.0;  // largest length error of the constraints [m]
};

struct reference_result {
  std::vector<reference_sample> samples;
  bool converged = true;
  double fail_time = 0.0;      // time of the step whose Newton iteration failed [s]
  double fail_residual = 0.0;  // ||b||_2 (kN, MPa/s) at the last iteration of that step
  int max_iterations_used = 0;
  long total_iterations = 0;              // Newton corrections summed over all steps
  double max_constraint_violation = 0.0;  // over every step [m]
  double max_velocity_violation = 0.0;    // |Phi_q q'| after projections, in m/s
  double max_final_residual = 0.0;        // largest converged ||b||_2 over all steps
  long steps = 0;                         // completed steps
  bool stopped = false;                   // ended early by options.stop
  equilibrium initial;                    // the solve_equilibrium() start state
};

/// Runs the monolithic reference (003 Sect. 4) from the static equilibrium of
/// solve_equilibrium() (same s0, p1, p2, kappa0), zero velocities and consistent initial
/// accelerations. Samples every output_interval, t = 0 included. On Newton failure the run
/// stops, keeps the samples so far and reports converged = false with the time and
/// residual. Throws std::invalid_argument on a non-positive step or an output interval that
/// is not a multiple of the step.
reference_result run_crane_reference(const reference_options& options,
                                     const mechanical_params& mp = {},
                                     const hydraulic_params& hp = {});

}  // namespace cosim::crane
