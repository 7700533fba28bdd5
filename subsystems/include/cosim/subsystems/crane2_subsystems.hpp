#pragma once
// Multibody unit of the double-actuated crane (001 Sect. 4.1.1), f-s coupling:
//   M qdd + c = f + A^T f_h,   A = [ds1/dq; ds2/dq]   (001 Eqs. (20), (4), (31)-(33))
// in the minimal coordinates q = (th1, th2), integrated by semi-implicit Euler (001
// Eq. (38)) or the trapezoidal rule. The hydraulic side is rim::hydraulics_unit<2>.
//
// Ports: inputs fh_1, fh_2 [N] (+ rim_s_i, rim_sd_i with rim_follow); outputs s_1, sd_1, s_2, sd_2
// and, with rim_outputs, the effective mass matrix Mt_11, Mt_12, Mt_22 [kg] and force ft_1, ft_2
// [N] along (s1, s2) (001 Eqs. (12)-(13)), one coupled RIM for both actuators.
#include <array>
#include <tuple>

#include "cosim/runtime/subsystem.hpp"
#include "cosim/subsystems/crane2_model.hpp"
#include "cosim/subsystems/crane_subsystems.hpp"
#include "cosim/subsystems/rim_crane.hpp"

namespace cosim::crane {

class crane2_multibody final : public subsystem {
 public:
  /// rim_follow (with rim_outputs): inputs rim_s_1, rim_s_2 [m], rim_sd_1, rim_sd_2 [m/s];
  /// a step ending at the time of their newest sample projects the state onto them
  /// (project_interface in rim_crane.hpp).
  crane2_multibody(std::string name, mechanical_params mp, multibody_integrator integrator,
                   const crane2_equilibrium& eq, bool rim_outputs, bool rim_follow = false);

  static constexpr std::size_t in_fh1 = 0, in_fh2 = 1;
  static constexpr std::size_t in_rim_s1 = 2, in_rim_s2 = 3, in_rim_sd1 = 4, in_rim_sd2 = 5;
  static constexpr std::size_t out_s1 = 0, out_sd1 = 1, out_s2 = 2, out_sd2 = 3;
  static constexpr std::size_t out_Mt11 = 4, out_Mt12 = 5, out_Mt22 = 6, out_ft1 = 7, out_ft2 = 8;

  [[nodiscard]] const vec2& q() const noexcept { return q_; }
  [[nodiscard]] const vec2& qd() const noexcept { return qd_; }
  /// Sets the state directly (tests of the interface quantities).
  void set_state(const vec2& q, const vec2& qd) noexcept;

 private:
  void do_initialize(time_point t0) override;
  bool do_step(time_point t, duration h) noexcept override;
  void do_update_outputs(time_point t) noexcept override;
  // Everything step() changes (rollback, iterative coupling).
  auto state() noexcept { return std::tie(q_, qd_, th1_, th2_, th1d_, th2d_, s_, sd_); }
  bool do_can_save_state() const noexcept override { return true; }
  bool do_save_state() noexcept override {
    saved_ = state();
    return true;
  }
  bool do_restore_state() noexcept override {
    state() = saved_;
    return true;
  }

  vec2 accelerations(const vec2& q, const vec2& qd, time_point t) const noexcept;
  void refresh_kinematics() noexcept;

  mechanical_params mp_;
  multibody_integrator integrator_;
  crane2_equilibrium eq_;
  bool rim_outputs_;
  bool rim_follow_;
  vec2 q_ = vec2::Zero();
  vec2 qd_ = vec2::Zero();
  double th1_ = 0.0, th2_ = 0.0, th1d_ = 0.0, th2d_ = 0.0;
  std::array<double, 2> s_{}, sd_{};
  std::tuple<vec2, vec2, double, double, double, double, std::array<double, 2>,
             std::array<double, 2>>
      saved_;
};

}  // namespace cosim::crane
