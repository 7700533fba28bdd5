#pragma once
// Typed ports. A port carries one scalar with a physical unit and a role; connections
// are only allowed between ports of the same unit.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "cosim/runtime/dense_history.hpp"
#include "cosim/runtime/extrapolation.hpp"
#include "cosim/runtime/time.hpp"

namespace cosim {

/// Role of a port in a power bond (000 Sect. 3.1): effort (force, pressure) or flow
/// (velocity, volume flow). Plain signals carry no power.
enum class port_role { signal, effort, flow };

struct port_desc {
  std::string name;
  std::string unit;
  port_role role = port_role::signal;
  /// Output only: its value at t depends on the inputs at t (direct feedthrough, 000 Eq.
  /// (24)), so the system can find algebraic loops a non-iterative scheme cannot order.
  bool feedthrough = false;
  /// Output only: the subsystem gives the output's time derivatives up to this order at
  /// every communication point (subsystem::output_derivatives; an FMU's
  /// maxOutputDerivativeOrder), so extrapolating consumers use them, not past samples.
  int derivative_order = 0;
};

/// Whether an output may feed an input: equal units, or one side without a declared unit
/// (an FMU variable with no unit says nothing about it, so it cannot contradict the other).
[[nodiscard]] inline bool units_compatible(const std::string& out, const std::string& in) noexcept {
  return out == in || out.empty() || in.empty();
}

/// A deterministic function of simulation time (a manoeuvre such as 003 Eq. (19)).
/// Bound to an input port it is evaluated exactly at every sub-step, like an input the
/// subsystem computes itself.
class signal_source {
 public:
  signal_source() = default;
  signal_source(const signal_source&) = delete;
  signal_source& operator=(const signal_source&) = delete;
  virtual ~signal_source() = default;
  [[nodiscard]] virtual double value(time_point t) const noexcept = 0;
  /// out[j] = value(t + j h) for j = 0..n-1: a subsystem's sub-steps in one virtual call.
  /// Overrides must give exactly value()'s numbers.
  virtual void values(time_point t, duration h, std::size_t n, double* out) const noexcept {
    for (std::size_t j = 0; j < n; ++j) out[j] = value(t + static_cast<std::int64_t>(j) * h);
  }
};

/// Holds the samples received at communication points and answers value_at(t) with the
/// configured extrapolation, so extrapolation lives in one place for every executor.
class input_port {
 public:
  explicit input_port(port_desc desc) : desc_(std::move(desc)) {}

  [[nodiscard]] const port_desc& desc() const noexcept { return desc_; }

  void set_order(int order) noexcept {
    order_ = order;
    held_ = compute_held();
  }
  [[nodiscard]] int order() const noexcept { return order_; }

  void bind_source(const signal_source* source) noexcept {
    source_ = source;
    held_ = compute_held();
  }
  [[nodiscard]] const signal_source* source() const noexcept { return source_; }
  [[nodiscard]] bool connected() const noexcept { return connected_ || source_ != nullptr; }
  void mark_connected() noexcept { connected_ = true; }
  /// Fed by nothing on purpose: the subsystem keeps the input at its own start value (an
  /// FMU input nothing feeds). system::check_complete accepts such an input.
  void keep_start() noexcept { keeps_start_ = true; }
  [[nodiscard]] bool keeps_start() const noexcept { return keeps_start_; }

  /// Start value before the first exchange (e.g. from the equilibrium initialisation).
  void set_initial(time_point t0, double value) noexcept {
    history_.reset();
    history_.push(t0, value);
    dense_.reset();
    if (dense_.enabled()) dense_.push(t0, value);
  }

  /// Keep the newest n samples and evaluate on 004's polynomial points (dense_history.hpp);
  /// for a slow consumer of fast-step samples. Setup only (allocates).
  void keep_dense_history(std::size_t n, dense_points p = dense_points::first_after) {
    dense_.reserve(n);
    dense_.set_points(p);
    held_ = compute_held();
  }

  void receive(time_point t, double value) noexcept {
    if (dense_.enabled()) dense_.push(t, value);
    if (history_.size() > 0 && history_.newest_time() >= t) {
      // Re-delivery at the same time (the initial exchange) replaces the value.
      history_.replace_newest(value);
      return;
    }
    history_.push(t, value);
  }
  /// With the producer's derivatives d^i/dt^i (i = 1..derivs.size()) at t: an extrapolating
  /// port then evaluates their Taylor polynomial.
  void receive(time_point t, double value, std::span<const double> derivs) noexcept {
    receive(t, value);
    history_.set_newest_derivatives(derivs.data(), static_cast<int>(derivs.size()));
  }

