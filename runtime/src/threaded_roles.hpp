#pragma once
// The thread roles of a threaded or realtime run (threaded_executor.hpp), one class each, as
// cactus-rt separates its cyclic thread, tracer and aggregator; run_threaded only wires them:
//  - subsystem_worker: one per subsystem, on its own (pinned, SCHED_FIFO) thread: waits for
//    its release (realtime), its inputs, steps, publishes its outputs and one record a step;
//  - watchdog: the supervisor of a realtime run, above every worker's priority: the leaky
//    bucket of late steps and the stall rule, and on a stop the safe values at once;
//  - step_recorder: the caller's thread: mirrors every record, runs the shared accounting
//    (rows, energy, safety limits) and hands each record to the step observers;
//  - step_observers: timing.csv, trace.json and the live view, from the same records.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cosim/runtime/latency_histogram.hpp"
#include "cosim/runtime/rt_log.hpp"
#include "cosim/runtime/spsc_ring.hpp"
#include "cosim/runtime/threaded_executor.hpp"
#include "observer_file.hpp"
#include "run_accounting.hpp"
#include "trace_writer.hpp"

namespace cosim::detail::threaded {

// What scheme::deliver would push: delivered_output() stamped sample_time(), so smoothing
// and non-matching grids reach consumers as offline. seq is the communication point the
// sample was delivered at (t0 + seq H); the stamp may be earlier on an own grid.
struct sample {
  std::uint64_t seq = 0;
  std::int64_t stamp_ns = 0;
  double value = 0.0;
  std::int32_t derivs = 0;  // scheme::delivered_derivatives(), orders 1..derivs
  std::array<double, max_extrapolation_order> d{};
  // Feedthrough correction (feedthrough_correction.hpp): the producer's partial derivatives
  // and the input values it used, for the consumer port's terms.
  std::array<double, input_port::max_feedthrough_terms> ft_d{};
  std::array<double, input_port::max_feedthrough_terms> ft_u{};
};

struct step_record {
  std::uint64_t step = 0;
  std::int64_t wake_latency_ns = 0;
  std::int64_t exec_ns = 0;
  std::int64_t begin_ns = 0;    // CLOCK_MONOTONIC start of the step (trace)
  std::int64_t release_ns = 0;  // realtime: release time on the schedule (observer's slack)
  std::uint32_t ok = 0;
  std::uint32_t count = 0;
  std::uint32_t overrun = 0;  // realtime: this thread's step was an overrun
  std::uint32_t skipped = 0;  // realtime: periods the schedule skipped after this step
  // The step's values (outputs, probes, energy captures) are in the worker's value slot
  // step % value_slots, not here: any number of them fits.
};

// Spin, then yield, then sleep briefly: a waiting thread must not starve a
// lower-priority producer pinned to the same CPU.
class backoff {
 public:
  void pause() noexcept;

 private:
  unsigned n_ = 0;
};

/// What the roles of one run share: the schedule, the stop, the start gate.
struct shared_state {
  shared_state(system& s, const run_plan& p, const threaded_options& o, stop_source& why) noexcept
      : sys(s), plan(p), opt(o), run_stop(why) {}
  system& sys;
  const run_plan& plan;
  const threaded_options& opt;
  stop_source& run_stop;          // why the run stops early
  std::atomic<bool> stop{false};  // releases every thread: an early stop or the run's end
  std::atomic<bool> go{false};    // start gate: every thread exists, start_ns is set
  std::int64_t start_ns = 0;      // realtime epoch (release of step 0)
  // Realtime schedule: step n of every thread is released at start + (n + shift) H.
  std::atomic<std::int64_t> shift{0};
  std::atomic<std::int64_t> late_steps{0};  // steps that moved the schedule
  // What the watchdog saw when it stopped the run (read after the threads are joined).
  std::atomic<std::int64_t> stop_bucket{0};
  std::atomic<std::ptrdiff_t> stop_hung{-1};
  std::atomic<std::int64_t> stop_busy_ns{0};
  std::atomic<std::int64_t> stop_step{0};  // the step the hung thread was inside

  [[nodiscard]] std::int64_t period_ns() const noexcept { return plan.macro_step.count(); }
  /// Moves the schedule to at least s; false if another thread already moved it as far.
  bool raise_shift(std::int64_t s) noexcept;
  /// Raises c (none: the run ended) and releases every thread.
  void request_stop(stop_cause c) noexcept {
    run_stop.raise(c);
    stop.store(true, std::memory_order_release);
  }
  [[nodiscard]] bool stopping() const noexcept { return stop.load(std::memory_order_acquire); }
  void wait_for_go() const noexcept;
};

using sample_rings = std::vector<std::unique_ptr<spsc_ring<sample>>>;

/// One subsystem's thread: everything it owns is allocated in the constructor.
class subsystem_worker {
 public:
  subsystem_worker(shared_state& shared, std::size_t index, sample_rings& rings,
                   energy_monitor& mon, std::span<const std::size_t> rank, rt_log_drain& drain);
  subsystem_worker(const subsystem_worker&) = delete;
  subsystem_worker& operator=(const subsystem_worker&) = delete;
  ~subsystem_worker() = default;

  /// The thread body: prefault, wait for the gate, then the step loop.
  void run() noexcept;

