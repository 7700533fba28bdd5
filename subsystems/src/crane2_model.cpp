#include "cosim/subsystems/crane2_model.hpp"

#include <algorithm>
#include <cmath>

#include "cosim/subsystems/rim_crane.hpp"

namespace cosim::crane {

equilibrium solve_cylinder_equilibrium(const hydraulic_params& hp, double s0, double fh,
                                       int max_iterations, int& iterations) {
  equilibrium e;
  e.s0 = s0;
  e.fh = fh;
  // 003 Eq. (17) scaled to O(1): force in kN, pressure rates in MPa/s.
  auto residual = [&](const Eigen::Vector3d& z) {
    const vec2 pd = pressure_rates(hp, s0, s0, 0.0, z[2], z[0], z[1]);
    return Eigen::Vector3d{(fh - (z[1] - z[0]) * hp.ap) * 1e-3, pd[0] * 1e-6, pd[1] * 1e-6};
  };
  Eigen::Vector3d z{3.3e6, 4.4e6, 0.5};  // 003 Sect. 1.3 guess
  iterations = 0;
  while (iterations < max_iterations) {
    const Eigen::Vector3d g = residual(z);
    Eigen::Matrix3d G;
    for (int j = 0; j < 3; ++j) {
      const double dz = j < 2 ? 1.0 : 1e-7;  // 1 Pa, 1e-7 in kappa
      Eigen::Vector3d zp = z, zm = z;
      zp[j] += dz;
      zm[j] -= dz;
      G.col(j) = (residual(zp) - residual(zm)) / (2.0 * dz);
    }
    const Eigen::Vector3d dz = G.partialPivLu().solve(g);
    z -= dz;  // 003 Eq. (16)
    ++iterations;
    if (std::abs(dz[0]) + std::abs(dz[1]) < 1e-12 * (std::abs(z[0]) + std::abs(z[1])) &&
        std::abs(dz[2]) < 1e-14)
      break;
  }
  e.p1 = z[0];
  e.p2 = z[1];
  e.kappa0 = z[2];
  const vec2 pd = pressure_rates(hp, s0, s0, 0.0, z[2], z[0], z[1]);
  e.residual = Eigen::Vector3d{fh - (z[1] - z[0]) * hp.ap, pd[0], pd[1]}.norm();
  return e;
}

crane2_equilibrium solve_crane2_equilibrium(const mechanical_params& mp, const hydraulic_params& hp,
                                            int max_iterations) {
  const vec2 q{mp.theta1_0, mp.theta2_0};
  const vec2 qd = vec2::Zero();
  // Static equilibrium of 001 Eq. (11) with wd_i = 0: lambda = -ft.
  const reduced_interface<2> ri = crane_reduced_interface<2>(mp, q, qd);
  const interface_kinematics<2> k = crane_interface_kinematics<2>(mp, q, qd);
  crane2_equilibrium out;
  for (int i = 0; i < 2; ++i) {
    int it = 0;
    out.act[i] = solve_cylinder_equilibrium(hp, k.s[i], -ri.ft[i], max_iterations, it);
    out.iterations = std::max(out.iterations, it);
  }
  return out;
}

double kappa2_law(double t, double kappa20) noexcept {
  constexpr double ta = 2.0;  // 001 Sect. 4.1, t_a
  return t <= ta ? kappa20 - 0.0025 * t : kappa20 - 0.005;
}

}  // namespace cosim::crane
