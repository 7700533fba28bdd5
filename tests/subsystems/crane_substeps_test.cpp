// hydraulic_cylinder::do_steps (the whole communication step in one call, s and sd read
// once when held) must give exactly what k separate step() calls give, bit for bit: the
// engine relies on it for offline == threaded == realtime. Checked for ZOH inputs (the fast
// path), for extrapolated inputs (the fallback) and with kappa from a signal source.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>

#include "cosim/runtime/port.hpp"
#include "cosim/subsystems/crane_model.hpp"
#include "cosim/subsystems/crane_subsystems.hpp"
#include "cosim/subsystems/manoeuvre.hpp"

namespace {

using namespace cosim;
using namespace cosim::crane;

// kappa(t) of 003 Eq. (19), as a signal source like the scenario's manoeuvre.
class m1_kappa final : public signal_source {
 public:
  explicit m1_kappa(double kappa0) : kappa0_(kappa0) {}
  double value(time_point t) const noexcept override {
    return manoeuvre::m1(to_seconds(t.time_since_epoch()), kappa0_);
  }

 private:
  double kappa0_;
};

void expect_substeps_match_single_steps(int order, bool kappa_source, hydraulic_integrator integ,
                                        const signal_source* manoeuvre_source = nullptr,
                                        double H_s = 1e-3) {
  const hydraulic_params hp;
  const equilibrium eq = solve_equilibrium({}, hp);
  const m1_kappa m1_source(eq.kappa0);
  const signal_source& source = manoeuvre_source != nullptr ? *manoeuvre_source : m1_source;
  hydraulic_cylinder a("a", hp, coupling::force_displacement, integ, eq);
  hydraulic_cylinder b("b", hp, coupling::force_displacement, integ, eq);
  const time_point t0{};
  for (hydraulic_cylinder* x : {&a, &b}) {
    x->initialize(t0);
    x->input(hydraulic_cylinder::in_s).set_order(order);
    x->input(hydraulic_cylinder::in_sd).set_order(order);
    if (kappa_source) x->input(hydraulic_cylinder::in_kappa).bind_source(&source);
  }
  EXPECT_EQ(a.input(hydraulic_cylinder::in_s).held(), order == 0);
  const duration H = to_duration(H_s), h = to_duration(2e-4);
  const std::int64_t k = H / h;
  // Through the valve opening of M1 (t = 2..3 s) so the pressures move a lot.
  for (int n = 0; n < 4000; ++n) {
    const time_point t = t0 + n * H;
    const double s = eq.s0 + 0.05 * std::sin(1e-3 * n), sd = 0.05 * std::cos(1e-3 * n);
    for (hydraulic_cylinder* x : {&a, &b}) {
      x->input(hydraulic_cylinder::in_s).receive(t, s);
      x->input(hydraulic_cylinder::in_sd).receive(t, sd);
      if (!kappa_source) x->input(hydraulic_cylinder::in_kappa).receive(t, eq.kappa0 + 0.02);
    }
    ASSERT_TRUE(a.steps(t, h, k));
    for (std::int64_t j = 0; j < k; ++j) ASSERT_TRUE(b.step(t + j * h, h));
    ASSERT_EQ(a.p1(), b.p1()) << "macro step " << n;
    ASSERT_EQ(a.p2(), b.p2()) << "macro step " << n;
  }
  // The pressures did move: the comparison is not between two constant states.
  EXPECT_GT(std::abs(a.p1() - eq.p1), 1e4);
}

TEST(HydraulicSubsteps, HeldInputsFastPathIsBitIdenticalToSingleSteps) {
  expect_substeps_match_single_steps(0, true, hydraulic_integrator::forward_euler);
  expect_substeps_match_single_steps(0, false, hydraulic_integrator::forward_euler);
}

TEST(HydraulicSubsteps, ExtrapolatedInputsAndHeunUseTheSingleStepPath) {
  expect_substeps_match_single_steps(2, true, hydraulic_integrator::forward_euler);
  expect_substeps_match_single_steps(0, true, hydraulic_integrator::heun);
}

}  // namespace

// The manoeuvre source answers a batch of sub-steps in one call (manoeuvre::values); k = 25
// sub-steps span two batches of the hydraulics' loop.
TEST(HydraulicSubsteps, ManoeuvreBatchesAreBitIdenticalToSingleSteps) {
  const double kappa0 = solve_equilibrium({}, hydraulic_params{}).kappa0;
  for (const manoeuvre_kind kind : {manoeuvre_kind::m1, manoeuvre_kind::m2, manoeuvre_kind::hold}) {
    const manoeuvre m(kind, kappa0);
    for (const double H : {1e-3, 5e-3}) {
      SCOPED_TRACE(::testing::Message() << "manoeuvre " << static_cast<int>(kind) << ", H " << H);
      expect_substeps_match_single_steps(0, true, hydraulic_integrator::forward_euler, &m, H);
    }
  }
}

TEST(HydraulicSubsteps, ManoeuvreValuesEqualValue) {
  const manoeuvre m(manoeuvre_kind::m1, 0.45);
  const time_point t{to_duration(1.9995)};
  const duration h = to_duration(2e-4);
  std::array<double, 40> v{};
  m.values(t, h, v.size(), v.data());
  for (std::size_t j = 0; j < v.size(); ++j)
    EXPECT_EQ(v[j], m.value(t + static_cast<std::int64_t>(j) * h)) << j;
  // The valve opening of 003 Eq. (19) lies in the batch: not a constant sequence.
  EXPECT_NE(v.front(), v.back());
}

TEST(HydraulicSubsteps, ManoeuvreBatchesAcrossEveryPieceOfM1EqualValue) {
  // values() fills a batch lying on one constant piece of 003 Eq. (19) at once: batches
  // starting at every sub-step around both ramps (t_a = 2 s, t_b = 6 s, t_r = 1 ms) must
  // still equal value() sample by sample, and the pieces hold k0, k0 - 0.01, k0 + 0.02.
  const double k0 = 0.45;
  const manoeuvre m(manoeuvre_kind::m1, k0);
  const duration h = to_duration(2e-4);
  std::array<double, 16> v{};
  for (const double around : {2.0, 6.0}) {
    for (std::int64_t i = -20; i <= 20; ++i) {
      const time_point t = time_point{to_duration(around)} + i * h;
      for (const std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{16}}) {
        m.values(t, h, n, v.data());
        for (std::size_t j = 0; j < n; ++j)
          ASSERT_EQ(v[j], m.value(t + static_cast<std::int64_t>(j) * h))
              << "batch at " << to_seconds(t) << " s, n " << n << ", j " << j;
      }
    }
  }
  m.values(time_point{to_duration(1.0)}, h, 16, v.data());
  EXPECT_EQ(v[15], k0);
  m.values(time_point{to_duration(4.0)}, h, 16, v.data());
  EXPECT_NEAR(v[15], k0 - 0.01, 1e-15);
  m.values(time_point{to_duration(8.0)}, h, 16, v.data());
  EXPECT_NEAR(v[15], k0 + 0.02, 1e-15);
}
