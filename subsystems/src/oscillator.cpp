#include "cosim/subsystems/oscillator.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <unsupported/Eigen/MatrixFunctions>

namespace cosim::osc {

namespace {

bool finite_nonneg(double v) {
  return std::isfinite(v) && v >= 0.0;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

}  // namespace

void validate(const oscillator_definition& d) {
  const std::size_t n = d.size();
  require(n > 0, "oscillator: no masses");
  require(d.k.size() == n && d.c.size() == n && d.x0.size() == n && d.v0.size() == n,
          "oscillator: per-mass vectors differ in size");
  for (std::size_t i = 0; i < n; ++i) {
    const std::string idx = std::to_string(i + 1);
    require(std::isfinite(d.m[i]) && d.m[i] > 0.0,
            "oscillator: mass " + idx + " must be > 0 (the mass matrix would be singular)");
    require(finite_nonneg(d.k[i]), "oscillator: spring k" + idx + " must be >= 0");
    require(finite_nonneg(d.c[i]), "oscillator: damper c" + idx + " must be >= 0");
    require(std::isfinite(d.x0[i]) && std::isfinite(d.v0[i]),
            "oscillator: initial state of mass " + idx + " must be finite");
  }
  for (const link& l : d.links) {
    require(l.a < n && l.b < n && l.a != l.b, "oscillator: link joins invalid masses");
    require(finite_nonneg(l.k) && finite_nonneg(l.c), "oscillator: link coefficients must be >= 0");
  }
  // Exponents below 1 have an infinite slope at zero (no Lipschitz constant).
  require(std::isfinite(d.spring_exponent) && d.spring_exponent >= 1.0,
          "oscillator: spring exponent must be >= 1");
  require(std::isfinite(d.damper_exponent) && d.damper_exponent >= 1.0,
          "oscillator: damper exponent must be >= 1");
}

Eigen::MatrixXd mass_matrix(const oscillator_definition& d) {
  const auto n = static_cast<Eigen::Index>(d.size());
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index i = 0; i < n; ++i) M(i, i) = d.m[static_cast<std::size_t>(i)];
  return M;
}

namespace {

// Assembles ground + link coefficients as in 000 Eq. (9) / (42).
Eigen::MatrixXd assemble(const oscillator_definition& d, const std::vector<double>& ground,
                         double link::*coeff) {
  const auto n = static_cast<Eigen::Index>(d.size());
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index i = 0; i < n; ++i) K(i, i) = ground[static_cast<std::size_t>(i)];
  for (const link& l : d.links) {
    const auto a = static_cast<Eigen::Index>(l.a), b = static_cast<Eigen::Index>(l.b);
    const double v = l.*coeff;
    K(a, a) += v;
    K(b, b) += v;
    K(a, b) -= v;
    K(b, a) -= v;
  }
  return K;
}

}  // namespace

Eigen::MatrixXd damping_matrix(const oscillator_definition& d) {
  return assemble(d, d.c, &link::c);
}

Eigen::MatrixXd stiffness_matrix(const oscillator_definition& d) {
  return assemble(d, d.k, &link::k);
}

Eigen::MatrixXd state_matrix(const oscillator_definition& d) {
  const auto n = static_cast<Eigen::Index>(d.size());
  Eigen::VectorXd minv(n);
  for (Eigen::Index i = 0; i < n; ++i) minv[i] = 1.0 / d.m[static_cast<std::size_t>(i)];
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(2 * n, 2 * n);
  A.topRightCorner(n, n).setIdentity();
  A.bottomLeftCorner(n, n) = -(minv.asDiagonal() * stiffness_matrix(d));
  A.bottomRightCorner(n, n) = -(minv.asDiagonal() * damping_matrix(d));
  return A;
}

Eigen::VectorXd initial_state(const oscillator_definition& d) {
  const auto n = static_cast<Eigen::Index>(d.size());
  Eigen::VectorXd z(2 * n);
  for (Eigen::Index i = 0; i < n; ++i) {
    z[i] = d.x0[static_cast<std::size_t>(i)];
    z[n + i] = d.v0[static_cast<std::size_t>(i)];
  }
  return z;
}

Eigen::VectorXd derivative(const oscillator_definition& d, const Eigen::VectorXd& z) {
  const std::size_t n = d.size();
  const auto ni = static_cast<Eigen::Index>(n);
  Eigen::VectorXd f(ni);
  for (std::size_t i = 0; i < n; ++i) {
    const auto ii = static_cast<Eigen::Index>(i);
    f[ii] = -power_law(d.k[i], d.spring_exponent, z[ii]) -
            power_law(d.c[i], d.damper_exponent, z[ni + ii]);
  }
  for (const link& l : d.links) {
    const auto a = static_cast<Eigen::Index>(l.a), b = static_cast<Eigen::Index>(l.b);
    // Force of the link on mass b (000 Eq. (13)); mass a feels its opposite.
    const double fl = power_law(l.k, d.spring_exponent, z[a] - z[b]) +
                      power_law(l.c, d.damper_exponent, z[ni + a] - z[ni + b]);
    f[a] -= fl;
    f[b] += fl;
  }
  Eigen::VectorXd zd(2 * ni);
  zd.head(ni) = z.tail(ni);
  for (std::size_t i = 0; i < n; ++i) {
    const auto ii = static_cast<Eigen::Index>(i);
    zd[ni + ii] = f[ii] / d.m[i];
  }
  return zd;
}

