#pragma once
// Real-time thread set-up: explicit stack, SCHED_FIFO priority, CPU pinning and name,
// each requested and reported back, because an unprivileged or containerised run must
// still work (degraded) and tell the operator what it did not get. Plus the clock and
// memory helpers an RT loop needs.
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <exception>
#include <functional>
#include <memory>
#include <string>

namespace cosim {

struct rt_thread_config {
  std::string name;  // truncated to 15 characters (kernel limit)
  int cpu = -1;      // -1: not pinned
  int priority = 0;  // 0: SCHED_OTHER, 1..99: SCHED_FIFO priority
  // Whole mapping, rounded up to PTHREAD_STACK_MIN and pages. glibc carves static TLS
  // out of it (small normally, ~800 KiB under ThreadSanitizer).
  std::size_t stack_size = std::size_t{256} * 1024;
};

struct rt_thread_grant {
  int cpu_requested = -1;
  int cpu_granted = -1;  // -1 if not pinned
  int priority_requested = 0;
  int priority_granted = 0;  // 0 if SCHED_FIFO was refused (or not requested)
  std::string warning;       // empty if everything requested was granted
};

/// A started thread. Scheduling, affinity and name are applied before the body starts
/// running, so the body never executes with the wrong attributes and grant() is final
/// when the constructor returns.
class rt_thread {
 public:
  /// Starts body on a new thread. Throws std::system_error if no thread can be created
  /// at all; refused priority or affinity only degrade and are reported in grant().
  rt_thread(const rt_thread_config& config, std::function<void()> body);
  rt_thread(const rt_thread&) = delete;
  rt_thread& operator=(const rt_thread&) = delete;
  rt_thread(rt_thread&& other) noexcept;
  /// Joins the current thread (if any) first.
  rt_thread& operator=(rt_thread&& other) noexcept;
  /// Joins; an exception escaping the body is then discarded.
  ~rt_thread();

  [[nodiscard]] const rt_thread_grant& grant() const noexcept;
  [[nodiscard]] bool joinable() const noexcept;
  /// Waits for the body to finish and rethrows an exception that escaped it.
  void join();
  /// Waits until the body finished or CLOCK_MONOTONIC reaches deadline_ns; true if it
  /// finished (then joined; an escaped exception is discarded). A thread that did not is
  /// still joinable: the supervisor abandons it (the process then ends without
  /// destroying this object, whose destructor would wait for it).
  [[nodiscard]] bool join_until(std::int64_t deadline_ns) noexcept;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

/// mlockall(MCL_CURRENT | MCL_FUTURE): no page of the process is swapped out or
/// reclaimed later. On failure why holds the reason.
bool lock_memory(std::string& why) noexcept;

/// Holds /dev/cpu_dma_latency at 0 us while alive, as cyclictest does by default: the
/// CPU idle governor then keeps the CPUs out of deep C-states whose exit latency would add
/// to every wake-up. Without permission (or without the device) it does nothing and
/// active() is false; it never fails a run.
class cpu_latency_guard {
 public:
  cpu_latency_guard() noexcept;
  cpu_latency_guard(const cpu_latency_guard&) = delete;
  cpu_latency_guard& operator=(const cpu_latency_guard&) = delete;
  ~cpu_latency_guard();
  [[nodiscard]] bool active() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

/// CPUs currently online.
int online_cpu_count();

/// True if cpu is online according to /sys/devices/system/cpu/online.
bool cpu_exists(int cpu);

/// Touches bytes of stack below the caller so later stack growth on the RT path does
/// not page-fault. Call early in the thread body; bytes must fit the thread's stack with
/// room to spare (e.g. half of rt_thread_config::stack_size).
void prefault_stack(std::size_t bytes) noexcept;

/// CLOCK_MONOTONIC in nanoseconds (vDSO, no system call).
inline std::int64_t monotonic_now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// Sleeps until CLOCK_MONOTONIC reaches abs_ns. Absolute, so a period loop does not
/// accumulate drift, and retrying after a signal keeps the same deadline.
void sleep_until_ns(std::int64_t abs_ns) noexcept;

}  // namespace cosim
