#include "cosim/subsystems/crane_reference.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cosim::crane {

namespace {

constexpr int nq = 7;  // x_P, y_P, x_Q, y_Q, x_R, y_R, s1
constexpr int nz = 9;  // + p1, p2
constexpr int nc = 5;  // constraints
enum coord : int { ixP = 0, iyP, ixQ, iyQ, ixR, iyR, is };

using vq = Eigen::Matrix<double, nq, 1>;
using mqq = Eigen::Matrix<double, nq, nq>;
using vc = Eigen::Matrix<double, nc, 1>;
using mcq = Eigen::Matrix<double, nc, nq>;
using vz = Eigen::Matrix<double, nz, 1>;
using mzz = Eigen::Matrix<double, nz, nz>;

/// Kinematic constraints (003 Eq. (22) plus link 2, see the header) and their derivatives.
/// All constraints are at most quadratic, so the Hessians are constant.
struct constraints {
  double L, Lh, xB, yB;

  [[nodiscard]] vc phi(const vq& q) const noexcept {
    vc f;
    f[0] = q[ixP] * q[ixP] + q[iyP] * q[iyP] - 0.25 * L * L;
    f[1] = q[ixQ] - 2.0 * q[ixP];
    f[2] = q[iyQ] - 2.0 * q[iyP];
    const double dxB = q[ixP] - xB, dyB = q[iyP] - yB;
    f[3] = dxB * dxB + dyB * dyB - q[is] * q[is];
    const double dxR = q[ixR] - q[ixQ], dyR = q[iyR] - q[iyQ];
    f[4] = dxR * dxR + dyR * dyR - Lh * Lh;
    return f;
  }

  [[nodiscard]] mcq jacobian(const vq& q) const noexcept {
    mcq J = mcq::Zero();
    J(0, ixP) = 2.0 * q[ixP];
    J(0, iyP) = 2.0 * q[iyP];
    J(1, ixQ) = 1.0;
    J(1, ixP) = -2.0;
    J(2, iyQ) = 1.0;
    J(2, iyP) = -2.0;
    J(3, ixP) = 2.0 * (q[ixP] - xB);
    J(3, iyP) = 2.0 * (q[iyP] - yB);
    J(3, is) = -2.0 * q[is];
    const double dxR = q[ixR] - q[ixQ], dyR = q[iyR] - q[iyQ];
    J(4, ixR) = 2.0 * dxR;
    J(4, ixQ) = -2.0 * dxR;
    J(4, iyR) = 2.0 * dyR;
    J(4, iyQ) = -2.0 * dyR;
    return J;
  }

  /// K += scale * sum_i mu_i d^2 Phi_i / dq^2: the geometric-stiffness term of the exact
  /// tangent, d(Phi_q^T mu)/dq at fixed mu.
  static void add_hessian(mqq& K, const vc& mu, double scale) noexcept {
    const double a = 2.0 * scale * (mu[0] + mu[3]);
    K(ixP, ixP) += a;
    K(iyP, iyP) += a;
    K(is, is) -= 2.0 * scale * mu[3];
    const double r = 2.0 * scale * mu[4];
    for (const int c : {0, 1}) {
      const int iq = ixQ + c, ir = ixR + c;
      K(iq, iq) += r;
      K(ir, ir) += r;
      K(iq, ir) -= r;
      K(ir, iq) -= r;
    }
  }

  /// dPhi_q/dt qd = [qd^T H_i qd]_i, the velocity term of the acceleration constraints
  /// (Phi_t = 0: scleronomic).
  [[nodiscard]] static vc phi_q_dot_qd(const vq& v) noexcept {
    vc g = vc::Zero();
    g[0] = 2.0 * (v[ixP] * v[ixP] + v[iyP] * v[iyP]);
    g[3] = 2.0 * (v[ixP] * v[ixP] + v[iyP] * v[iyP] - v[is] * v[is]);
    const double vx = v[ixR] - v[ixQ], vy = v[iyR] - v[iyQ];
    g[4] = 2.0 * (vx * vx + vy * vy);
    return g;
  }

