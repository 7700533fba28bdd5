// Oscillator benchmarks (000 App. A.1-A.3, 004 Sect. 3): closed forms against independent
// answers (hand-derived modal solutions, 004 Eq. (3), energy balances, a hand-written RK4
// of 000 Eq. (9)), and the co-simulation unit's integrators against exact solutions of a
// single forced mass (their orders of convergence).
#include "cosim/subsystems/oscillator.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <memory>
#include <numbers>
#include <stdexcept>
#include <vector>

// This file provides the operator new replacement for subsystems_tests (exactly one file
// per test executable may, see alloc_counter.hpp).
#define COSIM_DEFINE_ALLOC_COUNTER
#include "alloc_counter.hpp"
#include "cosim/subsystems/oscillator_subsystem.hpp"

namespace {

using namespace cosim::osc;
using cosim::duration;
using cosim::time_point;
using cosim::to_duration;

std::vector<double> grid(double t_end, int n) {
  std::vector<double> t;
  for (int i = 0; i <= n; ++i) t.push_back(t_end * i / n);
  return t;
}

// 000 App. A.1, case 1, solved by hand. det(K - w^2 M) = 0 with m = 1:
// (110 - w^2)(1100 - w^2) - 100^2 = 0  ->  w^2 = 605 -+ sqrt(495^2 + 100^2) = 605 -+ 505,
// i.e. w = 10 and sqrt(1110) rad/s; modes (1, 0.1) and (1, -10). The initial velocity
// (100, -100) = a (1, 0.1) + b (1, -10) gives b = 1100/101, a = 9000/101, x0 = 0.
TEST(Oscillator, A1UndampedMatchesHandModalSolution) {
  const reference_solution ref(make_definition(a1_params(1)));
  const auto w = natural_frequencies(ref.definition());
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NEAR(w[0], 10.0, 1e-12);
  EXPECT_NEAR(w[1], std::sqrt(1110.0), 1e-12);

  const double a = 9000.0 / 101.0, b = 1100.0 / 101.0, w2 = std::sqrt(1110.0);
  const auto times = grid(10.0, 97);
  const auto z = ref.states_at(times);
  for (std::size_t i = 0; i < times.size(); ++i) {
    const double t = times[i];
    const double s1 = a / 10.0 * std::sin(10.0 * t), s2 = b / w2 * std::sin(w2 * t);
    const double c1 = a * std::cos(10.0 * t), c2 = b * std::cos(w2 * t);
    // Amplitudes ~ 9 m and 100 m/s: 1e-9 relative.
    EXPECT_NEAR(z[i][0], s1 + s2, 1e-8) << "t = " << t;
    EXPECT_NEAR(z[i][1], 0.1 * s1 - 10.0 * s2, 1e-8) << "t = " << t;
    EXPECT_NEAR(z[i][2], c1 + c2, 1e-7) << "t = " << t;
    EXPECT_NEAR(z[i][3], 0.1 * c1 - 10.0 * c2, 1e-7) << "t = " << t;
  }
}

// Undamped: the closed form keeps the initial energy, E0 = (1/2)(100^2 + 100^2) = 1e4 J for
// A.1 and (1/2)(10 10^2 + 25 5^2 + 100 10^2) = 5812.5 J for A.2.
TEST(Oscillator, UndampedClosedFormsConserveEnergy) {
  struct item {
    oscillator_definition d;
    double E0 = 0.0;
  };
  const std::array<item, 2> cases{item{make_definition(a1_params(1)), 1e4},
                                  item{make_definition(a2_params()), 5812.5}};
  for (const auto& c : cases) {
    const reference_solution ref(c.d);
    const auto n = static_cast<Eigen::Index>(c.d.size());
    for (const auto& z : ref.states_at(grid(10.0, 113))) {
      const double E = mechanical_energy(c.d, z.head(n), z.tail(n));
      EXPECT_NEAR(E, c.E0, 1e-9 * c.E0);
    }
  }
}

// 000 Eq. (45) as printed divides the last entry by m2; the state matrix must use m3.
TEST(Oscillator, A2StateMatrixUsesM3) {
  const auto d = make_definition(a2_params());
  const Eigen::MatrixXd A = state_matrix(d);
  EXPECT_DOUBLE_EQ(A(5, 2), -(100.0 + 100.0 + 100.0) / 100.0);  // -(k3 + kc1 + kc2)/m3
  EXPECT_DOUBLE_EQ(A(3, 2), 100.0 / 10.0);                      // kc1/m1
  EXPECT_DOUBLE_EQ(A(5, 0), 100.0 / 100.0);                     // kc1/m3
}

// Damped A.1 cases against a hand-written RK4 of 000 Eq. (9) (no library code involved).
TEST(Oscillator, A1DampedMatchesHandWrittenRk4) {
  for (int cs : {2, 3}) {
    const two_mass_params p = a1_params(cs);
    const reference_solution ref(make_definition(p));
    using st = std::array<double, 4>;
    auto f = [&](const st& z) {
      const double fc = p.kc * (z[0] - z[1]) + p.cc * (z[2] - z[3]);
      return st{z[2], z[3], (-p.k1 * z[0] - p.c1 * z[2] - fc) / p.m1,
                (-p.k2 * z[1] - p.c2 * z[3] + fc) / p.m2};
    };
    st z{0.0, 0.0, 100.0, -100.0};
    const double h = 1e-4;
    const int n = 20000;  // 2 s
    for (int i = 0; i < n; ++i) {
      auto add = [](const st& a, double c, const st& b) {
        st r;
        for (std::size_t j = 0; j < 4; ++j) r[j] = a[j] + c * b[j];
        return r;
      };
      const st k1 = f(z), k2 = f(add(z, h / 2, k1)), k3 = f(add(z, h / 2, k2)),
               k4 = f(add(z, h, k3));
      for (std::size_t j = 0; j < 4; ++j) z[j] += h / 6 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
    }
    const Eigen::VectorXd e = ref.state_at(h * n);
    // RK4 global error ~ T w (w h)^4 / 120 with w = 33 rad/s: ~1e-9 of the amplitude.
    for (Eigen::Index j = 0; j < 4; ++j)
      EXPECT_NEAR(e[j], z[static_cast<std::size_t>(j)], 1e-6) << "case " << cs << " j " << j;
  }
}

// Energy balance of a damped closed form: E(t) + integral of c_i v_i^2 + c_c (v1 - v2)^2
// = E0, the dissipation integrated by the trapezoidal rule on a fine grid.
TEST(Oscillator, DampedClosedFormEnergyBalance) {
  const two_mass_params p = a1_params(3);
  const auto d = make_definition(p);
  const reference_solution ref(d);
  const int n = 40000;
  const auto times = grid(2.0, n);
  const auto z = ref.states_at(times);
  auto dissipation = [&](const Eigen::VectorXd& s) {
    return p.c1 * s[2] * s[2] + p.c2 * s[3] * s[3] + p.cc * (s[2] - s[3]) * (s[2] - s[3]);
  };
  double lost = 0.0;
  const double E0 = 1e4;
  for (int i = 1; i <= n; ++i) {
    const auto ii = static_cast<std::size_t>(i);
    lost += 0.5 * (times[ii] - times[ii - 1]) * (dissipation(z[ii - 1]) + dissipation(z[ii]));
    if (i % 4000 == 0) {
      const double E = mechanical_energy(d, z[ii].head(2), z[ii].tail(2));
      EXPECT_LT(E, E0);
      EXPECT_NEAR(E + lost, E0, 1e-4 * E0) << "t = " << times[ii];
    }
  }
}

// 004 Eq. (3): with zero initial velocities the motion is C11 cos w1 t + C13 cos w2 t and
// C21 cos w1 t + C23 cos w2 t. The matrix exponential of the derived 004 Eq. (2) system
// must reproduce it, for the paper's ratios (004 Sect. 3.2) across the FR sweep.
TEST(Oscillator, Paper004ClosedFormIsEq3) {
  for (double fr : {1.5, 10.0, 30.0, 100.0}) {
    params004 p;
    p.fr = fr;
    const physical004 q = derive004(p);
    // Hand results for r = C21/C11 = -0.01, s = C13/C23 = 1 (see oscillator.cpp).
    const double w1 = 2.0 * std::numbers::pi, w2 = w1 / fr;
    EXPECT_NEAR(q.m2, 100.0, 1e-12);
    EXPECT_NEAR(q.k1, w2 * w2, 1e-9);
    EXPECT_NEAR(q.k3, 100.0 * w2 * w2, 1e-9);
    const auto d = make_definition(p);
    const auto w = natural_frequencies(d);
    EXPECT_NEAR(w[0], w2, 1e-9 * w1);
    EXPECT_NEAR(w[1], w1, 1e-9 * w1);
    const reference_solution ref(d);
    const auto times = grid(100.0, 1009);
    const auto z = ref.states_at(times);
    for (std::size_t i = 0; i < times.size(); ++i) {
      const double t = times[i];
      const double x1 = 1.0 * std::cos(w1 * t) + 10.0 * std::cos(w2 * t);
      const double x2 = -0.01 * std::cos(w1 * t) + 10.0 * std::cos(w2 * t);
      // Amplitude 11 m over 100 fast cycles: 1e-9 relative.
      EXPECT_NEAR(z[i][0], x1, 1e-8) << "FR " << fr << " t " << t;
      EXPECT_NEAR(z[i][1], x2, 1e-8) << "FR " << fr << " t " << t;
    }
  }
}

// 004 Eq. (9): c3 = 2 zeta m2 w2 and c1 = 2 zeta m1 w1 / FR damp both modes; the closed
// form's energy then decays (never grows) and loses exactly the dissipated energy.
TEST(Oscillator, Paper004DampingDissipates) {
  params004 p;
  p.fr = 5.0;
  p.zeta = 0.2;
  const physical004 q = derive004(p);
  EXPECT_NEAR(q.c3, 2.0 * 0.2 * 100.0 * (2.0 * std::numbers::pi / 5.0), 1e-9);
  EXPECT_NEAR(q.c1, 2.0 * 0.2 * 1.0 * 2.0 * std::numbers::pi / 5.0, 1e-12);
  const auto d = make_definition(p);
  const reference_solution ref(d);
  const int n = 20000;
  const auto times = grid(10.0, n);
  const auto z = ref.states_at(times);
  double lost = 0.0, prev = mechanical_energy(d, z[0].head(2), z[0].tail(2));
  const double E0 = prev;
  for (int i = 1; i <= n; ++i) {
    const auto ii = static_cast<std::size_t>(i);
    auto diss = [&](const Eigen::VectorXd& s) { return q.c1 * s[2] * s[2] + q.c3 * s[3] * s[3]; };
    lost += 0.5 * (times[ii] - times[ii - 1]) * (diss(z[ii - 1]) + diss(z[ii]));
    const double E = mechanical_energy(d, z[ii].head(2), z[ii].tail(2));
    EXPECT_LE(E, prev * (1.0 + 1e-12));
    prev = E;
  }
  EXPECT_NEAR(prev + lost, E0, 1e-4 * E0);
  EXPECT_LT(prev, 0.5 * E0);  // zeta = 0.2 over 2 slow cycles removes most of it
}

TEST(Oscillator, Paper004RejectsBadRatios) {
  params004 p;
  p.fr = 1.0;
  EXPECT_THROW((void)derive004(p), std::invalid_argument);
  p.fr = 0.5;
  EXPECT_THROW((void)derive004(p), std::invalid_argument);
  p = params004{};
  p.ar2 = 1000.0;  // C21/C11 and C13/C23 of equal sign: m2 = -m1 s/r < 0
  EXPECT_THROW((void)derive004(p), std::invalid_argument);
}

TEST(Oscillator, ValidateRejectsSingularMassMatrix) {
  two_mass_params p = a1_params(1);
  p.m2 = 0.0;
  EXPECT_THROW(validate(make_definition(p)), std::invalid_argument);
  EXPECT_THROW(reference_solution{make_definition(p)}, std::invalid_argument);
  p = a1_params(1);
  p.damper_exponent = 0.5;
  EXPECT_THROW(validate(make_definition(p)), std::invalid_argument);
  EXPECT_THROW((void)a1_params(4), std::invalid_argument);
}

// 000 A.3 reference (fine RK4): (a) energy balance with the power-law dissipation
// sum c |dv|^(p+1) (000 Eq. (56)); (b) halving the fine step changes nothing visible.
TEST(Oscillator, NonlinearReferenceEnergyBalance) {
  const two_mass_params p = a3_params();
  const auto d = make_definition(p);
  ASSERT_FALSE(d.linear());
  const reference_solution ref(d, 2e-5);
  const int n = 20000;
  const auto times = grid(2.0, n);
  const auto z = ref.states_at(times);
  auto diss = [&](const Eigen::VectorXd& s) {
    auto c3 = [](double c, double v) { return c * std::abs(v) * v * v; };
    return c3(p.c1, s[2]) + c3(p.c2, s[3]) + c3(p.cc, s[2] - s[3]);
  };
  double lost = 0.0;
  const double E0 = 1e4;
  for (int i = 1; i <= n; ++i) {
    const auto ii = static_cast<std::size_t>(i);
    lost += 0.5 * (times[ii] - times[ii - 1]) * (diss(z[ii - 1]) + diss(z[ii]));
  }
  const double E = mechanical_energy(d, z.back().head(2), z.back().tail(2));
  EXPECT_LT(E, 0.9 * E0);  // the quadratic dampers remove a visible share in 2 s
  EXPECT_NEAR(E + lost, E0, 1e-4 * E0);
  const reference_solution finer(d, 1e-5);
  const Eigen::VectorXd zf = finer.state_at(2.0);
  EXPECT_LT((zf - z.back()).norm(), 1e-8 * z.back().norm());
}

// ---- The co-simulation unit --------------------------------------------------------------

// Force source f(t) = F sin(W t) on a mass-spring (m, k) at rest: the exact response is
// x(t) = F / (m (w0^2 - W^2)) (sin W t - (W / w0) sin w0 t).
class sine_force final : public cosim::signal_source {
 public:
  [[nodiscard]] double value(time_point t) const noexcept override {
    return F * std::sin(W * cosim::to_seconds(t));
  }
  static constexpr double F = 3.0, W = 7.0;
};

double forced_error(integrator integ, double h) {
  const double m = 2.0, k = 200.0, w0 = std::sqrt(k / m), T = 1.0;
  oscillator_mass mass("m", mass_spec{m, k, 0.0, 1.0, 1.0, 0.0, 0.0}, integ);
  mass.add_force("1", 0.0);
  sine_force src;
  mass.input(0).bind_source(&src);
  mass.initialize(time_point{});
  const duration hd = to_duration(h);
  const auto steps = static_cast<long>(std::lround(T / h));
  time_point t{};
  for (long i = 0; i < steps; ++i, t += hd) EXPECT_TRUE(mass.step(t, hd));
  const double F = sine_force::F, W = sine_force::W;
  const double amp = F / (m * (w0 * w0 - W * W));
  const double x = amp * (std::sin(W * T) - W / w0 * std::sin(w0 * T));
  const double v = amp * W * (std::cos(W * T) - std::cos(w0 * T));
  // Position and velocity together: semi-implicit Euler's positions alone are those of
  // Stormer-Verlet here (second order); its velocities are first order.
  return std::abs(mass.x() - x) + std::abs(mass.v() - v) / w0;
}

// Halving h divides the error by 2^order: 1 (semi-implicit Euler), 2 (trapezoidal), 4 (RK4,
// only if the force input is read at the right sub-step times).
TEST(OscillatorMass, IntegratorOrdersWithTimeVaryingInput) {
  struct item {
    integrator integ;
    double h, ratio_lo, ratio_hi;
  };
  for (const item& c :
       {item{integrator::semi_implicit_euler, 1e-3, 1.8, 2.2},
        item{integrator::trapezoidal, 4e-3, 3.7, 4.3}, item{integrator::rk4, 1e-2, 14.0, 18.0}}) {
    const double e1 = forced_error(c.integ, c.h), e2 = forced_error(c.integ, c.h / 2);
    EXPECT_GT(e1 / e2, c.ratio_lo) << static_cast<int>(c.integ) << " " << e1 << " " << e2;
    EXPECT_LT(e1 / e2, c.ratio_hi) << static_cast<int>(c.integ) << " " << e1 << " " << e2;
  }
}

// The force owner sends 000 Eq. (13), f = kc (x1 - xi) + cc (v1 - xi'), with its inputs
// at the output time (direct feedthrough, 000 Eq. (24)).
TEST(OscillatorMass, SendsCouplingForceWithFeedthrough) {
  oscillator_mass m1("mass1", mass_spec{1.0, 10.0, 0.0, 1.0, 1.0, 0.5, 2.0},
                     integrator::trapezoidal);
  m1.add_link("2", 100.0, 0.25, 0.0, 0.0, true);
  ASSERT_EQ(m1.output_count(), 3u);
  EXPECT_EQ(m1.output_desc(oscillator_mass::out_f).name, "f");
  m1.initialize(time_point{});
  m1.input(0).receive(time_point{}, 0.1);   // x2
  m1.input(1).receive(time_point{}, -1.0);  // v2
  m1.update_outputs(time_point{});
  EXPECT_DOUBLE_EQ(m1.output(oscillator_mass::out_f), 100.0 * (0.5 - 0.1) + 0.25 * (2.0 + 1.0));
  EXPECT_DOUBLE_EQ(m1.output(oscillator_mass::out_x), 0.5);
  EXPECT_DOUBLE_EQ(m1.output(oscillator_mass::out_v), 2.0);
  // First-order input: the force at t = 1 ms uses x2, v2 extrapolated there.
  m1.input(0).set_order(1);
  m1.input(1).set_order(1);
  const time_point t1 = time_point{to_duration(1e-3)};
  m1.input(0).receive(t1, 0.2);
  m1.input(1).receive(t1, -2.0);
  const time_point t2 = time_point{to_duration(2e-3)};
  m1.update_outputs(t2);
  EXPECT_NEAR(m1.output(oscillator_mass::out_f), 100.0 * (0.5 - 0.3) + 0.25 * (2.0 + 3.0), 1e-12);
}

TEST(OscillatorMass, StepDoesNotAllocate) {
  for (integrator integ :
       {integrator::semi_implicit_euler, integrator::trapezoidal, integrator::rk4}) {
    oscillator_mass m("m", mass_spec{1.0, 10.0, 0.3, 1.0, 2.0, 0.1, 0.0}, integ);
    m.add_link("2", 5.0, 0.1, 0.0, 0.0, true);
    m.add_force("3", 0.0);
    m.initialize(time_point{});
    const duration h = to_duration(1e-3);
    const cosim::test::alloc_window w;
    time_point t{};
    for (int i = 0; i < 100; ++i, t += h) {
      (void)m.step(t, h);
      m.update_outputs(t + h);
    }
    EXPECT_EQ(w.allocations(), 0u);
  }
}

}  // namespace
