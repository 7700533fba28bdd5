// cosim doctor: the checks read from fake /proc and /sys trees of a PREEMPT_RT bench and of
// a generic machine (the verdict must differ for the right reasons), the latency check,
// and the program itself with a short latency test (every check line, JSON, exit codes).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <boost/json/src.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "doctor.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
namespace dr = cosim::cli::doctor;
using cosim::test::temp_dir;

void put(const fs::path& root, const std::string& rel, const std::string& text) {
  const fs::path p = root / rel;
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text << "\n";
}

std::string limits_file(const std::string& rtprio, const std::string& memlock) {
  return "Limit                     Soft Limit           Hard Limit           Units     \n"
         "Max cpu time              unlimited            unlimited            seconds   \n"
         "Max locked memory         " +
         memlock + "              " + memlock +
         "              bytes     \n"
         "Max realtime priority     " +
         rtprio + "                    " + rtprio + "                    \n";
}

// A 4-CPU bench prepared for hard real time on CPUs 2,3, run by a user (no capabilities)
// with rtprio/memlock limits.
void make_rt_bench(const fs::path& r) {
  put(r, "sys/kernel/realtime", "1");
  put(r, "proc/sys/kernel/version", "#1 SMP PREEMPT_RT Debian 6.1.99-1");
  put(r, "proc/sys/kernel/osrelease", "6.1.0-25-rt-amd64");
  put(r, "proc/sys/kernel/sched_rt_runtime_us", "-1");
  put(r, "proc/sys/kernel/sched_rt_period_us", "1000000");
  put(r, "proc/cmdline",
      "BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=domain,managed_irq,2-3 "
      "nohz_full=2-3 irqaffinity=0-1 quiet");
  put(r, "sys/devices/system/cpu/isolated", "2-3");
  put(r, "sys/devices/system/cpu/nohz_full", "2-3");
  for (int c = 0; c < 4; ++c)
    put(r, "sys/devices/system/cpu/cpu" + std::to_string(c) + "/cpufreq/scaling_governor",
        "performance");
  put(r, "proc/self/status", "Name:\tcosim\nCapEff:\t0000000000000000\n");
  put(r, "proc/self/limits", limits_file("99", "unlimited"));
  put(r, "sys/devices/system/cpu/smt/control", "off");
  put(r, "sys/devices/system/cpu/smt/active", "0");
  for (int irq : {0, 1, 8, 24, 25})
    put(r, "proc/irq/" + std::to_string(irq) + "/smp_affinity", "3");
}

// A generic desktop kernel, nothing prepared, SMT on, default limits, no capabilities.
void make_generic(const fs::path& r) {
  put(r, "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.99-1");
  put(r, "proc/sys/kernel/osrelease", "6.1.0-25-amd64");
  put(r, "proc/sys/kernel/sched_rt_runtime_us", "950000");
  put(r, "proc/sys/kernel/sched_rt_period_us", "1000000");
  put(r, "proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet");
  put(r, "sys/devices/system/cpu/isolated", "");
  put(r, "sys/devices/system/cpu/nohz_full", "(null)");
  for (int c = 0; c < 4; ++c)
    put(r, "sys/devices/system/cpu/cpu" + std::to_string(c) + "/cpufreq/scaling_governor",
        "powersave");
  put(r, "proc/self/status", "Name:\tcosim\nCapEff:\t0000000000000000\n");
  put(r, "proc/self/limits", limits_file("0", "8388608"));
  put(r, "sys/devices/system/cpu/smt/control", "on");
  put(r, "sys/devices/system/cpu/smt/active", "1");
  put(r, "proc/irq/0/smp_affinity", "f");
  put(r, "proc/irq/24/smp_affinity", "00000000,0000000c");
  put(r, "proc/irq/25/smp_affinity", "1");
}

const dr::check& find(const std::vector<dr::check>& checks, const std::string& name) {
  for (const auto& c : checks)
    if (c.name == name) return c;
  static const dr::check none{"missing", dr::status::info, "", "", ""};
  ADD_FAILURE() << "no check " << name;
  return none;
}

std::vector<dr::cpu_latency> good_latency() {
  return {{2, 80, 3000, 3, 8, 21, 0, ""}, {3, 80, 3000, 3, 9, 25, 0, ""}};
}