double mechanical_energy(const oscillator_definition& d, const Eigen::VectorXd& x,
                         const Eigen::VectorXd& v) {
  const double e1 = d.spring_exponent + 1.0;
  auto potential = [&](double k, double s) { return k * std::pow(std::abs(s), e1) / e1; };
  double E = 0.0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const auto ii = static_cast<Eigen::Index>(i);
    E += 0.5 * d.m[i] * v[ii] * v[ii] + potential(d.k[i], x[ii]);
  }
  for (const link& l : d.links)
    E += potential(l.k, x[static_cast<Eigen::Index>(l.a)] - x[static_cast<Eigen::Index>(l.b)]);
  return E;
}

std::vector<double> natural_frequencies(const oscillator_definition& d) {
  // M^-1/2 K M^-1/2 is symmetric with the eigenvalues of M^-1 K (M diagonal, positive).
  const auto n = static_cast<Eigen::Index>(d.size());
  Eigen::VectorXd s(n);
  for (Eigen::Index i = 0; i < n; ++i) s[i] = 1.0 / std::sqrt(d.m[static_cast<std::size_t>(i)]);
  const Eigen::MatrixXd S = s.asDiagonal() * stiffness_matrix(d) * s.asDiagonal();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(S);
  std::vector<double> w;
  for (Eigen::Index i = 0; i < n; ++i) w.push_back(std::sqrt(std::max(0.0, es.eigenvalues()[i])));
  std::sort(w.begin(), w.end());
  return w;
}

Eigen::VectorXd rk4_step(const oscillator_definition& d, const Eigen::VectorXd& z, double h) {
  const Eigen::VectorXd k1 = derivative(d, z);
  const Eigen::VectorXd k2 = derivative(d, z + 0.5 * h * k1);
  const Eigen::VectorXd k3 = derivative(d, z + 0.5 * h * k2);
  const Eigen::VectorXd k4 = derivative(d, z + h * k3);
  return z + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
}

reference_solution::reference_solution(oscillator_definition d, double fine_step)
    : def_(std::move(d)), fine_step_(fine_step) {
  validate(def_);
  require(std::isfinite(fine_step_) && fine_step_ > 0.0, "oscillator: fine step must be > 0");
  A_ = state_matrix(def_);
  z0_ = initial_state(def_);
}

std::vector<Eigen::VectorXd> reference_solution::states_at(const std::vector<double>& times) const {
  std::vector<Eigen::VectorXd> out;
  out.reserve(times.size());
  if (def_.linear()) {
    // 000 Eq. (36), evaluated afresh at every t (no error accumulates along the grid).
    for (double t : times) out.push_back((A_ * t).exp() * z0_);
    return out;
  }
  Eigen::VectorXd z = z0_;
  double tc = 0.0;
  for (double t : times) {
    require(t >= tc - 1e-12, "oscillator: reference times must ascend from 0");
    const double span = t - tc;
    if (span > 0.0) {
      const auto steps = static_cast<long>(std::ceil(span / fine_step_ - 1e-9));
      const double h = span / static_cast<double>(steps);
      for (long j = 0; j < steps; ++j) z = rk4_step(def_, z, h);
      tc = t;
    }
    out.push_back(z);
  }
  return out;
}

Eigen::VectorXd reference_solution::state_at(double t) const {
  return states_at({t}).front();
}

two_mass_params a1_params(int damping_case) {
  two_mass_params p;  // 000 App. A.1: m1 = m2 = 1 kg, k1 = 10, k2 = 1000, kc = 100 N/m
  double c = 0.0;
  switch (damping_case) {
    case 1:
      c = 0.0;
      break;
    case 2:
      c = 0.01;
      break;
    case 3:
      c = 10.0;
      break;
    default:
      throw std::invalid_argument("oscillator: A.1 damping case must be 1, 2 or 3");
  }
  p.c1 = p.c2 = p.cc = c;
  return p;
}

two_mass_params a3_params() {
  two_mass_params p = a1_params(2);
  p.spring_exponent = 1.0;
  p.damper_exponent = 2.0;
  return p;
}

oscillator_definition make_definition(const two_mass_params& p) {
  oscillator_definition d;
  d.m = {p.m1, p.m2};
  d.k = {p.k1, p.k2};
  d.c = {p.c1, p.c2};
  d.links = {{0, 1, p.kc, p.cc}};
  d.spring_exponent = p.spring_exponent;
  d.damper_exponent = p.damper_exponent;
  d.x0 = {p.x10, p.x20};
  d.v0 = {p.v10, p.v20};
  return d;
}

