#pragma once
// One step of the trapezoidal rule for a second-order system q'' = a(q, q', t):
//   q1 = q0 + h/2 (qd0 + qd1),   qd1 = qd0 + h/2 (a(q0, qd0, t0) + a(q1, qd1, t1)),
// solved for qd1 by Newton's method with a forward-difference Jacobian, starting from the
// explicit Euler guess qd0 + h a0. The multibody units of both cranes (003, 001) use it.
// Fixed-size Eigen types only: no allocation and no exception, so it runs on the RT path.
#include <Eigen/Core>
#include <Eigen/LU>
#include <cmath>

namespace cosim {

/// How the Newton correction J^-1 r is formed. The two cranes were written with different
/// 2x2 forms, which round differently; each keeps its own so its results stay bit-identical.
enum class newton_solve {
  cramer,   // (adj(J) r) / det(J), written out; N = 2 only
  inverse,  // J.inverse() * r
};

/// At most this many Newton corrections per step.
inline constexpr int trapezoidal_newton_max_iterations = 8;
/// Finite-difference increment of component j: this times (1 + |qd1_j|).
inline constexpr double trapezoidal_newton_fd_step = 1e-7;
/// Converged when |correction| <= this times (1 + |qd1|) (Euclidean norms).
inline constexpr double trapezoidal_newton_tolerance = 1e-12;

struct newton_result {
  int iterations = 0;      // Newton corrections applied
  bool converged = false;  // false: the iteration limit ended the step
};

/// Advances (q, qd) by one step of h seconds from t0 to t1. accel(q, qd, t) returns q'' as
/// an Eigen::Matrix<double, N, 1>; it is called once at (q0, qd0, t0), then N + 1 times per
/// Newton iteration at t1. The step is taken whether or not Newton converged, as the cranes
/// always did: their finiteness check on the state is what stops a run that diverges.
template <newton_solve Solve, int N, class Time, class Accel>
newton_result trapezoidal_newton_step(Eigen::Matrix<double, N, 1>& q,
                                      Eigen::Matrix<double, N, 1>& qd, double h, Time t0, Time t1,
                                      const Accel& accel) noexcept {
  static_assert(Solve != newton_solve::cramer || N == 2, "the written-out solve is 2x2 only");
  using vec = Eigen::Matrix<double, N, 1>;
  using mat = Eigen::Matrix<double, N, N>;
  const vec a0 = accel(q, qd, t0);
  auto residual = [&](const vec& v1) {
    const vec q1 = q + 0.5 * h * (qd + v1);
    return vec(v1 - qd - 0.5 * h * (a0 + accel(q1, v1, t1)));
  };
  newton_result result;
  vec v = qd + h * a0;
  for (int it = 0; it < trapezoidal_newton_max_iterations; ++it) {
    const vec r = residual(v);
    mat Jr;
    for (int j = 0; j < N; ++j) {
      vec vp = v;
      const double dv = trapezoidal_newton_fd_step * (1.0 + std::abs(v[j]));
      vp[j] += dv;
      Jr.col(j) = (residual(vp) - r) / dv;
    }
    vec dvv;
    if constexpr (Solve == newton_solve::cramer) {
      const double det = Jr(0, 0) * Jr(1, 1) - Jr(0, 1) * Jr(1, 0);
      dvv =
          vec((Jr(1, 1) * r[0] - Jr(0, 1) * r[1]) / det, (Jr(0, 0) * r[1] - Jr(1, 0) * r[0]) / det);
    } else {
      dvv = Jr.inverse() * r;
    }
    v -= dvv;
    result.iterations = it + 1;
    if (dvv.norm() <= trapezoidal_newton_tolerance * (1.0 + v.norm())) {
      result.converged = true;
      break;
    }
  }
  q += 0.5 * h * (qd + v);
  qd = v;
  return result;
}

}  // namespace cosim
