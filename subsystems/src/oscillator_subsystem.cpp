#include "cosim/subsystems/oscillator_subsystem.hpp"

#include <cmath>

#include "cosim/runtime/error.hpp"
#include "cosim/subsystems/oscillator.hpp"

namespace cosim::osc {

bool parse_integrator(const std::string& text, integrator& out) noexcept {
  if (text == "semi-implicit-euler") {
    out = integrator::semi_implicit_euler;
  } else if (text == "trapezoidal") {
    out = integrator::trapezoidal;
  } else if (text == "rk4") {
    out = integrator::rk4;
  } else {
    return false;
  }
  return true;
}

oscillator_mass::oscillator_mass(std::string name, const mass_spec& spec, integrator integ)
    : subsystem(std::move(name)), spec_(spec), integrator_(integ) {
  add_output({"x", "m", port_role::signal});
  add_output({"v", "m/s", port_role::flow});
  add_variable("x", "m", &x_);
  add_variable("v", "m/s", &v_);
  add_variable("a", "m/s^2", &a_);
}

void oscillator_mass::add_link(const std::string& tag, double k, double c, double neighbour_x0,
                               double neighbour_v0, bool send_force) {
  link_in l{};
  l.k = k;
  l.c = c;
  l.in_x = add_input({"x" + tag, "m", port_role::signal});
  l.in_v = add_input({"v" + tag, "m/s", port_role::flow});
  l.x0 = neighbour_x0;
  l.v0 = neighbour_v0;
  links_.push_back(l);
  if (send_force) {
    COSIM_INPUT_CHECK(sending_link_ == npos, errc::model,
                      "oscillator mass '" + name() + "' can send only one coupling force");
    sending_link_ = links_.size() - 1;
    // Direct feedthrough: f at t uses the neighbour's x and v at t (000 Eq. (24)).
    const std::size_t o = add_output({"f", "N", port_role::effort, true});
    COSIM_DEMAND(o == out_f);
  }
}

bool oscillator_mass::output_depends_on(std::size_t o, std::size_t i) const noexcept {
  if (o != out_f || sending_link_ == npos) return false;
  const link_in& l = links_[sending_link_];
  return i == l.in_x || i == l.in_v;
}

void oscillator_mass::add_force(const std::string& tag, double f0) {
  forces_.push_back({add_input({"f" + tag, "N", port_role::effort}), f0});
}

void oscillator_mass::do_initialize(time_point t0) {
  x_ = spec_.x0;
  v_ = spec_.v0;
  for (const link_in& l : links_) {
    input(l.in_x).set_initial(t0, l.x0);
    input(l.in_v).set_initial(t0, l.v0);
  }
  for (const force_in& f : forces_) input(f.in_f).set_initial(t0, f.f0);
  a_ = accel(t0, x_, v_);
}

double oscillator_mass::link_force(const link_in& l, time_point t) const noexcept {
  // 000 Eq. (13) / (68): the element's force on the neighbour.
  return power_law(l.k, spec_.spring_exponent, x_ - in(l.in_x, t)) +
         power_law(l.c, spec_.damper_exponent, v_ - in(l.in_v, t));
}

double oscillator_mass::accel(time_point t, double x, double v, double* da_dx,
                              double* da_dv) const noexcept {
  const double n = spec_.spring_exponent, p = spec_.damper_exponent;
  // 000 Eqs. (12), (14), (40), (67), (69): ground elements, own links, received forces.
  double f = -power_law(spec_.k, n, x) - power_law(spec_.c, p, v);
  double dfx = -power_law_slope(spec_.k, n, x), dfv = -power_law_slope(spec_.c, p, v);
  for (const link_in& l : links_) {
    const double dx = x - in(l.in_x, t), dv = v - in(l.in_v, t);
    f -= power_law(l.k, n, dx) + power_law(l.c, p, dv);
    dfx -= power_law_slope(l.k, n, dx);
    dfv -= power_law_slope(l.c, p, dv);
  }
  for (const force_in& fi : forces_) f += in(fi.in_f, t);
  if (da_dx != nullptr) *da_dx = dfx / spec_.m;
  if (da_dv != nullptr) *da_dv = dfv / spec_.m;
  return f / spec_.m;
}

bool oscillator_mass::do_step(time_point t, duration h) noexcept {
  const double hs = to_seconds(h);
  const time_point t1 = t + h;
  switch (integrator_) {
    case integrator::semi_implicit_euler: {
      v_ += hs * accel(t, x_, v_);
      x_ += hs * v_;
      a_ = accel(t1, x_, v_);
      break;
    }
    case integrator::trapezoidal: {
      // x1 = x0 + h/2 (v0 + v1), v1 = v0 + h/2 (a0 + a(t1, x1, v1)); Newton on v1 with the
      // analytic slope (one correction is exact for linear elements).
      const double a0 = accel(t, x_, v_);
      double v1 = v_ + hs * a0;
      double a1 = 0.0;
      for (int it = 0; it < 30; ++it) {
        const double x1 = x_ + 0.5 * hs * (v_ + v1);
        double ax = 0.0, av = 0.0;
        a1 = accel(t1, x1, v1, &ax, &av);
        const double r = v1 - v_ - 0.5 * hs * (a0 + a1);
        const double dr = 1.0 - 0.5 * hs * (0.5 * hs * ax + av);
        const double dv = r / dr;
        v1 -= dv;
        if (std::abs(dv) <= 1e-14 * (1.0 + std::abs(v1))) break;
      }
      x_ += 0.5 * hs * (v_ + v1);
      v_ = v1;
      a_ = accel(t1, x_, v_);
      break;
    }
    case integrator::rk4: {
      // 004 Eq. (1): b = (1/6, 1/3, 1/3, 1/6).
      const time_point tm = t + h / 2;
      const double k1x = v_, k1v = accel(t, x_, v_);
      const double k2x = v_ + 0.5 * hs * k1v, k2v = accel(tm, x_ + 0.5 * hs * k1x, k2x);
      const double k3x = v_ + 0.5 * hs * k2v, k3v = accel(tm, x_ + 0.5 * hs * k2x, k3x);
      const double k4x = v_ + hs * k3v, k4v = accel(t1, x_ + hs * k3x, k4x);
      x_ += hs / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
      v_ += hs / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
      a_ = accel(t1, x_, v_);
      break;
    }
  }
  return std::isfinite(x_) && std::isfinite(v_);
}

void oscillator_mass::do_update_outputs(time_point t) noexcept {
  set_output(out_x, x_);
  set_output(out_v, v_);
  if (sending_link_ != npos) set_output(out_f, link_force(links_[sending_link_], t));
  t_out_ = t;
}

double oscillator_mass::do_output_partial(std::size_t /*o*/, std::size_t i) noexcept {
  // Derivatives of link_force at the output time with respect to the neighbour's x and v.
  const link_in& l = links_[sending_link_];
  if (i == l.in_x) return -power_law_slope(l.k, spec_.spring_exponent, x_ - in(l.in_x, t_out_));
  return -power_law_slope(l.c, spec_.damper_exponent, v_ - in(l.in_v, t_out_));
}

}  // namespace cosim::osc
