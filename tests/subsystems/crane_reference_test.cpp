// Monolithic reference solver of the crane (003 Sect. 4): equilibrium hold, constraint
// violation, step-size convergence (003 Fig. 9), agreement with an independent
// minimal-coordinate ODE, and the Newton failure path.
#include "cosim/subsystems/crane_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace {

using namespace cosim::crane;

// Sanitizer builds run ~10x slower per step, unoptimised (Debug) builds 100-600x: they
// use a shorter M1 run (to 6.1 s, past the p1 spike) with a 0.2 ms reference step.
#if !defined(NDEBUG) || defined(COSIM_SANITIZED) || defined(__SANITIZE_ADDRESS__) || \
    defined(__SANITIZE_THREAD__)
constexpr bool slow_build = true;
#else
constexpr bool slow_build = false;
#endif
constexpr double ref_step = slow_build ? 2e-4 : 5e-5;  // 003 Sect. 4: 0.05 ms
// Trapezoidal error ~h^2: the ODE agreement bound scales with the reference step.
constexpr double ode_bound = 1e-8 * (ref_step / 5e-5) * (ref_step / 5e-5);
constexpr double ode_step = slow_build ? 2e-5 : 1e-5;  // RK4, error ~h^4: far below 1e-8 m

/// Independent formulation of the same physics: minimal coordinates (theta1, theta2) with
/// the erratum mass matrix (003 Eqs. (1)-(5)) and the pressure ODEs (003 Eqs. (8)-(13)),
/// integrated monolithically with classical RK4. Returns s1 every `every` steps.
std::vector<double> minimal_ode_s1(manoeuvre_kind kind, double h, double duration, long every) {
  const mechanical_params mp;
  const hydraulic_params hp;
  const equilibrium eq = solve_equilibrium(mp, hp);
  using state = std::array<double, 6>;  // th1, th2, w1, w2, p1, p2
  auto rhs = [&](double t, const state& x) {
    const vec2 q{x[0], x[1]};
    const vec2 qd{x[2], x[3]};
    const actuator_kinematics k = actuator1(mp, x[0]);
    const double sd = k.ds_dth1 * x[2];  // 003 Eq. (4)
    const double fh = actuator_force(hp, x[4], x[5], sd);
    // 003 Eq. (1) with f_h = J^T f_h (Eq. (3)), J = [ds/dth1, 0].
    const vec2 f = gravity_forces(mp, q) - velocity_terms(mp, q, qd) + vec2{k.ds_dth1 * fh, 0.0};
    const vec2 qdd = mass_matrix(mp, q).inverse() * f;
    const vec2 pd =
        pressure_rates(hp, eq.s0, k.s, sd, manoeuvre::at(kind, t, eq.kappa0), x[4], x[5]);
    return state{x[2], x[3], qdd[0], qdd[1], pd[0], pd[1]};
  };
  state x{mp.theta1_0, mp.theta2_0, 0.0, 0.0, eq.p1, eq.p2};
  std::vector<double> s{actuator1(mp, x[0]).s};
  const long n = std::lround(duration / h);
  auto axpy = [](const state& a, double c, const state& b) {
    state r;
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = a[i] + c * b[i];
    return r;
  };
  for (long i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) * h;
    const state k1 = rhs(t, x);
    const state k2 = rhs(t + 0.5 * h, axpy(x, 0.5 * h, k1));
    const state k3 = rhs(t + 0.5 * h, axpy(x, 0.5 * h, k2));
    const state k4 = rhs(t + h, axpy(x, h, k3));
    for (std::size_t j = 0; j < x.size(); ++j) {
      x[j] += h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
    }
    if ((i + 1) % every == 0) s.push_back(actuator1(mp, x[0]).s);
  }
  return s;
}

/// The M1 reference (h = ref_step), 1 ms output, computed once per process.
const reference_result& m1_reference() {
  static const reference_result r = [] {
    reference_options o;
    o.step = ref_step;
    o.output_interval = 1e-3;
    o.duration = slow_build ? 6.1 : 10.0;
    return run_crane_reference(o);
  }();
  return r;
}

