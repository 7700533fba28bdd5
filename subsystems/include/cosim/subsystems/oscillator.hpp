#pragma once
// Mass-spring-damper oscillators with known solutions: the benchmark problems of
// 000 App. A.1-A.3 and the double-mass triple-spring test of 004 Sect. 3.
//
// Monolithic description (oscillator_definition): point masses on a line, each tied to the
// ground by a spring k_i and a damper c_i, and pairs of masses joined by coupling
// spring-dampers (links). Element forces follow the power laws of 000 Eqs. (55)-(56),
//   spring F = k |d|^(n-1) d,   damper F = c |d'|^(p-1) d',
// (the paper calls the damper order m; here it is p, so that m stays the mass); n = p = 1
// is the linear system M x'' + C x' + K x = 0 of 000 Eqs. (9)-(11).
//
// Reference solutions:
//  - linear: z(t) = e^{A (t - t0)} z0 with z = [x; x'] and A = [0 I; -M^-1 K  -M^-1 C]
//    (000 Eqs. (34)-(36), (43)-(46); for 004 this reproduces 004 Eq. (3)).
//    000 Eq. (45) divides the last stiffness entry by m_2; the physics (and Eq. (46)) has
//    m_3 there. We use m_3.
//  - nonlinear (000 A.3): a monolithic classical RK4 integration at a fine step.
#include <Eigen/Dense>
#include <cmath>
#include <cstddef>
#include <vector>

namespace cosim::osc {

/// k |d|^(e-1) d (000 Eqs. (55)-(56)); exact shortcuts for the common exponents 1 and 2.
inline double power_law(double coeff, double exponent, double d) noexcept {
  if (exponent == 1.0) return coeff * d;
  const double a = d < 0.0 ? -d : d;
  if (exponent == 2.0) return coeff * a * d;
  return coeff * std::pow(a, exponent - 1.0) * d;
}
/// d/dd of power_law: e k |d|^(e-1).
inline double power_law_slope(double coeff, double exponent, double d) noexcept {
  if (exponent == 1.0) return coeff;
  const double a = d < 0.0 ? -d : d;
  if (exponent == 2.0) return 2.0 * coeff * a;
  return exponent * coeff * std::pow(a, exponent - 1.0);
}

/// A coupling spring-damper between masses a and b.
struct link {
  std::size_t a = 0, b = 0;
  double k = 0.0;  // [N/m] (times m^(1-n) for n != 1)
  double c = 0.0;  // [N s/m] (times (s/m)^(p-1) for p != 1)
};

struct oscillator_definition {
  std::vector<double> m;  // masses [kg]
  std::vector<double> k;  // ground springs per mass
  std::vector<double> c;  // ground dampers per mass
  std::vector<link> links;
  double spring_exponent = 1.0;  // n of 000 Eq. (55)
  double damper_exponent = 1.0;  // m of 000 Eq. (56)
  std::vector<double> x0, v0;    // initial displacements [m] and velocities [m/s]

  [[nodiscard]] std::size_t size() const noexcept { return m.size(); }
  [[nodiscard]] bool linear() const noexcept {
    return spring_exponent == 1.0 && damper_exponent == 1.0;
  }
};

/// Throws std::invalid_argument for inconsistent sizes, a non-positive mass (singular M),
/// negative coefficients, exponents below 1 or links out of range.
void validate(const oscillator_definition& d);

Eigen::MatrixXd mass_matrix(const oscillator_definition& d);
Eigen::MatrixXd damping_matrix(const oscillator_definition& d);    // linear part (p = 1)
Eigen::MatrixXd stiffness_matrix(const oscillator_definition& d);  // linear part (n = 1)
/// A of 000 Eq. (35) / (44): z' = A z with z = [x; x'].
Eigen::MatrixXd state_matrix(const oscillator_definition& d);
Eigen::VectorXd initial_state(const oscillator_definition& d);
/// z' for the (possibly nonlinear) monolithic system, 000 Eqs. (57)-(58).
Eigen::VectorXd derivative(const oscillator_definition& d, const Eigen::VectorXd& z);
/// Kinetic energy plus the potential of every spring: k |d|^(n+1) / (n+1).
double mechanical_energy(const oscillator_definition& d, const Eigen::VectorXd& x,
                         const Eigen::VectorXd& v);
/// Undamped natural frequencies [rad/s], ascending: sqrt of the eigenvalues of M^-1 K.
std::vector<double> natural_frequencies(const oscillator_definition& d);

/// The exact solution of a linear definition, or a fine monolithic RK4 solution of a
/// nonlinear one.
class reference_solution {
 public:
  /// `fine_step` is the largest RK4 step used for nonlinear definitions [s].
  explicit reference_solution(oscillator_definition d, double fine_step = 1e-5);