  /// Largest constraint error expressed as a length [m] (distances, not squared forms).
  [[nodiscard]] double violation(const vq& q) const noexcept {
    const double e1 = std::abs(std::hypot(q[ixP], q[iyP]) - 0.5 * L);
    const double e2 = std::hypot(q[ixQ] - 2.0 * q[ixP], q[iyQ] - 2.0 * q[iyP]);
    const double e4 = std::abs(std::hypot(q[ixP] - xB, q[iyP] - yB) - q[is]);
    const double e5 = std::abs(std::hypot(q[ixR] - q[ixQ], q[iyR] - q[iyQ]) - Lh);
    return std::max({e1, e2, e4, e5});
  }
};

/// Pressure rates h (003 Eqs. (9)-(13), from crane_model.hpp) and their partial derivatives
/// for the tangent of 003 Eq. (27). h1 depends on p1 only and h2 on p2 only.
struct hydraulic_terms {
  vec2 h;
  vec2 dh_ds;   // d h / d s1
  vec2 dh_dsd;  // d h / d s1'
  vec2 dh_dp;   // diagonal of d h / d p
};

hydraulic_terms hydraulics(const hydraulic_params& hp, double s0, double s, double sd, double kappa,
                           double p1, double p2) noexcept {
  hydraulic_terms r;
  r.h = pressure_rates(hp, s0, s, sd, kappa, p1, p2);
  const double l1 = 0.5 * hp.l + s0 - s;  // 003 Eq. (12)
  const double l2 = 0.5 * hp.l + s - s0;
  const double b1 = bulk_modulus(hp, p1), b2 = bulk_modulus(hp, p2);
  // h_i = beta_i / (a_p l_i) * flow_i with l1 = .. - s, l2 = .. + s.
  r.dh_ds = {r.h[0] / l1, -r.h[1] / l2};
  r.dh_dsd = {b1 / l1, -b2 / l2};
  auto dbeta_over_beta = [&](double p, double beta) {
    const double den = hp.a + 2.0 * hp.b * p;
    const double num = 1.0 + hp.a * p + hp.b * p * p;
    return (den * den - 2.0 * hp.b * num) / (den * den) / beta;
  };
  auto dorifice = [&](double dp) {  // d/d(dp) of c_d sqrt(2 dp / rho); 0 where closed
    return dp > 0.0 ? hp.cd / (hp.rho * std::sqrt(2.0 * dp / hp.rho)) : 0.0;
  };
  const double ai = hp.valve_area * kappa;  // 003 Eq. (13)
  const double ao = hp.valve_area * (1.0 - kappa);
  r.dh_dp[0] = dbeta_over_beta(p1, b1) * r.h[0] +
               b1 / (hp.ap * l1) * (-ai * dorifice(hp.pP - p1) - ao * dorifice(p1 - hp.pT));
  r.dh_dp[1] = dbeta_over_beta(p2, b2) * r.h[1] +
               b2 / (hp.ap * l2) * (-ao * dorifice(hp.pP - p2) - ai * dorifice(p2 - hp.pT));
  return r;
}

/// Steps per multiple: round(a / b), requiring a to be an integer multiple of b.
long multiple_of(double a, double b, const char* what) {
  const double n = std::round(a / b);
  if (!(n >= 1.0) || std::abs(n * b - a) > 1e-9 * std::max(a, b)) {
    throw std::invalid_argument(what);
  }
  return static_cast<long>(n);
}

}  // namespace

