#include "cosim/subsystems/crane_model.hpp"

namespace cosim::crane {

equilibrium solve_equilibrium(const mechanical_params& mp, const hydraulic_params& hp,
                              int iterations) {
  const vec2 q{mp.theta1_0, mp.theta2_0};
  const vec2 qd = vec2::Zero();
  const actuator_kinematics k = actuator1(mp, q[0]);
  const Eigen::RowVector2d J{k.ds_dth1, 0.0};  // 003 Eq. (5)
  const mat2 M = mass_matrix(mp, q);
  const vec2 rhs = gravity_forces(mp, q) - velocity_terms(mp, q, qd);
  // 003 Eq. (15): f_h = -M_eff J M^-1 (f - c), M_eff = (J M^-1 J^T)^-1.
  const Eigen::Vector2d Minv_rhs = M.ldlt().solve(rhs);
  const Eigen::Vector2d Minv_Jt = M.ldlt().solve(J.transpose());
  const double m_eff = 1.0 / (J * Minv_Jt)(0);
  const double fh = -m_eff * (J * Minv_rhs)(0);

  equilibrium e;
  e.s0 = k.s;
  e.fh = fh;
  Eigen::Vector3d z{3.3e6, 4.4e6, 0.5};
  auto residual = [&](const Eigen::Vector3d& zz) {
    const vec2 pd = pressure_rates(hp, e.s0, e.s0, 0.0, zz[2], zz[0], zz[1]);
    return Eigen::Vector3d{fh - (zz[1] - zz[0]) * hp.ap, pd[0], pd[1]};  // 003 Eq. (17)
  };
  for (int it = 0; it < iterations; ++it) {
    // Analytic Jacobian of 003 Eq. (17); at equilibrium sd = 0 and l1 = l2 = l/2.
    const double p1 = z[0], p2 = z[1], kap = z[2];
    const double l1 = 0.5 * hp.l, l2 = 0.5 * hp.l;
    const double A = hp.valve_area;
    auto root = [&](double dp) { return dp > 0.0 ? std::sqrt(2.0 * dp / hp.rho) : 0.0; };
    auto droot = [&](double dp) {  // d/d(dp) of sqrt(2 dp / rho)
      return dp > 0.0 ? 1.0 / (hp.rho * std::sqrt(2.0 * dp / hp.rho)) : 0.0;
    };
    auto dbeta = [&](double p) {
      const double num = 1.0 + hp.a * p + hp.b * p * p;
      const double den = hp.a + 2.0 * hp.b * p;
      return ((hp.a + 2.0 * hp.b * p) * den - num * 2.0 * hp.b) / (den * den);
    };
    const double q1 = A * kap * hp.cd * root(hp.pP - p1) - A * (1 - kap) * hp.cd * root(p1 - hp.pT);
    const double q2 = A * (1 - kap) * hp.cd * root(hp.pP - p2) - A * kap * hp.cd * root(p2 - hp.pT);
    const double c1 = bulk_modulus(hp, p1) / (hp.ap * l1);
    const double c2 = bulk_modulus(hp, p2) / (hp.ap * l2);
    Eigen::Matrix3d G;
    G(0, 0) = hp.ap;
    G(0, 1) = -hp.ap;
    G(0, 2) = 0.0;
    G(1, 0) = dbeta(p1) / (hp.ap * l1) * q1 + c1 * (-A * kap * hp.cd * droot(hp.pP - p1) -
                                                    A * (1 - kap) * hp.cd * droot(p1 - hp.pT));
    G(1, 1) = 0.0;
    G(1, 2) = c1 * (A * hp.cd * root(hp.pP - p1) + A * hp.cd * root(p1 - hp.pT));
    G(2, 0) = 0.0;
    G(2, 1) = dbeta(p2) / (hp.ap * l2) * q2 + c2 * (-A * (1 - kap) * hp.cd * droot(hp.pP - p2) -
                                                    A * kap * hp.cd * droot(p2 - hp.pT));
    G(2, 2) = c2 * (-A * hp.cd * root(hp.pP - p2) - A * hp.cd * root(p2 - hp.pT));
    z -= G.partialPivLu().solve(residual(z));  // 003 Eq. (16)
  }
  e.p1 = z[0];
  e.p2 = z[1];
  e.kappa0 = z[2];
  e.residual = residual(z).norm();
  return e;
}

}  // namespace cosim::crane
