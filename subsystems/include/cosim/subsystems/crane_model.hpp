#pragma once
// Hydraulically actuated 2-d.o.f. crane of paper 003 (also 000 A.4, 001 Sect. 4.1).
// Parameters (003 Tables 1-2), kinematics (003 Eqs. (4)-(5)), dynamics with the
// 003 Eq. (2) mass matrix corrected (docs/coupling.md, "Where the code departs from the
// printed papers"), and the hydraulic ODEs (003 Eqs. (8)-(13)).
#include <Eigen/Dense>
#include <cmath>
#include <numbers>

namespace cosim::crane {

struct mechanical_params {
  double L = 1.0;                         // link 1 length [m]
  double Lh = 0.5;                        // link 2 length [m]
  double m = 200.0;                       // link 1 mass [kg]
  double mp = 250.0;                      // point mass at Q [kg]
  double mh = 100.0;                      // point mass at R [kg]
  double xB = std::numbers::sqrt3 / 2.0;  // fixed actuator end B [m]
  double yB = 0.0;
  double g = 9.81;  // gravity magnitude, acting along -y [m/s^2]
  double theta1_0 = std::numbers::pi / 6.0;
  double theta2_0 = 1.5 * std::numbers::pi;  // same configuration as -pi/2
};

struct hydraulic_params {
  double ap = 65e-4;         // piston area [m^2]
  double l = 0.442;          // cylinder length [m]
  double c = 1e5;            // viscous friction [N s/m]
  double cd = 0.67;          // valve discharge coefficient
  double rho = 850.0;        // fluid density [kg/m^3]
  double pP = 7.6e6;         // pump pressure [Pa]
  double pT = 0.1e6;         // tank pressure [Pa]
  double a = 6.53e-10;       // compressibility coefficient [1/Pa]
  double b = -1.19e-18;      // compressibility coefficient [1/Pa^2]
  double valve_area = 5e-4;  // 003 Eq. (13) [m^2]
};

using vec2 = Eigen::Vector2d;
using mat2 = Eigen::Matrix2d;

/// Actuator 1 between B and P (middle of link 1): s1 and ds1/dtheta1 (003 Eq. (5),
/// written for general L and B so that s1^2 = L^2/4 + |B|^2 - L (xB cos th1 + yB sin th1)).
struct actuator_kinematics {
  double s = 0.0;
  double ds_dth1 = 0.0;
};

inline actuator_kinematics actuator1(const mechanical_params& p, double th1) noexcept {
  const double xP = 0.5 * p.L * std::cos(th1);
  const double yP = 0.5 * p.L * std::sin(th1);
  const double dx = xP - p.xB;
  const double dy = yP - p.yB;
  const double s = std::sqrt(dx * dx + dy * dy);
  // d(s^2)/dth1 = 2 (dx dxP/dth1 + dy dyP/dth1); 003 Eq. (5) for the table's dimensions.
  const double ds = (dx * (-0.5 * p.L * std::sin(th1)) + dy * (0.5 * p.L * std::cos(th1))) / s;
  return {s, ds};
}

/// 003 Eq. (2) with the erratum: M11 = L^2 (m/3 + mp + mh).
inline mat2 mass_matrix(const mechanical_params& p, const vec2& q) noexcept {
  const double m12 = p.L * p.Lh * p.mh * std::cos(q[0] - q[1]);
  mat2 M;
  M << p.L * p.L * (p.m / 3.0 + p.mp + p.mh), m12, m12, p.Lh * p.Lh * p.mh;
  return M;
}

/// Velocity-dependent terms c of 003 Eq. (2).
inline vec2 velocity_terms(const mechanical_params& p, const vec2& q, const vec2& qd) noexcept {
  const double k = p.L * p.Lh * p.mh * std::sin(q[0] - q[1]);
  return {k * qd[1] * qd[1], -k * qd[0] * qd[0]};
}

/// Gravity forces f of 003 Eq. (2) with the erratum: f1 = -g L (m/2 + mp + mh) cos th1.
inline vec2 gravity_forces(const mechanical_params& p, const vec2& q) noexcept {
  return {-p.g * p.L * (p.m / 2.0 + p.mp + p.mh) * std::cos(q[0]),
          -p.g * p.Lh * p.mh * std::cos(q[1])};
}

/// Bulk modulus, 003 Eq. (11).
inline double bulk_modulus(const hydraulic_params& h, double p) noexcept {
  return (1.0 + h.a * p + h.b * p * p) / (h.a + 2.0 * h.b * p);
}

/// Signed orifice flow term c_d sqrt(2 dp / rho), zero for negative dp (the deltas of
/// 003 Eqs. (9)-(10)).
inline double orifice(const hydraulic_params& h, double dp) noexcept {
  return dp > 0.0 ? h.cd * std::sqrt(2.0 * dp / h.rho) : 0.0;
}

/// Pressure rates, 003 Eqs. (9)-(13). s0 is the initial actuator length.
inline vec2 pressure_rates(const hydraulic_params& h, double s0, double s, double sd, double kappa,
                           double p1, double p2) noexcept {
  const double ai = h.valve_area * kappa;  // 003 Eq. (13)
  const double ao = h.valve_area * (1.0 - kappa);
  const double l1 = 0.5 * h.l + s0 - s;  // 003 Eq. (12)
  const double l2 = 0.5 * h.l + s - s0;
  const double q1 = h.ap * sd + ai * orifice(h, h.pP - p1) - ao * orifice(h, p1 - h.pT);
  const double q2 = -h.ap * sd + ao * orifice(h, h.pP - p2) - ai * orifice(h, p2 - h.pT);
  return {bulk_modulus(h, p1) / (h.ap * l1) * q1, bulk_modulus(h, p2) / (h.ap * l2) * q2};
}

/// Actuator force, 003 Eq. (8).
inline double actuator_force(const hydraulic_params& h, double p1, double p2, double sd) noexcept {
  return (p2 - p1) * h.ap - h.c * sd;
}

/// Consistent initial state of 003 Sect. 1.3.
struct equilibrium {
  double s0 = 0.0;
  double fh = 0.0;
  double p1 = 0.0;
  double p2 = 0.0;
  double kappa0 = 0.0;
  double residual = 0.0;  // |g| of 003 Eq. (17) after the last iteration
};

/// Static equilibrium: f_h from 003 Eq. (15), then Newton-Raphson on 003 Eq. (17) for
/// (p1, p2, kappa) from the paper's guess (3.3 MPa, 4.4 MPa, 0.5) with an analytic
/// Jacobian. `iterations` = 3 reproduces the paper's procedure.
equilibrium solve_equilibrium(const mechanical_params& mp, const hydraulic_params& hp,
                              int iterations = 3);

}  // namespace cosim::crane