TEST(Doctor, PreemptRtBenchIsHardRealTime) {
  temp_dir dir;
  make_rt_bench(dir.path());
  auto checks = dr::system_checks(dir.path(), {2, 3}, 4, 80);
  for (const auto& c : checks) EXPECT_EQ(c.result, dr::status::ok) << c.name << ": " << c.summary;
  checks.push_back(dr::latency_check(good_latency(), 80, 1000, 100));
  EXPECT_EQ(checks.back().result, dr::status::ok) << checks.back().summary;
  const dr::verdict v = dr::decide(checks);
  EXPECT_TRUE(v.hard_real_time) << v.text;
  EXPECT_EQ(v.text, "hard real time: yes");
  EXPECT_TRUE(v.reasons.empty());
  // Every check of the documented list, in order.
  ASSERT_EQ(checks.size(), dr::check_names().size());
  for (std::size_t i = 0; i < checks.size(); ++i) EXPECT_EQ(checks[i].name, dr::check_names()[i]);
}

TEST(Doctor, GenericMachineIsSoftRealTimeWithTheReasons) {
  temp_dir dir;
  make_generic(dir.path());
  auto checks = dr::system_checks(dir.path(), {2, 3}, 4, 80);
  EXPECT_EQ(find(checks, "kernel").result, dr::status::fail);
  EXPECT_EQ(find(checks, "rt_throttling").result, dr::status::warn);
  EXPECT_NE(find(checks, "rt_throttling").summary.find("950000 us of every 1000000"),
            std::string::npos);
  EXPECT_EQ(find(checks, "cpu_isolation").result, dr::status::fail);
  EXPECT_NE(find(checks, "cpu_isolation").summary.find("CPUs 2,3 not isolated"), std::string::npos)
      << find(checks, "cpu_isolation").summary;
  EXPECT_EQ(find(checks, "cpu_governor").result, dr::status::warn);
  EXPECT_EQ(find(checks, "rt_priority").result, dr::status::fail);
  EXPECT_EQ(find(checks, "memory_lock").result, dr::status::fail);
  EXPECT_EQ(find(checks, "smt").result, dr::status::warn);
  // IRQ 0 (f) and 24 (c) reach CPUs 2,3; IRQ 25 (1) does not.
  EXPECT_EQ(find(checks, "irq_affinity").result, dr::status::warn);
  EXPECT_EQ(find(checks, "irq_affinity").summary.rfind("2 of 3 IRQs", 0), 0U)
      << find(checks, "irq_affinity").summary;
  checks.push_back(dr::latency_check(good_latency(), 80, 1000, 100));
  const dr::verdict v = dr::decide(checks);
  EXPECT_FALSE(v.hard_real_time);
  EXPECT_EQ(v.text,
            "soft real time only: kernel not PREEMPT_RT; CPUs 2,3 not isolated; SCHED_FIFO 80 "
            "not permitted; memory cannot be locked");
  ASSERT_EQ(v.reasons.size(), 4U) << v.text;
  for (const auto& c : checks) {
    if (c.result == dr::status::fail || c.result == dr::status::warn) {
      EXPECT_FALSE(c.advice.empty()) << c.name << " says what is wrong but not what to do";
    }
  }
}

TEST(Doctor, CapabilitiesGrantWhatLimitsDoNot) {
  temp_dir dir;
  make_generic(dir.path());
  // CAP_IPC_LOCK (bit 14) and CAP_SYS_NICE (bit 23): 0x804000.
  put(dir.path(), "proc/self/status", "Name:\tcosim\nCapEff:\t0000000000804000\n");
  const auto checks = dr::system_checks(dir.path(), {2, 3}, 4, 80);
  EXPECT_EQ(find(checks, "rt_priority").result, dr::status::ok);
  EXPECT_EQ(find(checks, "memory_lock").result, dr::status::ok);
  // Without the capabilities, an rtprio limit below the priority is not enough.
  put(dir.path(), "proc/self/status", "Name:\tcosim\nCapEff:\t0000000000000000\n");
  put(dir.path(), "proc/self/limits", limits_file("50", "unlimited"));
  const auto again = dr::system_checks(dir.path(), {2, 3}, 4, 80);
  EXPECT_EQ(find(again, "rt_priority").result, dr::status::fail);
  EXPECT_EQ(find(again, "memory_lock").result, dr::status::ok);
  EXPECT_EQ(find(dr::system_checks(dir.path(), {2, 3}, 4, 50), "rt_priority").result,
            dr::status::ok);
}