  [[nodiscard]] std::size_t index() const noexcept { return index_; }
  [[nodiscard]] const thread_setup& setup() const noexcept { return setup_; }
  [[nodiscard]] spsc_ring<step_record>& records() noexcept { return *records_; }
  /// Values of the record of `step` (outputs, probes, energy captures); valid until that
  /// record is popped.
  [[nodiscard]] const double* value_slot(std::uint64_t step) const noexcept {
    return values_.data() + (step % value_slots_) * stride_;
  }
  [[nodiscard]] std::span<const std::size_t> probe_slots() const noexcept { return probe_slots_; }
  [[nodiscard]] std::uint64_t heartbeat() const noexcept {
    return heartbeat_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::int64_t busy_since_ns() const noexcept {
    return busy_since_ns_.load(std::memory_order_relaxed);
  }
  /// After the thread ended.
  [[nodiscard]] const latency_histogram& wake() const noexcept { return wake_; }
  [[nodiscard]] const latency_histogram& exec() const noexcept { return exec_; }
  [[nodiscard]] std::int64_t overruns() const noexcept { return overruns_.load(); }
  [[nodiscard]] std::uint64_t steps_done() const noexcept { return heartbeat_.load(); }

 private:
  void loop() noexcept;
  [[nodiscard]] double* slot(std::uint64_t step) noexcept {
    return values_.data() + (step % value_slots_) * stride_;
  }

  shared_state& shared_;
  std::size_t index_;
  sample_rings& rings_;
  energy_monitor& mon_;
  thread_setup setup_;
  std::vector<std::size_t> in_conns_;
  std::vector<std::uint64_t> in_offset_;  // 0: needs sample n at step n; 1: needs n + 1
  std::vector<std::uint64_t> in_have_;    // newest sample received (0: the start-up exchange)
  std::vector<std::size_t> out_conns_;
  std::vector<const double*> probes_;     // live values of this subsystem's probes
  std::vector<std::size_t> probe_slots_;  // their index in the global probe list
  std::size_t capture_count_ = 0;
  std::unique_ptr<spsc_ring<step_record>> records_;
  // value_slots = ring capacity + 1 slots of `stride` values. The producer fills slot
  // n % value_slots before pushing record n; pushing record n - 1 needed record n - 1 - C
  // popped, and the recorder pops a record only after reading its slot, so the slot being
  // filled is never one the recorder may still read.
  std::vector<double> values_;
  std::size_t stride_ = 0;
  std::size_t value_slots_ = 0;
  latency_histogram wake_;
  latency_histogram exec_;
  std::atomic<std::uint64_t> heartbeat_{0};  // completed steps
  std::atomic<std::int64_t> overruns_{0};
  // When the own work of the current step began (inputs present), 0 while sleeping or
  // waiting for a partner: the watchdog's stall rule.
  std::atomic<std::int64_t> busy_since_ns_{0};
  rt_log_channel* log_ = nullptr;
};

using worker_list = std::vector<std::unique_ptr<subsystem_worker>>;

/// The supervisor of a realtime run, on its own thread above every worker's priority. On a
/// stop it trips the run's fail-safe (the output drivers' safe values) before anything else,
/// so the bench never waits for a stuck worker.
class watchdog {
 public:
  watchdog(shared_state& shared, const worker_list& workers, rt_log_channel& log);
  /// The thread body.
  void run() noexcept;

 private:
  shared_state& shared_;
  const worker_list& workers_;
  rt_log_channel& log_;
  std::vector<std::int64_t> busy_since_;  // snapshot per check, allocated up front
};

/// The observers of every mirrored step record, on the recording thread: timing.csv,
/// trace.json and the live view (threaded_options::observer). A file that cannot be written
/// shows in failure().
class step_observers {
 public:
  /// Opens the files the options ask for (start_ns set: the trace's time origin).
  step_observers(const shared_state& shared, std::size_t threads);
  void step(std::size_t thread, std::int64_t n, time_point t_end, const step_record& rec);
  /// After every thread's record of step n.
  void step_done() noexcept;
  /// Hands over the last interval, syncs and closes the files.
  void close() noexcept;
  /// Empty while every file is fine, else the first failure ("error writing PATH: ...").
  [[nodiscard]] const std::string& failure() noexcept;

 private:
  const shared_state& shared_;
  observer_file timing_;
  trace_writer trace_;
  std::string failure_;
  // Live view: per-thread aggregates, handed over at most every observer_period_ns.
  std::vector<thread_timing> interval_;
  std::int64_t next_observe_ = 0;
};

/// The recording thread's loop: one record per worker per step, mirrored, then the shared
/// accounting (run_accounting.hpp) as offline does.
class step_recorder {
 public:
  step_recorder(shared_state& shared, worker_list& workers, run_accounting& acc,
                energy_monitor& mon, std::vector<std::vector<double>>& mirror_out,
                std::vector<double>& mirror_probe, step_observers& observers);
  /// Records until the run ends or stops; `t` is the time of the last row. True if it
  /// stopped early (run_stop holds the cause).
  bool run(run_outcome& out, time_point& t, bool start_ok);

 private:
  /// Realtime: records arrive once per period, so the recorder sleeps to the middle of the
  /// next one instead of polling (a normal thread polling every few microseconds kept the
  /// real-time CPUs busy). Threaded mode runs as fast as possible.
  void pause(backoff& b) const noexcept;

  shared_state& shared_;
  worker_list& workers_;
  run_accounting& acc_;
  energy_monitor& mon_;
  std::vector<std::vector<double>>& mirror_out_;
  std::vector<double>& mirror_probe_;
  step_observers& observers_;
};

}  // namespace cosim::detail::threaded
