// Reduced interface model (001 Sects. 2-4): effective mass and force of the crane models
// against independent computations, the double-actuator equilibrium of 001 Table 3, the
// valve law of 001 Eq. (35), the test inputs of 002 Eqs. (12)-(15), and the RIM+hydraulics
// unit (its direct mode against hydraulic_cylinder, the synchronisation of 001
// Algorithm 2, the held equilibrium, no allocation on the RT path).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numbers>

#include "alloc_counter.hpp"
#include "cosim/subsystems/crane2_model.hpp"
#include "cosim/subsystems/crane2_subsystems.hpp"
#include "cosim/subsystems/crane_subsystems.hpp"
#include "cosim/subsystems/rim_crane.hpp"
#include "cosim/subsystems/rim_hydraulics.hpp"
#include "cosim/subsystems/test_input.hpp"

namespace {

using namespace cosim;
using namespace cosim::crane;
using Eigen::Matrix2d;
using Eigen::Vector2d;

// ---- An independent model of the crane: point-mass kinematics, no library formulas ----

struct independent_rim {
  Eigen::MatrixXd Mt;
  Eigen::VectorXd ft;
};

/// Positions of the crane points for q = (th1, th2) (001 Fig. 7): A at the origin, P the
/// middle of link 1, Q its end, R the end of link 2, D the middle of link 2, B fixed.
struct points {
  Vector2d P, Q, R, D, B;
};

points crane_points(const mechanical_params& p, const Vector2d& q) {
  points x;
  const Vector2d e1{std::cos(q[0]), std::sin(q[0])};
  const Vector2d e2{std::cos(q[1]), std::sin(q[1])};
  x.Q = p.L * e1;
  x.P = 0.5 * x.Q;
  x.R = x.Q + p.Lh * e2;
  x.D = x.Q + 0.5 * p.Lh * e2;
  x.B = {p.xB, p.yB};
  return x;
}

/// Actuator lengths by geometry: s1 = |P - B| (003 Fig. 1), s2 = |D - P| (001 Fig. 7).
Eigen::VectorXd lengths(const mechanical_params& p, const Vector2d& q, int n) {
  const points x = crane_points(p, q);
  Eigen::VectorXd s(n);
  s[0] = (x.P - x.B).norm();
  if (n == 2) s[1] = (x.D - x.P).norm();
  return s;
}

/// 001 Eqs. (12)-(13) with everything derived independently: M, c and f from the kinetic
/// and potential energy of a uniform rod (inertia m L^2/3 about A) and point masses m_p at
/// Q and m_h at R; A_i and Adot_i v from finite differences of the geometric lengths.
independent_rim independent(const mechanical_params& p, const Vector2d& q, const Vector2d& qd,
                            int n) {
  // R = L e1(th1) + Lh e2(th2): J_R = [L e1', Lh e2'], (J_R qd)' at qdd = 0 = -L th1d^2 e1 - Lh
  // th2d^2 e2.
  Eigen::Matrix2d JR;
  JR << -p.L * std::sin(q[0]), -p.Lh * std::sin(q[1]), p.L * std::cos(q[0]), p.Lh * std::cos(q[1]);
  const Vector2d aR = -p.L * qd[0] * qd[0] * Vector2d{std::cos(q[0]), std::sin(q[0])} -
                      p.Lh * qd[1] * qd[1] * Vector2d{std::cos(q[1]), std::sin(q[1])};
  Matrix2d M = p.mh * JR.transpose() * JR;
  M(0, 0) += p.m * p.L * p.L / 3.0 + p.mp * p.L * p.L;
  const Vector2d c = p.mh * JR.transpose() * aR;
  // V = g [(m/2 + m_p) L sin th1 + m_h y_R]
  const Vector2d f{-p.g * ((0.5 * p.m + p.mp) * p.L * std::cos(q[0]) + p.mh * p.L * std::cos(q[0])),
                   -p.g * p.mh * p.Lh * std::cos(q[1])};
  Eigen::MatrixXd A(n, 2);
  const double e = 1e-6;
  for (int j = 0; j < 2; ++j) {
    Vector2d dq = Vector2d::Zero();
    dq[j] = e;
    A.col(j) = (lengths(p, q + dq, n) - lengths(p, q - dq, n)) / (2.0 * e);
  }
  const double eps = 1e-4;  // second difference along qd: d^2/de^2 s(q + e qd)
  const Eigen::VectorXd Adot_v =
      (lengths(p, q + eps * qd, n) - 2.0 * lengths(p, q, n) + lengths(p, q - eps * qd, n)) /
      (eps * eps);
  const Eigen::MatrixXd Minv = M.inverse();
  independent_rim r;
  r.Mt = (A * Minv * A.transpose()).inverse();
  r.ft = r.Mt * (A * Minv * (f - c) + Adot_v);
  return r;
}

// ---- Effective mass and force ---------------------------------------------------------

TEST(RimCrane, ActuatorTwoKinematicsMatchGeometry) {
  // 001 Eq. (33) with its missing parentheses restored (docs/coupling.md):
  // s2^2 = L^2/4 + Lh^2/4 + (L Lh/2) cos(th1 - th2); at q0 (th1 = pi/6, th2 = 3 pi/2,
  // cos(th1 - th2) = -1/2): s2 = sqrt(0.25 + 0.0625 - 0.125) m.
  const mechanical_params p;
  EXPECT_NEAR(actuator2(p, p.theta1_0, p.theta2_0).s, std::sqrt(0.1875), 1e-15);
  const Vector2d q{0.9, -1.1};
  const actuator2_kinematics a = actuator2(p, q[0], q[1]);
  EXPECT_NEAR(a.s, lengths(p, q, 2)[1], 1e-14);
  const double e = 1e-6;
  const double ds =
      (lengths(p, {q[0] + e, q[1]}, 2)[1] - lengths(p, {q[0] - e, q[1]}, 2)[1]) / (2 * e);
  EXPECT_NEAR(a.ds_dphi, ds, 1e-9);
  const double ds2 =
      (lengths(p, {q[0], q[1] + e}, 2)[1] - lengths(p, {q[0], q[1] - e}, 2)[1]) / (2 * e);
  EXPECT_NEAR(-a.ds_dphi, ds2, 1e-9);  // ds2/dth2 = -ds2/dth1
}

TEST(RimCrane, SingleActuatorEffectiveMassAndForceMatchIndependentModel) {
  const mechanical_params mp;
  const hydraulic_params hp;
  const equilibrium eq = solve_equilibrium(mp, hp);
  // Drive the multibody away from rest with an unbalanced actuator force so that the
  // velocity terms and Adot v of 001 Eq. (13) are not zero.
  crane_multibody mb("multibody", mp, hp, coupling::force_displacement,
                     multibody_integrator::semi_implicit_euler, eq, true);
  ASSERT_EQ(mb.output_count(), 4u);
  EXPECT_EQ(mb.find_output("Mt_11"), crane_multibody::out_Mt11);
  EXPECT_EQ(mb.find_output("ft_1"), crane_multibody::out_ft1);
  const time_point t0{};
  mb.initialize(t0);
  mb.input(crane_multibody::in_fh).set_initial(t0, eq.fh + 2500.0);
  const duration h = to_duration(1e-3);
  for (int k = 0; k < 300; ++k) ASSERT_TRUE(mb.step(t0 + k * h, h));
  mb.update_outputs(t0 + 300 * h);
  ASSERT_GT(std::abs(mb.qd()[0]), 0.05);
  ASSERT_GT(std::abs(mb.qd()[1]), 0.05);

  const independent_rim ref = independent(mp, mb.q(), mb.qd(), 1);
  EXPECT_NEAR(mb.output(crane_multibody::out_Mt11), ref.Mt(0, 0), 1e-6 * ref.Mt(0, 0));
  EXPECT_NEAR(mb.output(crane_multibody::out_ft1), ref.ft(0), 1e-5 * std::abs(ref.ft(0)) + 1e-3);
}

TEST(RimCrane, SingleActuatorRimPredictsTheMultibodyAcceleration) {
  // Finite differences of the full multibody model: two identical copies reach the same
  // state, then take one tiny step with different actuator forces. 001 Eq. (11) must
  // predict both accelerations of s1: sdd = Mt^-1 (ft + lambda).
  const mechanical_params mp;
  const hydraulic_params hp;
  const equilibrium eq = solve_equilibrium(mp, hp);
  auto make = [&] {
    return std::make_unique<crane_multibody>("multibody", mp, hp, coupling::force_displacement,
                                             multibody_integrator::semi_implicit_euler, eq, true);
  };
  auto a = make();
  auto b = make();
  const time_point t0{};
  const duration h = to_duration(1e-3);
  for (auto* m : {a.get(), b.get()}) {
    m->initialize(t0);
    m->input(crane_multibody::in_fh).set_initial(t0, eq.fh - 3000.0);
    for (int k = 0; k < 200; ++k) ASSERT_TRUE(m->step(t0 + k * h, h));
    m->update_outputs(t0 + 200 * h);
  }
  const time_point t1 = t0 + 200 * h;
  const double Mt = a->output(crane_multibody::out_Mt11);
  const double ft = a->output(crane_multibody::out_ft1);
  const double sd0 = a->sd();
  const double la = 5000.0, lb = 12000.0;
  a->input(crane_multibody::in_fh).set_initial(t1, la);
  b->input(crane_multibody::in_fh).set_initial(t1, lb);
  const duration dt = to_duration(1e-7);
  ASSERT_TRUE(a->step(t1, dt));
  ASSERT_TRUE(b->step(t1, dt));
  const double sdd_a = (a->sd() - sd0) / to_seconds(dt);
  const double sdd_b = (b->sd() - sd0) / to_seconds(dt);
  EXPECT_NEAR(sdd_a, (ft + la) / Mt, 1e-4 * std::abs(sdd_a) + 1e-5);
  EXPECT_NEAR(sdd_b, (ft + lb) / Mt, 1e-4 * std::abs(sdd_b) + 1e-5);
}

TEST(RimCrane, DoubleActuatorEffectiveMassAndForceMatchIndependentModel) {
  const mechanical_params mp;
  const crane2_equilibrium eq = solve_crane2_equilibrium(mp, {});
  crane2_multibody mb("multibody", mp, multibody_integrator::semi_implicit_euler, eq, true);
  mb.initialize(time_point{});
  for (const auto& [q, qd] : {std::pair{Vector2d{0.7, -1.3}, Vector2d{0.4, -0.9}},
                              std::pair{Vector2d{mp.theta1_0, mp.theta2_0}, Vector2d{-0.2, 1.5}},
                              std::pair{Vector2d{1.2, 0.3}, Vector2d{0.0, 0.0}}}) {
    mb.set_state(q, qd);
    mb.update_outputs(time_point{});
    const independent_rim ref = independent(mp, q, qd, 2);
    const double scale = ref.Mt.norm();
    EXPECT_NEAR(mb.output(crane2_multibody::out_Mt11), ref.Mt(0, 0), 1e-6 * scale);
    EXPECT_NEAR(mb.output(crane2_multibody::out_Mt12), ref.Mt(0, 1), 1e-6 * scale);
    EXPECT_NEAR(mb.output(crane2_multibody::out_Mt22), ref.Mt(1, 1), 1e-6 * scale);
    EXPECT_NEAR(mb.output(crane2_multibody::out_ft1), ref.ft(0), 1e-5 * ref.ft.norm() + 1e-3);
    EXPECT_NEAR(mb.output(crane2_multibody::out_ft2), ref.ft(1), 1e-5 * ref.ft.norm() + 1e-3);
    // The actuators are coupled through the mechanism (001 Sect. 5.1.2) except where
    // A1 M^-1 A2^T ~ (M22 + M12) vanishes: at q0, L Lh m_h cos(th1 - th2) = -Lh^2 m_h.
    const bool at_q0 = q[0] == mp.theta1_0;
    if (at_q0) {
      EXPECT_NEAR(ref.Mt(0, 1), 0.0, 1e-6 * scale);
    } else {
      EXPECT_GT(std::abs(ref.Mt(0, 1)), 10.0);
    }
  }
}

TEST(RimCrane, DoubleActuatorRimPredictsTheMultibodyAccelerations) {
  const mechanical_params mp;
  const crane2_equilibrium eq = solve_crane2_equilibrium(mp, {});
  const Vector2d q{0.8, -1.2}, qd{0.3, -0.7};
  const std::array<Vector2d, 3> forces{Vector2d{0.0, 0.0}, Vector2d{4000.0, 0.0},
                                       Vector2d{0.0, 3000.0}};
  std::array<Vector2d, 3> sdd;
  Matrix2d Mt;
  Vector2d ft;
  const duration dt = to_duration(1e-7);
  for (std::size_t k = 0; k < forces.size(); ++k) {
    crane2_multibody mb("multibody", mp, multibody_integrator::semi_implicit_euler, eq, true);
    mb.initialize(time_point{});
    mb.set_state(q, qd);
    mb.update_outputs(time_point{});
    Mt << mb.output(crane2_multibody::out_Mt11), mb.output(crane2_multibody::out_Mt12),
        mb.output(crane2_multibody::out_Mt12), mb.output(crane2_multibody::out_Mt22);
    ft << mb.output(crane2_multibody::out_ft1), mb.output(crane2_multibody::out_ft2);
    const Vector2d sd0{mb.output(crane2_multibody::out_sd1), mb.output(crane2_multibody::out_sd2)};
    mb.input(crane2_multibody::in_fh1).set_initial(time_point{}, forces[k][0]);
    mb.input(crane2_multibody::in_fh2).set_initial(time_point{}, forces[k][1]);
    ASSERT_TRUE(mb.step(time_point{}, dt));
    mb.update_outputs(time_point{} + dt);
    const Vector2d sd1{mb.output(crane2_multibody::out_sd1), mb.output(crane2_multibody::out_sd2)};
    sdd[k] = (sd1 - sd0) / to_seconds(dt);
  }
  // Columns of Mt^-1 from the force differences; ft from the unforced acceleration.
  Matrix2d Minv_fd;
  Minv_fd.col(0) = (sdd[1] - sdd[0]) / forces[1][0];
  Minv_fd.col(1) = (sdd[2] - sdd[0]) / forces[2][1];
  const Matrix2d Minv = Mt.inverse();
  EXPECT_LT((Minv_fd - Minv).norm(), 1e-4 * Minv.norm());
  EXPECT_LT((Mt * sdd[0] - ft).norm(), 1e-4 * ft.norm() + 1e-2);
}

TEST(RimCrane, ProjectionOntoTheRimStateKeepsTheAdmissibleVelocity) {
  // project_interface moves (q, qd) along M^-1 A^T only. Any B with A M^-1 B^T = 0 (001
  // Eq. (5)) spans the admissible motion; B qd must not change, while s(q) and A qd take
  // the targets. Checked with the independent geometry and mass matrix above.
  const mechanical_params mp;
  vec2 q{0.62, -1.45}, qd{0.2, -0.6};
  const Vector2d s_target{lengths(mp, q, 1)[0] + 3e-3, 0.0};
  const double sd_target = 0.05;
  // Independent M at q (as in independent()): B = (M^-1 A^T)^perp in the M^-1 metric.
  auto admissible = [&](const vec2& qq) {
    Eigen::Matrix2d JR;
    JR << -mp.L * std::sin(qq[0]), -mp.Lh * std::sin(qq[1]), mp.L * std::cos(qq[0]),
        mp.Lh * std::cos(qq[1]);
    Matrix2d M = mp.mh * JR.transpose() * JR;
    M(0, 0) += mp.m * mp.L * mp.L / 3.0 + mp.mp * mp.L * mp.L;
    const double e = 1e-6;
    const Vector2d A{
        (lengths(mp, {qq[0] + e, qq[1]}, 1)[0] - lengths(mp, {qq[0] - e, qq[1]}, 1)[0]) / (2 * e),
        0.0};
    const Vector2d g = M.inverse() * A;  // B must satisfy B g = 0
    return Vector2d{-g[1], g[0]};
  };
  const vec2 qd0 = qd;
  project_interface<1>(mp, q, qd, interface_vector<1>::Constant(s_target[0]),
                       interface_vector<1>::Constant(sd_target));
  EXPECT_NEAR(lengths(mp, q, 1)[0], s_target[0], 1e-12);
  const actuator_kinematics k = actuator1(mp, q[0]);
  EXPECT_NEAR(k.ds_dth1 * qd[0], sd_target, 1e-12);
  // At the projected configuration the admissible velocity is the one the multibody had.
  const Vector2d B = admissible(q);
  EXPECT_NEAR(B.dot(qd), B.dot(qd0), 1e-9 * B.norm() * qd0.norm());
  EXPECT_GT(std::abs(B.dot(qd0)), 1e-3 * B.norm() * qd0.norm());  // not trivially zero
}

// ---- Double-actuator equilibrium and valve law ---------------------------------------

TEST(Crane2Equilibrium, MatchesTable3Of001) {
  const crane2_equilibrium eq = solve_crane2_equilibrium({}, {});
  // Actuator 1 holds the whole weight moment: 003 Sect. 1.3, f_h = 8.829 kN, s1 = 0.5 m.
  EXPECT_NEAR(eq.act[0].s0, 0.5, 1e-12);
  EXPECT_NEAR(eq.act[0].fh, 8829.0, 0.5);
  // Link 2 hangs straight down: gravity has no moment about Q, actuator 2 carries nothing.
  EXPECT_NEAR(eq.act[1].s0, std::sqrt(0.1875), 1e-12);
  EXPECT_NEAR(eq.act[1].fh, 0.0, 1e-6);
  // 001 Table 3 (printed to 5 and 3 significant digits).
  EXPECT_NEAR(eq.act[0].kappa0, 0.45435, 5e-6);
  EXPECT_NEAR(eq.act[0].p1, 3.17e6, 0.005e6);
  EXPECT_NEAR(eq.act[0].p2, 4.53e6, 0.005e6);
  EXPECT_NEAR(eq.act[1].kappa0, 0.5, 5e-6);
  EXPECT_NEAR(eq.act[1].p1, 3.85e6, 0.005e6);
  EXPECT_NEAR(eq.act[1].p2, 3.85e6, 0.005e6);
  // 003 Eq. (17) satisfied: force balance and zero pressure rates.
  for (const auto& a : eq.act) EXPECT_LT(a.residual, 1e-3);
  EXPECT_LE(eq.iterations, 20);
}

TEST(Crane2Equilibrium, ValveLawOfEq35) {
  // 001 Eq. (35): kappa_{2,0} - 0.0025 t up to t_a = 2 s, kappa_{2,0} - 0.005 after.
  EXPECT_DOUBLE_EQ(kappa2_law(0.0, 0.5), 0.5);
  EXPECT_DOUBLE_EQ(kappa2_law(1.0, 0.5), 0.4975);
  EXPECT_DOUBLE_EQ(kappa2_law(2.0, 0.5), 0.495);
  EXPECT_DOUBLE_EQ(kappa2_law(7.5, 0.5), 0.495);
}

TEST(TestInputs, FollowEqs12To15Of002) {
  test_input_params p;
  p.v0 = 0.4;
  p.amplitude = 0.02;
  p.width = 0.1;
  p.frequency = 5.0;
  using k = test_input_kind;
  EXPECT_DOUBLE_EQ(test_input_value(k::step, p, 0.4999), 0.4);
  EXPECT_DOUBLE_EQ(test_input_value(k::step, p, 0.5), 0.42);
  EXPECT_DOUBLE_EQ(test_input_value(k::ramp, p, 0.25), 0.4);
  EXPECT_NEAR(test_input_value(k::ramp, p, 0.75), 0.41, 1e-15);
  EXPECT_NEAR(test_input_value(k::ramp, p, 1.0), 0.42, 1e-15);  // a reached at the end of 1 s
  EXPECT_DOUBLE_EQ(test_input_value(k::impulse, p, 0.449), 0.4);
  EXPECT_DOUBLE_EQ(test_input_value(k::impulse, p, 0.45), 0.42);
  EXPECT_DOUBLE_EQ(test_input_value(k::impulse, p, 0.549), 0.42);
  EXPECT_DOUBLE_EQ(test_input_value(k::impulse, p, 0.55), 0.4);
  EXPECT_NEAR(test_input_value(k::sine, p, 0.05), 0.42, 1e-15);  // quarter period of 5 Hz
  EXPECT_NEAR(test_input_value(k::sine, p, 0.15), 0.38, 1e-15);
  test_input_kind parsed{};
  EXPECT_TRUE(parse_test_input("impulse", parsed));
  EXPECT_EQ(parsed, k::impulse);
  EXPECT_FALSE(parse_test_input("chirp", parsed));
}

// ---- The RIM + hydraulics unit --------------------------------------------------------

TEST(HydraulicsUnit, DirectModeIsExactlyTheHydraulicCylinder) {
  const hydraulic_params hp;
  const equilibrium eq = solve_equilibrium({}, hp);
  for (auto integ : {hydraulic_integrator::forward_euler, hydraulic_integrator::heun}) {
    hydraulic_cylinder ref("h", hp, coupling::force_displacement, integ, eq);
    rim::hydraulics_unit<1> unit("h", hp, {rim::start_of(eq)}, rim::interface_kind::direct, integ,
                                 rim::force_output::sample);
    const time_point t0{};
    ref.initialize(t0);
    unit.initialize(t0);
    // Same port layout as hydraulic_cylinder: s, sd, kappa -> fh.
    EXPECT_EQ(unit.in_s(0), hydraulic_cylinder::in_s);
    EXPECT_EQ(unit.in_sd(0), hydraulic_cylinder::in_sd);
    EXPECT_EQ(unit.in_kappa(0), hydraulic_cylinder::in_kappa);
    EXPECT_EQ(unit.out_fh(0), hydraulic_cylinder::out_fh);
    const duration H = to_duration(0.01), h = to_duration(2e-4);
    for (int n = 0; n < 50; ++n) {
      const time_point t = t0 + n * H;
      const double s = eq.s0 + 0.01 * std::sin(0.3 * n), sd = 0.05 * std::cos(0.3 * n);
      const double kap = eq.kappa0 + 0.01 * std::sin(0.1 * n);
      for (subsystem* x : std::array<subsystem*, 2>{&ref, &unit}) {
        x->input(0).receive(t, s);
        x->input(1).receive(t, sd);
        x->input(2).receive(t, kap);
        for (int k = 0; k < 50; ++k) ASSERT_TRUE(x->step(t + k * h, h));
        x->update_outputs(t + H);
      }
      ASSERT_EQ(ref.output(0), unit.output(0)) << "step " << n;
      ASSERT_EQ(ref.p1(), unit.p1(0));
      ASSERT_EQ(ref.p2(), unit.p2(0));
    }
  }
}

TEST(HydraulicsUnit, RimResetsAtEachCommunicationPointAndIntegratesEq39) {
  const hydraulic_params hp;
  const equilibrium eq = solve_equilibrium({}, hp);
  rim::hydraulics_unit<1> unit("hydraulics", hp, {rim::start_of(eq)}, rim::interface_kind::rim,
                               hydraulic_integrator::forward_euler, rim::force_output::sample);
  ASSERT_NE(unit.find_input("Mt_11"), subsystem::npos);
  ASSERT_NE(unit.find_input("ft_1"), subsystem::npos);
  const std::size_t in_Mt = unit.find_input("Mt_11"), in_ft = unit.find_input("ft_1");
  const time_point t0{};
  unit.initialize(t0);
  const double h = 2e-4, Mt = 2100.0, ft = -9000.0;
  const double s = 0.51, sd = 0.03;
  unit.input(unit.in_s(0)).receive(t0, s);
  unit.input(unit.in_sd(0)).receive(t0, sd);
  unit.input(unit.in_kappa(0)).receive(t0, eq.kappa0);
  unit.input(in_Mt).receive(t0, Mt);
  unit.input(in_ft).receive(t0, ft);
  ASSERT_TRUE(unit.step(t0, to_duration(h)));
  // 001 Eq. (11) with lambda = f_h of 003 Eq. (8) at the synchronised state, then 001
  // Eq. (39): velocity first, position with the new velocity.
  const double fh = (eq.p2 - eq.p1) * hp.ap - hp.c * sd;
  const double sd1 = sd + h * (ft + fh) / Mt;
  EXPECT_NEAR(unit.rim_sd()[0], sd1, 1e-15);
  EXPECT_NEAR(unit.rim_s()[0], s + h * sd1, 1e-15);
  // A further step without a new sample continues from the RIM's own state...
  ASSERT_TRUE(unit.step(t0 + to_duration(h), to_duration(h)));
  EXPECT_NE(unit.rim_s()[0], s + h * sd1);
  // ...and a new sample (the next communication point) resets it.
  const time_point t1 = t0 + to_duration(0.01);
  unit.input(unit.in_s(0)).receive(t1, 0.52);
  unit.input(unit.in_sd(0)).receive(t1, -0.01);
  unit.input(in_Mt).receive(t1, Mt);
  unit.input(in_ft).receive(t1, ft);
  ASSERT_TRUE(unit.step(t1, to_duration(h)));
  EXPECT_NEAR(unit.rim_s()[0], 0.52 + h * unit.rim_sd()[0], 1e-15);
}

TEST(HydraulicsUnit, DoubleActuatorRimHoldsTheInitialEquilibrium) {
  // 001 Algorithm 2, line 6: with q0, the equilibrium pressures and valves held, the RIM
  // must not accelerate (sdd = 0) and the pressures must not move.
  const mechanical_params mp;
  const hydraulic_params hp;
  const crane2_equilibrium eq = solve_crane2_equilibrium(mp, hp);
  const reduced_interface<2> ri =
      crane_reduced_interface<2>(mp, {mp.theta1_0, mp.theta2_0}, {0, 0});
  rim::hydraulics_unit<2> unit(
      "hydraulics", hp, {rim::start_of(eq.act[0]), rim::start_of(eq.act[1])},
      rim::interface_kind::rim, hydraulic_integrator::forward_euler, rim::force_output::sample);
  const time_point t0{};
  unit.initialize(t0);
  const std::array<std::pair<const char*, double>, 9> inputs{std::pair{"s_1", eq.act[0].s0},
                                                             {"s_2", eq.act[1].s0},
                                                             {"sd_1", 0.0},
                                                             {"sd_2", 0.0},
                                                             {"Mt_11", ri.Mt(0, 0)},
                                                             {"Mt_12", ri.Mt(0, 1)},
                                                             {"Mt_22", ri.Mt(1, 1)},
                                                             {"ft_1", ri.ft[0]},
                                                             {"ft_2", ri.ft[1]}};
  for (const auto& [name, v] : inputs) {
    ASSERT_NE(unit.find_input(name), subsystem::npos) << name;
    unit.input(unit.find_input(name)).receive(t0, v);
  }
  unit.input(unit.in_kappa(0)).receive(t0, eq.act[0].kappa0);
  unit.input(unit.in_kappa(1)).receive(t0, eq.act[1].kappa0);
  const duration h = to_duration(2e-4);
  for (int k = 0; k < 5000; ++k) ASSERT_TRUE(unit.step(t0 + k * h, h));
  unit.update_outputs(t0 + 5000 * h);
  EXPECT_LT(unit.rim_sd().norm(), 1e-9);
  EXPECT_NEAR(unit.rim_s()[0], eq.act[0].s0, 1e-9);
  EXPECT_NEAR(unit.rim_s()[1], eq.act[1].s0, 1e-9);
  EXPECT_NEAR(unit.p1(0), eq.act[0].p1, 1.0);
  EXPECT_NEAR(unit.p2(1), eq.act[1].p2, 1.0);
  EXPECT_NEAR(unit.output(unit.out_fh(0)), eq.act[0].fh, 1e-3);
}

TEST(HydraulicsUnit, StepAndOutputsDoNotAllocate) {
  const hydraulic_params hp;
  const crane2_equilibrium eq = solve_crane2_equilibrium({}, hp);
  for (auto mode : {rim::interface_kind::direct, rim::interface_kind::rim}) {
    rim::hydraulics_unit<2> unit("hydraulics", hp,
                                 {rim::start_of(eq.act[0]), rim::start_of(eq.act[1])}, mode,
                                 hydraulic_integrator::heun, rim::force_output::mean);
    crane2_multibody mb("multibody", {}, multibody_integrator::trapezoidal, eq, true);
    unit.initialize(time_point{});
    mb.initialize(time_point{});
    const duration h = to_duration(2e-4);
    const test::alloc_window window;
    for (int k = 0; k < 100; ++k) {
      (void)unit.step(time_point{} + k * h, h);
      (void)mb.step(time_point{} + k * h, h);
    }
    unit.update_outputs(time_point{} + 100 * h);
    mb.update_outputs(time_point{} + 100 * h);
    EXPECT_EQ(window.allocations(), 0u);
  }
}

}  // namespace
