#pragma once
// Why a run stops before its end time, raised by whichever part notices first: the signal
// handler (operator), a driver (stale input), the realtime watchdog (deadline) or the
// executor itself (safety limits, alarms, non-finite values, output errors). The first cause wins
// and is never overwritten, so the outcome names what actually ended the run, and no part
// rewrites another's verdict afterwards.
//
// A run's source may be linked to a longer-lived upstream source (the process's operator
// source, shared by the runs of a batch): a cause raised upstream stops the run too, without
// a thread forwarding it, while causes raised in the run stay in the run.
//
// raise() and every query are lock-free atomics only: safe in a signal handler and on
// real-time threads (no allocation, no exception, no lock).
#include <atomic>

namespace cosim {

enum class stop_cause : int {
  none = 0,
  operator_signal,  // SIGINT/SIGTERM/SIGHUP; code = the signal number
  stale_input,      // an input driver got nothing fresh for stop_after; who = its name, or
                    // with code stale_input_message the whole message (naming the limit)
  deadline,         // the realtime watchdog's leaky bucket of late steps overflowed
  stall,            // the realtime watchdog: a subsystem stayed inside one step too long
  energy_residual,  // safety limit on sum |dE|
  residual_power,   // safety limit on |dP|
  non_finite,       // a state, output or recorded value became non-finite
  output_error,     // results could not be stored
  error,            // a subsystem thread ended unexpectedly
  model_end,        // a subsystem's model ended the simulation (an FMU's terminateSimulation or
                    // discard) in a step that then returns false: the run completes at that
                    // step's start; who = the reason. (A model that ends exactly at the end of
                    // a step it completed raises this in its next step.)
  model_error,      // a subsystem's model failed (an FMU's fmiError/fmiFatal); who = the reason
  no_convergence,   // an iterative macro step did not converge (run.on_no_convergence = "stop")
  remote_deadline,  // a remote subsystem (host = "dds") did not answer within its timeout;
                    // who = its name
  remote_lost,      // a remote subsystem's worker lost its liveliness (process gone); who = name
  alarm,            // a stop alarm fired (alarm.hpp); code = its index, who = its name
  lockstep_device,  // run.mode = "lockstep": a driver's device did not answer a macro step
                    // within lockstep_timeout, or cannot do lockstep; who = the whole message
};

/// Raised by a subsystem's step that then returns false: a model that ended the simulation
/// or failed inside it, or a remote subsystem whose worker did not answer or was lost during
/// it. That step did not complete, so the run ends at its start (its last row), in every
/// executor.
[[nodiscard]] constexpr bool ends_at_step_start(stop_cause c) noexcept {
  return c == stop_cause::model_end || c == stop_cause::model_error ||
         c == stop_cause::remote_deadline || c == stop_cause::remote_lost;
}

/// stop_source code of a stale_input stop whose `who` is its whole message.
constexpr int stale_input_message = 1;

/// The stop_reason written to summary.json ("operator_signal", ...; "end_time" for none).
[[nodiscard]] const char* to_string(stop_cause c) noexcept;

class stop_source {
 public:
  stop_source() noexcept = default;
  /// Linked to `upstream` (not owned, may be null; must outlive this source).
  explicit stop_source(const stop_source* upstream) noexcept : upstream_(upstream) {}
  stop_source(const stop_source&) = delete;
  stop_source& operator=(const stop_source&) = delete;
  ~stop_source() = default;

  /// Raises `c` unless a cause is already set here or upstream (then that one is adopted:
  /// the first cause wins). `code` and `who` detail it (signal number; a name that outlives
  /// the run). True if `c` became the cause. Async-signal-safe.
  bool raise(stop_cause c, int code = 0, const char* who = nullptr) noexcept {
    if (c == stop_cause::none) return false;
    bool own = true;
    if (upstream_ != nullptr && upstream_->stop_requested()) {  // raised there first
      c = upstream_->cause();
      code = upstream_->code();
      who = upstream_->who();
      own = false;
    }
    int expected = 0;
    if (!claimed_.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) return false;
    code_.store(code, std::memory_order_relaxed);
    who_.store(who, std::memory_order_relaxed);
    cause_.store(static_cast<int>(c), std::memory_order_release);  // publishes code and who
    return own;
  }

  /// A cause is set here or upstream.
  [[nodiscard]] bool stop_requested() const noexcept {
    return cause_.load(std::memory_order_acquire) != 0 ||
           (upstream_ != nullptr && upstream_->stop_requested());
  }
  /// This source's cause, else the upstream one; none while nothing was raised.
  [[nodiscard]] stop_cause cause() const noexcept {
    const int c = cause_.load(std::memory_order_acquire);
    if (c != 0) return static_cast<stop_cause>(c);
    return upstream_ != nullptr ? upstream_->cause() : stop_cause::none;
  }
  [[nodiscard]] int code() const noexcept {
    if (cause_.load(std::memory_order_acquire) != 0) return code_.load(std::memory_order_relaxed);
    return upstream_ != nullptr ? upstream_->code() : 0;
  }
  [[nodiscard]] const char* who() const noexcept {
    if (cause_.load(std::memory_order_acquire) != 0) return who_.load(std::memory_order_relaxed);
    return upstream_ != nullptr ? upstream_->who() : nullptr;
  }

 private:
  static_assert(std::atomic<int>::is_always_lock_free &&
                    std::atomic<const char*>::is_always_lock_free,
                "raise() must be async-signal-safe");
  std::atomic<int> claimed_{0};
  std::atomic<int> cause_{0};
  std::atomic<int> code_{0};
  std::atomic<const char*> who_{nullptr};
  const stop_source* upstream_ = nullptr;
};

}  // namespace cosim