TEST(CraneReference, HoldStaysAtEquilibrium) {
  reference_options o;
  o.manoeuvre = manoeuvre_kind::hold;
  o.step = ref_step;
  o.duration = 1.0;
  const reference_result r = run_crane_reference(o);
  ASSERT_TRUE(r.converged);
  ASSERT_EQ(r.samples.size(), 101u);  // t = 0, 0.01, ..., 1
  EXPECT_NEAR(r.samples.front().s, 0.5, 1e-12);
  for (const reference_sample& s : r.samples) {
    EXPECT_NEAR(s.s, 0.5, 1e-6) << "t = " << s.t;
    EXPECT_NEAR(s.fh, r.initial.fh, 1e-3) << "t = " << s.t;
  }
  EXPECT_NEAR(r.samples.back().t, 1.0, 1e-12);
}

TEST(CraneReference, SamplesFollowTheCsvContract) {
  const reference_result& r = m1_reference();
  ASSERT_TRUE(r.converged);
  const reference_sample& s0 = r.samples.front();
  EXPECT_EQ(s0.t, 0.0);
  EXPECT_NEAR(s0.kappa, r.initial.kappa0, 1e-15);
  EXPECT_NEAR(s0.p1, 3.1708e6, 50.0);  // 003 Eq. (18)
  EXPECT_NEAR(s0.p2, 4.5292e6, 50.0);
  EXPECT_NEAR(s0.fh, 8829.0, 0.5);  // 003 Sect. 1.3
  for (std::size_t i = 0; i < r.samples.size(); ++i) {
    ASSERT_NEAR(r.samples[i].t, 1e-3 * static_cast<double>(i), 1e-9);
  }
  // Valve closes at t_a = 2 s (003 Eq. (19)): the actuator extends until t_b = 6 s.
  const auto at = [&](double t) {
    return r.samples[static_cast<std::size_t>(std::lround(t * 1e3))];
  };
  EXPECT_GT(at(4.0).s, at(2.0).s + 0.02);
  EXPECT_GT(at(6.0).s, at(4.0).s + 0.02);
  EXPECT_NEAR(at(3.0).kappa, r.initial.kappa0 - 0.01, 1e-15);
}

TEST(CraneReference, ConstraintViolationStaysTiny) {
  const reference_result& r = m1_reference();
  ASSERT_TRUE(r.converged);
  EXPECT_LT(r.max_constraint_violation, 1e-8);  // [m], over every step
  EXPECT_LT(r.max_velocity_violation, 1e-6);    // [m/s], after the projections
  EXPECT_LT(r.max_final_residual, 1e-5);
  EXPECT_LE(r.max_iterations_used, 50);
  for (const reference_sample& s : r.samples) ASSERT_LT(s.constraint_violation, 1e-8);
}

// 003 Fig. 9: differences to the h = 0.05 ms reference for h = 1, 0.5, 0.2, 0.1 ms, in s1
// over the run and in p1 around the spike at t = 6 s (window 5.99-6.1 s).
TEST(CraneReference, ConvergesLikeFig9) {
  const reference_result& ref = m1_reference();
  ASSERT_TRUE(ref.converged);
  const double h_ref = ref_step;
  const std::vector<double> steps =
      slow_build ? std::vector<double>{1e-3, 5e-4} : std::vector<double>{1e-3, 5e-4, 2e-4, 1e-4};
  std::vector<double> ds, dp;
  for (const double h : steps) {
    reference_options o;
    o.step = h;
    o.output_interval = 1e-3;
    o.duration = ref.samples.back().t;
    const reference_result r = run_crane_reference(o);
    ASSERT_TRUE(r.converged) << "h = " << h;
    ASSERT_EQ(r.samples.size(), ref.samples.size());
    double es = 0.0, ep = 0.0;
    for (std::size_t i = 0; i < r.samples.size(); ++i) {
      es = std::max(es, std::abs(r.samples[i].s - ref.samples[i].s));
      if (r.samples[i].t >= 5.99 && r.samples[i].t <= 6.1) {
        ep = std::max(ep, std::abs(r.samples[i].p1 - ref.samples[i].p1));
      }
    }
    ds.push_back(es);
    dp.push_back(ep);
  }
  for (std::size_t i = 1; i < steps.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "h " << steps[i - 1] << " -> " << steps[i]);
    EXPECT_LT(ds[i], ds[i - 1]);
    EXPECT_LT(dp[i], dp[i - 1]);
    // Trapezoidal rule, second order: e(h) ~ C h^2, so against the h_ref run the ratio is
    // (h1^2 - h_ref^2) / (h2^2 - h_ref^2) = 4.0, 6.6, 5.0 for h_ref = 0.05 ms (measured
    // 4.01, 6.59, 4.97); 4.6 for the slow builds' 0.2 ms.
    // The kinks of kappa (2, 2.001, 6, 6.002 s) lie on every grid, so no order is lost.
    const double predicted =
        (steps[i - 1] * steps[i - 1] - h_ref * h_ref) / (steps[i] * steps[i] - h_ref * h_ref);
    const double ratio_s = ds[i - 1] / ds[i];
    EXPECT_GT(ratio_s, 0.7 * predicted);
    EXPECT_LT(ratio_s, 1.4 * predicted);
    // p1 passes through the stiff pressure mode (d p1'/d p1 ~ -8000 1/s near 6 s, so
    // h |lambda| = 8, 4, 1.6, 0.8): the coarse steps are pre-asymptotic and the ratio is
    // irregular (measured 5.2, 344, 3.3). Require at least first-order-like shrinkage.
    EXPECT_GT(dp[i - 1] / dp[i], 2.0);
  }
  if (!slow_build) {
    // Absolute levels: at h = 0.1 ms the run is within 10 nm and 10 Pa of the reference.
    EXPECT_LT(ds.back(), 1e-8);
    EXPECT_LT(dp.back(), 10.0);
  }
}

