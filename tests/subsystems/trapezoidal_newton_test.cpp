// The trapezoidal Newton step of both crane multibody units (trapezoidal_newton.hpp) against
// independent computations: the closed-form step of a linear forced system, the rule's
// defining equations on a nonlinear one, its second order on the harmonic oscillator
// (exact solution cos), the iteration limit on a residual where Newton diverges, the
// number of acceleration calls, and no allocation.
#include "cosim/subsystems/trapezoidal_newton.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "alloc_counter.hpp"

namespace {

using cosim::newton_solve;
using cosim::trapezoidal_newton_step;
using vec2 = Eigen::Vector2d;
using mat2 = Eigen::Matrix2d;
using vec3 = Eigen::Vector3d;
using mat3 = Eigen::Matrix3d;
using vec1 = Eigen::Matrix<double, 1, 1>;

/// q'' = -K q - C q' + F sin(w t): linear, so one step of the trapezoidal rule solves
///   (I + h/2 C + h^2/4 K) v1 = v0 + h/2 a0 - h/2 K (q0 + h/2 v0) + h/2 F sin(w t1).
template <int N>
struct linear_system {
  using vec = Eigen::Matrix<double, N, 1>;
  using mat = Eigen::Matrix<double, N, N>;
  mat K, C;
  vec F;
  double w = 3.0;

  [[nodiscard]] vec accel(const vec& q, const vec& v, double t) const {
    return -K * q - C * v + F * std::sin(w * t);
  }

