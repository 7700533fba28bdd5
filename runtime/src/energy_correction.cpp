#include "cosim/runtime/energy_correction.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "cosim/runtime/error.hpp"
#include "cosim/runtime/system.hpp"

namespace cosim::correction {

namespace {

double conjugate_power_factor(const subsystem& s, const energy_correction& c) noexcept {
  double y = 0.0;
  for (std::size_t k = 0; k < c.terms; ++k) y += c.gain[k] * s.output(c.conjugate[k]);
  return y;
}

}  // namespace

void enable(system& sys, std::size_t c, correction_method method) {
  const auto& conns = sys.connections();
  const connection& cn = conns.at(c);
  subsystem& consumer = sys.at(cn.to);
  const std::string where =
      "energy correction of input '" + consumer.name() + "." + consumer.input(cn.input).desc().name;
  for (const energy_correction& e : consumer.corrections())
    if (e.input == cn.input) return;  // asked for twice (e.g. bond and connection)
  energy_correction ec{};
  ec.input = cn.input;
  ec.method = method;
  for (const power_bond& bond : sys.bonds())
    for (const bond_term& bt : bond.terms) {
      if (bt.effort != c && bt.flow != c) continue;
      const bool effort = bt.effort == c;
      // The conjugate variable is the consumer's own output on the other connection.
      const connection& other = conns[effort ? bt.flow : bt.effort];
      COSIM_INPUT_CHECK(other.from == cn.to, errc::model,
                        where + "': bond '" + bond.name +
                            "' does not return the conjugate variable from this subsystem");
      COSIM_INPUT_CHECK(ec.terms < energy_correction::max_terms, errc::model,
                        where + "': more than 4 bond terms");
      ec.conjugate[ec.terms] = other.output;
      ec.gain[ec.terms] = effort ? bt.gain : -bt.gain;
      ++ec.terms;
    }
  COSIM_INPUT_CHECK(ec.terms > 0, errc::model,
                    where +
                        "': the connection is not part of any power bond (the correction "
                        "needs the conjugate variable)");
  consumer.add_correction(ec);
  consumer.input(cn.input).set_correction(0.0);
}

void begin_interval(subsystem& s, time_point t, duration H) noexcept {
  const double h_next = to_seconds(H);
  for (energy_correction& c : s.corrections()) {
    input_port& port = s.input(c.input);
    const double y = conjugate_power_factor(s, c);
    if (c.captured) {
      const double u = port.uncorrected_value_at(t);  // the producer's sample at t
      const double du = c.u_used - u;
      const double p = du * c.y_used;
      const double h = to_seconds(c.last_H);
      const double e = port.order() > 0 ? 0.5 * h * (c.p_prev + p)  // 002 Eq. (11)
                                        : h * p;                    // 002 Eq. (10)
      c.p_prev = p;
      double target = 0.0;  // energy to remove over the next interval (< 0: give back)
      if (c.method == correction_method::balance) {
        c.pending = e;
        target = balance_gain * e;
      } else {
        // What the last correction actually removed, trapezoidal over its interval.
        const double removed = -c.offset * 0.5 * (c.y_start + c.y_used) * h;
        c.pending = std::max(0.0, c.pending + e - removed);
        target = c.pending;
      }
      double off = 0.0;
      if (target != 0.0 && y != 0.0 && std::isfinite(target)) {
        const double limit = std::min(std::abs(du), max_fraction * std::abs(u));
        off = std::clamp(-target / (y * h_next), -limit, limit);
      }
      c.offset = off;
      port.set_correction(off);
    }
    c.y_start = y;
  }
}

void end_interval(subsystem& s, time_point t, duration H) noexcept {
  for (energy_correction& c : s.corrections()) {
    c.u_used = s.input(c.input).uncorrected_value_at(t);
    c.y_used = conjugate_power_factor(s, c);
    c.last_H = H;
    c.captured = true;
  }
}

}  // namespace cosim::correction
