#pragma once
// Threaded and realtime executors: one thread per subsystem, the same step semantics as
// run_offline (scheme.hpp primitives, shared accounting), coupling samples through
// lock-free SPSC rings synchronised by sequence numbers.
//
//  - threaded: as fast as possible; results byte-identical to offline.
//  - realtime: each thread is released at absolute CLOCK_MONOTONIC deadlines
//    (start + k H) with clock_nanosleep(TIMER_ABSTIME). An overrun skips to the next
//    period boundary keeping the phase (never a catch-up burst) and is counted; a
//    higher-priority watchdog drains the overrun counts into a leaky bucket and stops the
//    run (stop_reason "deadline") when it overflows, or when a thread stops beating.
//
// Each subsystem thread publishes one fixed-size record per macro step (its outputs, its
// probe values, the bond inputs it used, timing) to the recording thread (the caller),
// which mirrors them and runs the same row/energy/safety accounting as offline.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "cosim/runtime/executor.hpp"

namespace cosim {

struct thread_setup {
  int cpu = -1;      // -1: not pinned
  int priority = 0;  // 0: SCHED_OTHER; 1-99: SCHED_FIFO
  std::size_t stack_size = 256 * 1024;
  double budget_s = 0.0;  // expected worst-case step time; 0 = unknown
};

struct watchdog_setup {
  int cpu = -1;
  int priority = 0;
  std::int64_t max_overruns = 10;  // leaky-bucket capacity: safe stop when reached
  std::int64_t leak_steps = 100;   // one overrun forgiven per this many macro steps
};

struct threaded_options {
  bool realtime = false;
  std::vector<thread_setup> threads;  // per subsystem index; empty = defaults
  watchdog_setup watchdog;
  std::size_t ring_capacity = 16;      // coupling ring slots (power of two)
  std::size_t record_capacity = 4096;  // per-thread record ring slots (power of two)
  bool lock_memory = true;
  std::string timing_csv;  // per-step timing CSV path; empty = off
  /// Called on each subsystem thread when its step loop begins (after start-up) and when
  /// it ends: lets tests measure allocations and page faults of the real-time path.
  using thread_hook = void (*)(void* ctx, std::size_t subsystem, bool begin) noexcept;
  thread_hook hook = nullptr;
  void* hook_ctx = nullptr;
};

/// Checks CPUs, priorities, ring sizes and Gauss-Seidel budgets before any thread starts.
void validate_threaded(const system& sys, const run_plan& plan, const threaded_options& opt);

run_outcome run_threaded(system& sys, const run_plan& plan, const safety_limits& limits,
                         row_sink& sink, const threaded_options& opt,
                         const std::atomic<bool>* stop_request = nullptr);

}  // namespace cosim
