// Regression guard for the trapezoidal multibody integrator of both cranes (their once
// duplicated Newton blocks are now trapezoidal_newton.hpp). No shipped scenario runs a crane with
// integrator = "trapezoidal", so the ShippedScenarios hashes do not cover it; these do.
// Each test drives one multibody with time-varying actuator inputs for 2 s and hashes the
// bit patterns of (q, qd) after every step. The expected hashes were taken from the code of
// 656827b (before the integrator was factored out): this test does not prove the
// trajectories right (trapezoidal_newton_test.cpp checks the integrator against closed
// forms), it proves that a refactor kept every bit. A change meant to alter these results
// must say so and update the hashes with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>

#include "cosim/subsystems/crane2_model.hpp"
#include "cosim/subsystems/crane2_subsystems.hpp"
#include "cosim/subsystems/crane_subsystems.hpp"

namespace {

using namespace cosim;
using namespace cosim::crane;

/// value * (1 + amplitude sin(2 pi f t)): moves the crane well away from rest.
class wobble final : public signal_source {
 public:
  wobble(double value, double amplitude, double frequency) noexcept
      : value_(value), amplitude_(amplitude), frequency_(frequency) {}
  [[nodiscard]] double value(time_point t) const noexcept override {
    return value_ *
           (1.0 + amplitude_ * std::sin(2.0 * std::numbers::pi * frequency_ * to_seconds(t)));
  }

 private:
  double value_, amplitude_, frequency_;
};

/// FNV-1a over the bytes of the doubles fed in: any changed bit changes the hash.
struct bit_hash {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  void add(double x) noexcept {
    unsigned char bytes[sizeof(double)];
    std::memcpy(bytes, &x, sizeof x);
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
  }
};

struct run_summary {
  std::uint64_t hash = 0;
  double max_abs_qd = 0.0;  // the motion is not trivial
  bool finite = true;
};

template <class Multibody>
run_summary run(Multibody& mb, double h_seconds, int steps) {
  run_summary out;
  bit_hash hash;
  const duration h = to_duration(h_seconds);
  mb.initialize(time_point{});
  for (int k = 0; k < steps; ++k) {
    out.finite = mb.step(time_point{} + k * h, h) && out.finite;
    for (int i = 0; i < 2; ++i) {
      hash.add(mb.q()[i]);
      hash.add(mb.qd()[i]);
      out.max_abs_qd = std::max(out.max_abs_qd, std::abs(mb.qd()[i]));
    }
  }
  out.hash = hash.h;
  return out;
}

TEST(CraneTrapezoidal, SingleActuatorForceInputKeepsEveryBit) {
  const mechanical_params mp;
  const hydraulic_params hp;
  const equilibrium eq = solve_equilibrium(mp, hp);
  crane_multibody mb("multibody", mp, hp, coupling::force_displacement,
                     multibody_integrator::trapezoidal, eq);
  const wobble fh(eq.fh, 0.2, 1.3);
  mb.input(crane_multibody::in_fh).bind_source(&fh);
  const run_summary r = run(mb, 1e-3, 2000);
  EXPECT_TRUE(r.finite);
  EXPECT_GT(r.max_abs_qd, 1e-2);
  EXPECT_EQ(r.hash, 0x348f519c667a4cf4ULL);
}

TEST(CraneTrapezoidal, SingleActuatorPressureInputKeepsEveryBit) {
  // p-s: the actuator force depends on qd inside the Newton iteration (003 Eq. (8)).
  const mechanical_params mp;
  const hydraulic_params hp;
  const equilibrium eq = solve_equilibrium(mp, hp);
  crane_multibody mb("multibody", mp, hp, coupling::pressure_displacement,
                     multibody_integrator::trapezoidal, eq);
  const wobble p1(eq.p1, 0.1, 0.9);
  const wobble p2(eq.p2, 0.05, 2.1);
  mb.input(crane_multibody::in_p1).bind_source(&p1);
  mb.input(crane_multibody::in_p2).bind_source(&p2);
  const run_summary r = run(mb, 1e-3, 2000);
  EXPECT_TRUE(r.finite);
  EXPECT_GT(r.max_abs_qd, 1e-2);
  EXPECT_EQ(r.hash, 0x665696a98dc35b59ULL);
}

TEST(CraneTrapezoidal, DoubleActuatorKeepsEveryBit) {
  const mechanical_params mp;
  const hydraulic_params hp;
  const crane2_equilibrium eq = solve_crane2_equilibrium(mp, hp);
  crane2_multibody mb("multibody", mp, multibody_integrator::trapezoidal, eq, false);
  const wobble fh1(eq.act[0].fh, 0.2, 1.3);
  const wobble fh2(eq.act[1].fh, 0.3, 0.7);
  mb.input(crane2_multibody::in_fh1).bind_source(&fh1);
  mb.input(crane2_multibody::in_fh2).bind_source(&fh2);
  const run_summary r = run(mb, 1e-3, 2000);
  EXPECT_TRUE(r.finite);
  EXPECT_GT(r.max_abs_qd, 1e-2);
  EXPECT_EQ(r.hash, 0xb3a9c9fa6307988dULL);
}

}  // namespace
