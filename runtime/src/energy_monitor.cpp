#include "cosim/runtime/energy_monitor.hpp"

#include <cmath>

#include "cosim/runtime/error.hpp"

namespace cosim {

energy_monitor::energy_monitor(system& sys, output_locator locate, void* ctx) {
  const auto& conns = sys.connections();
  for (std::size_t b = 0; b < sys.bonds().size(); ++b) {
    const power_bond& bond = sys.bonds()[b];
    bond_totals_.push_back({bond.name, 0.0, 0.0});
    for (const bond_term& bt : bond.terms) {
      const connection& e = conns[bt.effort];
      const connection& f = conns[bt.flow];
      term t{};
      t.bond = b;
      t.gain = bt.gain;
      t.effort_out = locate ? locate(ctx, e.from, e.output) : &sys.at(e.from).outputs()[e.output];
      t.flow_out = locate ? locate(ctx, f.from, f.output) : &sys.at(f.from).outputs()[f.output];
      t.effort_consumer = e.to;
      t.effort_input = e.input;
      t.flow_consumer = f.to;
      t.flow_input = f.input;
      terms_.push_back(t);
      if (sys.at(e.to).input(e.input).order() > 0 || sys.at(f.to).input(f.input).order() > 0)
        trapezoid_ = true;
    }
  }
  captures_.resize(sys.size());
  for (std::size_t k = 0; k < terms_.size(); ++k) {
    const term& tm = terms_[k];
    // terms_ is complete: the pointers into it stay valid.
    captures_[tm.effort_consumer].push_back(
        {&terms_[k].effort_used, &sys.at(tm.effort_consumer).input(tm.effort_input)});
    captures_[tm.flow_consumer].push_back(
        {&terms_[k].flow_used, &sys.at(tm.flow_consumer).input(tm.flow_input)});
  }
  for (std::size_t i = 0; i < sys.size(); ++i)
    COSIM_INPUT_CHECK(capture_count(i) <= max_captures, errc::model,
                      "subsystem '" + sys.at(i).name() + "' has too many power-bond inputs");
  bond_dP_prev_.assign(bond_totals_.size(), 0.0);
}

// Captures of subsystem s are ordered by term, effort before flow.
std::size_t energy_monitor::capture_count(std::size_t s) const noexcept {
  return captures_[s].size();
}

void energy_monitor::read_captures(std::size_t s, time_point t, double* out) const noexcept {
  for (const capture& c : captures_[s]) *out++ = c.port->value_at(t);
}

void energy_monitor::store_captures(std::size_t s, const double* values) noexcept {
  for (const capture& c : captures_[s]) *c.used = *values++;
}

void energy_monitor::close_step(duration H) noexcept {
  const double h = to_seconds(H);
  dP_ = 0.0;
  dE_ = 0.0;
  // A bond's terms are consecutive in terms_ (built bond by bond): one pass, no zeroing.
  std::size_t k = 0;
  for (std::size_t b = 0; b < bond_totals_.size(); ++b) {
    double dP = 0.0;
    for (; k < terms_.size() && terms_[k].bond == b; ++k) {
      const term& tm = terms_[k];
      // Power received by the flow producer minus power sent by the effort producer.
      dP += tm.gain * (tm.effort_used * *tm.flow_out - *tm.effort_out * tm.flow_used);
    }
    const double dE = trapezoid_ ? 0.5 * h * (bond_dP_prev_[b] + dP)  // 002 Eq. (11)
                                 : h * dP;                            // 002 Eq. (10)
    bond_dP_prev_[b] = dP;
    bond_totals_[b].sum_abs_dE += std::abs(dE);
    if (std::abs(dP) > bond_totals_[b].max_abs_dP) bond_totals_[b].max_abs_dP = std::abs(dP);
    dP_ += dP;
    dE_ += dE;
    sum_abs_dE_ += std::abs(dE);
  }
  if (std::abs(dP_) > max_abs_dP_ || std::isnan(dP_)) max_abs_dP_ = std::abs(dP_);
}

}  // namespace cosim
