#include "cosim/subsystems/rim_hydraulics.hpp"

#include <cmath>

namespace cosim::rim {

bool parse_interface(const std::string& text, interface_kind& out) noexcept {
  if (text == "direct")
    out = interface_kind::direct;
  else if (text == "rim")
    out = interface_kind::rim;
  else
    return false;
  return true;
}

bool parse_force_output(const std::string& text, force_output& out) noexcept {
  if (text == "sample")
    out = force_output::sample;
  else if (text == "mean")
    out = force_output::mean;
  else
    return false;
  return true;
}

std::string port_name(const std::string& base, int i, int n) {
  return n == 1 ? base : base + "_" + std::to_string(i + 1);
}

template <int N>
hydraulics_unit<N>::hydraulics_unit(std::string name, crane::hydraulic_params hp,
                                    const std::array<cylinder_start, N>& start, interface_kind mode,
                                    crane::hydraulic_integrator integrator, force_output output)
    : subsystem(std::move(name)),
      hp_(hp),
      start_(start),
      mode_(mode),
      integrator_(integrator),
      output_(output) {
  for (int i = 0; i < N; ++i) {
    in_s_[i] = add_input({port_name("s", i, N), "m", port_role::signal});
    in_sd_[i] = add_input({port_name("sd", i, N), "m/s", port_role::flow});
    in_kappa_[i] = add_input({port_name("kappa", i, N), "1", port_role::signal});
  }
  if (mode_ == interface_kind::rim) {
    std::size_t k = 0;
    for (int i = 0; i < N; ++i)
      for (int j = i; j < N; ++j)
        in_Mt_[k++] = add_input(
            {"Mt_" + std::to_string(i + 1) + std::to_string(j + 1), "kg", port_role::signal});
    for (int i = 0; i < N; ++i)
      in_ft_[i] = add_input({"ft_" + std::to_string(i + 1), "N", port_role::signal});
  }
  // Direct: f_h uses the received sd at the output time (direct feedthrough); the RIM uses
  // its own state.
  for (int i = 0; i < N; ++i)
    out_fh_[i] = add_output(
        {port_name("fh", i, N), "N", port_role::effort, mode_ == interface_kind::direct});
  if (mode_ == interface_kind::rim)
    for (int i = 0; i < N; ++i) {
      out_rim_s_[i] = add_output({port_name("rim_s", i, N), "m", port_role::signal});
      out_rim_sd_[i] = add_output({port_name("rim_sd", i, N), "m/s", port_role::signal});
    }
  for (int i = 0; i < N; ++i) {
    add_variable(port_name("p1", i, N), "Pa", &p1_[i]);
    add_variable(port_name("p2", i, N), "Pa", &p2_[i]);
    add_variable(port_name("kappa", i, N), "1", &kappa_[i]);
    add_variable(port_name("fh", i, N), "N", &fh_[i]);
    if (mode_ == interface_kind::rim) {
      add_variable(port_name("rim_s", i, N), "m", &w_[i]);
      add_variable(port_name("rim_sd", i, N), "m/s", &wd_[i]);
    }
  }
}

template <int N>
void hydraulics_unit<N>::do_initialize(time_point t0) {
  for (int i = 0; i < N; ++i) {
    p1_[i] = start_[i].p1;
    p2_[i] = start_[i].p2;
    w_[i] = start_[i].s0;
    wd_[i] = 0.0;
    ft_[i] = -start_[i].fh;  // static equilibrium of 001 Eq. (11): ft + lambda = 0
    kappa_[i] = start_[i].kappa0;
    fh_[i] = start_[i].fh;
    impulse_[i] = 0.0;
    input(in_s_[i]).set_initial(t0, start_[i].s0);
    input(in_sd_[i]).set_initial(t0, 0.0);
    input(in_kappa_[i]).set_initial(t0, start_[i].kappa0);
  }
  impulse_time_ = 0.0;
  Mt_.setIdentity();
  Mt_inv_.setIdentity();
  last_sync_ = std::numeric_limits<std::int64_t>::min();
  if (mode_ == interface_kind::rim) {
    // Placeholders until the start-up exchange delivers the multibody's values.
    std::size_t k = 0;
    for (int i = 0; i < N; ++i)
      for (int j = i; j < N; ++j) input(in_Mt_[k++]).set_initial(t0, i == j ? 1.0 : 0.0);
    for (int i = 0; i < N; ++i) input(in_ft_[i]).set_initial(t0, ft_[i]);
  }
}

template <int N>
void hydraulics_unit<N>::synchronise(time_point t) noexcept {
  // A new sample from the multibody marks a communication point of 001 Algorithm 2
  // (line 12): reset the RIM to the multibody's state and freeze Mt, ft for the macro
  // step. value_at(t, 1) is exact at a sample time and also picks the right sample when
  // a Gauss-Seidel order already delivered the one at the end of the step.
  const sample_history& hs = input(in_s_[0]).history();
  if (hs.size() == 0) return;
  const std::int64_t newest = hs.newest_time().time_since_epoch().count();
  if (newest == last_sync_) return;
  last_sync_ = newest;
  for (int i = 0; i < N; ++i) {
    w_[i] = input(in_s_[i]).history().value_at(t, 1);
    wd_[i] = input(in_sd_[i]).history().value_at(t, 1);
    ft_[i] = input(in_ft_[i]).history().value_at(t, 1);
  }
  std::size_t k = 0;
  for (int i = 0; i < N; ++i)
    for (int j = i; j < N; ++j) {
      const double m = input(in_Mt_[k++]).history().value_at(t, 1);
      Mt_(i, j) = m;
      Mt_(j, i) = m;
    }
  Mt_inv_ = Mt_.inverse();
}

template <int N>
typename hydraulics_unit<N>::rates hydraulics_unit<N>::evaluate(time_point t, const vecN& s,
                                                                const vecN& sd, const vecN& p1,
                                                                const vecN& p2) const noexcept {
  rates r;
  for (int i = 0; i < N; ++i) {
    r.fh[i] = crane::actuator_force(hp_, p1[i], p2[i], sd[i]);  // 003 Eq. (8)
    const crane::vec2 pd =
        crane::pressure_rates(hp_, start_[i].s0, s[i], sd[i], in(in_kappa_[i], t), p1[i], p2[i]);
    r.p1d[i] = pd[0];
    r.p2d[i] = pd[1];
  }
  if (mode_ == interface_kind::rim) r.sdd.noalias() = Mt_inv_ * (ft_ + r.fh);  // 001 Eq. (11)
  return r;
}

template <int N>
bool hydraulics_unit<N>::do_step(time_point t, duration h) noexcept {
  const double hs = to_seconds(h);
  const bool rim = mode_ == interface_kind::rim;
  if (rim) synchronise(t);
  vecN s = w_, sd = wd_;
  if (!rim)
    for (int i = 0; i < N; ++i) {
      s[i] = in(in_s_[i], t);
      sd[i] = in(in_sd_[i], t);
    }
  const rates r0 = evaluate(t, s, sd, p1_, p2_);
  if (integrator_ == crane::hydraulic_integrator::forward_euler) {
    if (rim) {
      wd_ += hs * r0.sdd;  // 001 Eq. (39): velocity first,
      w_ += hs * wd_;      // then position with the new velocity
    }
    p1_ += hs * r0.p1d;  // 001 Eq. (40) / 003 Eq. (14)
    p2_ += hs * r0.p2d;
    for (int i = 0; i < N; ++i) impulse_[i] += hs * r0.fh[i];
  } else {
    // Heun (explicit trapezoidal rule) on the whole state (RIM and pressures).
    const time_point t1 = t + h;
    vecN s1 = w_ + hs * wd_, sd1 = wd_ + hs * r0.sdd;
    if (!rim)
      for (int i = 0; i < N; ++i) {
        s1[i] = in(in_s_[i], t1);
        sd1[i] = in(in_sd_[i], t1);
      }
    const vecN p1e = p1_ + hs * r0.p1d, p2e = p2_ + hs * r0.p2d;
    const rates r1 = evaluate(t1, s1, sd1, p1e, p2e);
    if (rim) {
      w_ += 0.5 * hs * (wd_ + sd1);
      wd_ += 0.5 * hs * (r0.sdd + r1.sdd);
    }
    p1_ += 0.5 * hs * (r0.p1d + r1.p1d);
    p2_ += 0.5 * hs * (r0.p2d + r1.p2d);
    for (int i = 0; i < N; ++i) impulse_[i] += 0.5 * hs * (r0.fh[i] + r1.fh[i]);
  }
  impulse_time_ += hs;
  return p1_.allFinite() && p2_.allFinite() && w_.allFinite() && wd_.allFinite();
}

template <int N>
void hydraulics_unit<N>::do_update_outputs(time_point t) noexcept {
  const bool rim = mode_ == interface_kind::rim;
  for (int i = 0; i < N; ++i) {
    kappa_[i] = in(in_kappa_[i], t);
    // Direct feedthrough (000 Eq. (24)): direct uses the received rate extrapolated to t (with
    // ZOH it lags one macro step, docs/coupling.md, "Coupling variables of the models");
    // the RIM supplies its own prediction of sd(t).
    fh_[i] = crane::actuator_force(hp_, p1_[i], p2_[i], rim ? wd_[i] : in(in_sd_[i], t));
    const bool averaged = output_ == force_output::mean && impulse_time_ > 0.0;
    set_output(out_fh_[i], averaged ? impulse_[i] / impulse_time_ : fh_[i]);
    impulse_[i] = 0.0;
    if (rim) {
      set_output(out_rim_s_[i], w_[i]);
      set_output(out_rim_sd_[i], wd_[i]);
    }
  }
  impulse_time_ = 0.0;
}

template class hydraulics_unit<1>;
template class hydraulics_unit<2>;

}  // namespace cosim::rim
