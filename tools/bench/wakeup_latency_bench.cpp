// Wake-up latency of a periodic cosim::rt_thread loop (clock_nanosleep TIMER_ABSTIME on
// CLOCK_MONOTONIC, latency = wake time - deadline) against cyclictest measuring the same
// thing with the same CPU, priority, interval and duration, one after the other.
// Both use 1 µs histogram bins and report the bin's upper edge for p50/p99.
//
// Options (environment variables as fallback):
//   --duration-s=N   COSIM_WAKEUP_DURATION_S   default 10 (per measurement)
//   --period-us=N    COSIM_WAKEUP_PERIOD_US    default 1000
//   --priority=N     COSIM_WAKEUP_PRIORITY     default 80 (SCHED_FIFO)
//   --cpu=N          COSIM_WAKEUP_CPU          default 1
//   --no-cyclictest  only measure ours
// A plain main(): the measurement is a fixed-duration loop, not a repeated kernel, so
// Google Benchmark's iteration machinery does not apply.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/latency_histogram.hpp"
#include "cosim/runtime/rt_thread.hpp"
#include "cosim/runtime/threaded_executor.hpp"

#include "bench_support.hpp"

using cosim::bench::ratio;

namespace {

constexpr const char* cyclictest_path = "/usr/bin/cyclictest";
constexpr std::size_t cyclictest_histogram_us = 2000;  // -h: bins kept by cyclictest

struct options {
  int duration_s = 10;
  int period_us = 1000;
  int priority = 80;
  int cpu = 1;
  bool run_cyclictest = true;
};

struct result {
  bool valid = false;
  std::uint64_t samples = 0;
  std::uint64_t late = 0;  // wake-ups later than one period (what a deadline miss needs)
  double min_us = 0;
  double p50_us = 0;
  double p99_us = 0;
  double max_us = 0;
  std::string note;
};

// Integer option (argv, then the environment), as int.
int int_option(int& argc, char** argv, std::string_view name, const char* env, int fallback) {
  return static_cast<int>(cosim::bench::option_value(argc, argv, name, env, fallback));
}

result summarise(const cosim::latency_histogram& h, int period_us) {
  result r;
  r.valid = h.count() > 0;
  r.samples = h.count();
  // Bin i holds [i, i+1) us: later than the period means bins above period_us, plus the
  // overflow bin.
  for (std::size_t i = static_cast<std::size_t>(period_us) + 1; i < h.bin_count(); ++i)
    r.late += h.bin(i);
  r.late += h.overflow_count();
  r.min_us = h.min_us();
  r.p50_us = h.percentile_us(50);
  r.p99_us = h.percentile_us(99);
  r.max_us = h.max_us();
  return r;
}

result run_ours(const options& opt) {
  // Sized for the whole run before the thread starts: no allocation in the loop.
  cosim::latency_histogram histogram;
  std::uint64_t overruns = 0;
  const cosim::cpu_latency_guard dma;
  const std::int64_t period_ns = static_cast<std::int64_t>(opt.period_us) * 1000;
  cosim::rt_thread thread({.name = "wakeup-bench", .cpu = opt.cpu, .priority = opt.priority}, [&] {
    cosim::prefault_stack(std::size_t{64} * 1024);
    std::int64_t next = cosim::monotonic_now_ns() + period_ns;
    const std::int64_t end = next + static_cast<std::int64_t>(opt.duration_s) * 1'000'000'000;
    while (next < end) {
      cosim::sleep_until_ns(next);
      const std::int64_t now = cosim::monotonic_now_ns();
      histogram.record_ns(now - next);
      next += period_ns;
      // Missed deadlines are skipped, not run back to back
      // (same as cyclictest).
      while (next <= now) {
        next += period_ns;
        ++overruns;
      }
    }
  });
  const cosim::rt_thread_grant grant = thread.grant();
  thread.join();
  result r = summarise(histogram, opt.period_us);
  std::ostringstream note;
  note << "SCHED_FIFO " << grant.priority_granted << "/" << grant.priority_requested << ", CPU "
       << grant.cpu_granted << "/" << grant.cpu_requested << ", cpu_dma_latency=0 "
       << (dma.active() ? "held" : "unavailable") << ", overruns " << overruns;
  if (!grant.warning.empty()) note << "; WARNING: " << grant.warning;
  r.note = note.str();
  return r;
}

result run_cyclictest(const options& opt) {
  result r;
  std::ostringstream cmd;
  cmd << cyclictest_path << " -m -q -t1 -a" << opt.cpu << " -p" << opt.priority << " -i"
      << opt.period_us << " -D" << opt.duration_s << " -h" << cyclictest_histogram_us << " 2>&1";
  r.note = cmd.str();
  FILE* pipe = ::popen(r.note.c_str(), "r");
  if (pipe == nullptr) {
    r.note += " -> popen failed: " + std::generic_category().message(errno);
    return r;
  }
  std::string output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) output += buffer;
  const int status = ::pclose(pipe);