TEST(Doctor, AllCpusRealTimeLeavesNothingForTheSystem) {
  temp_dir dir;
  make_rt_bench(dir.path());
  put(dir.path(), "sys/devices/system/cpu/isolated", "0-3");
  const auto c = find(dr::system_checks(dir.path(), {0, 1, 2, 3}, 4, 80), "cpu_isolation");
  EXPECT_EQ(c.result, dr::status::fail);
  EXPECT_NE(c.summary.find("all the online CPUs"), std::string::npos) << c.summary;
  // Isolated but ticking: a warning, not a failure.
  put(dir.path(), "sys/devices/system/cpu/nohz_full", "(null)");
  put(dir.path(), "proc/cmdline", "isolcpus=2,3");
  EXPECT_EQ(find(dr::system_checks(dir.path(), {2, 3}, 4, 80), "cpu_isolation").result,
            dr::status::warn);
}

TEST(Doctor, LatencyCheckFailsOnSlowOrRefusedWakeUps) {
  auto m = good_latency();
  EXPECT_EQ(dr::latency_check(m, 80, 1000, 100).result, dr::status::ok);
  m[1].max_us = 2345;
  m[1].late = 2;
  const dr::check slow = dr::latency_check(m, 80, 1000, 100);
  EXPECT_EQ(slow.result, dr::status::fail);
  EXPECT_EQ(slow.summary.rfind("max 2345 us on CPU 3 exceeds the 100 us limit", 0), 0U)
      << slow.summary;
  EXPECT_EQ(slow.reason, "wake-up latency max 2345 us > 100 us");
  EXPECT_NE(slow.summary.find("2 of 3000 wake-ups later than the 1000 us period"),
            std::string::npos)
      << slow.summary;
  m = good_latency();
  m[0].priority_granted = 0;
  m[0].warning = "SCHED_FIFO priority 80 refused";
  EXPECT_EQ(dr::latency_check(m, 80, 1000, 100).result, dr::status::fail);
}

TEST(Doctor, CpuLists) {
  EXPECT_EQ(dr::parse_cpu_list("0-3,6"), (std::vector<int>{0, 1, 2, 3, 6}));
  EXPECT_EQ(dr::parse_cpu_list("1,0,1"), (std::vector<int>{0, 1}));
  EXPECT_TRUE(dr::parse_cpu_list("").empty());
  EXPECT_TRUE(dr::parse_cpu_list("(null)").empty());
  EXPECT_TRUE(dr::parse_cpu_list("3-1").empty());
  EXPECT_TRUE(dr::parse_cpu_list("1,,2").empty());
  EXPECT_TRUE(dr::parse_cpu_list("1x").empty());
}

// ---- the program ----

