#pragma once
// N hydraulic cylinders (003 Eqs. (8)-(14)) as one co-simulation unit, optionally with the
// reduced interface model (RIM) of the multibody system inside (001 Sect. 3, Algorithm 2).
//
// interface_kind::direct: the cylinders integrate 003 Eqs. (9)-(10) with the actuator
//   lengths and rates received from the multibody (extrapolated by the ports), and output
//   f_h of 003 Eq. (8) with the received rate (direct feedthrough, 000 Eq. (24)).
//   For N = 1 this is exactly hydraulic_cylinder in f-s coupling.
// interface_kind::rim: 001 Algorithm 2 with H2 = h_S = h_RIM. At every communication point
//   with the multibody (H1 = H) the RIM state (s, sd) is reset to the multibody's values
//   and M-tilde, f-tilde (001 Eqs. (12)-(13), received as inputs) are frozen for the macro
//   step. Each internal step h then advances the RIM, 001 Eq. (11) with lambda = f_h,
//     Mt sdd = ft + f_h(p, sd),
//   by semi-implicit Euler (001 Eq. (39)) and the pressures by forward Euler (001 Eq. (40)),
//   both from the values at the start of the step: the nested RIM-hydraulics exchange of
//   Algorithm 2 happens at every internal step. One coupled RIM serves all N actuators, so
//   the off-diagonal effective masses couple them between communication points (001
//   Sect. 5.1.2). The outputs f_h use the RIM's own rate.
//
// Why one unit rather than a RIM subsystem coupled to the hydraulics at h_H: the executors
// exchange every coupling at the one macro step H. A separate RIM unit would force the
// multibody to exchange at h_H too; inside one unit the RIM-hydraulics exchange runs at
// every internal step while the multibody exchanges only at H, which is 001's two-rate
// scheme (H1 = h_M, H2 = h_S).
//
// force_output::mean outputs the mean of f_h over the macro step just taken instead of its
// value at the communication point (004 smoothing). Meant for Gauss-Seidel with this unit
// first (fastest-first, 004): the multibody then steps with the force averaged over the
// same macro step.
//
// Ports (N = 1: no suffix; N = 2: suffixes _1, _2):
//   inputs  s, sd, kappa per actuator; rim: Mt_ij (i <= j) [kg], ft_i [N]
//   outputs fh per actuator [N]; rim: rim_s [m], rim_sd [m/s] per actuator (the RIM state
//           at the output time, for a multibody that follows the RIM)
// Variables: p1, p2, kappa, fh per actuator (fh: 003 Eq. (8) at the output time);
//   rim: rim_s, rim_sd per actuator.
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>

#include "cosim/runtime/subsystem.hpp"
#include "cosim/subsystems/crane_subsystems.hpp"
#include "cosim/subsystems/rim_crane.hpp"

namespace cosim::rim {

enum class interface_kind { direct, rim };
enum class force_output { sample, mean };

/// Parses "direct"/"rim" and "sample"/"mean"; false on anything else.
bool parse_interface(const std::string& text, interface_kind& out) noexcept;
bool parse_force_output(const std::string& text, force_output& out) noexcept;

/// Initial state of one cylinder (from an equilibrium solve).
struct cylinder_start {
  double s0 = 0.0;      // initial actuator length [m], 003 Eq. (12)
  double fh = 0.0;      // equilibrium force [N]
  double p1 = 0.0;      // [Pa]
  double p2 = 0.0;      // [Pa]
  double kappa0 = 0.0;  // equilibrium valve command
};

inline cylinder_start start_of(const crane::equilibrium& eq) noexcept {
  return {eq.s0, eq.fh, eq.p1, eq.p2, eq.kappa0};
}

/// "s" for N = 1, "s_2" for actuator index 1 of N = 2.
std::string port_name(const std::string& base, int i, int n);

template <int N>
class hydraulics_unit final : public subsystem {
  static_assert(N >= 1 && N <= 2, "one or two actuators");

 public:
  using vecN = crane::interface_vector<N>;
  using matN = crane::interface_matrix<N>;

  hydraulics_unit(std::string name, crane::hydraulic_params hp,
                  const std::array<cylinder_start, N>& start, interface_kind mode,
                  crane::hydraulic_integrator integrator, force_output output);

