#include "cosim/runtime/scheme.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "cosim/runtime/feedthrough_correction.hpp"

namespace cosim::scheme {

namespace {

bool advance_interval(subsystem& s, time_point t, duration H) noexcept {
  multirate_state& m = s.multirate();
  const time_point t_end = t + H;
  bool ok = true;
  if (!m.active()) {
    const duration h = s.step_size();
    ok = s.steps(t, h, s.steps_per(H));
    s.update_outputs(t_end);
    return ok && outputs_finite(s);
  }
  const bool non_matching = m.options().non_matching;
  const bool smoothing = m.options().smoothing;
  const duration h = non_matching ? m.own_step() : s.step_size();
  // Own grid: continue from the last own grid point; matching grids start at t.
  time_point tc = non_matching ? m.own_time() : t;
  std::vector<double>& avg = m.average_buffer();
  std::int64_t count = 0;
  // Ahead: cover [t, t + H] entirely (004 Table 1, step 2a: advance while t2 < t1).
  const time_point t_stop = non_matching && m.options().ahead ? t_end + h - duration{1} : t_end;
  while (ok && tc + h <= t_stop) {
    ok = s.step(tc, h);
    tc += h;
    if (smoothing) {
      // 004 Sect. 2.2: the outputs after every internal step enter the average.
      s.update_outputs(tc);
      if (count == 0) std::fill(avg.begin(), avg.end(), 0.0);
      for (std::size_t o = 0; o < avg.size(); ++o) avg[o] += s.output(o);
      ++count;
    }
  }
  if (non_matching) m.set_own_time(tc);
  s.update_outputs(non_matching ? tc : t_end);
  if (count > 0) {
    for (double& v : avg) v /= static_cast<double>(count);
    m.set_has_average(true);
  }  // no step in this interval (h > H): the previous average stays
  return ok && outputs_finite(s);
}

void receive_partials(const subsystem& producer, input_port& port) noexcept {
  std::array<double, input_port::max_feedthrough_terms> d{}, u{};
  feedthrough::fill(producer, port, d.data(), u.data());
  port.receive_partials(d.data(), u.data());
}

}  // namespace

bool advance(subsystem& s, time_point t, duration H) noexcept {
  if (!s.has_interval_hooks()) {
    // The common case inline: one call of the subsystem's loop, then its outputs at t + H.
    if (!s.multirate().active()) {
      const bool ok = s.steps(t, s.step_size(), s.steps_per(H));
      s.update_outputs(t + H);
      return ok && outputs_finite(s);
    }
    return advance_interval(s, t, H);
  }
  s.apply_feedthrough();  // before the energy correction reads the samples
  correction::begin_interval(s, t, H);
  const bool ok = advance_interval(s, t, H);
  const bool partials = s.capture_partials(t + H);  // with the outputs, before inputs move on
  s.capture_inputs(t + H);
  correction::end_interval(s, t + H, H);
  return ok && partials;
}

double delivered_output(const subsystem& s, std::size_t o) noexcept {
  const multirate_state& m = s.multirate();
  return m.options().smoothing && m.has_average() ? m.average(o) : s.output(o);
}

time_point sample_time(const subsystem& s, time_point t) noexcept {
  const multirate_state& m = s.multirate();
  return m.options().non_matching ? m.own_time() : t;
}

duration internal_step(const subsystem& s) noexcept {
  const multirate_state& m = s.multirate();
  return m.options().non_matching ? m.own_step() : s.step_size();
}

void deliver(system& sys, std::size_t from, time_point t) noexcept {
  subsystem& producer = sys.at(from);
  const time_point ts = sample_time(producer, t);
  if (sys.routes_resolved()) {
    // What the lookups below deliver, through the routes resolved before the run.
    const multirate_state& m = producer.multirate();
    const bool smoothing = m.options().smoothing;
    const bool averaged = smoothing && m.has_average();
    for (const route& r : sys.routes_from(from)) {
      const double v = averaged ? m.average(r.output) : *r.value;
      input_port& port = *r.port;
      if (port.feedthrough().count > 0) receive_partials(producer, port);
      // As delivered_derivatives(): only for an extrapolating port without a source.
      if (r.derivatives && !smoothing && port.order() != 0 && port.source() == nullptr) {
        const std::span<const double> d = producer.output_derivatives(r.output);
        if (!d.empty()) {
          port.receive(ts, v, d);
          continue;
        }
      }
      port.receive(ts, v);
    }
    return;
  }
  for (const connection& c : sys.connections_from(from)) {
    input_port& port = sys.at(c.to).input(c.input);
    const double v = delivered_output(producer, c.output);
    const std::span<const double> d = delivered_derivatives(producer, c.output, port);
    if (port.feedthrough().count > 0) receive_partials(producer, port);
    if (d.empty())
      port.receive(ts, v);  // as before derivatives existed, value for value
    else
      port.receive(ts, v, d);
  }
}

std::span<const double> delivered_derivatives(subsystem& s, std::size_t o,
                                              const input_port& to) noexcept {
  // A smoothed output is an average over the interval: the instantaneous derivatives do not
  // belong to it.
  if (to.order() == 0 || to.source() != nullptr || s.output_desc(o).derivative_order == 0 ||
      s.multirate().options().smoothing)
    return {};
  return s.output_derivatives(o);
}

bool outputs_finite(const subsystem& s) noexcept {
  for (double v : s.outputs())
    if (!std::isfinite(v)) return false;
  return true;
}

void configure_multirate(subsystem& s, const multirate_options& o, duration h, duration H) {
  s.multirate().configure(o, h, s.output_count());
  s.set_step_size(o.non_matching ? H : h);
}

std::vector<std::size_t> sync_order(const system& sys, sync mode, std::vector<std::size_t> base) {
  std::stable_sort(base.begin(), base.end(), [&](std::size_t a, std::size_t b) {
    const auto ha = internal_step(sys.at(a)), hb = internal_step(sys.at(b));
    return mode == sync::slowest_first ? ha > hb : ha < hb;
  });
  return base;
}

}  // namespace cosim::scheme
