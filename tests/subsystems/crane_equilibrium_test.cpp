// Initial static equilibrium of the crane (003 Sect. 1.3, Eqs. (15)-(18)), its use as a
// co-simulation start state, and the manoeuvres M1 and M2 (003 Eqs. (19)-(20)).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "cosim/runtime/executor.hpp"
#include "cosim/subsystems/crane_model.hpp"
#include "cosim/subsystems/crane_subsystems.hpp"
#include "cosim/subsystems/manoeuvre.hpp"

namespace {

using namespace cosim::crane;

double round4(double v) {
  return std::round(v * 1e4) / 1e4;
}

TEST(CraneEquilibrium, ReproducesThePrintedNumbersOf003Sect1_3) {
  const equilibrium e = solve_equilibrium(mechanical_params{}, hydraulic_params{}, 3);
  // 003 Eq. (18), to the printed digits, after three Newton-Raphson iterations from
  // (3.3 MPa, 4.4 MPa, 0.5).
  EXPECT_EQ(round4(e.p1 / 1e6), 3.1708) << "p1 = " << e.p1;
  EXPECT_EQ(round4(e.p2 / 1e6), 4.5292) << "p2 = " << e.p2;
  EXPECT_EQ(round4(e.kappa0), 0.4543) << "kappa0 = " << e.kappa0;
  // 003 Sect. 1.3: f_h = 8.829 kN, s1 = 0.5 m.
  EXPECT_EQ(std::round(e.fh), 8829.0) << "fh = " << e.fh;
  EXPECT_NEAR(e.s0, 0.5, 1e-12);
  // The equilibrium force is consistent with the pressures (first row of 003 Eq. (17)).
  EXPECT_NEAR((e.p2 - e.p1) * hydraulic_params{}.ap, e.fh, 1e-6 * e.fh);
}

TEST(CraneEquilibrium, ForceAndLengthMatchTheHandComputation) {
  // theta1 = 30 deg, P = (L/2)(cos 30, sin 30) = (sqrt3/4, 1/4), B = (sqrt3/2, 0):
  //   s1^2 = 3/16 + 1/16 = 1/4                      -> s1 = 0.5 m exactly;
  //   ds1/dth1 = (dx (-L/2 sin th1) + dy (L/2 cos th1)) / s1 = sqrt3/4.
  // Statics with q' = 0 (second row: f2 = -g Lh mh cos 270deg = 0):
  //   f_h ds1/dth1 = g L (m/2 + mp + mh) cos th1 = 9.81 * 450 * sqrt3/2
  //   f_h = 2 * 9.81 * 450 = 8829 N exactly (the erratum form in docs/coupling.md; the
  //   printed 003 Eq. (2) would give ~5.4 kN).
  const mechanical_params mp;
  const actuator_kinematics k = actuator1(mp, mp.theta1_0);
  EXPECT_NEAR(k.s, 0.5, 1e-15);
  EXPECT_NEAR(k.ds_dth1, std::numbers::sqrt3 / 4.0, 1e-15);
  const equilibrium e = solve_equilibrium(mp, hydraulic_params{}, 3);
  EXPECT_NEAR(e.fh, 8829.0, 1e-8);
}

TEST(CraneEquilibrium, PressureRatesVanishAtTheEquilibrium) {
  const hydraulic_params hp;
  const equilibrium e = solve_equilibrium(mechanical_params{}, hp, 3);
  const vec2 pd = pressure_rates(hp, e.s0, e.s0, 0.0, e.kappa0, e.p1, e.p2);
  // Bulk modulus / chamber volume ~ 1e9 Pa / 1.4e-3 m^3: a residual flow of 1e-12 m^3/s
  // would be ~1 Pa/s; after three Newton iterations the residual is far smaller than the
  // pressure itself changes over a run (~MPa).
  EXPECT_LT(std::abs(pd[0]), 1.0) << pd[0];
  EXPECT_LT(std::abs(pd[1]), 1.0) << pd[1];
  EXPECT_LT(e.residual, 1.0);
}

/// Keeps (t, s) rows.
class s_sink final : public cosim::row_sink {
 public:
  void begin(std::span<const std::string> cols) override {
    for (std::size_t i = 0; i < cols.size(); ++i)
      if (cols[i] == "s") s_col = i;
  }
  void write(std::span<const double> row) noexcept override {
    t.push_back(row[0]);
    s.push_back(row[s_col]);
  }
  void end() override {}
  std::size_t s_col = 0;
  std::vector<double> t, s;
};

/// Builds the two-unit crane by hand (the wiring of 003 Sect. 3) and runs it offline.
cosim::run_outcome run_crane(coupling cpl, manoeuvre_kind mk, double duration_s, s_sink& sink) {
  const mechanical_params mp;
  const hydraulic_params hp;
  const equilibrium eq = solve_equilibrium(mp, hp, 3);
  cosim::system sys;
  auto mb = std::make_unique<crane_multibody>("multibody", mp, hp, cpl,
                                              multibody_integrator::semi_implicit_euler, eq);
  auto hy = std::make_unique<hydraulic_cylinder>("hydraulics", hp, cpl,
                                                 hydraulic_integrator::forward_euler, eq);
  const cosim::duration H = cosim::to_duration(1e-3);
  mb->set_step_size(H);
  hy->set_step_size(cosim::to_duration(2e-4));
  const manoeuvre kappa(mk, eq.kappa0);
  hy->input(hydraulic_cylinder::in_kappa).bind_source(&kappa);
  sys.add(std::move(mb));
  sys.add(std::move(hy));
  sys.connect("multibody.s", "hydraulics.s");
  sys.connect("multibody.sd", "hydraulics.sd");
  if (cpl == coupling::force_displacement) {
    sys.connect("hydraulics.fh", "multibody.fh");
  } else {
    sys.connect("hydraulics.p1", "multibody.p1");
    sys.connect("hydraulics.p2", "multibody.p2");
  }
  sys.add_probe("s", "multibody.s");
  cosim::run_plan plan;
  plan.macro_step = H;
  plan.macro_steps = static_cast<std::int64_t>(std::llround(duration_s / 1e-3));
  plan.order = {0, 1};
  return cosim::run_offline(sys, plan, {}, sink);
}

TEST(CraneEquilibrium, CoSimulationWithKappaHeldStaysAtRest) {
  // Started in the equilibrium of 003 Sect. 1.3 with kappa held at kappa0, nothing may move:
  // |s - 0.5 m| < 1e-9 m over 2 s, for both couplings. M1 equals kappa0 for t <= t_a = 2 s
  // (003 Eq. (19)), so it must hold still too.
  for (const coupling cpl : {coupling::force_displacement, coupling::pressure_displacement}) {
    for (const manoeuvre_kind mk : {manoeuvre_kind::hold, manoeuvre_kind::m1}) {
      s_sink sink;
      const cosim::run_outcome out = run_crane(cpl, mk, 2.0, sink);
      ASSERT_EQ(out.status, cosim::run_status::completed);
      ASSERT_EQ(sink.s.size(), 2001u);
      EXPECT_DOUBLE_EQ(sink.t.back(), 2.0);
      double worst = 0.0;
      for (double s : sink.s) worst = std::max(worst, std::abs(s - 0.5));
      EXPECT_LT(worst, 1e-9) << (cpl == coupling::force_displacement ? "f-s" : "p-s");
    }
  }
}

TEST(CraneEquilibrium, M2MovesTheCraneAwayFromRest) {
  // The static test above can fail: a manoeuvre that changes kappa must move s.
  s_sink sink;
  const cosim::run_outcome out =
      run_crane(coupling::force_displacement, manoeuvre_kind::m2, 1.0, sink);
  ASSERT_EQ(out.status, cosim::run_status::completed);
  double worst = 0.0;
  for (double s : sink.s) worst = std::max(worst, std::abs(s - 0.5));
  EXPECT_GT(worst, 1e-4);
}

// Manoeuvres: values computed by hand from 003 Eqs. (19) and (20).
constexpr double k0 = 0.4543;

TEST(Manoeuvre, M1FollowsEq19) {
  // t_a = 2 s, t_b = 6 s, t_r = 1 ms.
  EXPECT_DOUBLE_EQ(manoeuvre::m1(0.0, k0), k0);
  EXPECT_DOUBLE_EQ(manoeuvre::m1(1.0, k0), k0);
  EXPECT_DOUBLE_EQ(manoeuvre::m1(2.0, k0), k0);                 // t <= t_a
  EXPECT_NEAR(manoeuvre::m1(2.0005, k0), k0 - 0.005, 1e-12);    // half-way down the ramp
  EXPECT_NEAR(manoeuvre::m1(2.00025, k0), k0 - 0.0025, 1e-12);  // quarter
  EXPECT_NEAR(manoeuvre::m1(2.001, k0), k0 - 0.01, 1e-12);      // end of ramp
  EXPECT_DOUBLE_EQ(manoeuvre::m1(4.0, k0), k0 - 0.01);
  EXPECT_DOUBLE_EQ(manoeuvre::m1(6.0, k0), k0 - 0.01);              // t <= t_b
  EXPECT_NEAR(manoeuvre::m1(6.001, k0), k0 - 0.01 + 0.015, 1e-12);  // half of 2 t_r
  EXPECT_NEAR(manoeuvre::m1(6.0005, k0), k0 - 0.01 + 0.0075, 1e-12);
  EXPECT_NEAR(manoeuvre::m1(6.002, k0), k0 + 0.02, 1e-12);
  EXPECT_DOUBLE_EQ(manoeuvre::m1(8.0, k0), k0 + 0.02);
  EXPECT_DOUBLE_EQ(manoeuvre::m1(10.0, k0), k0 + 0.02);
}

TEST(Manoeuvre, M2FollowsEq20) {
  // kappa = kappa0 (1 - A sin(2 pi omega t)), omega = 2: sin(4 pi t).
  const double r2 = std::numbers::sqrt2 / 2.0;
  EXPECT_DOUBLE_EQ(manoeuvre::m2(0.0, k0), k0);
  // t = 0.125: A = 0.0125, sin(pi/2) = 1.
  EXPECT_NEAR(manoeuvre::m2(0.125, k0), k0 * (1.0 - 0.0125), 1e-12);
  // t = 0.5: sin(2 pi) = 0.
  EXPECT_NEAR(manoeuvre::m2(0.5, k0), k0, 1e-12);
  // t = 0.875: A = 0.0875, sin(3.5 pi) = -1.
  EXPECT_NEAR(manoeuvre::m2(0.875, k0), k0 * (1.0 + 0.0875), 1e-12);
  // t = 1.0625: A = 0.1, sin(4.25 pi) = sqrt2/2.
  EXPECT_NEAR(manoeuvre::m2(1.0625, k0), k0 * (1.0 - 0.1 * r2), 1e-12);
  // t = 3.375: sin(13.5 pi) = -1.
  EXPECT_NEAR(manoeuvre::m2(3.375, k0), k0 * 1.1, 1e-12);
  // t = 8.625: A = 0.1 (9 - 8.625) = 0.0375, sin(34.5 pi) = 1.
  EXPECT_NEAR(manoeuvre::m2(8.625, k0), k0 * (1.0 - 0.0375), 1e-12);
  // t > 9 s: A = 0.
  EXPECT_DOUBLE_EQ(manoeuvre::m2(9.125, k0), k0);
  EXPECT_DOUBLE_EQ(manoeuvre::m2(9.5, k0), k0);
}

TEST(Manoeuvre, SignalSourceEvaluatesAtSimulationTime) {
  const manoeuvre m1(manoeuvre_kind::m1, k0);
  const manoeuvre m2(manoeuvre_kind::m2, k0);
  const manoeuvre hold(manoeuvre_kind::hold, k0);
  EXPECT_NEAR(m1.value(cosim::at_seconds(2.0005)), k0 - 0.005, 1e-12);
  EXPECT_NEAR(m1.value(cosim::at_seconds(7.0)), k0 + 0.02, 1e-12);
  EXPECT_NEAR(m2.value(cosim::at_seconds(0.125)), k0 * (1.0 - 0.0125), 1e-12);
  EXPECT_DOUBLE_EQ(hold.value(cosim::at_seconds(3.0)), k0);
  manoeuvre_kind k{};
  EXPECT_TRUE(parse_manoeuvre("M1", k));
  EXPECT_EQ(k, manoeuvre_kind::m1);
  EXPECT_TRUE(parse_manoeuvre("m2", k));
  EXPECT_EQ(k, manoeuvre_kind::m2);
  EXPECT_TRUE(parse_manoeuvre("hold", k));
  EXPECT_EQ(k, manoeuvre_kind::hold);
  EXPECT_FALSE(parse_manoeuvre("M3", k));
}

}  // namespace