  [[nodiscard]] std::size_t in_s(int i) const noexcept { return in_s_[i]; }
  [[nodiscard]] std::size_t in_sd(int i) const noexcept { return in_sd_[i]; }
  [[nodiscard]] std::size_t in_kappa(int i) const noexcept { return in_kappa_[i]; }
  [[nodiscard]] std::size_t out_fh(int i) const noexcept { return out_fh_[i]; }
  [[nodiscard]] double p1(int i) const noexcept { return p1_[i]; }
  [[nodiscard]] double p2(int i) const noexcept { return p2_[i]; }
  [[nodiscard]] const vecN& rim_s() const noexcept { return w_; }
  [[nodiscard]] const vecN& rim_sd() const noexcept { return wd_; }

  /// Direct, f_h at the communication point: d f_h,i / d sd_j = -c if i = j, else 0, and
  /// d f_h,i / d s_j = 0 (003 Eq. (8)).
  [[nodiscard]] bool provides_partial(std::size_t o, std::size_t i) const noexcept override {
    if (mode_ != interface_kind::direct || output_ != force_output::sample) return false;
    bool out = false, in = false;
    for (int k = 0; k < N; ++k) {
      out = out || o == out_fh_[k];
      in = in || i == in_s_[k] || i == in_sd_[k];
    }
    return out && in;
  }

 private:
  double do_output_partial(std::size_t o, std::size_t i) noexcept override {
    for (int k = 0; k < N; ++k)
      if (o == out_fh_[k] && i == in_sd_[k]) return -hp_.c;
    return 0.0;
  }
  struct rates {
    vecN sdd = vecN::Zero();
    vecN p1d = vecN::Zero();
    vecN p2d = vecN::Zero();
    vecN fh = vecN::Zero();
  };

  void do_initialize(time_point t0) override;
  bool do_step(time_point t, duration h) noexcept override;
  void do_update_outputs(time_point t) noexcept override;

  // Everything step() changes (rollback, iterative coupling).
  auto state() noexcept {
    return std::tie(p1_, p2_, w_, wd_, Mt_, Mt_inv_, ft_, last_sync_, impulse_, impulse_time_,
                    kappa_, fh_);
  }
  bool do_can_save_state() const noexcept override { return true; }
  bool do_save_state() noexcept override {
    saved_ = state();
    return true;
  }
  bool do_restore_state() noexcept override {
    state() = saved_;
    return true;
  }

  void synchronise(time_point t) noexcept;
  rates evaluate(time_point t, const vecN& s, const vecN& sd, const vecN& p1,
                 const vecN& p2) const noexcept;

  crane::hydraulic_params hp_;
  std::array<cylinder_start, N> start_;
  interface_kind mode_;
  crane::hydraulic_integrator integrator_;
  force_output output_;

  std::array<std::size_t, N> in_s_{}, in_sd_{}, in_kappa_{}, in_ft_{}, out_fh_{};
  std::array<std::size_t, N> out_rim_s_{}, out_rim_sd_{};
  std::array<std::size_t, N*(N + 1) / 2> in_Mt_{};  // (0,0), (0,1), (1,1)

  vecN p1_ = vecN::Zero(), p2_ = vecN::Zero();
  vecN w_ = vecN::Zero(), wd_ = vecN::Zero();  // RIM state: s and sd
  matN Mt_ = matN::Identity(), Mt_inv_ = matN::Identity();
  vecN ft_ = vecN::Zero();
  std::int64_t last_sync_ = std::numeric_limits<std::int64_t>::min();
  std::array<double, N> impulse_{};  // integral of f_h over the current macro step [N s]
  double impulse_time_ = 0.0;
  std::array<double, N> kappa_{};  // recorded: valve commands at the output time
  std::array<double, N> fh_{};     // recorded: 003 Eq. (8) at the output time
  std::tuple<vecN, vecN, vecN, vecN, matN, matN, vecN, std::int64_t, std::array<double, N>, double,
             std::array<double, N>, std::array<double, N>>
      saved_;
};

extern template class hydraulics_unit<1>;
extern template class hydraulics_unit<2>;

}  // namespace cosim::rim
