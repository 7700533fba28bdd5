// cosim doctor: checks what a bench needs for hard real time and measures the wake-up
// latency this machine gives the project's own rt_thread (doctor.hpp).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "commands.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/latency_histogram.hpp"
#include "cosim/runtime/rt_thread.hpp"
#include "doctor.hpp"

namespace cosim::cli {

namespace doctor {

namespace fs = std::filesystem;

namespace {

constexpr int cap_ipc_lock = 14;
constexpr int cap_sys_nice = 23;

/// First line of a file, trimmed; nullopt if it cannot be read.
std::optional<std::string> read_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  std::size_t first = 0;
  while (first < line.size() && std::isspace(static_cast<unsigned char>(line[first]))) ++first;
  return line.substr(first);
}

std::optional<std::string> read_all(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string join_cpus(const std::vector<int>& cpus) {
  std::string s;
  for (int c : cpus) s += (s.empty() ? "" : ",") + std::to_string(c);
  return s;
}

std::vector<int> minus(const std::vector<int>& a, const std::set<int>& b) {
  std::vector<int> out;
  for (int c : a)
    if (b.count(c) == 0) out.push_back(c);
  return out;
}

/// The CPU list of a kernel parameter such as isolcpus=domain,managed_irq,2-3 (flags dropped).
std::set<int> cmdline_cpus(const std::string& cmdline, std::string_view param) {
  std::set<int> cpus;
  std::istringstream words(cmdline);
  for (std::string w; words >> w;) {
    if (w.rfind(std::string(param) + "=", 0) != 0) continue;
    std::string list;
    std::istringstream items(w.substr(param.size() + 1));
    for (std::string item; std::getline(items, item, ',');)
      if (!item.empty() && std::isdigit(static_cast<unsigned char>(item[0])))
        list += (list.empty() ? "" : ",") + item;
    for (int c : parse_cpu_list(list)) cpus.insert(c);
  }
  return cpus;
}

/// Capability bit from the CapEff line of /proc/<pid>/status.
std::optional<bool> has_capability(const std::optional<std::string>& status, int bit) {
  if (!status) return std::nullopt;
  std::istringstream lines(*status);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    try {
      const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
      return ((mask >> bit) & 1ULL) != 0;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

/// Soft limit of a /proc/<pid>/limits row ("Max realtime priority  0  0"): the number,
/// -1 for unlimited, nullopt if absent.
std::optional<long long> soft_limit(const std::optional<std::string>& limits,
                                    std::string_view row) {
  if (!limits) return std::nullopt;
  std::istringstream lines(*limits);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(std::string(row), 0) != 0) continue;
    std::istringstream fields(line.substr(row.size()));
    std::string soft;
    fields >> soft;
    if (soft == "unlimited") return -1;
    try {
      return std::stoll(soft);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

/// Whether cpu is set in a /proc/irq/N/smp_affinity mask ("ff" or "00000000,00000003",
/// 32-bit groups, most significant first).
bool mask_has_cpu(const std::string& mask, int cpu) {
  std::string hex;
  for (char c : mask)
    if (std::isxdigit(static_cast<unsigned char>(c))) hex += c;
  const std::size_t digit = static_cast<std::size_t>(cpu) / 4;  // from the right
  if (digit >= hex.size()) return false;
  const char c = hex[hex.size() - 1 - digit];
  const int value = std::isdigit(static_cast<unsigned char>(c))
                        ? c - '0'
                        : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
  return ((value >> (cpu % 4)) & 1) != 0;
}

check kernel_check(const fs::path& root) {
  check c{"kernel", status::fail, "", "", ""};
  const auto realtime = read_line(root / "sys/kernel/realtime");
  const std::string version = read_line(root / "proc/sys/kernel/version").value_or("");
  const std::string release = read_line(root / "proc/sys/kernel/osrelease").value_or("");
  const std::string which = release + (release.empty() ? "" : " ") + version;
  const bool rt = (realtime && *realtime == "1") || version.find("PREEMPT_RT") != std::string::npos;
  if (rt) {
    c.result = status::ok;
    c.summary = "PREEMPT_RT (" + which + ")";
  } else {
    c.summary = "not PREEMPT_RT (" + (which.empty() ? std::string("version unknown") : which) +
                "): sections of kernel code cannot be preempted, a wake-up waits for them";
    c.reason = "kernel not PREEMPT_RT";
    c.advice = "boot a PREEMPT_RT kernel (Debian: apt-get install linux-image-rt-amd64)";
  }
  return c;
}

check throttling_check(const fs::path& root) {
  check c{"rt_throttling", status::info, "", "", ""};
  const auto runtime = read_line(root / "proc/sys/kernel/sched_rt_runtime_us");
  const auto period = read_line(root / "proc/sys/kernel/sched_rt_period_us");
  if (!runtime) {
    c.summary = "not reported (no /proc/sys/kernel/sched_rt_runtime_us)";
  } else if (*runtime == "-1") {
    c.result = status::ok;
    c.summary = "off (sched_rt_runtime_us = -1)";
  } else {
    c.result = status::warn;
    c.summary = "real-time threads may run " + *runtime + " us of every " + period.value_or("?") +
                " us; a real-time thread that needs more is stopped for the rest of the period";
    c.advice = "sysctl kernel.sched_rt_runtime_us=-1";
  }
  return c;
}

check isolation_check(const fs::path& root, const std::vector<int>& rt_cpus, int online_cpus) {
  check c{"cpu_isolation", status::fail, "", "", ""};
  const std::string cmdline = read_line(root / "proc/cmdline").value_or("");
  std::set<int> isolated = cmdline_cpus(cmdline, "isolcpus");
  for (int cpu : parse_cpu_list(read_line(root / "sys/devices/system/cpu/isolated").value_or("")))
    isolated.insert(cpu);
  std::set<int> nohz = cmdline_cpus(cmdline, "nohz_full");
  for (int cpu : parse_cpu_list(read_line(root / "sys/devices/system/cpu/nohz_full").value_or("")))
    nohz.insert(cpu);
  std::set<int> rt(rt_cpus.begin(), rt_cpus.end());
  std::vector<int> housekeeping;
  for (int cpu = 0; cpu < online_cpus; ++cpu)
    if (rt.count(cpu) == 0) housekeeping.push_back(cpu);
  const std::vector<int> not_isolated = minus(rt_cpus, isolated);
  const std::vector<int> ticking = minus(rt_cpus, nohz);
  const std::string advice =
      "boot with isolcpus=" + join_cpus(rt_cpus) + " nohz_full=" + join_cpus(rt_cpus) +
      (housekeeping.empty() ? "" : " irqaffinity=" + join_cpus(housekeeping));
  if (housekeeping.empty()) {
    c.summary = "the real-time CPUs " + join_cpus(rt_cpus) +
                " are all the online CPUs: the system, interrupts and the recorder share them";
    c.advice = "keep at least one CPU for the system, then " + advice;
    c.reason = "no CPU left for the system besides the real-time CPUs " + join_cpus(rt_cpus);
  } else if (!not_isolated.empty()) {
    c.summary = "CPU" + std::string(not_isolated.size() > 1 ? "s " : " ") +
                join_cpus(not_isolated) +
                " not isolated (no isolcpus= on the kernel command line, not in "
                "/sys/devices/system/cpu/isolated): other tasks are scheduled there";
    c.advice = advice;
    c.reason = "CPUs " + join_cpus(not_isolated) + " not isolated";
  } else if (!ticking.empty()) {
    c.result = status::warn;
    c.summary = "isolated, but the scheduler tick still interrupts CPU" +
                std::string(ticking.size() > 1 ? "s " : " ") + join_cpus(ticking) +
                " (no nohz_full)";
    c.advice = advice;
  } else {
    c.result = status::ok;
    c.summary = "CPUs " + join_cpus(rt_cpus) + " isolated, no scheduler tick (nohz_full)";
  }
  return c;
}

check governor_check(const fs::path& root, const std::vector<int>& rt_cpus) {
  check c{"cpu_governor", status::info, "", "", ""};
  std::string others;
  int known = 0;
  for (int cpu : rt_cpus) {
    const auto g = read_line(
        root / ("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/scaling_governor"));
    if (!g) continue;
    ++known;
    if (*g != "performance")
      others += (others.empty() ? "" : ", ") + ("CPU " + std::to_string(cpu) + ": " + *g);
  }
  if (known == 0) {
    c.summary = "no frequency scaling exposed (fixed frequency, or a virtual machine)";
  } else if (!others.empty()) {
    c.result = status::warn;
    c.summary = others + ": frequency changes add latency";
    c.advice = "cpupower frequency-set -g performance";
  } else {
    c.result = status::ok;
    c.summary = "performance";
  }
  return c;
}

check priority_check(const fs::path& root, int priority) {
  check c{"rt_priority", status::fail, "", "", ""};
  const auto nice = has_capability(read_all(root / "proc/self/status"), cap_sys_nice);
  const auto rtprio = soft_limit(read_all(root / "proc/self/limits"), "Max realtime priority");
  const std::string limit =
      rtprio ? (*rtprio < 0 ? "unlimited" : std::to_string(*rtprio)) : "unknown";
  if (nice.value_or(false)) {
    c.result = status::ok;
    c.summary = "CAP_SYS_NICE (RLIMIT_RTPRIO " + limit + ")";
  } else if (rtprio && (*rtprio < 0 || *rtprio >= priority)) {
    c.result = status::ok;
    c.summary = "RLIMIT_RTPRIO " + limit + " allows SCHED_FIFO " + std::to_string(priority);
  } else if (!nice && !rtprio) {
    c.result = status::info;
    c.summary = "unknown (cannot read /proc/self/status and /proc/self/limits)";
  } else {
    c.summary = "neither CAP_SYS_NICE nor RLIMIT_RTPRIO >= " + std::to_string(priority) +
                " (RLIMIT_RTPRIO " + limit + "): SCHED_FIFO is refused, threads run as normal ones";
    c.advice =
        "without root: setcap cap_sys_nice,cap_ipc_lock+ep on the cosim program, or "
        "LimitRTPRIO=" +
        std::to_string(priority) +
        " with AmbientCapabilities=CAP_SYS_NICE in its systemd unit, or 'rtprio " +
        std::to_string(priority) +
        "' in /etc/security/limits.conf (cosim doctor --fix-script prints the commands)";
    c.reason = "SCHED_FIFO " + std::to_string(priority) + " not permitted";
  }
  return c;
}

check memlock_check(const fs::path& root) {
  check c{"memory_lock", status::fail, "", "", ""};
  const auto lock = has_capability(read_all(root / "proc/self/status"), cap_ipc_lock);
  const auto memlock = soft_limit(read_all(root / "proc/self/limits"), "Max locked memory");
  const std::string limit =
      memlock ? (*memlock < 0 ? "unlimited" : std::to_string(*memlock) + " bytes") : "unknown";
  if (lock.value_or(false)) {
    c.result = status::ok;
    c.summary = "CAP_IPC_LOCK (RLIMIT_MEMLOCK " + limit + ")";
  } else if (memlock && *memlock < 0) {
    c.result = status::ok;
    c.summary = "RLIMIT_MEMLOCK unlimited";
  } else if (!lock && !memlock) {
    c.result = status::info;
    c.summary = "unknown (cannot read /proc/self/status and /proc/self/limits)";
  } else {
    c.summary = "neither CAP_IPC_LOCK nor an unlimited RLIMIT_MEMLOCK (" + limit +
                "): mlockall fails and real-time threads can take page faults";
    c.advice =
        "without root: setcap cap_sys_nice,cap_ipc_lock+ep on the cosim program, or "
        "LimitMEMLOCK=infinity with AmbientCapabilities=CAP_IPC_LOCK in its systemd "
        "unit, or 'memlock unlimited' in /etc/security/limits.conf";
    c.reason = "memory cannot be locked";
  }
  return c;
}

check smt_check(const fs::path& root) {
  check c{"smt", status::info, "", "", ""};
  const auto control = read_line(root / "sys/devices/system/cpu/smt/control");
  const auto active = read_line(root / "sys/devices/system/cpu/smt/active");
  if (control && (*control == "notsupported" || *control == "notimplemented")) {
    c.result = status::ok;
    c.summary = "no SMT on this CPU";
  } else if (active && *active == "0") {
    c.result = status::ok;
    c.summary = "SMT not active";
  } else if (active && *active == "1") {
    c.result = status::warn;
    c.summary = "SMT active: a sibling hardware thread shares each real-time CPU's core";
    c.advice = "boot with nosmt (or echo off > /sys/devices/system/cpu/smt/control)";
  } else {
    c.summary = "not reported (no /sys/devices/system/cpu/smt)";
  }
  return c;
}

check irq_check(const fs::path& root, const std::vector<int>& rt_cpus) {
  check c{"irq_affinity", status::info, "", "", ""};
  int total = 0;
  int on_rt = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root / "proc/irq", ec)) {
    const auto mask = read_line(entry.path() / "smp_affinity");
    if (!mask) continue;
    ++total;
    if (std::any_of(rt_cpus.begin(), rt_cpus.end(),
                    [&](int cpu) { return mask_has_cpu(*mask, cpu); }))
      ++on_rt;
  }
  if (total == 0) {
    c.summary = "not reported (no /proc/irq/*/smp_affinity)";
  } else if (on_rt == 0) {
    c.result = status::ok;
    c.summary =
        "none of " + std::to_string(total) + " IRQs is routed to CPUs " + join_cpus(rt_cpus);
  } else {
    c.result = status::warn;
    c.summary = std::to_string(on_rt) + " of " + std::to_string(total) +
                " IRQs may be handled on CPUs " + join_cpus(rt_cpus);
    c.advice =
        "route them to the other CPUs (irqaffinity= on the kernel command line, or write "
        "/proc/irq/N/smp_affinity)";
  }
  return c;
}

}  // namespace

std::string fix_script(const fs::path& root, const std::vector<int>& rt_cpus, int online_cpus,
                       int priority, const std::string& program) {
  std::ostringstream o;
  const std::string cpus = join_cpus(rt_cpus);
  std::vector<int> housekeeping;
  for (int cpu = 0; cpu < online_cpus; ++cpu)
    if (std::find(rt_cpus.begin(), rt_cpus.end(), cpu) == rt_cpus.end())
      housekeeping.push_back(cpu);
  const std::string house = join_cpus(housekeeping);
  o << "#!/bin/sh\n"
    << "# Written by `cosim doctor --fix-script` for "
    << read_line(root / "proc/sys/kernel/hostname").value_or("this host") << " (kernel "
    << read_line(root / "proc/sys/kernel/osrelease").value_or("unknown") << "), real-time CPUs "
    << cpus << ", SCHED_FIFO " << priority << ".\n"
    << "# Nothing here has been run. Review it, then run it as root; kernel arguments take\n"
    << "# effect after a reboot.\n"
    << "set -e\n";
  int steps = 0;

  const check kernel = kernel_check(root);
  if (kernel.result != status::ok) {
    ++steps;
    o << "\n# The kernel is not PREEMPT_RT. Debian:\napt-get install -y linux-image-rt-amd64\n";
  }
  const check iso = isolation_check(root, rt_cpus, online_cpus);
  if (iso.result != status::ok) {
    ++steps;
    if (housekeeping.empty()) {
      o << "\n# The real-time CPUs " << cpus
        << " are all the online CPUs: choose fewer (doctor --cpus) so that one is left for\n"
        << "# the system before isolating them.\n";
    } else {
      const std::string args = "isolcpus=" + cpus + " nohz_full=" + cpus + " rcu_nocbs=" + cpus +
                               " irqaffinity=" + house;
      o << "\n# Isolate CPUs " << cpus << " from the scheduler, the tick and RCU callbacks; "
        << "interrupts on CPUs " << house << ".\n"
        << "sed -i 's/^GRUB_CMDLINE_LINUX=\"\\(.*\\)\"/GRUB_CMDLINE_LINUX=\"\\1 " << args
        << "\"/' /etc/default/grub\nupdate-grub\n";
    }
  }
  const auto runtime = read_line(root / "proc/sys/kernel/sched_rt_runtime_us");
  if (runtime && *runtime != "-1") {
    ++steps;
    o << "\n# RT throttling (now " << *runtime << " us per period) off, now and after reboots.\n"
      << "sysctl -w kernel.sched_rt_runtime_us=-1\n"
      << "echo 'kernel.sched_rt_runtime_us = -1' > /etc/sysctl.d/90-cosim-realtime.conf\n";
  }
  std::string governors;
  for (int cpu : rt_cpus) {
    const fs::path g = fs::path("sys/devices/system/cpu") / ("cpu" + std::to_string(cpu)) /
                       "cpufreq/scaling_governor";
    const auto now = read_line(root / g);
    if (now && *now != "performance")
      governors += "echo performance > /" + g.string() + "   # now " + *now + "\n";
  }
  if (!governors.empty()) {
    ++steps;
    o << "\n# Fixed CPU frequency on the real-time CPUs (until reboot; cpupower or a unit keeps "
         "it).\n"
      << governors;
  }
  if (!housekeeping.empty()) {
    std::vector<std::string> irqs;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root / "proc/irq", ec)) {
      const auto mask = read_line(entry.path() / "smp_affinity");
      if (mask && std::any_of(rt_cpus.begin(), rt_cpus.end(),
                              [&](int cpu) { return mask_has_cpu(*mask, cpu); }))
        irqs.push_back(entry.path().filename().string());
    }
    std::sort(irqs.begin(), irqs.end(), [](const std::string& a, const std::string& b) {
      return a.size() != b.size() ? a.size() < b.size() : a < b;
    });
    if (!irqs.empty()) {
      ++steps;
      o << "\n# Interrupts away from CPUs " << cpus << " (until reboot; irqaffinity= above keeps "
        << "it). Some cannot move: their error is ignored.\n"
        << "for irq in";
      for (const auto& n : irqs) o << ' ' << n;
      o << "; do\n  echo " << house << " > /proc/irq/$irq/smp_affinity_list 2>/dev/null || true\n"
        << "done\n";
    }
  }
  const check rtprio = priority_check(root, priority);
  const check memlock = memlock_check(root);
  if (rtprio.result != status::ok || memlock.result != status::ok) {
    ++steps;
    o << "\n# Real time without root: the program's file capabilities (any user who may run it\n"
      << "# gets SCHED_FIFO and locked memory; a copy or a rebuild loses them).\n"
      << "setcap cap_sys_nice,cap_ipc_lock+ep '" << program << "'\n"
      << "# Or, for a systemd service instead, in its [Service] section:\n"
      << "#   AmbientCapabilities=CAP_SYS_NICE CAP_IPC_LOCK\n"
      << "#   LimitRTPRIO=" << priority << "\n"
      << "#   LimitMEMLOCK=infinity\n";
  }
  if (steps == 0) o << "\n# Nothing to change: every check passed.\n";
  return o.str();
}

std::string_view to_string(status s) noexcept {
  switch (s) {
    case status::ok:
      return "ok";
    case status::info:
      return "info";
    case status::warn:
      return "warn";
    case status::fail:
      return "fail";
  }
  return "info";
}

const std::vector<std::string>& check_names() {
  static const std::vector<std::string> names{"kernel",       "rt_throttling", "cpu_isolation",
                                              "cpu_governor", "rt_priority",   "memory_lock",
                                              "smt",          "irq_affinity",  "wakeup_latency"};
  return names;
}

std::vector<int> parse_cpu_list(std::string_view list) {
  std::vector<int> cpus;
  std::string text(list);
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    if (item.empty()) return {};
    const std::size_t dash = item.find('-');
    try {
      std::size_t used = 0;
      const int lo = std::stoi(item.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? item.size() : dash)) return {};
      int hi = lo;
      if (dash != std::string::npos) {
        const std::string rest = item.substr(dash + 1);
        hi = std::stoi(rest, &used);
        if (used != rest.size()) return {};
      }
      if (lo < 0 || hi < lo || hi > 4095) return {};
      for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    } catch (const std::exception&) {
      return {};
    }
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<check> system_checks(const fs::path& root, const std::vector<int>& rt_cpus,
                                 int online_cpus, int priority) {
  return {kernel_check(root),
          throttling_check(root),
          isolation_check(root, rt_cpus, online_cpus),
          governor_check(root, rt_cpus),
          priority_check(root, priority),
          memlock_check(root),
          smt_check(root),
          irq_check(root, rt_cpus)};
}

std::vector<cpu_latency> measure_wakeup(const std::vector<int>& cpus, int priority, int period_us,
                                        double seconds) {
  // As cyclictest -m: memory locked and deep idle states held off while measuring.
  std::string why;
  lock_memory(why);
  const cpu_latency_guard idle_latency;
  const std::int64_t period_ns = static_cast<std::int64_t>(period_us) * 1000;
  const auto span_ns = static_cast<std::int64_t>(std::llround(seconds * 1e9));
  std::vector<std::unique_ptr<latency_histogram>> histograms;
  std::vector<std::uint64_t> late(cpus.size(), 0);
  for (std::size_t i = 0; i < cpus.size(); ++i)
    histograms.push_back(std::make_unique<latency_histogram>());
  std::vector<rt_thread> threads;
  threads.reserve(cpus.size());
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    latency_histogram* h = histograms[i].get();
    std::uint64_t* missed = &late[i];
    threads.emplace_back(
        rt_thread_config{
            .name = "cosim-doctor" + std::to_string(cpus[i]), .cpu = cpus[i], .priority = priority},
        [h, missed, period_ns, span_ns] {
          prefault_stack(std::size_t{64} * 1024);
          std::int64_t next = monotonic_now_ns() + period_ns;
          const std::int64_t end = next + span_ns;
          while (next < end) {
            sleep_until_ns(next);
            const std::int64_t now = monotonic_now_ns();
            h->record_ns(now - next);
            if (now - next > period_ns) ++*missed;
            next += period_ns;
            while (next <= now) next += period_ns;  // skip missed periods, as cyclictest
          }
        });
  }
  std::vector<cpu_latency> out;
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    threads[i].join();
    const latency_histogram& h = *histograms[i];
    cpu_latency r;
    r.cpu = cpus[i];
    r.priority_granted = threads[i].grant().priority_granted;
    r.warning = threads[i].grant().warning;
    r.samples = h.count();
    r.p50_us = h.percentile_us(50);
    r.p99_us = h.percentile_us(99);
    r.max_us = h.max_us();
    r.late = late[i];
    out.push_back(r);
  }
  return out;
}

