#include "cosim/subsystems/crane2_subsystems.hpp"

#include "cosim/subsystems/trapezoidal_newton.hpp"

namespace cosim::crane {

crane2_multibody::crane2_multibody(std::string name, mechanical_params mp,
                                   multibody_integrator integrator, const crane2_equilibrium& eq,
                                   bool rim_outputs, bool rim_follow)
    : subsystem(std::move(name)),
      mp_(mp),
      integrator_(integrator),
      eq_(eq),
      rim_outputs_(rim_outputs),
      rim_follow_(rim_follow && rim_outputs) {
  add_input({"fh_1", "N", port_role::effort});
  add_input({"fh_2", "N", port_role::effort});
  if (rim_follow_) {
    add_input({"rim_s_1", "m", port_role::signal});
    add_input({"rim_s_2", "m", port_role::signal});
    add_input({"rim_sd_1", "m/s", port_role::signal});
    add_input({"rim_sd_2", "m/s", port_role::signal});
  }
  add_output({"s_1", "m", port_role::signal});
  add_output({"sd_1", "m/s", port_role::flow});
  add_output({"s_2", "m", port_role::signal});
  add_output({"sd_2", "m/s", port_role::flow});
  if (rim_outputs_) {
    add_output({"Mt_11", "kg", port_role::signal});
    add_output({"Mt_12", "kg", port_role::signal});
    add_output({"Mt_22", "kg", port_role::signal});
    add_output({"ft_1", "N", port_role::signal});
    add_output({"ft_2", "N", port_role::signal});
  }
  add_variable("theta1", "rad", &th1_);
  add_variable("theta2", "rad", &th2_);
  add_variable("theta1d", "rad/s", &th1d_);
  add_variable("theta2d", "rad/s", &th2d_);
  add_variable("s_1", "m", &s_[0]);
  add_variable("s_2", "m", &s_[1]);
  add_variable("sd_1", "m/s", &sd_[0]);
  add_variable("sd_2", "m/s", &sd_[1]);
}

void crane2_multibody::set_state(const vec2& q, const vec2& qd) noexcept {
  q_ = q;
  qd_ = qd;
  refresh_kinematics();
}

void crane2_multibody::do_initialize(time_point t0) {
  set_state({mp_.theta1_0, mp_.theta2_0}, vec2::Zero());
  input(in_fh1).set_initial(t0, eq_.act[0].fh);
  input(in_fh2).set_initial(t0, eq_.act[1].fh);
  if (rim_follow_) {
    input(in_rim_s1).set_initial(t0, s_[0]);
    input(in_rim_s2).set_initial(t0, s_[1]);
    input(in_rim_sd1).set_initial(t0, 0.0);
    input(in_rim_sd2).set_initial(t0, 0.0);
  }
}

void crane2_multibody::refresh_kinematics() noexcept {
  const interface_kinematics<2> k = crane_interface_kinematics<2>(mp_, q_, qd_);
  const Eigen::Vector2d sd = k.A * qd_;  // 001 Eq. (31)
  s_[0] = k.s[0];
  s_[1] = k.s[1];
  sd_[0] = sd[0];
  sd_[1] = sd[1];
  th1_ = q_[0];
  th2_ = q_[1];
  th1d_ = qd_[0];
  th2d_ = qd_[1];
}

vec2 crane2_multibody::accelerations(const vec2& q, const vec2& qd, time_point t) const noexcept {
  const interface_kinematics<2> k = crane_interface_kinematics<2>(mp_, q, qd);
  const vec2 fh{in(in_fh1, t), in(in_fh2, t)};
  // 001 Eq. (20) with f_h = A^T lambda (001 Eq. (4)).
  const vec2 rhs = gravity_forces(mp_, q) - velocity_terms(mp_, q, qd) + k.A.transpose() * fh;
  const mat2 M = mass_matrix(mp_, q);
  const double det = M(0, 0) * M(1, 1) - M(0, 1) * M(1, 0);
  return {(M(1, 1) * rhs[0] - M(0, 1) * rhs[1]) / det, (M(0, 0) * rhs[1] - M(1, 0) * rhs[0]) / det};
}

bool crane2_multibody::do_step(time_point t, duration h) noexcept {
  const double hs = to_seconds(h);
  if (integrator_ == multibody_integrator::semi_implicit_euler) {
    const vec2 qdd = accelerations(q_, qd_, t);
    qd_ += hs * qdd;  // 001 Eq. (38)
    q_ += hs * qd_;
  } else {
    // Trapezoidal rule, Newton on qd_{k+1} (trapezoidal_newton.hpp).
    trapezoidal_newton_step<newton_solve::inverse>(
        q_, qd_, hs, t, t + h,
        [this](const vec2& q, const vec2& qd, time_point ta) { return accelerations(q, qd, ta); });
  }
  if (rim_follow_) {
    // The RIM reached the end of this step first (Gauss-Seidel, hydraulics first).
    const sample_history& rs = input(in_rim_s1).history();
    if (rs.size() > 0 && rs.newest_time() == t + h)
      project_interface<2>(
          mp_, q_, qd_, {rs.newest(), input(in_rim_s2).history().newest()},
          {input(in_rim_sd1).history().newest(), input(in_rim_sd2).history().newest()});
  }
  refresh_kinematics();
  return q_.allFinite() && qd_.allFinite();
}

void crane2_multibody::do_update_outputs(time_point /*t*/) noexcept {
  set_output(out_s1, s_[0]);
  set_output(out_sd1, sd_[0]);
  set_output(out_s2, s_[1]);
  set_output(out_sd2, sd_[1]);
  if (rim_outputs_) {
    const reduced_interface<2> ri = crane_reduced_interface<2>(mp_, q_, qd_);
    set_output(out_Mt11, ri.Mt(0, 0));
    set_output(out_Mt12, ri.Mt(0, 1));
    set_output(out_Mt22, ri.Mt(1, 1));
    set_output(out_ft1, ri.ft[0]);
    set_output(out_ft2, ri.ft[1]);
  }
}

}  // namespace cosim::crane
