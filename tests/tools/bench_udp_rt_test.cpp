// End to end on loopback (docs/drivers.md): rt_config/scenarios/bench_udp.toml in realtime mode,
// kappa from `cosim-device joystick` over UDP, valve commands to `cosim-device valve`.
// Compared with the internal-kappa scenario crane_m1_fs.toml (offline).
// Ports are derived from the PID so parallel runs do not collide. The devices run until
// they are killed after the run: on a loaded machine the realtime run skips periods and
// simulated time falls behind the wall clock, so a joystick that stopped at a fixed wall
// time would trigger the stale-input stop that only SilentJoystick asks for. The tests
// sit in tools_rt_tests, which ctest never runs alongside another realtime test.
#include <unistd.h>

#include <gtest/gtest.h>

#include "bench_key_file.hpp"

#include <cstdio>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::string cosim_exe = COSIM_EXE;
const std::string device_exe = std::string(COSIM_BINARY_DIR) + "/tools/device/cosim-device";
const std::string scenarios = std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios";

std::vector<std::vector<std::string>> read_csv(const fs::path& p) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, ',')) cells.push_back(c);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

std::vector<double> column(const fs::path& p, const std::string& name) {
  const auto rows = read_csv(p);
  std::vector<double> v;
  if (rows.empty()) return v;
  const auto it = std::find(rows[0].begin(), rows[0].end(), name);
  if (it == rows[0].end()) return v;
  const std::size_t k = static_cast<std::size_t>(it - rows[0].begin());
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (k < rows[i].size()) v.push_back(std::stod(rows[i][k]));
  return v;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string json_string(const std::string& j, const std::string& key) {
  std::smatch m;
  if (std::regex_search(j, m, std::regex("\"" + key + "\":\\s*\"([^\"]*)\""))) return m[1];
  return {};
}

// Counter `key` of driver `name` in summary.json's drivers array.
long long driver_counter(const std::string& j, const std::string& name, const std::string& key) {
  const auto at = j.find("\"name\": \"" + name + "\"", j.find("\"drivers\""));
  if (at == std::string::npos) return -1;
  std::smatch m;
  const std::string rest = j.substr(at);
  if (std::regex_search(rest, m, std::regex("\"" + key + "\":\\s*([0-9]+)")))
    return std::stoll(m[1]);
  return -1;
}

// The realtime run's deadline misses. Each skipped period puts simulated time behind the
// joystick's wall clock, which shifts the kappa steps; on a machine too noisy to meet its
// deadlines the accuracy check reports the misses instead of failing on timing.
long long deadline_misses(const std::string& j) {
  std::smatch m;
  if (std::regex_search(j, m, std::regex("\"deadline_misses\":\\s*([0-9]+)")))
    return std::stoll(m[1]);
  return -1;
}

#define EXPECT_TRAJECTORY_WITHIN(run, bound)                                                   \
  do {                                                                                         \
    const long long misses = deadline_misses((run).summary);                                   \
    if (misses != 0) {                                                                         \
      std::printf("deadline misses %lld: max |s - s_ref| = %.4g m not checked against %g m\n", \
                  misses, (run).max_ds(), (bound));                                            \
    } else {                                                                                   \
      EXPECT_LT((run).max_ds(), (bound)) << "max |s - s_ref| = " << (run).max_ds();            \
    }                                                                                          \
  } while (false)

struct bench_run {
  fs::path dir;
  int exit_code = -1;
  std::string summary;
  std::vector<double> s, s_ref;
  std::vector<std::vector<std::string>> valve;  // header + one row per datagram
  double max_ds() const {
    double e = 0;
    for (std::size_t i = 0; i < std::min(s.size(), s_ref.size()); ++i)
      e = std::max(e, std::abs(s[i] - s_ref[i]));
    return e;
  }
};

int base_port(int slot) {
  return 20000 + static_cast<int>(::getpid() % 2000) * 20 + slot * 5;
}

const fs::path& reference_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("cosim_udp_ref_" + std::to_string(::getpid()));
    const std::string cmd = cosim_exe + " run " + scenarios + "/crane_m1_fs.toml --out " +
                            d.string() + " >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    return d;
  }();
  return dir;
}