oscillator_definition make_definition(const three_mass_params& p) {
  oscillator_definition d;  // 000 Eq. (42): links 1-3 and 2-3
  d.m = {p.m1, p.m2, p.m3};
  d.k = {p.k1, p.k2, p.k3};
  d.c = {p.c1, p.c2, p.c3};
  d.links = {{0, 2, p.kc1, p.cc1}, {1, 2, p.kc2, p.cc2}};
  d.x0 = {p.x10, p.x20, p.x30};
  d.v0 = {p.v10, p.v20, p.v30};
  return d;
}

// 004 Eq. (3) with zero initial velocities is the modal solution of 004 Eq. (2) with mode
// shapes phi1 = (1, r) at w1 and phi2 = (s, 1) at w2, where r = C21/C11, s = C13/C23
// (004 Eq. (5): C13 = C11/AR1, C23 = C11/AR12, C21 = C23/AR2). Modes of M^-1 K with M
// diagonal are M-orthogonal: phi1^T M phi2 = m1 s + m2 r = 0, so m2 = -m1 s / r. With
// Phi = [phi1 phi2] and Lambda = diag(w1^2, w2^2), K = M Phi Lambda Phi^-1, i.e.
//   K11 = m1 (w1^2 - r s w2^2)/(1 - r s),  K12 = m1 s (w2^2 - w1^2)/(1 - r s),
//   K22 = m2 (w2^2 - r s w1^2)/(1 - r s),
// and 004 Eq. (2) reads k2 = -K12, k1 = K11 - k2, k3 = K22 - k2. For the paper's ratios
// (r = -0.01, s = 1) this gives m2 = 100 m1, k1 = m1 w2^2, k3 = m2 w2^2 and
// k2 = m1 (w1^2 - w2^2)/1.01. The common scale m1 does not change the motion.
physical004 derive004(const params004& p) {
  require(std::isfinite(p.fr) && p.fr > 1.0,
          "FR must be > 1 (w1 is the fast frequency, 004 Eq. (5))");
  require(std::isfinite(p.zeta) && p.zeta >= 0.0, "zeta must be >= 0 (004 Eq. (9))");
  require(std::isfinite(p.f1) && p.f1 > 0.0, "f1 must be > 0");
  require(std::isfinite(p.m1) && p.m1 > 0.0, "m1 must be > 0 (the mass matrix would be singular)");
  for (double ar : {p.ar12, p.ar1, p.ar2})
    require(std::isfinite(ar) && ar != 0.0, "amplitude ratios must be finite and non-zero");
  require(std::isfinite(p.c11) && p.c11 != 0.0, "C11 must be non-zero");
  physical004 q{};
  q.w1 = 2.0 * std::numbers::pi * p.f1;
  q.w2 = q.w1 / p.fr;
  q.C11 = p.c11;
  q.C13 = p.c11 / p.ar1;
  q.C23 = p.c11 / p.ar12;
  q.C21 = q.C23 / p.ar2;
  const double r = q.C21 / q.C11, s = q.C13 / q.C23;
  require(r * s < 0.0,
          "amplitude ratios give no positive mass m2 (need C21/C11 and C13/C23 of opposite sign)");
  const double l1 = q.w1 * q.w1, l2 = q.w2 * q.w2, det = 1.0 - r * s;
  q.m1 = p.m1;
  q.m2 = -p.m1 * s / r;
  const double K11 = q.m1 * (l1 - r * s * l2) / det;
  const double K12 = q.m1 * s * (l2 - l1) / det;
  const double K22 = q.m2 * (l2 - r * s * l1) / det;
  q.k2 = -K12;
  q.k1 = K11 - q.k2;
  q.k3 = K22 - q.k2;
  require(q.k1 > 0.0 && q.k2 > 0.0 && q.k3 > 0.0,
          "amplitude ratios give a non-positive spring (k1, k2 or k3)");
  q.c3 = 2.0 * p.zeta * q.m2 * q.w2;         // 004 Eq. (9)
  q.c1 = 2.0 * p.zeta * q.m1 * q.w1 / p.fr;  // 004 Eq. (9)
  return q;
}

oscillator_definition make_definition(const params004& p) {
  const physical004 q = derive004(p);
  oscillator_definition d;  // 004 Eq. (2), dampers c1 || k1 and c3 || k3 (004 Sect. 3.3)
  d.m = {q.m1, q.m2};
  d.k = {q.k1, q.k3};
  d.c = {q.c1, q.c3};
  d.links = {{0, 1, q.k2, 0.0}};
  d.x0 = {q.C11 + q.C13, q.C21 + q.C23};  // 004 Eq. (3) at t = 0
  d.v0 = {0.0, 0.0};
  return d;
}

}  // namespace cosim::osc