check latency_check(const std::vector<cpu_latency>& measured, int priority, int period_us,
                    double max_latency_us) {
  check c{"wakeup_latency", status::ok, "", "", ""};
  std::string refused;
  double worst = 0;
  int worst_cpu = -1;
  std::uint64_t late = 0;
  for (const cpu_latency& m : measured) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "%sCPU %d: p50 %.0f us, p99 %.0f us, max %.0f us",
                  c.summary.empty() ? "" : "; ", m.cpu, m.p50_us, m.p99_us, m.max_us);
    c.summary += buf;
    if (m.late > 0)
      c.summary += " (" + std::to_string(m.late) + " of " + std::to_string(m.samples) +
                   " wake-ups later than the " + std::to_string(period_us) + " us period)";
    if (m.priority_granted != priority || !m.warning.empty())
      refused += (refused.empty() ? "" : "; ") + ("CPU " + std::to_string(m.cpu) + ": " +
                                                  (m.warning.empty() ? "not granted" : m.warning));
    if (m.max_us > worst) {
      worst = m.max_us;
      worst_cpu = m.cpu;
    }
    late += m.late;
  }
  if (measured.empty()) {
    c.result = status::info;
    c.summary = "not measured";
    return c;
  }
  char limit[160];
  std::snprintf(limit, sizeof limit, "max %.0f us on CPU %d %s the %.0f us limit", worst, worst_cpu,
                worst > max_latency_us ? "exceeds" : "is within", max_latency_us);
  c.summary = std::string(limit) + " (" + c.summary + ")";
  if (!refused.empty()) {
    c.result = status::fail;
    c.summary = "SCHED_FIFO " + std::to_string(priority) + " on the requested CPUs not granted (" +
                refused + "); " + c.summary;
    c.advice = "see rt_priority";
    c.reason = "SCHED_FIFO " + std::to_string(priority) + " refused";
  } else if (worst > max_latency_us || late > 0) {
    c.result = status::fail;
    c.advice =
        "the failed checks above are the usual causes; a virtual machine adds the "
        "host's scheduling on top";
    char reason[120];
    std::snprintf(reason, sizeof reason, "wake-up latency max %.0f us > %.0f us", worst,
                  max_latency_us);
    c.reason = reason;
  }
  return c;
}