struct result {
  int code = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

result cosim(const temp_dir& dir, const std::string& args) {
  const std::string cmd = "'" + std::string(COSIM_EXE) + "' " + args + " >'" + (dir / "out") +
                          "' 2>'" + (dir / "err") + "'";
  const int status = std::system(cmd.c_str());
  result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

TEST(DoctorCommand, PrintsEveryCheckAndAVerdict) {
  temp_dir dir;
  const result r = cosim(dir, "doctor --seconds 0.2 --cpus 0");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  for (const std::string& name : dr::check_names()) {
    const std::string head = "\n  " + name + " ";
    const auto at = r.out.find(head);
    ASSERT_NE(at, std::string::npos) << name << " missing:\n" << r.out;
    const std::string rest = r.out.substr(at + head.size(), 30);
    EXPECT_TRUE(rest.find("ok") != std::string::npos || rest.find("info") != std::string::npos ||
                rest.find("warn") != std::string::npos || rest.find("fail") != std::string::npos)
        << name << ": " << rest;
  }
  EXPECT_NE(r.out.find("p50 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p99 "), std::string::npos) << r.out;
  const bool hard = r.out.find("\nverdict: hard real time: yes\n") != std::string::npos;
  const bool soft = r.out.find("\nverdict: soft real time only: ") != std::string::npos;
  EXPECT_TRUE(hard != soft) << r.out;
}

TEST(DoctorCommand, JsonHasEveryField) {
  temp_dir dir;
  const result r = cosim(dir, "doctor --seconds 0.2 --cpus 0 --period-us 500 --json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  boost::json::error_code ec;
  const boost::json::value v = boost::json::parse(r.out, ec);
  ASSERT_FALSE(ec) << ec.message() << "\n" << r.out;
  const auto& o = v.as_object();
  for (const char* key : {"cpus", "priority", "period_us", "seconds", "max_latency_us", "checks",
                          "wakeup_latency", "hard_real_time", "verdict", "reasons"})
    EXPECT_TRUE(o.contains(key)) << key;
  EXPECT_EQ(o.at("period_us").as_int64(), 500);
  const auto& checks = o.at("checks").as_array();
  ASSERT_EQ(checks.size(), dr::check_names().size());
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const auto& c = checks[i].as_object();
    EXPECT_EQ(c.at("name").as_string(), dr::check_names()[i]);
    const std::string st(c.at("status").as_string());
    EXPECT_TRUE(st == "ok" || st == "info" || st == "warn" || st == "fail") << st;
    EXPECT_TRUE(c.contains("summary") && c.contains("advice"));
  }
  const auto& lat = o.at("wakeup_latency").as_array();
  ASSERT_EQ(lat.size(), 1U);
  const auto& l = lat[0].as_object();
  EXPECT_EQ(l.at("cpu").as_int64(), 0);
  // 0.2 s at 500 us: about 400 wake-ups (fewer if some periods were skipped).
  EXPECT_GT(l.at("samples").as_int64(), 100);
  EXPECT_LE(l.at("samples").as_int64(), 400);
  for (const char* key : {"p50_us", "p99_us", "max_us", "late", "priority_granted"})
    EXPECT_TRUE(l.contains(key)) << key;
  EXPECT_LE(l.at("p50_us").to_number<double>(), l.at("p99_us").to_number<double>());
  const bool hard = o.at("hard_real_time").as_bool();
  EXPECT_EQ(o.at("reasons").as_array().empty(), hard);
}

TEST(DoctorCommand, BadOptionsExitTwoNamingTheOption) {
  temp_dir dir;
  for (const char* args :
       {"doctor --seconds 0", "doctor --seconds -1", "doctor --priority 0", "doctor --priority 100",
        "doctor --cpus 9999", "doctor --cpus x", "doctor --period-us 10", "doctor --bogus"}) {
    const result r = cosim(dir, args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
  }
  const result cpus = cosim(dir, "doctor --cpus 9999");
  EXPECT_NE(cpus.err.find("--cpus = '9999'"), std::string::npos) << cpus.err;
}

/// Lines of text that contain `what`.
std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(what) != std::string::npos) ++n;
  return n;
}

TEST(CosimLogOptions, OverrunsAreRateLimitedAndQuietSilencesThem) {
  // A 20 us macro step cannot be kept by a normal thread: nearly every step overruns.
  temp_dir dir;
  const std::string run = "run " COSIM_SOURCE_DIR
                          "/rt_config/scenarios/crane_m1_fs.toml --set run.mode=realtime "
                          "--set run.macro_step=2e-5 --set run.duration=0.1 "
                          "--set watchdog.max_overruns=1000000 --out ";
  const result loud = cosim(dir, "--log-level info " + run + (dir / "a"));
  ASSERT_TRUE(loud.code == 0 || loud.code == 1) << loud.out << loud.err;
  const std::string summary = slurp(dir / "a/summary.json");
  boost::json::error_code ec;
  const auto s = boost::json::parse(summary, ec);
  ASSERT_FALSE(ec) << summary;
  const std::int64_t misses = s.as_object().at("deadline_misses").as_int64();
  const double wall = s.as_object().at("wall_time_s").to_number<double>();
  ASSERT_GE(misses, 50) << "the run was expected to overrun";
  // The first overrun, then at most one summary per second of wall time, and the rest at
  // the end -- not one line per overrun.
  const std::size_t lines = count_of(loud.err, "overrun");
  EXPECT_GE(lines, 1U) << loud.err;
  EXPECT_LE(lines, 2U + static_cast<std::size_t>(wall)) << loud.err;
  EXPECT_EQ(count_of(loud.err, "a="), 0U) << loud.err;
  EXPECT_NE(loud.err.find("at t_sim="), std::string::npos) << loud.err;
  // --quiet (= --log-level error), before or after the subcommand: no warnings at all.
  for (const std::string& args : {"--quiet " + run + (dir / "b"), run + (dir / "c") + " -q"}) {
    const result quiet = cosim(dir, args);
    ASSERT_TRUE(quiet.code == 0 || quiet.code == 1) << args << quiet.err;
    EXPECT_EQ(count_of(quiet.err, "overrun"), 0U) << args << "\n" << quiet.err;
  }
}

TEST(CosimLogOptions, BadLevelOrBothOptionsExitTwo) {
  temp_dir dir;
  const result loud = cosim(dir, "--log-level loud doctor --seconds 0.05");
  EXPECT_EQ(loud.code, 2);
  EXPECT_NE(loud.err.find("--log-level"), std::string::npos) << loud.err;
  EXPECT_EQ(cosim(dir, "--quiet --log-level info doctor --seconds 0.05").code, 2);
}

}  // namespace
