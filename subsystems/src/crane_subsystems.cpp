#include "cosim/subsystems/crane_subsystems.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "cosim/subsystems/rim_crane.hpp"
#include "cosim/subsystems/trapezoidal_newton.hpp"

namespace cosim::crane {

crane_multibody::crane_multibody(std::string name, mechanical_params mp, hydraulic_params hp,
                                 coupling c, multibody_integrator integrator, const equilibrium& eq,
                                 bool rim_outputs, bool rim_follow)
    : subsystem(std::move(name)),
      mp_(mp),
      hp_(hp),
      coupling_(c),
      integrator_(integrator),
      eq_(eq),
      rim_outputs_(rim_outputs),
      rim_follow_(rim_follow && rim_outputs && c == coupling::force_displacement) {
  add_output({"s", "m", port_role::signal});
  add_output({"sd", "m/s", port_role::flow});
  if (rim_outputs_) {
    add_output({"Mt_11", "kg", port_role::signal});
    add_output({"ft_1", "N", port_role::signal});
  }
  if (coupling_ == coupling::force_displacement) {
    add_input({"fh", "N", port_role::effort});
    if (rim_follow_) {
      add_input({"rim_s", "m", port_role::signal});
      add_input({"rim_sd", "m/s", port_role::signal});
    }
  } else {
    add_input({"p1", "Pa", port_role::effort});
    add_input({"p2", "Pa", port_role::effort});
  }
  add_variable("theta1", "rad", &th1_);
  add_variable("theta2", "rad", &th2_);
  add_variable("theta1d", "rad/s", &th1d_);
  add_variable("theta2d", "rad/s", &th2d_);
  add_variable("s", "m", &s_);
  add_variable("sd", "m/s", &sd_);
}

void crane_multibody::do_initialize(time_point t0) {
  q_ = {mp_.theta1_0, mp_.theta2_0};
  qd_ = vec2::Zero();  // 003 Sect. 1.3, step 1
  refresh_kinematics();
  if (coupling_ == coupling::force_displacement) {
    input(in_fh).set_initial(t0, eq_.fh);
    if (rim_follow_) {
      input(in_rim_s).set_initial(t0, s_);
      input(in_rim_sd).set_initial(t0, 0.0);
    }
  } else {
    input(in_p1).set_initial(t0, eq_.p1);
    input(in_p2).set_initial(t0, eq_.p2);
  }
}

// Inlined into do_step (one call per sub-step less each); used in this file only.
[[gnu::always_inline]] inline void crane_multibody::refresh_kinematics() noexcept {
  const actuator_kinematics k = actuator1(mp_, q_[0]);
  s_ = k.s;
  sd_ = k.ds_dth1 * qd_[0];  // 003 Eq. (4)
  th1_ = q_[0];
  th2_ = q_[1];
  th1d_ = qd_[0];
  th2d_ = qd_[1];
}

[[gnu::always_inline]] inline vec2 crane_multibody::accelerations(const vec2& q, const vec2& qd,
                                                                  time_point t) const noexcept {
  // The inputs first: reading one may call a signal source, after which q would be reloaded
  // and cos(th1) no longer shared between actuator1 and gravity_forces.
  double fh = 0.0, p1 = 0.0, p2 = 0.0;
  if (coupling_ == coupling::force_displacement) {
    fh = in(in_fh, t);
  } else {
    p1 = in(in_p1, t);
    p2 = in(in_p2, t);
  }
  const actuator_kinematics k = actuator1(mp_, q[0]);
  if (coupling_ == coupling::pressure_displacement)
    fh = actuator_force(hp_, p1, p2, k.ds_dth1 * qd[0]);
  // 003 Eq. (1) and (3): M qdd = f + J^T f_h - c, with J = (ds/dth1, 0).
  vec2 rhs = gravity_forces(mp_, q) - velocity_terms(mp_, q, qd);
  rhs[0] += k.ds_dth1 * fh;
  const mat2 M = mass_matrix(mp_, q);
  // Closed-form 2x2 solve: cheaper than a factorisation and allocation-free.
  const double det = M(0, 0) * M(1, 1) - M(0, 1) * M(1, 0);
  return {(M(1, 1) * rhs[0] - M(0, 1) * rhs[1]) / det, (M(0, 0) * rhs[1] - M(1, 0) * rhs[0]) / det};
}

bool crane_multibody::do_step(time_point t, duration h) noexcept {
  const double hs = to_seconds(h);
  if (integrator_ == multibody_integrator::semi_implicit_euler) {
    const vec2 qdd = accelerations(q_, qd_, t);
    qd_ += hs * qdd;  // 003 Eq. (6)
    q_ += hs * qd_;   // 003 Eq. (7)
  } else {
    // Trapezoidal rule, Newton on qd_{k+1} (trapezoidal_newton.hpp).
    trapezoidal_newton_step<newton_solve::cramer>(
        q_, qd_, hs, t, t + h,
        [this](const vec2& q, const vec2& qd, time_point ta) { return accelerations(q, qd, ta); });
  }
  if (rim_follow_) {
    // The RIM reached the end of this step first (Gauss-Seidel, hydraulics first): take
    // its interface state, keep the admissible motion (rim_crane.hpp).
    const sample_history& rs = input(in_rim_s).history();
    if (rs.size() > 0 && rs.newest_time() == t + h)
      project_interface<1>(mp_, q_, qd_, interface_vector<1>::Constant(rs.newest()),
                           interface_vector<1>::Constant(input(in_rim_sd).history().newest()));
  }
  refresh_kinematics();
  return std::isfinite(q_[0]) && std::isfinite(q_[1]) && std::isfinite(qd_[0]) &&
         std::isfinite(qd_[1]);
}

// k calls of do_step without a virtual call each.
bool crane_multibody::do_steps(time_point t, duration h, std::int64_t k) noexcept {
  bool ok = true;
  for (std::int64_t j = 0; j < k && ok; ++j) ok = crane_multibody::do_step(t + j * h, h);
  return ok;
}

void crane_multibody::do_update_outputs(time_point /*t*/) noexcept {
  set_output(out_s, s_);
  set_output(out_sd, sd_);
  if (rim_outputs_) {
    const reduced_interface<1> ri = crane_reduced_interface<1>(mp_, q_, qd_);
    set_output(out_Mt11, ri.Mt(0, 0));
    set_output(out_ft1, ri.ft(0));
  }
}

hydraulic_cylinder::hydraulic_cylinder(std::string name, hydraulic_params hp, coupling c,
                                       hydraulic_integrator integrator, const equilibrium& eq)
    : subsystem(std::move(name)), hp_(hp), coupling_(c), integrator_(integrator), eq_(eq) {
  add_input({"s", "m", port_role::signal});
  add_input({"sd", "m/s", port_role::flow});
  add_input({"kappa", "1", port_role::signal});
  if (coupling_ == coupling::force_displacement) {
    // 003 Eq. (8) with the received sd: direct feedthrough.
    add_output({"fh", "N", port_role::effort, true});
  } else {
    add_output({"p1", "Pa", port_role::effort});
    add_output({"p2", "Pa", port_role::effort});
  }
  add_variable("p1", "Pa", &p1_);
  add_variable("p2", "Pa", &p2_);
  add_variable("kappa", "1", &kappa_);
  add_variable("fh", "N", &fh_);
}

void hydraulic_cylinder::do_initialize(time_point t0) {
  p1_ = eq_.p1;
  p2_ = eq_.p2;
  input(in_s).set_initial(t0, eq_.s0);
  input(in_sd).set_initial(t0, 0.0);
  input(in_kappa).set_initial(t0, eq_.kappa0);
}

bool hydraulic_cylinder::do_step(time_point t, duration h) noexcept {
  const double hs = to_seconds(h);
  const vec2 pd = pressure_rates(hp_, eq_.s0, in(in_s, t), in(in_sd, t), in(in_kappa, t), p1_, p2_);
  if (integrator_ == hydraulic_integrator::forward_euler) {
    p1_ += hs * pd[0];  // 003 Eq. (14)
    p2_ += hs * pd[1];
  } else {
    // Heun (explicit trapezoidal): second-order alternative for configuration search.
    const time_point t1 = t + h;
    const double p1e = p1_ + hs * pd[0], p2e = p2_ + hs * pd[1];
    const vec2 pd1 =
        pressure_rates(hp_, eq_.s0, in(in_s, t1), in(in_sd, t1), in(in_kappa, t1), p1e, p2e);
    p1_ += 0.5 * hs * (pd[0] + pd1[0]);
    p2_ += 0.5 * hs * (pd[1] + pd1[1]);
  }
  return std::isfinite(p1_) && std::isfinite(p2_);
}

// The communication step's k forward-Euler sub-steps in one loop. With s and sd held
// (ZOH) they are read once; kappa is still evaluated at every sub-step time, a batch of
// them per call (a manoeuvre source: one virtual call per batch). The arithmetic is that
// of do_step, so the result is bit-identical to k calls of it.
bool hydraulic_cylinder::do_steps(time_point t, duration h, std::int64_t k) noexcept {
  if (integrator_ != hydraulic_integrator::forward_euler || !input(in_s).held() ||
      !input(in_sd).held())
    return subsystem::do_steps(t, h, k);
  const double hs = to_seconds(h);
  const double s = in(in_s, t), sd = in(in_sd, t);
  double p1 = p1_, p2 = p2_;
  bool ok = true;
  constexpr std::int64_t batch = 16;
  // Not zeroed: values_at fills what the loop reads.
  std::array<double, batch> kappa;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  for (std::int64_t j0 = 0; j0 < k && ok; j0 += batch) {
    const std::int64_t n = std::min(batch, k - j0);
    input(in_kappa).values_at(t + j0 * h, h, static_cast<std::size_t>(n), kappa.data());
    for (std::int64_t j = 0; j < n && ok; ++j) {
      const vec2 pd =
          pressure_rates(hp_, eq_.s0, s, sd, kappa[static_cast<std::size_t>(j)], p1, p2);
      p1 += hs * pd[0];  // 003 Eq. (14)
      p2 += hs * pd[1];
      ok = std::isfinite(p1) && std::isfinite(p2);
    }
  }
  p1_ = p1;
  p2_ = p2;
  return ok;
}

void hydraulic_cylinder::do_update_outputs(time_point t) noexcept {
  kappa_ = in(in_kappa, t);
  // f-s: direct feedthrough; sd is this subsystem's input extrapolated to t
  // (000 Eq. (24); with ZOH in Jacobi the friction term lags one macro step, see
  // docs/coupling.md, "Coupling variables of the models").
  fh_ = actuator_force(hp_, p1_, p2_, in(in_sd, t));
  if (coupling_ == coupling::force_displacement) {
    set_output(out_fh, fh_);
  } else {
    set_output(out_p1, p1_);
    set_output(out_p2, p2_);
  }
}

}  // namespace cosim::crane