// The DAE in natural coordinates against the ODE in minimal coordinates: same physics,
// independent formulations and integrators. Over the whole M1 run (both valve steps).
// Measured at 0.05 ms: 1.8e-10 m over the first 3 s, 7e-10 m over 10 s; the 1e-8 m bound
// (scaled by h^2 in slow builds) is well inside the 1e-5 m asked for.
TEST(CraneReference, MatchesIndependentMinimalCoordinateOdeM1) {
  const reference_result& r = m1_reference();
  ASSERT_TRUE(r.converged);
  const std::vector<double> s = minimal_ode_s1(manoeuvre_kind::m1, ode_step, r.samples.back().t,
                                               std::lround(1e-3 / ode_step));
  ASSERT_EQ(s.size(), r.samples.size());
  double err = 0.0, err3 = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double e = std::abs(s[i] - r.samples[i].s);
    err = std::max(err, e);
    if (r.samples[i].t <= 3.0) err3 = std::max(err3, e);
  }
  EXPECT_LT(err3, ode_bound);
  EXPECT_LT(err, ode_bound);
  RecordProperty("max_abs_ds_vs_ode_m1_3s", (std::ostringstream{} << err3).str());
  RecordProperty("max_abs_ds_vs_ode_m1", (std::ostringstream{} << err).str());
}

TEST(CraneReference, MatchesIndependentMinimalCoordinateOdeM2) {
  reference_options o;
  o.manoeuvre = manoeuvre_kind::m2;
  o.step = ref_step;
  o.duration = 2.0;
  const reference_result r = run_crane_reference(o);
  ASSERT_TRUE(r.converged);
  const std::vector<double> s =
      minimal_ode_s1(manoeuvre_kind::m2, ode_step, o.duration, std::lround(1e-2 / ode_step));
  ASSERT_EQ(s.size(), r.samples.size());
  double err = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i) err = std::max(err, std::abs(s[i] - r.samples[i].s));
  EXPECT_LT(err, ode_bound);
  RecordProperty("max_abs_ds_vs_ode_m2", (std::ostringstream{} << err).str());
}

TEST(CraneReference, ReportsNewtonFailure) {
  reference_options o;
  o.step = 1e-2;
  o.output_interval = 1e-2;
  o.max_newton_iterations = 1;
  const reference_result r = run_crane_reference(o);
  EXPECT_FALSE(r.converged);
  // At rest one correction suffices; the valve step at t_a = 2 s needs more.
  EXPECT_GT(r.fail_time, 2.0);
  EXPECT_LT(r.fail_time, 2.0 + 1.5e-2);
  EXPECT_GT(r.fail_residual, o.tolerance);
  ASSERT_FALSE(r.samples.empty());
  EXPECT_LT(r.samples.back().t, r.fail_time);
  EXPECT_NEAR(r.samples.back().t, 2.0, 1e-9);  // samples kept up to the failure
}

TEST(CraneReference, RejectsOutputIntervalNotMultipleOfStep) {
  reference_options o;
  o.step = 3e-4;
  o.output_interval = 1e-3;
  EXPECT_THROW(run_crane_reference(o), std::invalid_argument);
  o.step = 0.0;
  EXPECT_THROW(run_crane_reference(o), std::invalid_argument);
}

}  // namespace
