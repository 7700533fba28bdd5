#pragma once
// A co-simulation unit with its own solver and step size.
//
// Call order: construct (describes ports and variables) → initialize(t0) →
// update_outputs(t0) → start(stop) → repeat { step(t, h) k times; update_outputs(t + H) }
// → stop(fail_safe).
//
// step() advances the internal state by one internal step h, reading inputs through
// in(i, t), which applies the port's extrapolation. update_outputs(t) evaluates the
// outputs at t from the state and, for subsystems with direct feedthrough, from the
// inputs extrapolated to t (000 Eq. (24)). Both are noexcept and must not allocate:
// they form the real-time path.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cosim/runtime/energy_correction.hpp"
#include "cosim/runtime/multirate.hpp"
#include "cosim/runtime/port.hpp"
#include "cosim/runtime/stop_source.hpp"
#include "cosim/runtime/time.hpp"

namespace cosim {

class json_writer;

/// A named internal quantity that can be recorded (state, derived value). Its value is
/// current after update_outputs(); a subsystem may keep only the variables announced through
/// record_variable() current (an FMU fetches each value with a call).
struct variable_desc {
  std::string name;
  std::string unit;
  const double* value = nullptr;
};

class subsystem {
 public:
  explicit subsystem(std::string name) : name_(std::move(name)) {}
  subsystem(const subsystem&) = delete;
  subsystem& operator=(const subsystem&) = delete;
  virtual ~subsystem() = default;

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// False if step()/update_outputs() are not known to be allocation-free and bounded in time
  /// (e.g. an imported FMU): its timing in realtime mode is measured, not guaranteed.
  [[nodiscard]] virtual bool realtime_safe() const noexcept { return true; }

  [[nodiscard]] std::size_t input_count() const noexcept { return inputs_.size(); }
  [[nodiscard]] std::size_t output_count() const noexcept { return outputs_.size(); }
  [[nodiscard]] input_port& input(std::size_t i) noexcept { return inputs_[i]; }
  [[nodiscard]] const input_port& input(std::size_t i) const noexcept { return inputs_[i]; }
  [[nodiscard]] const port_desc& output_desc(std::size_t i) const noexcept { return outputs_[i]; }
  [[nodiscard]] double output(std::size_t i) const noexcept { return output_values_[i]; }
  [[nodiscard]] std::span<const double> outputs() const noexcept { return output_values_; }
  [[nodiscard]] std::span<const variable_desc> variables() const noexcept { return variables_; }

  /// Port lookup by name; npos when absent.
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  [[nodiscard]] std::size_t find_input(const std::string& port) const noexcept;
  [[nodiscard]] std::size_t find_output(const std::string& port) const noexcept;

  /// Internal step size h; the scheme requires it to divide the communication step.
  [[nodiscard]] duration step_size() const noexcept { return step_size_; }
  void set_step_size(duration h) noexcept { step_size_ = h; }
  /// H / step_size(), remembered for the last H: saves an integer division per macro step
  /// on the real-time path.
  [[nodiscard]] std::int64_t steps_per(duration H) noexcept {
    if (H != steps_H_ || step_size_ != steps_h_) {
      steps_H_ = H;
      steps_h_ = step_size_;
      steps_k_ = H / step_size_;
    }
    return steps_k_;
  }

  /// Multirate interface options (smoothing, non-matching grid) used by scheme::advance.
  [[nodiscard]] multirate_state& multirate() noexcept { return multirate_; }
  [[nodiscard]] const multirate_state& multirate() const noexcept { return multirate_; }

  /// Energy-corrected inputs (energy_correction.hpp), set up before the run.
  [[nodiscard]] std::span<energy_correction> corrections() noexcept { return corrections_; }
  [[nodiscard]] std::span<const energy_correction> corrections() const noexcept {
    return corrections_;
  }
  void add_correction(const energy_correction& c) { corrections_.push_back(c); }