  [[nodiscard]] const oscillator_definition& definition() const noexcept { return def_; }
  /// States [x; x'] at ascending times >= 0 (t0 = 0).
  [[nodiscard]] std::vector<Eigen::VectorXd> states_at(const std::vector<double>& times) const;
  [[nodiscard]] Eigen::VectorXd state_at(double t) const;

 private:
  oscillator_definition def_;
  Eigen::MatrixXd A_;
  Eigen::VectorXd z0_;
  double fine_step_;
};

/// One classical RK4 step of the monolithic system (004 Eq. (1)).
Eigen::VectorXd rk4_step(const oscillator_definition& d, const Eigen::VectorXd& z, double h);

// ---- The benchmark parameter sets ------------------------------------------------------

/// Two masses, ground springs/dampers and one coupling element (000 Fig. 17).
struct two_mass_params {
  double m1 = 1.0, m2 = 1.0;                  // [kg]
  double k1 = 10.0, k2 = 1000.0, kc = 100.0;  // [N/m]
  double c1 = 0.0, c2 = 0.0, cc = 0.0;        // [N s/m]
  double x10 = 0.0, x20 = 0.0;                // [m]
  double v10 = 100.0, v20 = -100.0;           // [m/s]
  double spring_exponent = 1.0, damper_exponent = 1.0;
};
/// 000 App. A.1, damping case 1 (undamped), 2 (c = 0.01 Ns/m) or 3 (c = 10 Ns/m).
/// Throws std::invalid_argument for another case number.
two_mass_params a1_params(int damping_case);
/// 000 App. A.3. The paper prints no values for this problem. We keep the A.1 masses,
/// springs and initial state, linear springs (n = 1: "linear springs and nonlinear
/// dampers") and quadratic dampers (p = 2) with the A.1 case-2 coefficients
/// c1 = c2 = cc = 0.01 N s^2/m^2: at the initial 100 m/s a damper pulls 100 N against
/// spring forces of order k2 x ~ 3 kN, so the energy decays clearly and nonlinearly over
/// the 10 s run without making the problem stiff.
two_mass_params a3_params();
oscillator_definition make_definition(const two_mass_params& p);

/// Three masses; masses 1 and 2 each coupled to mass 3 (000 Fig. 20, Eq. (42)).
struct three_mass_params {
  double m1 = 10.0, m2 = 25.0, m3 = 100.0;    // [kg]
  double k1 = 10.0, k2 = 5.0, k3 = 100.0;     // [N/m]
  double kc1 = 100.0, kc2 = 100.0;            // [N/m]
  double c1 = 0.0, c2 = 0.0, c3 = 0.0;        // [N s/m]
  double cc1 = 0.0, cc2 = 0.0;                // [N s/m]
  double x10 = 0.0, x20 = 0.0, x30 = 0.0;     // [m]
  double v10 = 10.0, v20 = 5.0, v30 = -10.0;  // [m/s]
};
/// 000 App. A.2 (the defaults above).
inline three_mass_params a2_params() {
  return {};
}
oscillator_definition make_definition(const three_mass_params& p);

/// 004 Sect. 3: double-mass triple-spring system (004 Eq. (2)) given by its motion
/// x1 = C11 cos w1 t + C13 cos w2 t, x2 = C21 cos w1 t + C23 cos w2 t (004 Eq. (3)).
struct params004 {
  double fr = 30.0;      // FR = w1 / w2 (004 Eq. (5)); the paper sweeps 1.5 ... 100
  double ar12 = 0.1;     // C11 / C23 (004 Sect. 3.2)
  double ar1 = 0.1;      // C11 / C13
  double ar2 = -1000.0;  // C23 / C21
  double zeta = 0.0;     // damping ratio of 004 Eq. (9), 0 ... 0.5 in the paper
  double f1 = 1.0;       // w1 = 1 Hz (004 Eq. (4)) [Hz]
  double c11 = 1.0;      // C11 = 1 m (004 Eq. (4)) [m]
  double m1 = 1.0;       // [kg]; not printed, and the motion does not depend on it
};
/// Physical parameters of 004 Eq. (2) from the ratios (see oscillator.cpp for the
/// derivation). Throws std::invalid_argument when FR <= 1 or the ratios admit no positive
/// masses and springs.
struct physical004 {
  double m1, m2, k1, k2, k3, c1, c3;
  double w1, w2;              // [rad/s]
  double C11, C13, C21, C23;  // modal amplitudes of 004 Eq. (3) [m]
};
physical004 derive004(const params004& p);
oscillator_definition make_definition(const params004& p);

}  // namespace cosim::osc
