#pragma once
// Reduced interface model (RIM) quantities of the crane models (001 Sects. 2 and 4.1):
// the actuator kinematics to second order and the effective mass matrix and force along
// the actuator directions, 001 Eqs. (12)-(13), in the independent coordinates
// q = (th1, th2), v = qd (001 Eq. (20): N = I).
//
// Actuator 1 joins B and P (middle of link 1), 003 Eq. (5) / 001 Eq. (22). Actuator 2
// (double-actuated crane, 001 Sect. 4.1.1) joins P and the middle of link 2:
//   s2^2 = L^2/4 + Lh^2/4 + (L Lh / 2) cos(th1 - th2),
//   ds2/dth1 = -L Lh sin(th1 - th2) / (4 s2) = -ds2/dth2.
// The printed 001 Eq. (33) drops the parentheses around th1 - th2 (see
// docs/coupling.md, "Where the code departs from the printed papers").
#include <Eigen/Dense>

#include "cosim/subsystems/crane_model.hpp"

namespace cosim::crane {

/// d^2 s1 / d th1^2 of actuator 1. From s1 s1' = (L/2)(xB sin th1 - yB cos th1):
/// s1'^2 + s1 s1'' = (L/2)(xB cos th1 + yB sin th1).
inline double actuator1_second_derivative(const mechanical_params& p, double th1,
                                          const actuator_kinematics& k) noexcept {
  return (0.5 * p.L * (p.xB * std::cos(th1) + p.yB * std::sin(th1)) - k.ds_dth1 * k.ds_dth1) / k.s;
}

/// Actuator 2 as a function of phi = th1 - th2: s2, ds2/dphi and d^2 s2/dphi^2.
struct actuator2_kinematics {
  double s = 0.0;
  double ds_dphi = 0.0;
  double d2s_dphi2 = 0.0;
};

inline actuator2_kinematics actuator2(const mechanical_params& p, double th1, double th2) noexcept {
  const double phi = th1 - th2;
  const double k = 0.25 * p.L * p.Lh;  // s2 s2' = -k sin(phi)
  actuator2_kinematics a;
  a.s = std::sqrt(0.25 * p.L * p.L + 0.25 * p.Lh * p.Lh + 2.0 * k * std::cos(phi));
  a.ds_dphi = -k * std::sin(phi) / a.s;
  // s2'^2 + s2 s2'' = -k cos(phi)
  a.d2s_dphi2 = (-k * std::cos(phi) - a.ds_dphi * a.ds_dphi) / a.s;
  return a;
}

template <int N>
using interface_matrix = Eigen::Matrix<double, N, N>;
template <int N>
using interface_vector = Eigen::Matrix<double, N, 1>;

/// Interface Jacobian A_i (rows ds_i/dq, 001 Eqs. (22) and (33)), the lengths s and the
/// convective term Adot_i v of 001 Eq. (13), for N = 1 (actuator 1) or N = 2 (both).
template <int N>
struct interface_kinematics {
  Eigen::Matrix<double, N, 2> A;
  interface_vector<N> s;
  interface_vector<N> Adot_v;
};

template <int N>
interface_kinematics<N> crane_interface_kinematics(const mechanical_params& p, const vec2& q,
                                                   const vec2& qd) noexcept {
  static_assert(N == 1 || N == 2, "the crane models have one or two actuators");
  interface_kinematics<N> k;
  const actuator_kinematics a1 = actuator1(p, q[0]);
  k.A(0, 0) = a1.ds_dth1;
  k.A(0, 1) = 0.0;
  k.s(0) = a1.s;
  k.Adot_v(0) = actuator1_second_derivative(p, q[0], a1) * qd[0] * qd[0];
  if constexpr (N == 2) {
    const actuator2_kinematics a2 = actuator2(p, q[0], q[1]);
    const double phid = qd[0] - qd[1];
    k.A(1, 0) = a2.ds_dphi;
    k.A(1, 1) = -a2.ds_dphi;
    k.s(1) = a2.s;
    k.Adot_v(1) = a2.d2s_dphi2 * phid * phid;
  }
  return k;
}

/// The RIM of 001 Eq. (11): Mt wd_i = ft + lambda.
template <int N>
struct reduced_interface {
  interface_matrix<N> Mt;
  interface_vector<N> ft;
};

/// 001 Eqs. (12)-(13): Mt = (A M^-1 A^T)^-1, ft = Mt (A M^-1 (f - c) + Adot v), where f
/// holds every force except the interface forces lambda (here gravity).
template <int N>
reduced_interface<N> effective_interface(const mat2& M, const Eigen::Matrix<double, N, 2>& A,
                                         const vec2& f_minus_c,
                                         const interface_vector<N>& Adot_v) noexcept {
  const mat2 Minv = M.inverse();  // closed form for 2x2, no allocation
  const Eigen::Matrix<double, N, 2> AMinv = A * Minv;
  reduced_interface<N> r;
  r.Mt = (AMinv * A.transpose()).inverse();
  r.ft = r.Mt * (AMinv * f_minus_c + Adot_v);
  return r;
}

/// M-tilde and f-tilde of the single- (N = 1) or double-actuated (N = 2) crane in state
/// (q, qd), with the mass matrix, velocity terms and gravity of 003 Eq. (2) (erratum form).
template <int N>
reduced_interface<N> crane_reduced_interface(const mechanical_params& p, const vec2& q,
                                             const vec2& qd) noexcept {
  const interface_kinematics<N> k = crane_interface_kinematics<N>(p, q, qd);
  return effective_interface<N>(mass_matrix(p, q), k.A,
                                gravity_forces(p, q) - velocity_terms(p, q, qd), k.Adot_v);
}

/// Mass-orthogonal projection of the multibody state onto the RIM's interface state
/// (s, sd): q and qd move only along M^-1 A^T, the interface subspace of 001 Eq. (6). With
/// A M^-1 B^T = 0 the admissible velocities w_a = B qd are unchanged, so the multibody keeps
/// its own admissible motion and takes the interface motion the RIM integrated at h_S.
/// Positions by three Newton corrections of s(q) = s (quadratic convergence; the mismatch
/// is small), then velocities exactly.
template <int N>
void project_interface(const mechanical_params& p, vec2& q, vec2& qd, const interface_vector<N>& s,
                       const interface_vector<N>& sd) noexcept {
  for (int it = 0; it < 3; ++it) {
    const interface_kinematics<N> k = crane_interface_kinematics<N>(p, q, qd);
    const Eigen::Matrix<double, 2, N> G = mass_matrix(p, q).inverse() * k.A.transpose();
    q += G * ((k.A * G).inverse() * (s - k.s));
  }
  const interface_kinematics<N> k = crane_interface_kinematics<N>(p, q, qd);
  const Eigen::Matrix<double, 2, N> G = mass_matrix(p, q).inverse() * k.A.transpose();
  qd += G * ((k.A * G).inverse() * (sd - k.A * qd));
}

}  // namespace cosim::crane