  /// Feedthrough correction (feedthrough_correction.hpp), set up before the run. As a
  /// producer: the (output, input) pairs whose partial derivative and input value
  /// capture_partials() keeps at every communication point. As a consumer: the inputs whose
  /// newest sample apply_feedthrough() corrects at the start of every interval.
  struct partial_capture {
    std::size_t output = 0;
    std::size_t input = 0;
    double d = 0.0;  // d output / d input
    double u = 0.0;  // the input's value at that time
  };
  /// Index of the capture of (o, i), added if new. Setup only (allocates).
  std::size_t add_partial_capture(std::size_t o, std::size_t i);
  [[nodiscard]] std::span<const partial_capture> partial_captures() const noexcept {
    return partial_captures_;
  }
  void add_feedthrough_input(std::size_t i) { feedthrough_inputs_.push_back(i); }
  /// Called right after update_outputs(t), on the thread that stepped the subsystem. False
  /// if a derivative is not finite (the run then stops as for a non-finite output).
  bool capture_partials(time_point t) noexcept {
    bool finite = true;
    for (partial_capture& p : partial_captures_) {
      p.d = output_partial(p.output, p.input);
      p.u = inputs_[p.input].value_at(t);
      finite = finite && std::isfinite(p.d);
    }
    return finite;
  }
  /// At the start of an interval, after the samples for its start time arrived.
  void apply_feedthrough() noexcept {
    for (std::size_t i : feedthrough_inputs_) inputs_[i].apply_feedthrough(output_values_);
  }
  /// True if scheme::advance has anything beyond the plain steps to do: energy or
  /// feedthrough corrections, partials to capture or inputs to record.
  [[nodiscard]] bool has_interval_hooks() const noexcept {
    return !corrections_.empty() || !partial_captures_.empty() || !feedthrough_inputs_.empty() ||
           !recorded_inputs_.empty();
  }

  /// Whether output_partial(o, i) gives d(output o)/d(input i) (setup time). Default: no.
  [[nodiscard]] virtual bool provides_partial(std::size_t /*o*/, std::size_t /*i*/) const noexcept {
    return false;
  }
  /// Why provides_partial(o, i) is false, for the refusal; "" if there is nothing to add.
  [[nodiscard]] virtual std::string partial_refusal(std::size_t /*o*/, std::size_t /*i*/) const {
    return {};
  }
  /// d(output o)/d(input i) at the last update_outputs() time, for a pair provides_partial()
  /// accepts: the direct feedthrough (000 Eq. (24)) the feedthrough correction removes.
  /// Called on the subsystem's own thread; allocation-free. NaN if it could not be had.
  [[nodiscard]] double output_partial(std::size_t o, std::size_t i) noexcept {
    return do_output_partial(o, i);
  }

