// The run of an FMU subsystem (see fmu_subsystem.hpp): inputs set and outputs fetched in one
// call per type, the steps through the version's adapter (fmu_instance.hpp), output
// derivatives, and why the run stops. The per-step path lives in this file so that it inlines.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>

#include "cosim/fmi/fmu_subsystem.hpp"
#include "fmu_instance.hpp"
#include "fmu_text.hpp"
#include "fmu_typed_values.hpp"

namespace cosim::fmi {

namespace {

// Half a tick of the runtime's nanosecond clock: an FMU time this close to a communication
// point is that point.
constexpr double half_tick_s = 0.5e-9;

// Equal bit for bit (a double's NaN and -0.0 count as changes).
template <class T>
bool same_bits(T a, T b) noexcept {
  if constexpr (std::is_floating_point_v<T>)
    return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
  else
    return a == b;
}

// Puts the inputs of `g` whose value (value_of(port)) differs bitwise from the last sent
// (every one when `all`) into vrs / buf, and remembers them in `last`; returns how many.
template <class Group, class T, class ValueOf>
std::size_t collect_changed(const Group& g, std::vector<T>& last, T* buf, std::uint32_t* vrs,
                            bool all, ValueOf value_of) noexcept {
  std::size_t n = 0;
  for (std::size_t j = 0; j < g.vrs.size(); ++j) {
    const T v = value_of(g.slots[j]);
    if (!all && same_bits(v, last[j])) continue;
    last[j] = v;
    vrs[n] = g.vrs[j];
    buf[n++] = v;
  }
  return n;
}

}  // namespace

void fmu_subsystem::build_fetch_groups() {
  auto pick = [&](const value_group& all, value_group& out) {
    out = {};
    for (std::size_t j = 0; j < all.vrs.size(); ++j)
      if (fetch_[all.slots[j]] != 0) {
        out.vrs.push_back(all.vrs[j]);
        out.slots.push_back(all.slots[j]);
      }
  };
  pick(all_real_, out_real_);
  pick(all_int_, out_int_);
  pick(all_bool_, out_bool_);
  out_other_.clear();
  for (const typed_group& all : all_other_) {
    typed_group g;
    g.type = all.type;
    for (std::size_t j = 0; j < all.vrs.size(); ++j)
      if (fetch_[all.slots[j]] != 0) {
        g.vrs.push_back(all.vrs[j]);
        g.slots.push_back(all.slots[j]);
      }
    if (g.vrs.empty()) continue;
    g.size_buffers();
    out_other_.push_back(std::move(g));
  }
  real_direct_ = !out_real_.slots.empty();
  for (std::size_t j = 1; j < out_real_.slots.size(); ++j)
    real_direct_ = real_direct_ && out_real_.slots[j] == out_real_.slots[0] + j;
  reals_only_direct_ =
      real_direct_ && out_int_.vrs.empty() && out_bool_.vrs.empty() && out_other_.empty();
  out_real_buf_.assign(out_real_.vrs.size(), 0.0);
  out_int_buf_.assign(out_int_.vrs.size(), 0);
  out_bool_buf_.assign(out_bool_.vrs.size(), 0);
  inst_->reserve_booleans(out_bool_.vrs.size());
}

void fmu_subsystem::do_record_variable(std::size_t v) {
  // variables() and values_ share their order (one variable per slot).
  if (v >= fetch_.size() || fetch_[v] != 0) return;
  fetch_[v] = 1;
  build_fetch_groups();
}

void fmu_subsystem::do_initialize(time_point t0) {
  if (stepped_) throw_error("an FMU subsystem runs once; build a new system to run again");
  t0_ = t0;
  start_experiment(std::nullopt);
  const model_description& md = fmu_->file().md;
  in_real_ = {};
  in_int_ = {};
  in_bool_ = {};
  in_other_.clear();
  input_group_.assign(input_count(), {0, 0});
  for (std::size_t i = 0; i < input_count(); ++i) {
    const variable& v = md.variables[input_var_[i]];
    // value_at() needs a sample; connected inputs get theirs in the start-up exchange.
    input(i).set_initial(t0, v.start.value_or(0.0));
    if (!input(i).connected()) continue;  // keeps its start value inside the FMU
    if (is_typed_other(v.type)) {
      add_typed(in_other_, v.type, v.value_reference, i);
      for (std::size_t k = 0; k < in_other_.size(); ++k)
        if (in_other_[k].type == v.type) input_group_[i] = {4 + k, in_other_[k].vrs.size() - 1};
      continue;
    }
    value_group& g = v.type == var_type::real      ? in_real_
                     : v.type == var_type::integer ? in_int_
                                                   : in_bool_;
    input_group_[i] = {v.type == var_type::real      ? 1
                       : v.type == var_type::integer ? 2
                                                     : 3,
                       g.vrs.size()};
    g.vrs.push_back(v.value_reference);
    g.slots.push_back(i);
  }
  in_real_buf_.assign(in_real_.vrs.size(), 0.0);
  in_int_buf_.assign(in_int_.vrs.size(), 0);
  in_bool_buf_.assign(in_bool_.vrs.size(), 0);
  inst_->reserve_booleans(in_bool_.vrs.size());
  in_real_last_.assign(in_real_.vrs.size(), 0.0);
  in_int_last_.assign(in_int_.vrs.size(), 0);
  in_bool_last_.assign(in_bool_.vrs.size(), 0);
  for (typed_group& g : in_other_) g.size_buffers();
  in_other_values_.assign(input_count(), 0.0);
  send_vrs_.assign(std::max({in_real_.vrs.size(), in_int_.vrs.size(), in_bool_.vrs.size()}), 0);
  inputs_sent_ = false;
  inputs_held_ = true;
  any_input_ = false;
  for (std::size_t i = 0; i < input_count(); ++i) {
    if (!input(i).connected()) continue;
    any_input_ = true;
    if (!input(i).held()) inputs_held_ = false;
  }
  stop_at_ = run_length_ ? t0 + *run_length_ : time_point::max();
}

double fmu_subsystem::do_received_input(std::size_t i, time_point t) const noexcept {
  const auto [group, j] = i < input_group_.size() ? input_group_[i] : std::pair{0UL, 0UL};
  // Before the first set, what the first set at t sends.
  if (group == 0 || !inputs_sent_) {
    const double v = input(i).value_at(t);
    if (group == 2) return static_cast<double>(to_int32(v));
    if (group == 3) return v >= 0.5 ? 1.0 : 0.0;
    if (group >= 4) return inst_->typed_as_sent(in_other_[group - 4].type, v);
    return v;
  }
  switch (group) {
    case 1:
      return in_real_last_[j];
    case 2:
      return static_cast<double>(in_int_last_[j]);
    case 3:
      return in_bool_last_[j] != 0 ? 1.0 : 0.0;
    default:
      return inst_->typed_as_sent(in_other_[group - 4].type, in_other_[group - 4].last[j]);
  }
}

void fmu_subsystem::do_start(stop_source& stop) {
  run_stop_ = &stop;
  // A failure in the start-up exchange (update_outputs at t0) stops the run before it starts.
  if (stop_ != fmu_stop::none) raise_stop();
}

void fmu_subsystem::do_stop(bool /*fail_safe*/) noexcept {
  run_stop_ = nullptr;
  try {
    drain_log();  // off the real-time threads: the run is over
  } catch (...) {
    // Printing the FMU's messages must not turn a finished run into a failed one.
  }
}

void fmu_subsystem::raise_stop() noexcept {
  if (run_stop_ == nullptr) return;
  (void)run_stop_->raise(
      // Only the model's own end completes the run; a discarded step did not.
      stop_ == fmu_stop::terminated || stop_ == fmu_stop::stop_time ? stop_cause::model_end
                                                                    : stop_cause::model_error,
      0, stop_text_.data());
}

bool fmu_subsystem::fail(fmu_stop kind, const char* what, int status, double t) noexcept {
  if (stop_ != fmu_stop::none) return false;
  stop_ = kind;
  switch (kind) {
    case fmu_stop::terminated: {
      const double from = fmu_time(step_from_);
      // Past the start of the macro step but short of its end: that step is not complete.
      const bool inside = !end_pending_ && started_ && t > from + half_tick_s;
      std::snprintf(stop_text_.data(), stop_text_.size(),
                    "%s (subsystem %s): the FMU ended the simulation at t = %s s (%s)%s%s%s%s%s",
                    where_.c_str(), name().c_str(), num_text(t).data(), what,
                    inside ? ", inside the macro step from t = " : "",
                    inside ? num_text(from).data() : "", inside ? " s to " : "",
                    inside ? num_text(fmu_time(step_to_)).data() : "",
                    inside ? " s, which it did not complete: the run ends at that step's start, "
                             "its last communication point"
                           : "");
      break;
    }
    case fmu_stop::stop_time:
      std::snprintf(stop_text_.data(), stop_text_.size(),
                    "%s (subsystem %s): %s; no doStep past the experiment's stop time t = %s s "
                    "is issued",
                    where_.c_str(), name().c_str(), what, num_text(stop_fmu_.value_or(0.0)).data());
      break;
    case fmu_stop::none:
    case fmu_stop::discarded:
    case fmu_stop::failed:
      std::snprintf(stop_text_.data(), stop_text_.size(),
                    "%s (subsystem %s): %s at t = %s s%s%s%s%s%s", where_.c_str(), name().c_str(),
                    what, num_text(t).data(), status == no_fmu_status ? "" : " returned ",
                    status == no_fmu_status ? "" : inst_->status_text(status),
                    // FMI 2.0 Sect. 4.2.3, FMI 3.0 Sect. 4.2.1: a discarded step without
                    // the request to terminate is for the importer to retry shorter.
                    kind == fmu_stop::discarded
                        ? " without asking to end the simulation: the FMU could not complete "
                          "the communication step, and this runtime does not retry shorter "
                          "steps (a smaller run.macro_step, or this subsystem's step, may help)"
                        : "",
                    last_error_text_[0] != '\0' ? "; the FMU logged: " : "",
                    last_error_text_.data());
      break;
  }
  if (!end_pending_) raise_stop();
  return false;
}

[[gnu::cold]] bool fmu_subsystem::end_simulation(const char* what, int status,
                                                 double last) noexcept {
  phase_ = phase::terminated;
  // Only in a run's step (not in initialisation), and only at the end of the whole macro
  // step: an FMU that ended after one of its k steps did not complete the macro step.
  end_pending_ = started_ && stop_ == fmu_stop::none && stepped_ &&
                 std::abs(last - fmu_time(step_to_)) <= half_tick_s;
  (void)fail(fmu_stop::terminated, what, status, last);
  return end_pending_;
}

[[gnu::cold, gnu::noinline]] bool fmu_subsystem::refuse_step() noexcept {
  if (end_pending_) {
    end_pending_ = false;
    raise_stop();
  }
  return false;
}

void fmu_subsystem::set_inputs(time_point t) noexcept {
  if (phase_ != phase::initialized || stop_ != fmu_stop::none) return;
  // Only values that differ (bitwise: NaN and -0.0 count) from the last set go to the FMU,
  // all changed ones of a type in one call; the FMU keeps an input's value until it is set.
  const bool all = !inputs_sent_;
  int st = 0;
  const char* call = "";
  std::size_t n = collect_changed(in_real_, in_real_last_, in_real_buf_.data(), send_vrs_.data(),
                                  all, [&](std::size_t i) { return in(i, t); });
  if (n > 0) {
    call = names_->set_real_inputs;
    st = inst_->set_real(send_vrs_.data(), n, in_real_buf_.data());
  }
  if (st <= fmi2Warning) {
    n = collect_changed(in_int_, in_int_last_, in_int_buf_.data(), send_vrs_.data(), all,
                        [&](std::size_t i) { return to_int32(in(i, t)); });
    if (n > 0) {
      call = names_->set_integer_inputs;
      st = inst_->set_integer(send_vrs_.data(), n, in_int_buf_.data());
    }
  }
  if (st <= fmi2Warning) {
    // Rounded to the nearest of false (0) and true (1), as the integer types round and
    // saturate: 0.4 is false, -3 false, 0.5 and above true.
    n = collect_changed(in_bool_, in_bool_last_, in_bool_buf_.data(), send_vrs_.data(), all,
                        [&](std::size_t i) { return static_cast<char>(in(i, t) >= 0.5 ? 1 : 0); });
    if (n > 0) {
      call = names_->set_boolean_inputs;
      st = inst_->set_boolean(send_vrs_.data(), n, in_bool_buf_.data());
    }
  }
  for (std::size_t k = 0; st <= fmi2Warning && k < in_other_.size(); ++k) {
    typed_group& g = in_other_[k];
    for (const std::size_t i : g.slots) in_other_values_[i] = in(i, t);
    st = inst_->set_typed(g, in_other_values_.data(), all, call);
  }
  if (st > fmi2Warning) {
    (void)fail_call(call, st, fmu_time(t));
    return;
  }
  inputs_sent_ = true;
}

inline bool fmu_subsystem::get_values() noexcept {
  // The common case, reals only and consecutive: one call straight into values_.
  if (reals_only_direct_) [[likely]] {
    const std::size_t n = out_real_.vrs.size();
    double* dst = &values_[out_real_.slots[0]];
    const int st = inst_->get_real(out_real_.vrs.data(), n, dst);
    if (st <= fmi2Warning) [[likely]]
      return true;
  }
  return get_values_all();
}

[[gnu::noinline]] bool fmu_subsystem::get_values_all() noexcept {
  int st = 0;
  const char* call = "";
  if (!out_real_.vrs.empty()) {
    call = names_->get_real;
    const std::size_t n = out_real_.vrs.size();
    // Straight into values_ when the slots are consecutive (no local left out in between).
    double* dst = real_direct_ ? &values_[out_real_.slots[0]] : out_real_buf_.data();
    st = inst_->get_real(out_real_.vrs.data(), n, dst);
    if (st <= fmi2Warning && !real_direct_)
      for (std::size_t j = 0; j < n; ++j) values_[out_real_.slots[j]] = out_real_buf_[j];
  }
  if (st <= fmi2Warning && !out_int_.vrs.empty()) {
    call = names_->get_integer;
    st = inst_->get_integer(out_int_.vrs.data(), out_int_.vrs.size(), out_int_buf_.data());
    if (st <= fmi2Warning)
      for (std::size_t j = 0; j < out_int_.slots.size(); ++j)
        values_[out_int_.slots[j]] = static_cast<double>(out_int_buf_[j]);
  }
  if (st <= fmi2Warning && !out_bool_.vrs.empty()) {
    const std::size_t n = out_bool_.vrs.size();
    call = names_->get_boolean;
    st = inst_->get_boolean(out_bool_.vrs.data(), n, out_bool_buf_.data());
    if (st <= fmi2Warning)
      for (std::size_t j = 0; j < n; ++j)
        values_[out_bool_.slots[j]] = out_bool_buf_[j] != 0 ? 1.0 : 0.0;
  }
  for (std::size_t k = 0; st <= fmi2Warning && k < out_other_.size(); ++k)
    st = inst_->get_typed(out_other_[k], values_.data(), call);
  if (st > fmi2Warning) return fail_call(call, st, fmu_time(comm_t_));
  return true;
}

void fmu_subsystem::do_update_outputs(time_point t) noexcept {
  if (phase_ != phase::initialized && phase_ != phase::terminated) return;
  // FMI co-simulation: outputs at a communication point reflect the inputs set there, so a
  // feedthrough output sees in(i, t).
  if (any_feedthrough_ && any_input_) set_inputs(t);
  if (phase_ != phase::initialized && phase_ != phase::terminated) return;
  der_fetched_ = false;  // of the previous communication point
  comm_t_ = t;
  if (!get_values()) [[unlikely]] {
    // No values at t: the previous ones must not pass for them. Non-finite outputs fail the
    // step that led here, so the run ends at its start (the stop names the call).
    for (std::size_t i = 0; i < output_slot_.size(); ++i)
      set_output(i, std::numeric_limits<double>::quiet_NaN());
    return;
  }
  for (std::size_t i = 0; i < output_slot_.size(); ++i) set_output(i, values_[output_slot_[i]]);
}

std::span<const double> fmu_subsystem::do_output_derivatives(std::size_t o) noexcept {
  if (o >= der_offset_.size() || der_offset_[o] == npos) return {};
  if (!der_fetched_) {
    // All of them in one call, at the first consumer that asks after update_outputs.
    if ((phase_ != phase::initialized && phase_ != phase::terminated) ||
        (stop_ != fmu_stop::none && !end_pending_))
      return {};
    const int st = inst_->get_output_derivatives(der_vrs_.data(), der_vrs_.size(),
                                                 der_orders_.data(), der_values_.data());
    if (st > fmi2Warning) {
      (void)fail_call(names_->get_output_derivatives, st, fmu_time(comm_t_));
      return {};
    }
    der_fetched_ = true;
  }
  return {der_values_.data() + der_offset_[o], static_cast<std::size_t>(deriv_order_)};
}

bool fmu_subsystem::do_step(time_point t, duration h) noexcept {
  return do_steps(t, h, 1);
}

bool fmu_subsystem::do_steps(time_point t, duration h, std::int64_t k) noexcept {
  stepped_ = true;
  if (k <= 0) return true;
  if (phase_ != phase::initialized || stop_ != fmu_stop::none) [[unlikely]]
    return refuse_step();
  step_from_ = t;
  step_to_ = t + k * h;
  for (std::int64_t j = 0; j < k; ++j) {
    const time_point tj = t + j * h;
    if (tj + h > stop_at_) [[unlikely]]
      return fail_stop_time(tj, h);
    // Held inputs are the same at every step of the k: set (if changed) once.
    if (any_input_ && (j == 0 || !inputs_held_)) {
      set_inputs(tj);
      if (stop_ != fmu_stop::none) return false;
    }
    // h from the two points, not a constant: tc + hs is then the next step's tc exactly.
    const double tc = fmu_time(tj), hs = fmu_time(tj + h) - tc;
    if (!inst_->step(tc, hs, rollback_)) return false;
  }
  return true;
}

[[gnu::cold, gnu::noinline]] bool fmu_subsystem::fail_stop_time(time_point t, duration h) noexcept {
  const double tc = fmu_time(t), hs = fmu_time(t + h) - tc;
  char what[160];
  std::snprintf(what, sizeof what, "the step from t = %s s to %s s", num_text(tc).data(),
                num_text(tc + hs).data());
  return fail(fmu_stop::stop_time, what, 0, tc);
}

}  // namespace cosim::fmi