bench_run run_bench(const std::string& name, int slot, const std::string& joystick_args,
                    const std::string& extra = "") {
  bench_run r;
  const int p = base_port(slot);
  r.dir = fs::temp_directory_path() / ("cosim_udp_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(r.dir);
  fs::create_directories(r.dir);
  const std::string d = r.dir.string();
  const std::string host = "127.0.0.1:";
  std::ostringstream cmd;
  // One key for the drivers and both devices (the authenticated protocol, PROTOCOL.md).
  const std::string key = d + "/bench.key";
  cmd << device_exe << " keygen " << key << " 2>/dev/null || exit 99; ";
  cmd << device_exe << " valve --key " << key << " --listen " << host << p + 2 << " --log " << d
      << "/valve.csv --duration 120 2>" << d << "/valve.err & V=$!; " << device_exe
      << " joystick --key " << key << " --to " << host << p << " --from-port " << p + 1
      << " --manoeuvre M1 --duration 120 --sync " << joystick_args << " 2>" << d
      << "/joystick.err & J=$!; "
      // Both devices listening before the run starts: the valve has written its log header,
      // the joystick waits for the session the simulation gives at its start.
      << "for i in $(seq 400); do [ -s " << d << "/valve.csv ] && grep -q waiting " << d
      << "/joystick.err && break; sleep 0.025; done; ";
  if (!extra.empty()) cmd << extra << " & X=$!; ";
  cmd << cosim_exe << " run " << scenarios << "/bench_udp.toml --out " << d
      << " --set 'drivers.joystick.bind=\"" << host << p << "\"' --set 'drivers.joystick.peers=[\""
      << host << p + 1 << "\"]' --set 'drivers.valve.to=\"" << host << p + 2 << "\"'"
      << " --set 'drivers.joystick.key_file=\"" << key << "\"' --set 'drivers.valve.key_file=\""
      << key
      << "\"'"
      // A loaded CI machine is no real-time host: only the UDP path is under test here.
      << " --set watchdog.max_overruns=1000000 > " << d << "/run.log 2>&1; RC=$?; "
      << "sleep 0.3; kill $V $J " << (extra.empty() ? "" : "$X ") << "2>/dev/null; wait; exit $RC";
  const int rc = std::system(
      ("bash -c '" + std::regex_replace(cmd.str(), std::regex("'"), "'\\''") + "'").c_str());
  r.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.summary = slurp(r.dir / "summary.json");
  r.s = column(r.dir / "results.csv", "s");
  r.s_ref = column(reference_dir() / "results.csv", "s");
  r.valve = read_csv(r.dir / "valve.csv");
  return r;
}

std::size_t valid_commands(const bench_run& r) {
  std::size_t n = 0;
  for (std::size_t i = 1; i < r.valve.size(); ++i)
    if (r.valve[i].size() > 3 && r.valve[i][2] == "ok" && r.valve[i][3] == "2") ++n;
  return n;
}

TEST(BenchUdp, M1OverUdpMatchesInternalKappa) {
  const bench_run r = run_bench("m1", 0, "");
  ASSERT_EQ(r.exit_code, 0) << slurp(r.dir / "run.log");
  EXPECT_EQ(json_string(r.summary, "stop_reason"), "end_time");
  ASSERT_EQ(r.s.size(), r.s_ref.size());
  EXPECT_TRAJECTORY_WITHIN(r, 2e-3);
  // One valve command per macro step (plus the start-up exchange at t0).
  EXPECT_GE(valid_commands(r), 10000U);
  EXPECT_GT(driver_counter(r.summary, "joystick", "received"), 9000);
  EXPECT_EQ(driver_counter(r.summary, "joystick", "malformed"), 0);
}

TEST(BenchUdp, LossAndJitterAreCountedAndTolerated) {
  const bench_run r = run_bench("loss", 1, "--loss 0.1 --jitter-us 200 --seed 7");
  ASSERT_EQ(r.exit_code, 0) << slurp(r.dir / "run.log");
  EXPECT_EQ(json_string(r.summary, "stop_reason"), "end_time");
  EXPECT_GT(driver_counter(r.summary, "joystick", "lost"), 500);
  EXPECT_TRAJECTORY_WITHIN(r, 3e-3);
}

TEST(BenchUdp, SilentJoystickStopsSafelyWithSafeValues) {
  const bench_run r = run_bench("silent", 2, "--silent-after 3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(json_string(r.summary, "status"), "safety_stop");
  EXPECT_EQ(json_string(r.summary, "stop_reason"), "stale_input");
  // The driver that raised the stop names itself in the message.
  EXPECT_EQ(json_string(r.summary, "message"),
            "no fresh input from driver 'joystick' within drivers.joystick.stop_after = 0.5 s");
  EXPECT_GE(driver_counter(r.summary, "joystick", "stale_events"), 1);
  // stop_after = 0.5 s after the last datagram at ~3 s of wall time (simulated time
  // lags the wall clock by the periods skipped on overruns, so it can only be earlier).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.summary, m, std::regex("\"stop_time_s\":\\s*([0-9.eE+-]+)")));
  EXPECT_LT(std::stod(m[1]), 3.6);
  ASSERT_TRUE(std::regex_search(r.summary, m, std::regex("\"wall_time_s\":\\s*([0-9.eE+-]+)")));
  EXPECT_LT(std::stod(m[1]), 3.0 + 0.5 + 0.5);
  // The valve log ends with safe_repeats (5) safe values (0.0).
  ASSERT_GE(r.valve.size(), 7U);
  for (std::size_t i = r.valve.size() - 5; i < r.valve.size(); ++i) {
    ASSERT_GE(r.valve[i].size(), 8U);
    EXPECT_EQ(r.valve[i][2], "ok");
    EXPECT_EQ(std::stod(r.valve[i][7]), 0.0) << "row " << i;
  }
  EXPECT_NE(std::stod(r.valve[r.valve.size() - 6][7]), 0.0);  // a real command before them
}

TEST(BenchUdp, GarbageAndForeignFloodAreCountedWithoutEffect) {
  // A second device floods from a port not in the allowlist with a different kappa.
  const int p = base_port(3);
  const std::string flood = device_exe + " joystick --to 127.0.0.1:" + std::to_string(p) +
                            " --from-port " + std::to_string(p + 3) +
                            " --auth none --manoeuvre M2 --rate 5000 --duration 12 2>/dev/null";
  const bench_run r = run_bench("garbage", 3, "--garbage 0.2 --seed 3", flood);
  ASSERT_EQ(r.exit_code, 0) << slurp(r.dir / "run.log");
  // About 2000 corrupted copies: a flip in the tag is a bad_mac, anything else malformed.
  EXPECT_GT(driver_counter(r.summary, "joystick", "malformed") +
                driver_counter(r.summary, "joystick", "bad_mac"),
            1000);
  EXPECT_GT(driver_counter(r.summary, "joystick", "rejected_source"), 10000);
  EXPECT_TRAJECTORY_WITHIN(r, 2e-3);
}

TEST(BenchUdp, BadDriverConfigIsRefusedNamingTheKey) {
  const fs::path d = fs::temp_directory_path() / ("cosim_udp_bad_" + std::to_string(::getpid()));
  const std::string base = cosim_exe + " run " + scenarios + "/bench_udp.toml --out " + d.string() +
                           " --set 'drivers.joystick.key_file=\"" + cosim::test::bench_key_path() +
                           "\"' --set 'drivers.valve.key_file=\"" + cosim::test::bench_key_path() +
                           "\"' ";
  auto run = [&](const std::string& sets) {
    const std::string log = (d.string() + ".log");
    const int rc = std::system((base + sets + " > " + log + " 2>&1").c_str());
    return std::make_pair(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(log));
  };
  auto [rc1, out1] = run("--set 'drivers.joystick.peers=[]'");
  EXPECT_EQ(rc1, 2);
  EXPECT_NE(out1.find("drivers.joystick.peers"), std::string::npos) << out1;
  auto [rc2, out2] = run("--set 'drivers.valve.to=\"127.0.0.1:99999\"'");
  EXPECT_EQ(rc2, 2);
  EXPECT_NE(out2.find("drivers.valve.to"), std::string::npos) << out2;
  // Authentication is not optional by omission: no key file, or a key file others can read.
  const std::string plain = cosim_exe + " run " + scenarios + "/bench_udp.toml --out " +
                            d.string() + " > " + d.string() + ".log 2>&1";
  const int rc3 = std::system(plain.c_str());
  EXPECT_EQ(WIFEXITED(rc3) ? WEXITSTATUS(rc3) : -1, 2);
  const std::string out3 = slurp(d.string() + ".log");
  EXPECT_NE(out3.find("drivers.joystick.key_file"), std::string::npos) << out3;
  EXPECT_NE(out3.find("cosim-device keygen"), std::string::npos) << out3;
  EXPECT_NE(out3.find("auth = \"none\""), std::string::npos) << out3;
}

}  // namespace