  cosim::latency_histogram histogram(cyclictest_histogram_us);
  long long max_us = -1;
  long long min_us = -1;
  long long overflows = 0;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    long long a = 0;
    long long b = 0;
    if (std::sscanf(line.c_str(), "# Max Latencies: %lld", &a) == 1) {
      max_us = a;
    } else if (std::sscanf(line.c_str(), "# Min Latencies: %lld", &a) == 1) {
      min_us = a;
    } else if (std::sscanf(line.c_str(), "# Histogram Overflows: %lld", &a) == 1) {
      overflows = a;
    } else if (!line.empty() && line[0] != '#' &&
               std::sscanf(line.c_str(), "%lld %lld", &a, &b) == 2) {
      // "bin count": cyclictest truncates to whole µs, so bin a is [a, a+1) µs.
      for (long long i = 0; i < b; ++i) histogram.record_ns(a * 1000);
    }
  }
  if (status != 0 || max_us < 0) {
    r.note += " -> failed (status " + std::to_string(status) + "):\n" + output;
    return r;
  }
  // Overflowed samples are only known to be <= the maximum.
  for (long long i = 0; i < overflows; ++i) histogram.record_ns(max_us * 1000);
  r = summarise(histogram, opt.period_us);
  r.min_us = static_cast<double>(min_us);
  r.max_us = static_cast<double>(max_us);
  r.note = cmd.str().substr(0, cmd.str().size() - 5);  // without " 2>&1"
  return r;
}

// The runtime's own threads: crane M1 f-s in realtime mode, one period per macro step,
// the hydraulics thread on the measured CPU, the multibody thread on another, both at
// the same SCHED_FIFO priority, the watchdog one above.
struct crane_result {
  cosim::run_outcome outcome;
  bool ran = false;
};

crane_result run_crane(const options& opt) {
  struct discard_sink final : cosim::row_sink {
    void begin(std::span<const std::string>) override {}
    void write(std::span<const double>) noexcept override {}
    void end() override {}
  } sink;
  const std::string root =
      std::string(__FILE__).substr(0, std::string(__FILE__).rfind("/tools/bench/"));
  const int other = opt.cpu == 0 ? (cosim::online_cpu_count() > 1 ? 1 : 0) : 0;
  const std::vector<std::string> sets{"run.mode=realtime",
                                      "run.duration=" + std::to_string(opt.duration_s),
                                      "run.macro_step=" + std::to_string(opt.period_us * 1e-6),
                                      "threads.hydraulics.cpu=" + std::to_string(opt.cpu),
                                      "threads.hydraulics.priority=" + std::to_string(opt.priority),
                                      "threads.multibody.cpu=" + std::to_string(other),
                                      "threads.multibody.priority=" + std::to_string(opt.priority)};
  crane_result r;
  try {
    const auto sc =
        cosim::config::load_scenario(root + "/rt_config/scenarios/crane_m1_fs.toml", sets);
    auto built = cosim::config::build(sc);
    cosim::threaded_options topt = cosim::config::make_threaded_options(sc, *built);
    topt.watchdog.max_overruns = 1'000'000;  // measure misses, do not stop on them
    const cosim::cpu_latency_guard dma;
    r.outcome = cosim::run_threaded(built->sys, built->plan, built->limits, sink, topt);
    r.ran = true;
  } catch (const std::exception& e) {
    std::printf("  cosim realtime crane: failed: %s\n", e.what());
  }
  return r;
}

void print_row(const char* label, const result& r) {
  if (!r.valid) {
    std::printf("  %-18s (no result)\n", label);
    return;
  }
  std::printf("  %-18s %9llu %8.1f %8.1f %8.1f %9.1f %6llu\n", label,
              static_cast<unsigned long long>(r.samples), r.min_us, r.p50_us, r.p99_us, r.max_us,
              static_cast<unsigned long long>(r.late));
}

}  // namespace