  void initialize(time_point t0) {
    multirate_.reset(t0);
    for (energy_correction& c : corrections_) {
      c = energy_correction{c.input, c.method, c.terms, c.conjugate, c.gain};
      inputs_[c.input].set_correction(0.0);
    }
    do_initialize(t0);
  }
  /// Advance the state from t to t + h. Returns false if the state became invalid.
  bool step(time_point t, duration h) noexcept { return do_step(t, h); }
  /// k internal steps of h from t, stopping at the first that fails: exactly k calls of
  /// step(). One virtual call per communication step lets a subsystem hoist what is
  /// constant over it (e.g. held ZOH inputs) out of its inner loop.
  bool steps(time_point t, duration h, std::int64_t k) noexcept { return do_steps(t, h, k); }
  void update_outputs(time_point t) noexcept { do_update_outputs(t); }
  /// Output o's time derivatives of order 1..output_desc(o).derivative_order at the last
  /// update_outputs() time. Called (on the thread that stepped the subsystem) only for
  /// outputs that declare an order, right after update_outputs, when a consumer
  /// extrapolates; may fetch them then (an FMU). Empty if unavailable.
  [[nodiscard]] std::span<const double> output_derivatives(std::size_t o) noexcept {
    return do_output_derivatives(o);
  }
  /// Variable v (index into variables()) is recorded: system::add_probe announces it before
  /// initialize(). Default: every variable is always current.
  void record_variable(std::size_t v) { do_record_variable(v); }
  /// Input i is recorded: the returned value is received_input(i, t) after every interval
  /// ending at t (capture_inputs), i.e. what the subsystem sees at the row's time. Setup only
  /// (allocates); the pointer stays valid for the subsystem's life.
  const double* record_input(std::size_t i) {
    if (input_values_.size() != inputs_.size()) input_values_.assign(inputs_.size(), 0.0);
    if (std::find(recorded_inputs_.begin(), recorded_inputs_.end(), i) == recorded_inputs_.end())
      recorded_inputs_.push_back(i);
    return &input_values_[i];
  }
  /// The recorded inputs' values at t; on the thread that stepped the subsystem.
  void capture_inputs(time_point t) noexcept {
    for (std::size_t i : recorded_inputs_) input_values_[i] = received_input(i, t);
  }
  /// The value of input i the subsystem works with at t: by default input(i).value_at(t); a
  /// subsystem that takes its inputs in at other times or converts them (an FMU: set before
  /// each doStep, rounded to its integer types) says what it last took in.
  [[nodiscard]] double received_input(std::size_t i, time_point t) const noexcept {
    return do_received_input(i, t);
  }
  /// True if the subsystem reads each input once per internal step, at the step's start (an
  /// FMU sets its inputs before each doStep), and for its outputs at communication points;
  /// an extrapolation then acts only there. Default: false (a solver may read inputs inside
  /// its step).
  [[nodiscard]] virtual bool reads_inputs_at_step_starts() const noexcept { return false; }

  /// Run hooks, called by every executor on its calling thread (never a real-time one).
  /// start(): after initialisation and the start-up exchange, before the first step; a
  /// subsystem that talks to the outside world (a UDP driver) starts its I/O here and may
  /// raise `stop` from then until stop() (e.g. stale input). May throw: the run then does
  /// not start. stop(): on every exit path of a run whose start() was called; fail_safe is
  /// true unless the run completed (then e.g. safe values go out). Defaults do nothing.
  void start(stop_source& stop) { do_start(stop); }
  void stop(bool fail_safe) noexcept { do_stop(fail_safe); }
  /// The supervisor's order to put what this subsystem drives into its safe state now
  /// (an output driver sends its safe values), from any thread and while this subsystem's
  /// own thread may still be inside a step, or stuck in a partner's: so async-signal-safe,
  /// lock-free and idempotent. stop(true) follows if the run's threads return. Default:
  /// nothing to do.
  void trip_fail_safe() noexcept { do_trip_fail_safe(); }

  /// True if output o at t depends on input i at t (direct feedthrough through that input;
  /// the algebraic-loop check follows these). The default: every input of a feedthrough
  /// output; a subsystem that knows better (a spring force that uses the neighbour's
  /// position but not the forces it receives) narrows it.
  [[nodiscard]] virtual bool output_depends_on(std::size_t o, std::size_t /*i*/) const noexcept {
    return output_desc(o).feedthrough;
  }

  /// Value output o has before the subsystem produces one (a driver channel before its
  /// first packet), unless the subsystem's own configuration fixed it. False (the default)
  /// if this subsystem has no such start values.
  virtual bool set_default_start(std::size_t /*o*/, double /*value*/) noexcept { return false; }