  /// True if value_at(t) is the newest sample for every t until the next receive()
  /// (zero-order hold, no signal source, no dense history: 004's O0 there takes the first
  /// sample after t).
  [[nodiscard]] bool held() const noexcept { return held_; }

  [[nodiscard]] double value_at(time_point t) const noexcept {
    // The common case small enough to inline at every caller; the rest in extrapolated_at.
    if (held_) {
      const double v = history_.newest();  // history_.value_at(t, 0) with one check
      return corrected_ ? v + correction_ : v;
    }
    return extrapolated_at(t);
  }
  /// out[j] = value_at(t + j h) for j = 0..n-1; a signal source answers in one call.
  void values_at(time_point t, duration h, std::size_t n, double* out) const noexcept {
    if (source_ != nullptr) {
      source_->values(t, h, n, out);
      return;
    }
    for (std::size_t j = 0; j < n; ++j) out[j] = value_at(t + static_cast<std::int64_t>(j) * h);
  }
  /// The extrapolated value without the energy correction.
  [[nodiscard]] double uncorrected_value_at(time_point t) const noexcept {
    if (dense_.enabled() && history_.newest_derivatives() == 0) return dense_.value_at(t, order_);
    return history_.value_at(t, order_);
  }
  /// Energy correction (energy_correction.hpp): added to the value over the current
  /// communication interval.
  void set_correction(double c) noexcept {
    correction_ = c;
    corrected_ = true;
  }
  [[nodiscard]] double correction() const noexcept { return correction_; }

  /// Feedthrough correction (feedthrough_correction.hpp). Term k: the producer's capture
  /// capture[k] (its partial derivative d_k of this input's output with respect to one of its
  /// own inputs, and the value u_k that input had) and this consumer's output own[k] that
  /// feeds that producer input. Setup only.
  static constexpr std::size_t max_feedthrough_terms = 4;
  struct feedthrough_terms {
    std::size_t count = 0;
    std::array<std::size_t, max_feedthrough_terms> capture{};
    std::array<std::size_t, max_feedthrough_terms> own{};
  };
  void set_feedthrough(const feedthrough_terms& f) noexcept { feedthrough_ = f; }
  [[nodiscard]] const feedthrough_terms& feedthrough() const noexcept { return feedthrough_; }
  /// The d_k and u_k that came with the newest sample; apply_feedthrough() uses them once.
  void receive_partials(const double* d, const double* u) noexcept {
    std::copy_n(d, feedthrough_.count, partial_d_.begin());
    std::copy_n(u, feedthrough_.count, partial_u_.begin());
    partials_pending_ = true;
  }
  /// The newest sample u becomes u + sum_k d_k (y_k - u_k), y_k = own_outputs[own[k]]: the
  /// producer's output as if it had seen this consumer's outputs now, to first order.
  void apply_feedthrough(std::span<const double> own_outputs) noexcept {
    if (!partials_pending_ || history_.size() == 0) return;
    partials_pending_ = false;
    double v = history_.newest();
    for (std::size_t k = 0; k < feedthrough_.count; ++k)
      v += partial_d_[k] * (own_outputs[feedthrough_.own[k]] - partial_u_[k]);
    history_.replace_newest(v);
  }

  [[nodiscard]] const sample_history& history() const noexcept { return history_; }

 private:
  [[nodiscard]] double extrapolated_at(time_point t) const noexcept {
    if (source_ != nullptr) return source_->value(t);
    if (dense_.enabled() && history_.newest_derivatives() == 0) {
      const double d = dense_.value_at(t, order_);
      return corrected_ ? d + correction_ : d;
    }
    const double v = history_.value_at(t, order_);
    return corrected_ ? v + correction_ : v;  // branch: off leaves every value bit for bit
  }
  [[nodiscard]] bool compute_held() const noexcept {
    return source_ == nullptr && order_ == 0 && !dense_.enabled();
  }

  port_desc desc_;
  sample_history history_;
  dense_history dense_;
  const signal_source* source_ = nullptr;
  int order_ = 0;
  double correction_ = 0.0;
  bool corrected_ = false;
  bool held_ = true;  // compute_held(), kept by the setters: value_at's common case
  bool connected_ = false;
  bool keeps_start_ = false;
  bool partials_pending_ = false;
  feedthrough_terms feedthrough_;
  std::array<double, max_feedthrough_terms> partial_d_{};
  std::array<double, max_feedthrough_terms> partial_u_{};
};

}  // namespace cosim