int run(int argc, char** argv) {
  options opt;
  opt.duration_s =
      std::max(1, int_option(argc, argv, "--duration-s", "COSIM_WAKEUP_DURATION_S", 10));
  opt.period_us =
      std::max(10, int_option(argc, argv, "--period-us", "COSIM_WAKEUP_PERIOD_US", 1000));
  opt.priority = int_option(argc, argv, "--priority", "COSIM_WAKEUP_PRIORITY", 80);
  opt.cpu = int_option(argc, argv, "--cpu", "COSIM_WAKEUP_CPU", 1);
  opt.run_cyclictest = !cosim::bench::take_flag(argc, argv, "--no-cyclictest");
  if (argc > 1) {
    std::fprintf(stderr,
                 "usage: %s [--duration-s=N] [--period-us=N] [--priority=N] [--cpu=N] "
                 "[--no-cyclictest]\n",
                 argv[0]);
    return 2;
  }
  if (!cosim::cpu_exists(opt.cpu)) {
    const int fallback = cosim::online_cpu_count() - 1;
    std::printf("wakeup_latency_bench: CPU %d is not online, using CPU %d\n", opt.cpu, fallback);
    opt.cpu = fallback;
  }

  std::string why;
  const bool locked = cosim::lock_memory(why);
  std::printf(
      "wakeup_latency_bench: period %d us, SCHED_FIFO priority %d, CPU %d, %d s per "
      "measurement, mlockall %s\n",
      opt.period_us, opt.priority, opt.cpu, opt.duration_s,
      locked ? "ok" : ("FAILED: " + why).c_str());

  const result ours = run_ours(opt);
  std::printf("  ours: %s\n", ours.note.c_str());

  result theirs;
  if (!opt.run_cyclictest) {
    std::printf("  cyclictest: skipped (--no-cyclictest)\n");
  } else if (::access(cyclictest_path, X_OK) != 0) {
    std::printf(
        "  cyclictest: not installed (%s missing; apt-get install rt-tests); "
        "reporting ours only\n",
        cyclictest_path);
  } else {
    theirs = run_cyclictest(opt);
    std::printf("  cyclictest: %s\n", theirs.note.c_str());
  }

  const crane_result crane = run_crane(opt);
  if (crane.ran) {
    const auto& o = crane.outcome;
    std::printf(
        "  cosim realtime crane M1 f-s: %s after %.3f s, %lld macro steps, deadline misses %lld\n",
        cosim::to_string(o.status), o.sim_time_s, static_cast<long long>(o.macro_steps),
        static_cast<long long>(o.deadline_misses));
  }

  std::printf(
      "\n  %-18s %9s %8s %8s %8s %9s %6s   (us; late: wake-ups later than a period,\n"
      "  %-18s %9s %8s %8s %8s %9s %6s    for the crane: deadline overruns)\n",
      "", "samples", "min", "p50", "p99", "max", "late", "", "", "", "", "", "", "");
  print_row("cosim rt_thread", ours);
  if (crane.ran)
    for (const auto& t : crane.outcome.threads)
      std::printf("  %-18s %9lld %8s %8.1f %8.1f %9.1f %6lld   (CPU %d, SCHED_FIFO %d)\n",
                  ("crane " + t.name).c_str(), static_cast<long long>(t.steps), "-",
                  t.wakeup_p50_us, t.wakeup_p99_us, t.wakeup_max_us,
                  static_cast<long long>(t.overruns), t.cpu_granted, t.priority_granted);
  if (theirs.valid) {
    print_row("cyclictest", theirs);
    std::printf(
        "\nwakeup_latency_bench summary: p99 ours/cyclictest = %.3f (p50 %.3f, max %.3f; "
        "lower is better; p50/p99 are 1-us bin upper edges, cyclictest max is truncated to "
        "whole us)\n",
        ratio(ours.p99_us, theirs.p99_us), ratio(ours.p50_us, theirs.p50_us),
        ratio(ours.max_us, theirs.max_us));
    if (crane.ran)
      for (const auto& t : crane.outcome.threads)
        if (t.cpu_granted == opt.cpu)
          std::printf(
              "wakeup_latency_bench summary: realtime crane %s thread (CPU %d) p99/cyclictest p99 "
              "= "
              "%.3f, deadline misses %lld in %lld steps\n",
              t.name.c_str(), t.cpu_granted, ratio(t.wakeup_p99_us, theirs.p99_us),
              static_cast<long long>(crane.outcome.deadline_misses),
              static_cast<long long>(t.steps));
  } else {
    std::printf(
        "\nwakeup_latency_bench summary: ours only: p50 %.1f us, p99 %.1f us, max %.1f us\n",
        ours.p50_us, ours.p99_us, ours.max_us);
  }
  return ours.valid ? 0 : 1;
}

int main(int argc, char** argv) {
  return cosim::bench::guarded_main(argc, argv, run);
}
