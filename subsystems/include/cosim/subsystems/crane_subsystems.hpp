#pragma once
// The crane split into two co-simulation units (003 Sect. 3):
//  - crane_multibody: 003 Eqs. (1)-(7), minimal coordinates q = (th1, th2);
//  - hydraulic_cylinder: 003 Eqs. (8)-(14), states p = (p1, p2).
// f-s coupling: multibody -> (s, sd), hydraulics -> f_h (direct feedthrough through sd).
// p-s coupling: multibody -> (s, sd), hydraulics -> (p1, p2); the multibody evaluates
// 003 Eq. (8) itself with its own sd.
#include <tuple>

#include "cosim/runtime/subsystem.hpp"
#include "cosim/subsystems/crane_model.hpp"

namespace cosim::crane {

enum class coupling { force_displacement, pressure_displacement };
enum class multibody_integrator { semi_implicit_euler, trapezoidal };

class crane_multibody final : public subsystem {
 public:
  /// rim_outputs adds the outputs Mt_11 [kg] and ft_1 [N]: the effective mass and force
  /// along s1 (001 Eqs. (12)-(13)) that a reduced interface model needs. rim_follow (f-s,
  /// with rim_outputs) adds the inputs rim_s [m], rim_sd [m/s]: when a step ends at the time
  /// of their newest sample, the state is projected onto that interface state
  /// (project_interface in rim_crane.hpp).
  crane_multibody(std::string name, mechanical_params mp, hydraulic_params hp, coupling c,
                  multibody_integrator integrator, const equilibrium& eq, bool rim_outputs = false,
                  bool rim_follow = false);

  // Ports (indices are stable).
  static constexpr std::size_t out_s = 0, out_sd = 1;
  static constexpr std::size_t out_Mt11 = 2, out_ft1 = 3;    // with rim_outputs only
  static constexpr std::size_t in_fh = 0;                    // f-s
  static constexpr std::size_t in_rim_s = 1, in_rim_sd = 2;  // with rim_follow only
  static constexpr std::size_t in_p1 = 0, in_p2 = 1;         // p-s

  [[nodiscard]] const vec2& q() const noexcept { return q_; }
  [[nodiscard]] const vec2& qd() const noexcept { return qd_; }
  [[nodiscard]] double sd() const noexcept { return sd_; }

  /// Everything step() changes, as a value: the crane FMU's FMU state copies it
  /// (tests/fmus/crane, canGetAndSetFMUstate), as many copies as the importer asks for.
  using state_type = std::tuple<vec2, vec2, double, double, double, double, double, double>;
  [[nodiscard]] state_type snapshot() const noexcept {
    return {q_, qd_, s_, sd_, th1_, th2_, th1d_, th2d_};
  }
  void set_snapshot(const state_type& s) noexcept {
    std::tie(q_, qd_, s_, sd_, th1_, th2_, th1d_, th2d_) = s;
  }

 private:
  void do_initialize(time_point t0) override;
  bool do_step(time_point t, duration h) noexcept override;
  bool do_steps(time_point t, duration h, std::int64_t k) noexcept override;
  void do_update_outputs(time_point t) noexcept override;
  // Everything step() changes (rollback, iterative coupling).
  auto state() noexcept { return std::tie(q_, qd_, s_, sd_, th1_, th2_, th1d_, th2d_); }
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
  hydraulic_params hp_;
  coupling coupling_;
  multibody_integrator integrator_;
  equilibrium eq_;
  bool rim_outputs_ = false;
  bool rim_follow_ = false;
  vec2 q_ = vec2::Zero();
  vec2 qd_ = vec2::Zero();
  double s_ = 0.0, sd_ = 0.0, th1_ = 0.0, th2_ = 0.0, th1d_ = 0.0, th2d_ = 0.0;
  state_type saved_;
};

enum class hydraulic_integrator { forward_euler, heun };

class hydraulic_cylinder final : public subsystem {
 public:
  hydraulic_cylinder(std::string name, hydraulic_params hp, coupling c,
                     hydraulic_integrator integrator, const equilibrium& eq);

  static constexpr std::size_t in_s = 0, in_sd = 1, in_kappa = 2;
  static constexpr std::size_t out_fh = 0;              // f-s
  static constexpr std::size_t out_p1 = 0, out_p2 = 1;  // p-s

  [[nodiscard]] double p1() const noexcept { return p1_; }
  [[nodiscard]] double p2() const noexcept { return p2_; }

  /// Everything step() changes, as a value (the crane FMU's FMU state, as crane_multibody).
  using state_type = std::tuple<double, double, double, double>;
  [[nodiscard]] state_type snapshot() const noexcept { return {p1_, p2_, kappa_, fh_}; }
  void set_snapshot(const state_type& s) noexcept { std::tie(p1_, p2_, kappa_, fh_) = s; }

  /// f-s: d f_h / d s = 0 and d f_h / d sd = -c (003 Eq. (8)).
  [[nodiscard]] bool provides_partial(std::size_t o, std::size_t i) const noexcept override {
    return coupling_ == coupling::force_displacement && o == out_fh && (i == in_s || i == in_sd);
  }

 private:
  double do_output_partial(std::size_t /*o*/, std::size_t i) noexcept override {
    return i == in_sd ? -hp_.c : 0.0;
  }
  void do_initialize(time_point t0) override;
  bool do_step(time_point t, duration h) noexcept override;
  bool do_steps(time_point t, duration h, std::int64_t k) noexcept override;
  void do_update_outputs(time_point t) noexcept override;
  // Everything step() changes (rollback, iterative coupling).
  auto state() noexcept { return std::tie(p1_, p2_, kappa_, fh_); }
  bool do_can_save_state() const noexcept override { return true; }
  bool do_save_state() noexcept override {
    saved_ = state();
    return true;
  }
  bool do_restore_state() noexcept override {
    state() = saved_;
    return true;
  }

  hydraulic_params hp_;
  coupling coupling_;
  hydraulic_integrator integrator_;
  equilibrium eq_;
  double p1_ = 0.0, p2_ = 0.0, kappa_ = 0.0, fh_ = 0.0;
  state_type saved_;
};

}  // namespace cosim::crane