  /// Rollback for iterative co-simulation (000 Sect. 2.3; offline only): save_state() keeps
  /// the complete state (solver state, outputs, multirate state) at a communication point,
  /// restore_state() returns to it exactly, as often as asked. prepare_state() allocates
  /// the buffers once before the run (may throw); save/restore are then allocation-free.
  /// A subsystem that cannot roll back (hardware, an FMU without canGetAndSetFMUstate) says
  /// false in can_save_state() and why in state_refusal().
  [[nodiscard]] bool can_save_state() const noexcept { return do_can_save_state(); }
  [[nodiscard]] virtual std::string state_refusal() const {
    return "it cannot save and restore its state";
  }
  /// Why a variable of this name exists but is no port or recordable variable (an FMU's
  /// string, binary or array); "" if there is none such. Appended to "has no ..." errors.
  [[nodiscard]] virtual std::string not_exchanged(const std::string& /*variable_name*/) const {
    return {};
  }
  void prepare_state() {
    saved_outputs_.assign(output_values_.size(), 0.0);
    multirate_.prepare(saved_multirate_);
    do_prepare_state();
  }
  bool save_state() noexcept {
    std::copy(output_values_.begin(), output_values_.end(), saved_outputs_.begin());
    multirate_.save(saved_multirate_);
    return do_save_state();
  }
  bool restore_state() noexcept {
    std::copy(saved_outputs_.begin(), saved_outputs_.end(), output_values_.begin());
    multirate_.restore(saved_multirate_);
    return do_restore_state();
  }

  /// Statistics of the run for summary.json (a UDP driver's packet counters), written by
  /// write_statistics() as one JSON object. Subsystems without any (the default) say false.
  [[nodiscard]] virtual bool has_statistics() const noexcept { return false; }
  virtual void write_statistics(json_writer& /*j*/) const {}

 protected:
  std::size_t add_input(port_desc desc);
  std::size_t add_output(port_desc desc);
  void add_variable(std::string name, std::string unit, const double* value);

  [[nodiscard]] double in(std::size_t i, time_point t) const noexcept {
    return inputs_[i].value_at(t);
  }
  void set_output(std::size_t i, double v) noexcept { output_values_[i] = v; }
  /// Default: k calls of do_step. Overrides must give the same result.
  virtual bool do_steps(time_point t, duration h, std::int64_t k) noexcept {
    bool ok = true;
    for (std::int64_t j = 0; j < k && ok; ++j) ok = do_step(t + j * h, h);
    return ok;
  }

 private:
  virtual void do_initialize(time_point /*t0*/) {}
  virtual void do_start(stop_source& /*stop*/) {}
  virtual void do_stop(bool /*fail_safe*/) noexcept {}
  virtual void do_trip_fail_safe() noexcept {}
  virtual void do_record_variable(std::size_t /*v*/) {}
  virtual std::span<const double> do_output_derivatives(std::size_t /*o*/) noexcept { return {}; }
  virtual double do_output_partial(std::size_t /*o*/, std::size_t /*i*/) noexcept { return 0.0; }
  [[nodiscard]] virtual double do_received_input(std::size_t i, time_point t) const noexcept {
    return inputs_[i].value_at(t);
  }
  virtual bool do_step(time_point t, duration h) noexcept = 0;
  virtual void do_update_outputs(time_point t) noexcept = 0;
  virtual bool do_can_save_state() const noexcept { return false; }
  virtual void do_prepare_state() {}
  virtual bool do_save_state() noexcept { return false; }
  virtual bool do_restore_state() noexcept { return false; }

  std::string name_;
  std::vector<input_port> inputs_;
  std::vector<port_desc> outputs_;
  std::vector<double> output_values_;
  std::vector<energy_correction> corrections_;
  std::vector<partial_capture> partial_captures_;
  std::vector<std::size_t> feedthrough_inputs_;
  std::vector<double> input_values_;  // recorded inputs (record_input), by input index
  std::vector<std::size_t> recorded_inputs_;
  std::vector<variable_desc> variables_;
  duration step_size_{0};
  duration steps_H_{0}, steps_h_{0};  // steps_per()'s last arguments and result
  std::int64_t steps_k_ = 0;
  multirate_state multirate_;
  std::vector<double> saved_outputs_;
  multirate_snapshot saved_multirate_;
};

}  // namespace cosim
