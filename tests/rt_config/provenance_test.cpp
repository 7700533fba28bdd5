// summary.json's provenance pieces: the host read below a root laid out like /proc and /sys,
// UTC ISO 8601 start times, and the config echo of the run-time sections (drivers, threads,
// watchdog) against the values the shipped bench scenario's file states.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "bench_key_file.hpp"
#include "cosim/rt_config/provenance.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;
namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(HostInfo, ReadsAnRtHostBelowRoot) {
  temp_dir root;
  const fs::path r = root.path();
  write(r / "proc/sys/kernel/hostname", "bench-7\n");
  write(r / "proc/sys/kernel/osrelease", "6.1.0-18-rt-amd64\n");
  write(r / "proc/sys/kernel/version", "#1 SMP PREEMPT_RT Debian 6.1.76-1 (2024-02-01)\n");
  write(r / "sys/devices/system/cpu/isolated", "2-3\n");
  write(r / "proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Core(TM) i7-8700 "
        "CPU @ 3.20GHz\n\nprocessor\t: 1\nmodel name\t: other\n");
  const cosim::config::host_info h = cosim::config::read_host_info(r);
  EXPECT_EQ(h.hostname, "bench-7");
  EXPECT_EQ(h.kernel_release, "6.1.0-18-rt-amd64");
  EXPECT_TRUE(h.preempt_rt);
  EXPECT_EQ(h.isolated_cpus, "2-3");
  EXPECT_EQ(h.cpu_model, "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz");
}

TEST(HostInfo, NonRtKernelAndMissingFiles) {
  temp_dir root;
  const fs::path r = root.path();
  write(r / "proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1\n");
  write(r / "sys/devices/system/cpu/isolated", "\n");
  const cosim::config::host_info h = cosim::config::read_host_info(r);
  EXPECT_FALSE(h.preempt_rt);
  EXPECT_EQ(h.hostname, "");
  EXPECT_EQ(h.isolated_cpus, "");
  EXPECT_EQ(h.cpu_model, "");
  // The RT flag file alone marks an RT kernel (some RT kernels print only PREEMPT).
  write(r / "sys/kernel/realtime", "1\n");
  EXPECT_TRUE(cosim::config::read_host_info(r).preempt_rt);
}

TEST(StartTime, UtcIso8601) {
  using namespace std::chrono;
  // 1700000000 s after the epoch is 2023-11-14 22:13:20 UTC (date -u -d @1700000000).
  const system_clock::time_point t{milliseconds{1'700'000'000'123}};
  EXPECT_EQ(cosim::config::utc_iso8601(t), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(cosim::config::utc_iso8601(system_clock::time_point{}), "1970-01-01T00:00:00.000Z");
}

/// JSON text without the whitespace between tokens (json_writer indents).
std::string compact(const std::string& j) {
  std::string out;
  bool in_string = false;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const char c = j[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < j.size())
        out += j[++i];
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
      out += c;
    } else if (c != ' ' && c != '\n') {
      out += c;
    }
  }
  return out;
}

TEST(ConfigEcho, BenchScenarioDriversThreadsAndWatchdog) {
  const cosim::config::scenario sc =
      cosim::config::load_scenario(COSIM_SOURCE_DIR "/rt_config/scenarios/bench_udp.toml",
                                   cosim::test::with_bench_keys({}));
  const std::string j = compact(cosim::config::to_json(sc));
  // The values rt_config/scenarios/bench_udp.toml states.
  for (
      const char* expected :
      {// watchdog.priority unset: one above the highest thread priority (80).
       R"("watchdog":{"cpu":-1,"priority":81,"max_overruns":200,"leak_steps":10,"grace":0.3})",
       R"("joystick":{"cpu":0,"priority":80,"stack_size":262144,"budget":0})",
       R"("joystick":{"direction":"input","backend":"asio","bind":"127.0.0.1:5600","type":"command","channels":["kappa"],"units":["1"],"min":[0],"max":[1],"peers":["127.0.0.1:5601"],"initial":[)",
       R"("stale_after":0.05,"stop_after":0.5,"startup_timeout":5,)",
       R"("valve":{"direction":"output","backend":"asio","bind":"127.0.0.1:0","type":"valve_command","channels":["kappa"],"units":["1"],"min":[0],"max":[1],"to":"127.0.0.1:5602","from":["joystick.kappa"],"safe_value":[0],"safe_repeats":5,)",
       R"("mode":"realtime")", R"("lock_memory":true)"})
    EXPECT_NE(j.find(expected), std::string::npos) << expected << "\nin " << j;
  // The whole system file rides along, and reads back to the same system file.
  const auto k = j.find(R"("system_toml":")");
  ASSERT_NE(k, std::string::npos);
  const std::string printed = cosim::config::system_toml(sc);
  const std::string back =
      cosim::config::system_toml(cosim::config::parse_scenario(printed, sc.file));
  // The first line says where the file was expanded or written back from.
  EXPECT_EQ(back.substr(back.find('\n')), printed.substr(printed.find('\n')));
}

}  // namespace
