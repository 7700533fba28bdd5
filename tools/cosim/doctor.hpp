#pragma once
// cosim doctor: what a test bench needs for hard real time, checked on this machine, and
// the wake-up latency it actually delivers to the project's own rt_thread. The checks read
// the machine below a root directory ("/" for this one) so that a test can hand them a
// directory laid out like /proc and /sys of another machine.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cosim::cli::doctor {

enum class status { ok, info, warn, fail };
std::string_view to_string(status s) noexcept;

/// One finding. A failed check rules out hard real time; a warning costs latency but
/// does not rule it out on its own.
struct check {
  std::string name;  // stable identifier: kernel, rt_throttling, cpu_isolation, ...
  status result = status::info;
  std::string summary;  // what was found
  std::string advice;   // what to change; empty when nothing needs to
  std::string reason;   // when failed: the short phrase the verdict lists
};

/// Names of the checks, in output order (system checks, then wakeup_latency).
const std::vector<std::string>& check_names();

/// Kernel, RT throttling, CPU isolation, frequency governor, RT priority and memory-lock
/// rights, SMT and IRQ affinity of the machine below root, for threads at SCHED_FIFO
/// `priority` on `rt_cpus` out of `online_cpus`. The rights are those of the process
/// whose /proc/self is read.
std::vector<check> system_checks(const std::filesystem::path& root, const std::vector<int>& rt_cpus,
                                 int online_cpus, int priority);

struct cpu_latency {
  int cpu = -1;
  int priority_granted = 0;
  std::uint64_t samples = 0;
  double p50_us = 0, p99_us = 0, max_us = 0;
  std::uint64_t late = 0;  // wake-ups later than one period
  std::string warning;     // what rt_thread was refused
};

/// One rt_thread per CPU at SCHED_FIFO priority, all at once (as cyclictest -t -a), waking
/// every period for `seconds`; latency = wake time - deadline, 1-us bins.
std::vector<cpu_latency> measure_wakeup(const std::vector<int>& cpus, int priority, int period_us,
                                        double seconds);

/// The wakeup_latency check: fails when a thread was refused its priority or pinning,
/// when any wake-up came later than max_latency_us, or later than a period.
check latency_check(const std::vector<cpu_latency>& measured, int priority, int period_us,
                    double max_latency_us);

struct verdict {
  bool hard_real_time = false;
  std::string text;                  // "hard real time: yes" / "soft real time only: ..."
  std::vector<std::string> reasons;  // short reasons of the failed checks
};
verdict decide(const std::vector<check>& checks);

/// `cosim doctor --fix-script`: a shell script (printed, never run) with the commands this
/// machine below root needs for the checks above: a PREEMPT_RT kernel, kernel arguments
/// (isolcpus, nohz_full, rcu_nocbs, irqaffinity), RT throttling off, the performance governor
/// on each real-time CPU, each IRQ routed away from them, and file capabilities on `program`
/// (or the systemd limits). Only what a check found missing is in it.
std::string fix_script(const std::filesystem::path& root, const std::vector<int>& rt_cpus,
                       int online_cpus, int priority, const std::string& program);

/// Parses a kernel CPU list such as "0-3,6" (empty or malformed: empty result).
std::vector<int> parse_cpu_list(std::string_view list);

}  // namespace cosim::cli::doctor