  void exact_step(vec& q, vec& v, double h, double t0) const {
    const vec a0 = accel(q, v, t0);
    const mat A = mat::Identity() + 0.5 * h * C + 0.25 * h * h * K;
    const vec b =
        v + 0.5 * h * a0 - 0.5 * h * K * (q + 0.5 * h * v) + 0.5 * h * F * std::sin(w * (t0 + h));
    const vec v1 = A.partialPivLu().solve(b);
    q = q + 0.5 * h * (v + v1);
    v = v1;
  }
};

linear_system<2> damped_pair() {
  linear_system<2> s;
  s.K << 40.0, -15.0, -15.0, 25.0;
  s.C << 0.8, -0.2, -0.2, 0.5;
  s.F << 3.0, -1.0;
  return s;
}

template <newton_solve Solve, int N>
void expect_matches_closed_form(const linear_system<N>& sys, double h, int steps) {
  using vec = Eigen::Matrix<double, N, 1>;
  vec q = vec::LinSpaced(0.1, 0.3), v = vec::Constant(-0.2);
  vec qe = q, ve = v;
  for (int k = 0; k < steps; ++k) {
    const double t0 = k * h;
    const cosim::newton_result r = trapezoidal_newton_step<Solve>(
        q, v, h, t0, t0 + h,
        [&](const vec& qa, const vec& va, double t) { return sys.accel(qa, va, t); });
    sys.exact_step(qe, ve, h, t0);
    EXPECT_TRUE(r.converged) << "step " << k;
    for (int i = 0; i < N; ++i) {
      ASSERT_NEAR(v[i], ve[i], 1e-11 * (1.0 + std::abs(ve[i])))
          << "step " << k << " v[" << i << "]";
      ASSERT_NEAR(q[i], qe[i], 1e-11 * (1.0 + std::abs(qe[i])))
          << "step " << k << " q[" << i << "]";
    }
    // Restart both from the same state so each step is compared on its own.
    qe = q;
    ve = v;
  }
  EXPECT_GT(v.norm(), 1e-2);  // the state moved: the comparison is not of zeros
}

TEST(TrapezoidalNewton, LinearForcedSystemMatchesClosedFormStepBothSolves) {
  const linear_system<2> sys = damped_pair();
  expect_matches_closed_form<newton_solve::cramer>(sys, 0.01, 200);
  expect_matches_closed_form<newton_solve::inverse>(sys, 0.01, 200);
}

TEST(TrapezoidalNewton, ThreeStatesMatchClosedFormStep) {
  linear_system<3> sys;
  sys.K << 30.0, -10.0, 0.0, -10.0, 20.0, -5.0, 0.0, -5.0, 12.0;
  sys.C = 0.05 * sys.K + 0.3 * mat3::Identity();
  sys.F << 1.0, 0.0, -2.0;
  expect_matches_closed_form<newton_solve::inverse>(sys, 0.02, 100);
}

TEST(TrapezoidalNewton, NonlinearStepSatisfiesTheRule) {
  // Coupled pendulums with quadratic drag and time-dependent forcing; h large enough that
  // Newton needs several corrections.
  auto accel = [](const vec2& q, const vec2& v, double t) {
    const double c = 0.4 * std::pow(q[0] - q[1], 3);
    return vec2(-9.81 * std::sin(q[0]) - c - 0.3 * v[0] * std::abs(v[0]) + std::cos(2.0 * t),
                -9.81 * std::sin(q[1]) + c - 0.3 * v[1] * std::abs(v[1]));
  };
  const double h = 0.05;
  vec2 q{1.2, -0.4}, v{0.0, 2.0};
  int max_iterations = 0;
  for (int k = 0; k < 100; ++k) {
    const double t0 = k * h, t1 = t0 + h;
    const vec2 q0 = q, v0 = v;
    const cosim::newton_result r =
        trapezoidal_newton_step<newton_solve::cramer>(q, v, h, t0, t1, accel);
    ASSERT_TRUE(r.converged) << "step " << k;
    max_iterations = std::max(max_iterations, r.iterations);
    // The two equations that define the rule, evaluated here.
    const vec2 q_rule = q0 + 0.5 * h * (v0 + v);
    const vec2 v_residual = v - v0 - 0.5 * h * (accel(q0, v0, t0) + accel(q, v, t1));
    EXPECT_LE((q - q_rule).norm(), 1e-14 * (1.0 + q.norm())) << "step " << k;
    EXPECT_LE(v_residual.norm(), 1e-11 * (1.0 + v.norm())) << "step " << k;
  }
  EXPECT_GE(max_iterations, 2);  // genuinely nonlinear for Newton
}

TEST(TrapezoidalNewton, SecondOrderOnHarmonicOscillator) {
  // q'' = -w^2 q, q(0) = 1, q'(0) = 0: q(t) = cos(w t). Halving h quarters the error.
  const double w = 2.0, T = 2.0;
  auto error_at_T = [&](int n) {
    const double h = T / n;
    vec1 q = vec1::Constant(1.0), v = vec1::Zero();
    for (int k = 0; k < n; ++k)
      trapezoidal_newton_step<newton_solve::inverse>(
          q, v, h, k * h, (k + 1) * h,
          [&](const vec1& qa, const vec1&, double) { return vec1(-w * w * qa); });
    return std::abs(q[0] - std::cos(w * T));
  };
  const double e1 = error_at_T(200), e2 = error_at_T(400);
  EXPECT_LT(e1, 1e-3);
  EXPECT_NEAR(e1 / e2, 4.0, 0.1);
}

TEST(TrapezoidalNewton, CallsAccelOnceAtT0ThenNPlusOneTimesPerIterationAtT1) {
  const linear_system<2> sys = damped_pair();
  std::vector<double> times;
  times.reserve(64);
  vec2 q{0.1, -0.1}, v{0.5, 0.0};
  const cosim::newton_result r = trapezoidal_newton_step<newton_solve::cramer>(
      q, v, 0.01, 1.0, 1.01, [&](const vec2& qa, const vec2& va, double t) {
        times.push_back(t);
        return sys.accel(qa, va, t);
      });
  EXPECT_TRUE(r.converged);
  ASSERT_EQ(times.size(), 1u + static_cast<std::size_t>(r.iterations) * 3u);
  EXPECT_EQ(times.front(), 1.0);
  for (std::size_t i = 1; i < times.size(); ++i) EXPECT_EQ(times[i], 1.01) << "call " << i;
}

TEST(TrapezoidalNewton, StopsAtTheIterationLimitWhenNewtonDiverges) {
  // With qd0 = 0 and a(t0) = A, a(t1) = (2/h)(v - cbrt(v)) - A makes the residual cbrt(v),
  // on which Newton overshoots (v -> -2 v) and never converges.
  const double h = 0.1, A = 1.0;
  int calls = 0;
  vec1 q = vec1::Constant(0.5), v = vec1::Zero();
  const cosim::newton_result r = trapezoidal_newton_step<newton_solve::inverse>(
      q, v, h, 0.0, h, [&](const vec1&, const vec1& va, double t) {
        ++calls;
        if (t == 0.0) return vec1::Constant(A);
        return vec1::Constant(2.0 / h * (va[0] - std::cbrt(va[0])) - A);
      });
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, cosim::trapezoidal_newton_max_iterations);
  EXPECT_EQ(calls, 1 + cosim::trapezoidal_newton_max_iterations * 2);
  // The step is still taken with the last iterate: q1 = q0 + h/2 (0 + v1).
  EXPECT_TRUE(std::isfinite(v[0]));
  EXPECT_GT(std::abs(v[0]), h);  // moved away from the start guess h A, as Newton does on cbrt
  EXPECT_DOUBLE_EQ(q[0], 0.5 + 0.5 * h * v[0]);
}

TEST(TrapezoidalNewton, AllocatesNothing) {
  linear_system<3> sys;
  sys.K = 10.0 * mat3::Identity();
  sys.C = mat3::Identity();
  sys.F = vec3::Ones();
  vec3 q = vec3::Ones(), v = vec3::Zero();
  const cosim::test::alloc_window window;
  for (int k = 0; k < 10; ++k)
    trapezoidal_newton_step<newton_solve::inverse>(
        q, v, 0.01, k * 0.01, (k + 1) * 0.01,
        [&](const vec3& qa, const vec3& va, double t) { return sys.accel(qa, va, t); });
  EXPECT_EQ(window.allocations(), 0u);
}

}  // namespace