verdict decide(const std::vector<check>& checks) {
  verdict v;
  for (const check& c : checks)
    if (c.result == status::fail) v.reasons.push_back(c.reason.empty() ? c.summary : c.reason);
  v.hard_real_time = v.reasons.empty();
  if (v.hard_real_time) {
    v.text = "hard real time: yes";
  } else {
    v.text = "soft real time only: ";
    for (std::size_t i = 0; i < v.reasons.size(); ++i) v.text += (i ? "; " : "") + v.reasons[i];
  }
  return v;
}

}  // namespace doctor

command add_doctor_command(CLI::App& app) {
  struct state {
    std::string cpus;
    int priority = 80;
    int period_us = 1000;
    double seconds = 3.0;
    double max_latency_us = 100.0;
    bool json = false;
    bool fix_script = false;
  };
  auto st = std::make_shared<state>();
  auto* cmd = app.add_subcommand(
      "doctor",
      "Check what a test bench needs for hard real time and measure this machine's wake-up\n"
      "latency. Prints one line per check (ok, info, warn, fail) with what to change: PREEMPT_RT\n"
      "kernel, RT throttling, isolated CPUs (isolcpus/nohz_full), CPU frequency governor,\n"
      "RLIMIT_RTPRIO/CAP_SYS_NICE, RLIMIT_MEMLOCK/CAP_IPC_LOCK, SMT and IRQ affinity; then\n"
      "runs one SCHED_FIFO rt_thread per CPU for --seconds (as cyclictest -m -t -a) and prints\n"
      "p50/p99/max wake-up latency, and a verdict: 'hard real time: yes' when no check failed,\n"
      "otherwise 'soft real time only:' and the reasons. Exit code 0 whenever it ran (the\n"
      "verdict is in the output), 2 on bad options.");
  cmd->add_option("--cpus", st->cpus,
                  "Real-time CPUs, e.g. 0,1 or 2-3 (default: the isolated CPUs, else all online)");
  cmd->add_option("--priority", st->priority,
                  "SCHED_FIFO priority of the test threads (default 80)")
      ->check(CLI::Range(1, 99));
  cmd->add_option("--period-us", st->period_us, "Wake-up period [us] (default 1000)")
      ->check(CLI::Range(50, 1'000'000));
  cmd->add_option("--seconds", st->seconds, "Length of the latency test [s] (default 3)")
      ->check(CLI::Range(0.01, 3600.0));
  cmd->add_option("--max-latency-us", st->max_latency_us,
                  "Largest wake-up latency a hard real-time bench may show [us] (default 100)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", st->json, "Print the result as JSON instead of text");
  cmd->add_flag("--fix-script", st->fix_script,
                "Print (do not run) a shell script with this host's commands: kernel arguments "
                "(isolcpus, nohz_full, rcu_nocbs, irqaffinity), RT throttling, CPU governor, IRQ "
                "affinity, file capabilities or systemd limits; no latency test");
  return {
      cmd, [st] {
        using namespace doctor;
        const int online = online_cpu_count();
        std::vector<int> cpus;
        if (st->cpus.empty()) {
          for (int c : parse_cpu_list(read_line("/sys/devices/system/cpu/isolated").value_or("")))
            if (cpu_exists(c)) cpus.push_back(c);
          if (cpus.empty())
            for (int c = 0; c < online; ++c)
              if (cpu_exists(c)) cpus.push_back(c);
        } else {
          cpus = parse_cpu_list(st->cpus);
          bool known = !cpus.empty();
          for (int c : cpus) known = known && cpu_exists(c);
          COSIM_INPUT_CHECK(known, errc::config_value,
                            "doctor --cpus = '" + st->cpus +
                                "': expected a list of online CPUs such as 0,1 or 0-1 (this "
                                "machine has CPUs 0-" +
                                std::to_string(online - 1) + ")");
        }
        if (st->fix_script) {
          std::error_code ec;
          const fs::path self = fs::read_symlink("/proc/self/exe", ec);
          std::fputs(
              fix_script("/", cpus, online, st->priority, ec ? std::string("cosim") : self.string())
                  .c_str(),
              stdout);
          return 0;
        }
        std::vector<check> checks = system_checks("/", cpus, online, st->priority);
        if (!st->json) {
          std::printf("cosim doctor: hard real-time readiness for SCHED_FIFO %d on CPUs %s\n",
                      st->priority, join_cpus(cpus).c_str());
          for (const check& c : checks)
            std::printf("  %-15s %-4s  %s\n", c.name.c_str(),
                        std::string(to_string(c.result)).c_str(), c.summary.c_str());
          std::fflush(stdout);
          std::fprintf(stderr, "cosim doctor: measuring wake-up latency for %g s...\n",
                       st->seconds);
        }
        const auto measured = measure_wakeup(cpus, st->priority, st->period_us, st->seconds);
        checks.push_back(latency_check(measured, st->priority, st->period_us, st->max_latency_us));
        const verdict v = decide(checks);
        if (st->json) {
          json_writer j;
          j.begin_object();
          j.key("cpus").begin_array();
          for (int c : cpus) j.value(c);
          j.end_array();
          j.key("priority").value(st->priority);
          j.key("period_us").value(st->period_us);
          j.key("seconds").value(st->seconds);
          j.key("max_latency_us").value(st->max_latency_us);
          j.key("checks").begin_array();
          for (const check& c : checks) {
            j.begin_object();
            j.key("name").value(c.name);
            j.key("status").value(to_string(c.result));
            j.key("summary").value(c.summary);
            j.key("advice").value(c.advice);
            j.end_object();
          }
          j.end_array();
          j.key("wakeup_latency").begin_array();
          for (const cpu_latency& m : measured) {
            j.begin_object();
            j.key("cpu").value(m.cpu);
            j.key("priority_granted").value(m.priority_granted);
            j.key("samples").value(static_cast<std::int64_t>(m.samples));
            j.key("p50_us").value(m.p50_us);
            j.key("p99_us").value(m.p99_us);
            j.key("max_us").value(m.max_us);
            j.key("late").value(static_cast<std::int64_t>(m.late));
            j.end_object();
          }
          j.end_array();
          j.key("hard_real_time").value(v.hard_real_time);
          j.key("verdict").value(v.text);
          j.key("reasons").begin_array();
          for (const auto& r : v.reasons) j.value(r);
          j.end_array();
          j.end_object();
          std::printf("%s\n", j.str().c_str());
        } else {
          const check& l = checks.back();
          std::printf("  %-15s %-4s  %s\n", l.name.c_str(),
                      std::string(to_string(l.result)).c_str(), l.summary.c_str());
          bool advised = false;
          for (const check& c : checks) {
            if (c.advice.empty() || c.result == status::ok) continue;
            if (!advised) std::printf("to do:\n");
            advised = true;
            std::printf("  %-15s %s\n", c.name.c_str(), c.advice.c_str());
          }
          std::printf("verdict: %s\n", v.text.c_str());
        }
        return 0;
      }};
}

}  // namespace cosim::cli