reference_result run_crane_reference(const reference_options& opt, const mechanical_params& mp,
                                     const hydraulic_params& hp) {
  if (!(opt.step > 0.0) || !(opt.duration >= 0.0) || opt.max_newton_iterations < 1 ||
      opt.projections < 0) {
    throw std::invalid_argument("run_crane_reference: invalid step, duration or iterations");
  }
  const double h = opt.step;
  const long out_every =
      multiple_of(opt.output_interval, h, "run_crane_reference: output_interval % step != 0");
  const long n_steps = static_cast<long>(std::round(opt.duration / h));
  const double alpha = opt.penalty;
  const double h2 = 0.5 * h, h4 = 0.25 * h * h;  // h/2 and h^2/4 of 003 Eqs. (24)-(30)
  // Residual rows in kN and MPa/s (see header), so the tolerance does not depend on h.
  constexpr double force_unit = 1e-3, rate_unit = 1e-6;

  reference_result res;
  const equilibrium eq = solve_equilibrium(mp, hp);
  res.initial = eq;
  const double s0 = eq.s0;
  const constraints cons{mp.L, mp.Lh, mp.xB, mp.yB};

  // Constant diagonal mass matrix (see header) and gravity forces.
  vq mass = vq::Zero();
  mass[ixQ] = mass[iyQ] = mp.m / 3.0 + mp.mp;
  mass[ixR] = mass[iyR] = mp.mh;
  vq gravity = vq::Zero();
  gravity[iyQ] = -mp.g * (0.5 * mp.m + mp.mp);
  gravity[iyR] = -mp.g * mp.mh;
  // W of 003 Eq. (30): dQ/dq' is -c on s1 (friction in Eq. (8)); dQ/dq = 0 because gravity
  // is constant and f_h acts directly on the coordinate s1.
  vq wdiag = mass;
  wdiag[is] += h2 * hp.c;

  // Initial state: the equilibrium configuration of 003 Sect. 1.3, zero velocities.
  const double cth = std::cos(mp.theta1_0), sth = std::sin(mp.theta1_0);
  vq q;
  q << 0.5 * mp.L * cth, 0.5 * mp.L * sth, mp.L * cth, mp.L * sth,
      mp.L * cth + mp.Lh * std::cos(mp.theta2_0), mp.L * sth + mp.Lh * std::sin(mp.theta2_0), s0;
  vq qd = vq::Zero();
  vec2 p{eq.p1, eq.p2};
  const double kappa0 = eq.kappa0;

  // Consistent initial accelerations and multipliers from the index-1 system
  // [M Phi_q^T; Phi_q 0][q''; lambda] = [Q; -dPhi_q/dt q'] (zero at the equilibrium).
  vq qdd;
  vc lambda;
  {
    Eigen::Matrix<double, nq + nc, nq + nc> A = Eigen::Matrix<double, nq + nc, nq + nc>::Zero();
    const mcq J = cons.jacobian(q);
    A.topLeftCorner<nq, nq>() = mass.asDiagonal();
    A.topRightCorner<nq, nc>() = J.transpose();
    A.bottomLeftCorner<nc, nq>() = J;
    Eigen::Matrix<double, nq + nc, 1> rhs;
    vq Q0 = gravity;
    Q0[is] += actuator_force(hp, p[0], p[1], qd[is]);
    rhs << Q0, -constraints::phi_q_dot_qd(qd);
    const Eigen::Matrix<double, nq + nc, 1> x = A.fullPivLu().solve(rhs);
    qdd = x.head<nq>();
    lambda = x.tail<nc>();
  }
  vec2 pd = pressure_rates(hp, s0, q[is], qd[is], kappa0, p[0], p[1]);

  res.samples.reserve(static_cast<std::size_t>(n_steps / out_every + 1));
  auto record = [&](double t, double kappa) {
    const double viol = cons.violation(q);
    res.samples.push_back(
        {t, kappa, q[is], qd[is], p[0], p[1], actuator_force(hp, p[0], p[1], qd[is]), viol});
  };
  res.max_constraint_violation = cons.violation(q);
  record(0.0, manoeuvre::at(opt.manoeuvre, 0.0, kappa0));

  Eigen::PartialPivLU<mzz> lu;
  Eigen::LDLT<mqq> proj;
  for (long k = 0; k < n_steps; ++k) {
    const double t1 = static_cast<double>(k + 1) * h;  // no accumulated round-off in t
    const double kappa = manoeuvre::at(opt.manoeuvre, t1, kappa0);

    // Predictor (Taylor from the converged step k); lambda starts from step k's value
    // (linear extrapolation was tried: fewer iterations in M2, more in M1).
    vq qn = q + h * qd + (0.5 * h * h) * qdd;
    vec2 pn = p + h * pd;
    vc lam = lambda;

    vq qdn, qddn;
    vec2 pdn;
    // Residual of 003 Eqs. (25)/(27) at (qn, pn, lam) in kN and MPa/s (see header); with
    // K != nullptr also the tangent of Eq. (27) in the same row scaling.
    auto evaluate = [&](const vq& qa, const vec2& pa, const vc& la, vz& b, mzz* K) {
      // 003 Eq. (24), written with differences (q_{k+1} - q_k) to avoid cancellation of
      // the large 4/h^2 q terms; algebraically identical.
      const vq dq = qa - q;
      qdn = (2.0 / h) * dq - qd;
      qddn = (4.0 / (h * h)) * dq - (4.0 / h) * qd - qdd;
      pdn = (2.0 / h) * (pa - p) - pd;

      const mcq J = cons.jacobian(qa);
      const vc mu = alpha * cons.phi(qa) + la;
      vq Q = gravity;
      Q[is] += actuator_force(hp, pa[0], pa[1], qdn[is]);  // 003 Eq. (8)
      const hydraulic_terms hy = hydraulics(hp, s0, qa[is], qdn[is], kappa, pa[0], pa[1]);
      b.head<nq>() = (mass.cwiseProduct(qddn) + J.transpose() * mu - Q) * force_unit;
      b.tail<2>() = (pdn - hy.h) * rate_unit;
      if (K == nullptr) return;

      // Tangent of 003 Eq. (27) (rows there carry the factor h^2/4, here force_unit and
      // rate_unit), plus the constraint Hessian term sum mu_i Phi_i,qq that Eq. (27) drops:
      // exact and cheap here, so Newton converges quadratically.
      const double fq = force_unit / h4, fp = rate_unit / h4;
      mqq Kqq = (h4 * alpha) * J.transpose() * J;
      Kqq.diagonal() += wdiag;
      constraints::add_hessian(Kqq, mu, h4);
      K->setZero();
      K->topLeftCorner<nq, nq>() = fq * Kqq;
      // -h^2/4 dQ/dp: Q_s = (p2 - p1) a_p.
      (*K)(is, nq + 0) = fq * h4 * hp.ap;
      (*K)(is, nq + 1) = -fq * h4 * hp.ap;
      // -h/2 (h/2 dh/dq + dh/dq') and h/2 (I - h/2 dh/dp).
      for (int i = 0; i < 2; ++i) {
        (*K)(nq + i, is) = -fp * h2 * (h2 * hy.dh_ds[i] + hy.dh_dsd[i]);
        (*K)(nq + i, nq + i) = fp * h2 * (1.0 - h2 * hy.dh_dp[i]);
      }
    };

    double resid = 0.0;
    int it = 0;
    bool ok = false;
    vz b;
    mzz K;
    for (;; ++it) {
      const bool need_tangent = it < opt.max_newton_iterations;
      evaluate(qn, pn, lam, b, need_tangent ? &K : nullptr);
      resid = b.norm();
      if (!std::isfinite(resid)) break;
      // At least one correction, so every step is implicit whatever the predictor's residual.
      if (it >= 1 && resid < opt.tolerance) {
        ok = true;
        break;
      }
      if (!need_tangent) break;
      lu.compute(K);
      const vz dz = lu.solve(-b);  // 003 Eq. (26)
      qn += dz.head<nq>();
      pn += dz.tail<2>();
      lam += alpha * cons.phi(qn);  // 003 Eq. (28)
    }
    if (!ok) {
      res.converged = false;
      res.fail_time = t1;
      res.fail_residual = resid;
      res.max_iterations_used = std::max(res.max_iterations_used, it);
      return res;
    }
    res.max_iterations_used = std::max(res.max_iterations_used, it);
    res.total_iterations += it;
    res.max_final_residual = std::max(res.max_final_residual, resid);

    // Projections, 003 Eqs. (29)-(30). The left-hand side is the tangent's mechanical block
    // W + h^2/4 Phi_q^T alpha Phi_q (the printed Eq. (29) omits the penalty term there,
    // without which the projection would be the identity). Phi_t = 0.
    const mcq J = cons.jacobian(qn);
    mqq P = (h4 * alpha) * J.transpose() * J;
    P.diagonal() += wdiag;
    proj.compute(P);
    for (int i = 0; i < opt.projections; ++i) {
      qdn = proj.solve(wdiag.cwiseProduct(qdn));
    }
    const vc gdot = constraints::phi_q_dot_qd(qdn);
    for (int i = 0; i < opt.projections; ++i) {
      qddn = proj.solve(wdiag.cwiseProduct(qddn) - (h4 * alpha) * J.transpose() * gdot);
    }
    q = qn;
    qd = qdn;
    qdd = qddn;
    p = pn;
    // Pressure rate from the model at the projected velocity: the canonical trapezoidal
    // rule p_{k+1} = p_k + h/2 (h_k + h_{k+1}); equals the Eq. (24) value at convergence.
    pd = pressure_rates(hp, s0, q[is], qd[is], kappa, p[0], p[1]);
    lambda = lam;
    res.steps = k + 1;

    res.max_constraint_violation = std::max(res.max_constraint_violation, cons.violation(q));
    // Rates of the constraint lengths: d|P|/dt = Phi_1' / (2 |P|) etc. [m/s].
    const vc vscale{1.0 / mp.L, 1.0, 1.0, 0.5 / q[is], 0.5 / mp.Lh};
    res.max_velocity_violation =
        std::max(res.max_velocity_violation, (J * qd).cwiseProduct(vscale).cwiseAbs().maxCoeff());
    if ((k + 1) % out_every == 0) {
      record(t1, kappa);
      if (opt.stop != nullptr && opt.stop->stop_requested()) {
        res.stopped = true;
        break;
      }
    }
  }
  return res;
}

}  // namespace cosim::crane
