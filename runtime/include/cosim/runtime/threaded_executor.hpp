#pragma once
// Threaded and realtime executors: one thread per subsystem, the same step semantics as
// run_offline (scheme.hpp primitives, shared accounting), coupling samples through
// lock-free SPSC rings synchronised by sequence numbers.
//
//  - threaded: as fast as possible; results byte-identical to offline.
//  - realtime: every thread is released on one shared schedule of absolute
//    CLOCK_MONOTONIC deadlines, step n at start + (n + shift) H, with
//    clock_nanosleep(TIMER_ABSTIME). A step that ends after its deadline moves the whole
//    schedule to the first period boundary after its end (skip, never a catch-up burst),
//    so the threads stay in phase and a partner that merely waited for the late sample is
//    not late itself. A higher-priority watchdog drains the late steps into a leaky bucket
//    and stops the run (stop_reason "deadline") when it overflows, or when a thread stays
//    inside one step (its own work, not a wait for a partner) for max_overruns periods.
//
// Each subsystem thread publishes one fixed-size record per macro step (its outputs, its
// probe values, the bond inputs it used, timing) to the recording thread (the caller),
// which mirrors them and runs the same row/energy/safety accounting as offline.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cosim/runtime/executor.hpp"

namespace cosim {

struct thread_setup {
  int cpu = -1;      // -1: not pinned
  int priority = 0;  // 0: SCHED_OTHER; 1-99: SCHED_FIFO
  std::size_t stack_size = std::size_t{256} * 1024;
  double budget_s = 0.0;  // expected worst-case step time; 0 = unknown
};

struct watchdog_setup {
  int cpu = -1;
  int priority = 0;
  std::int64_t max_overruns = 10;  // leaky-bucket capacity: safe stop when reached
  std::int64_t leak_steps = 100;   // one overrun forgiven per this many macro steps
  // After a stop, how long a thread still inside a step is waited for before it is
  // abandoned (every mode; copied into safety_limits::grace_ns by the scenario).
  std::int64_t grace_ns = 300'000'000;
};

/// Per-thread timing over the interval since the previous timing_observer::timing call.
/// wake_max_ns and slack_min_ns are realtime only (0 in threaded mode, which has no
/// schedule).
struct thread_timing {
  std::int64_t steps = 0;         // macro steps completed in the interval
  std::int64_t wake_max_ns = 0;   // largest wake-up latency (release -> running)
  std::int64_t exec_max_ns = 0;   // largest own step time (inputs present -> outputs out)
  std::int64_t slack_min_ns = 0;  // smallest release + H - end of step; < 0: late
  std::int64_t overruns = 0;      // steps of this thread counted as overruns
};

/// Optional live view of a threaded/realtime run (cosim run --serve): called on the
/// recording thread (the caller's, never a subsystem thread) from the per-step records it
/// mirrors anyway, so the real-time threads do nothing more.
class timing_observer {
 public:
  timing_observer() = default;
  timing_observer(const timing_observer&) = delete;
  timing_observer& operator=(const timing_observer&) = delete;
  virtual ~timing_observer() = default;
  /// Before the subsystem threads start (may allocate); timing()'s span has sys.size()
  /// entries, in subsystem order.
  virtual void begin(const system& sys) = 0;
  /// At most every threaded_options::observer_period_ns, and once at the end. Must neither
  /// allocate nor block: it runs between the records of consecutive steps.
  virtual void timing(std::span<const thread_timing> interval) noexcept = 0;
  /// When run_threaded returns or throws (after begin()); `sys` may go away after.
  virtual void end() noexcept = 0;
};

struct threaded_options {
  bool realtime = false;
  std::vector<thread_setup> threads;  // per subsystem index; empty = defaults
  watchdog_setup watchdog;
  std::size_t ring_capacity = 16;      // coupling ring slots (power of two)
  std::size_t record_capacity = 4096;  // per-thread record ring slots (power of two)
  bool lock_memory = true;
  std::string timing_csv;  // per-step timing CSV path; empty = off
  std::string trace_json;  // trace-event JSON path (Perfetto / chrome://tracing); empty = off
  /// Called on each subsystem thread when its step loop begins (after start-up) and when
  /// it ends: lets tests measure allocations and page faults of the real-time path.
  using thread_hook = void (*)(void* ctx, std::size_t subsystem, bool begin) noexcept;
  thread_hook hook = nullptr;
  void* hook_ctx = nullptr;
  timing_observer* observer = nullptr;           // not owned; null = off
  std::int64_t observer_period_ns = 40'000'000;  // 25 Hz
};

namespace detail {

/// Deadline bookkeeping of one realtime step (all times CLOCK_MONOTONIC ns). Step n was
/// released at `release` on the schedule start + (n + shift) H, where `shift` is the
/// schedule shift now in force; the thread woke at `woke`, had all inputs at `inputs` and
/// finished its own work at `done`.
struct step_deadline {
  /// Ended after its deadline start + (n + 1 + shift) H: the schedule must move.
  bool late = false;
  /// The thread's own wake-up delay plus its own work exceeded H (a wait for a late
  /// partner's sample is not its own; that partner already moved the schedule).
  bool own = false;
  /// When late: the shift that releases step n + 1 at the first boundary after `done`.
  std::int64_t new_shift = 0;
  [[nodiscard]] bool overrun() const noexcept { return late || own; }
};

step_deadline check_step_deadline(std::int64_t start_ns, std::int64_t period_ns, std::int64_t n,
                                  std::int64_t shift, std::int64_t release, std::int64_t woke,
                                  std::int64_t inputs, std::int64_t done) noexcept;

/// The watchdog's decisions, separated from its thread so they can be tested with fake
/// times. Leaky bucket: +1 per late step, -1 per leak_steps completed macro steps, a stop
/// when it reaches max_overruns. Hang: a thread busy in one step of its own work for
/// longer than hang_limit_ns, judged only when the watchdog itself ran on time (a machine
/// that froze everything, the watchdog included, has not hung a thread).
class watchdog_rules {
 public:
  watchdog_rules(std::int64_t max_overruns, std::int64_t leak_steps, std::int64_t hang_limit_ns,
                 std::int64_t check_period_ns) noexcept;

  struct verdict {
    bool stop = false;
    std::int64_t bucket = 0;   // level after this check
    std::ptrdiff_t hung = -1;  // index of the thread judged hung, -1 for none
    std::int64_t busy_ns = 0;  // how long that thread had been busy
  };

  /// late_steps: late steps so far (all threads); steps_done: macro steps every thread has
  /// completed; busy_since[i]: when thread i began its current step's own work, 0 if idle.
  verdict check(std::int64_t now_ns, std::int64_t late_steps, std::int64_t steps_done,
                std::span<const std::int64_t> busy_since) noexcept;

 private:
  std::int64_t max_overruns_, leak_steps_, hang_limit_ns_, check_period_ns_;
  std::int64_t seen_ = 0, bucket_ = 0, leaked_ = 0;
  std::int64_t last_check_ns_ = -1;
};

}  // namespace detail

/// Checks CPUs, priorities, ring sizes and Gauss-Seidel budgets before any thread starts.
void validate_threaded(const system& sys, const run_plan& plan, const threaded_options& opt);

/// `stop` as for run_offline; the recording thread watches it (realtime: at least every
/// 10 ms) and releases every thread when it or a cause of the run itself is raised.
run_outcome run_threaded(system& sys, const run_plan& plan, const safety_limits& limits,
                         row_sink& sink, const threaded_options& opt,
                         const stop_source* stop = nullptr);

}  // namespace cosim
