// run.mode = "lockstep" end to end on loopback (drivers/PROTOCOL.md, "Lockstep"): the bench
// scenario rt_config/scenarios/bench_udp.toml with `cosim-device joystick --lockstep` and
// `cosim-device valve --lockstep`, paced by simulation time.
// Ports are derived from the PID so parallel runs do not collide.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "bench_key_file.hpp"
#include "cosim/drivers/bench_auth.hpp"
#include "cosim/drivers/bench_protocol.hpp"
#include "cosim/drivers/crc32c.hpp"

namespace {

namespace fs = std::filesystem;

const std::string cosim_exe = COSIM_EXE;
const std::string device_exe = std::string(COSIM_BINARY_DIR) + "/tools/device/cosim-device";
const std::string scenarios = std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios";
const std::string systems = std::string(COSIM_SOURCE_DIR) + "/rt_config/systems";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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

std::string json_string(const std::string& j, const std::string& key) {
  std::smatch m;
  if (std::regex_search(j, m, std::regex("\"" + key + "\":\\s*\"([^\"]*)\""))) return m[1];
  return {};
}

double json_number(const std::string& j, const std::string& key) {
  std::smatch m;
  if (std::regex_search(j, m, std::regex("\"" + key + "\":\\s*([-0-9.eE+]+)")))
    return std::stod(m[1]);
  return -1.0;
}

int base_port(int slot) {
  return 40000 + static_cast<int>(::getpid() % 1000) * 20 + slot * 4;
}

/// The devices' protocol options and the run's: authenticated (the default, one key file for
/// both drivers, as the simulated bench) or version 1 (`auth = "none"` on both sides).
std::string device_auth(bool authenticated) {
  return authenticated ? " --key " + cosim::test::bench_key_path() + " " : " --auth none ";
}
std::string run_auth(bool authenticated) {
  std::string sets;
  for (const char* d : {"joystick", "valve"})
    sets += authenticated ? std::string(" --set 'drivers.") + d + ".key_file=\"" +
                                cosim::test::bench_key_path() + "\"'"
                          : std::string(" --set 'drivers.") + d + ".auth=\"none\"'";
  return sets;
}

int shell(const std::string& script) {
  const int rc = std::system(
      ("bash -c '" + std::regex_replace(script, std::regex("'"), "'\\''") + "'").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

struct lockstep_run {
  fs::path dir;
  int exit_code = -1;
  std::string summary;
  std::vector<std::vector<std::string>> valve;  // header + one row per datagram
};

/// Starts the devices, waits until both listen, runs `cosim run RUN_ARGS --out DIR` with the
/// ports set, then ends the devices. Device arguments get the ports through $J (the joystick
/// driver's bind), $JF (the joystick's own port) and $V (the valve's).
lockstep_run run_lockstep(const std::string& name, int slot, const std::string& joystick_args,
                          const std::string& valve_args, const std::string& run_args,
                          bool authenticated = true) {
  lockstep_run r;
  const int p = base_port(slot);
  r.dir = fs::temp_directory_path() / ("cosim_lockstep_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(r.dir);
  fs::create_directories(r.dir);
  const std::string d = r.dir.string();
  std::ostringstream cmd;
  cmd << "J=127.0.0.1:" << p << "; JF=127.0.0.1:" << p + 1 << "; V=127.0.0.1:" << p + 2 << "; "
      << device_exe << " valve --listen $V --log " << d << "/valve.csv " << valve_args
      << device_auth(authenticated) << " 2>" << d << "/valve.err & VP=$!; " << device_exe
      << " joystick --to $J --from-port " << p + 1 << " " << joystick_args
      << device_auth(authenticated) << " 2>" << d << "/joystick.err & JP=$!; "
      << "for i in $(seq 400); do [ -s " << d << "/valve.csv ] && grep -q waiting " << d
      << "/joystick.err && break; sleep 0.025; done; " << cosim_exe << " run " << run_args
      << run_auth(authenticated) << " --out " << d << " --set \"drivers.joystick.bind=\\\"$J\\\"\""
      << " --set \"drivers.joystick.peers=[\\\"$JF\\\"]\""
      << " --set \"drivers.valve.to=\\\"$V\\\"\" > " << d << "/run.log 2>&1; RC=$?; "
      << "kill $VP $JP 2>/dev/null; wait; exit $RC";
  r.exit_code = shell(cmd.str());
  r.summary = slurp(r.dir / "summary.json");
  r.valve = read_csv(r.dir / "valve.csv");
  return r;
}

const std::string bench = scenarios + "/bench_udp.toml --set 'run.mode=\"lockstep\"'";

std::size_t column_index(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  return static_cast<std::size_t>(it - header.begin());
}

TEST(Lockstep, BenchScenarioTwiceIsByteIdentical) {
  const lockstep_run a = run_lockstep("a", 0, "--lockstep --manoeuvre M1", "--lockstep", bench);
  ASSERT_EQ(a.exit_code, 0) << slurp(a.dir / "run.log");
  const lockstep_run b = run_lockstep("b", 1, "--lockstep --manoeuvre M1", "--lockstep", bench);
  ASSERT_EQ(b.exit_code, 0) << slurp(b.dir / "run.log");
  EXPECT_EQ(json_string(a.summary, "stop_reason"), "end_time");
  EXPECT_EQ(json_string(a.summary, "mode"), "lockstep");
  const std::string ra = slurp(a.dir / "results.csv");
  ASSERT_FALSE(ra.empty());
  EXPECT_TRUE(ra == slurp(b.dir / "results.csv")) << "results.csv differ between two runs";
  const auto rows = read_csv(a.dir / "results.csv");
  ASSERT_EQ(rows.size(), 10002U);  // header, t = 0 .. 10 s at 1 ms
  std::printf("lockstep bench scenario (10 s simulated): wall_time_s %.3f, real_time_factor %.1f\n",
              json_number(a.summary, "wall_time_s"), json_number(a.summary, "real_time_factor"));
  // The valve logged one command per macro step, at that step's simulation time, carrying
  // the kappa the system used at that time (the joystick's channel, fed to the valve).
  ASSERT_GE(a.valve.size(), 2U);
  EXPECT_EQ(a.valve[0][0], "sim_time_s");
  const std::size_t k = column_index(rows[0], "kappa");
  ASSERT_LT(k, rows[0].size());
  std::size_t commands = 0;
  for (std::size_t i = 1; i < a.valve.size(); ++i) {
    const auto& v = a.valve[i];
    ASSERT_GE(v.size(), 8U);
    if (v[2] != "ok" || v[3] != "2") continue;
    ASSERT_LT(commands + 1, rows.size());
    const auto& row = rows[commands + 1];
    EXPECT_NEAR(std::stod(v[0]), static_cast<double>(commands) * 1e-3, 1e-12) << "row " << i;
    EXPECT_EQ(std::stod(v[7]), std::stod(row[k])) << "valve row " << i;
    ++commands;
  }
  EXPECT_EQ(commands, 10001U);
}

// The same exchange in the unauthenticated version 1 (auth = "none" on both sides) gives the
// same trajectory: the protocol version changes how values travel, never which values.
TEST(Lockstep, UnauthenticatedVersionOneGivesTheSameResults) {
  const lockstep_run a = run_lockstep("v2", 2, "--lockstep --manoeuvre M1", "--lockstep", bench);
  ASSERT_EQ(a.exit_code, 0) << slurp(a.dir / "run.log");
  const lockstep_run b =
      run_lockstep("v1", 3, "--lockstep --manoeuvre M1", "--lockstep", bench, false);
  ASSERT_EQ(b.exit_code, 0) << slurp(b.dir / "run.log");
  EXPECT_NE(a.summary.find("\"auth\": \"hmac-sha512-256\""), std::string::npos) << a.summary;
  EXPECT_NE(b.summary.find("\"auth\": \"none\""), std::string::npos) << b.summary;
  const std::string ra = slurp(a.dir / "results.csv");
  ASSERT_FALSE(ra.empty());
  EXPECT_TRUE(ra == slurp(b.dir / "results.csv")) << "results.csv differ between v1 and v2";
}

// A piecewise-constant joystick trace whose steps fall on macro-step times: the driver holds
// each step's value over the step (zero-order hold, extrapolation 0), and a CSV source, which
// is evaluated at every hydraulic sub-step, gives the same numbers there. So the lockstep run
// with the trace replayed by the joystick and the offline run with the trace as a source must
// agree to the bit in every column they share (the recorded input itself excepted at the
// jumps, below).
TEST(Lockstep, EqualsOfflineRunWithTheTraceAsCsvSource) {
  const fs::path dir =
      fs::temp_directory_path() / ("cosim_lockstep_trace_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ofstream t(dir / "trace.csv");
    // Around the crane's equilibrium opening kappa0 = 0.4543 (003 Sect. 1.3): down by 0.01
    // at 2 s like M1 (003 Eq. (19)), up to kappa0 + 0.015 at 5 s.
    t << "t,kappa\n0,0.4543\n1.9999999,0.4543\n2,0.4443\n4.9999999,0.4443\n5,0.469\n10,0.469\n";
  }
  std::string sys = slurp(systems + "/crane_m1_fs.toml");
  ASSERT_NE(sys.find("signal = \"manoeuvre:M1\""), std::string::npos);
  std::string offline = std::regex_replace(sys, std::regex("signal = \"manoeuvre:M1\""),
                                           "signal = \"csv:trace.csv:kappa\"");
  std::string lockstep = std::regex_replace(sys, std::regex("signal = \"manoeuvre:M1\""),
                                            "signal = \"driver:joystick.kappa\"");
  lockstep = std::regex_replace(lockstep, std::regex("mode = \"offline\""), "mode = \"lockstep\"");
  lockstep +=
      "\n[drivers.joystick]\ndirection = \"input\"\nbind = \"127.0.0.1:1\"\n"
      "peers = [\"127.0.0.1:2\"]\nchannels = [\"kappa\"]\nmin = [0.0]\nmax = [1.0]\n"
      "\n[drivers.valve]\ndirection = \"output\"\nto = \"127.0.0.1:3\"\n"
      "channels = [\"kappa\"]\nfrom = [\"joystick.kappa\"]\n";
  std::ofstream(dir / "offline.toml") << offline;
  std::ofstream(dir / "lockstep.toml") << lockstep;
  ASSERT_EQ(shell(cosim_exe + " run " + (dir / "offline.toml").string() + " --out " +
                  (dir / "offline").string() + " > " + (dir / "offline.log").string() + " 2>&1"),
            0)
      << slurp(dir / "offline.log");
  const lockstep_run l = run_lockstep("eq", 2, "--replay " + (dir / "trace.csv").string(),
                                      "--lockstep", (dir / "lockstep.toml").string());
  ASSERT_EQ(l.exit_code, 0) << slurp(l.dir / "run.log");
  const auto off = read_csv(dir / "offline" / "results.csv");
  const auto on = read_csv(l.dir / "results.csv");
  ASSERT_EQ(off.size(), 10002U);
  ASSERT_EQ(on.size(), off.size());
  std::size_t shared = 0;
  for (std::size_t c = 0; c < off[0].size(); ++c) {
    const std::size_t k = column_index(on[0], off[0][c]);
    if (k == on[0].size()) continue;
    ++shared;
    for (std::size_t r = 1; r < off.size(); ++r) {
      // The recorded input kappa (as the cylinder sees it at the row's time) is the one
      // column that may differ, and only at the trace's jumps: at a row's time the held
      // driver value is still the previous step's (its left limit; at t0 the equilibrium's
      // start value), the source is evaluated at the time itself. The steps use the same
      // values, which the state columns prove.
      const bool jump = r == 1 || r == 2001 || r == 5001;
      if (off[0][c] == "kappa" && jump) continue;
      ASSERT_EQ(on[r][k], off[r][c]) << off[0][c] << " at row " << r;
    }
  }
  EXPECT_GE(shared, 7U);  // t, kappa, s, sd, p1, p2, fh
  // The trace really moved the crane: kappa took the trace's three values.
  const std::size_t kc = column_index(off[0], "kappa");
  EXPECT_EQ(std::stod(off[1][kc]), 0.4543);
  EXPECT_EQ(std::stod(off[2000][kc]), 0.4543);
  EXPECT_EQ(std::stod(off[2001][kc]), 0.4443);
  EXPECT_EQ(std::stod(off[5001][kc]), 0.469);
}

// A joystick that stops answering at t = 3 s: the tick for the step ending at 3 s gets no
// answer, the run stops there with the reason, keeps its rows, and the valve gets its safe
// values stamped with that step's time.
TEST(Lockstep, SilentDeviceStopsTheRunWithTheReason) {
  const lockstep_run r =
      run_lockstep("silent", 3, "--lockstep --manoeuvre M1 --silent-after 3", "--lockstep",
                   bench + " --set drivers.joystick.lockstep_timeout=0.2");
  EXPECT_EQ(r.exit_code, 1) << slurp(r.dir / "run.log");
  EXPECT_EQ(json_string(r.summary, "status"), "safety_stop");
  EXPECT_EQ(json_string(r.summary, "stop_reason"), "lockstep_device");
  EXPECT_EQ(json_string(r.summary, "message"),
            "driver 'joystick': no answer from its device for the macro step at t = 3 s within "
            "drivers.joystick.lockstep_timeout = 0.2 s (device stopped, not in lockstep mode, or on "
            "another key)");
  EXPECT_EQ(json_number(r.summary, "stop_time_s"), 3.0);
  EXPECT_EQ(read_csv(r.dir / "results.csv").size(), 3002U);  // t = 0 .. 3 s kept
  ASSERT_GE(r.valve.size(), 7U);
  for (std::size_t i = r.valve.size() - 5; i < r.valve.size(); ++i) {
    ASSERT_GE(r.valve[i].size(), 8U);
    EXPECT_EQ(r.valve[i][0], "3.000000000") << "row " << i;
    EXPECT_EQ(std::stod(r.valve[i][7]), 0.0) << "row " << i;  // safe_value
  }
}

// A device killed during the run (SIGKILL, no goodbye): the run stops on the timeout.
TEST(Lockstep, KilledDeviceStopsTheRun) {
  const int p = base_port(4);
  const fs::path dir =
      fs::temp_directory_path() / ("cosim_lockstep_kill_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string d = dir.string();
  std::ostringstream cmd;
  cmd << "J=127.0.0.1:" << p << "; JF=127.0.0.1:" << p + 1 << "; V=127.0.0.1:" << p + 2 << "; "
      << device_exe << " valve --listen $V --lockstep --log " << d << "/valve.csv"
      << device_auth(true) << "2>/dev/null & VP=$!; " << device_exe
      << " joystick --to $J --from-port " << p + 1 << " --lockstep --manoeuvre hold"
      << device_auth(true) << "2>" << d
      << "/joystick.err & JP=$!; for i in $(seq 400); do [ -s " << d
      << "/valve.csv ] && grep -q waiting " << d << "/joystick.err && break; sleep 0.025; done; "
      << cosim_exe << " run " << bench << run_auth(true)
      << " --set run.duration=100000 --set drivers.joystick.lockstep_timeout=0.5 --out " << d
      << "/out --set \"drivers.joystick.bind=\\\"$J\\\"\" --set "
         "\"drivers.joystick.peers=[\\\"$JF\\\"]\" --set \"drivers.valve.to=\\\"$V\\\"\" > "
      << d << "/run.log 2>&1 & RP=$!; sleep 0.5; kill -9 $JP; K=$(date +%s%N); wait $RP; RC=$?; "
      << "E=$(date +%s%N); echo $(( (E - K) / 1000000 )) > " << d << "/stop_ms; kill $VP; wait; "
      << "exit $RC";
  EXPECT_EQ(shell(cmd.str()), 1) << slurp(dir / "run.log");
  const std::string summary = slurp(dir / "out" / "summary.json");
  EXPECT_EQ(json_string(summary, "stop_reason"), "lockstep_device");
  EXPECT_NE(json_string(summary, "message").find("drivers.joystick.lockstep_timeout = 0.5 s"),
            std::string::npos)
      << summary;
  EXPECT_GT(json_number(summary, "stop_time_s"), 0.0);
  std::printf("killed joystick: the run ended %s ms after the kill (lockstep_timeout 0.5 s)\n",
              slurp(dir / "stop_ms").c_str());
}

TEST(Lockstep, WallClockJoystickIsRefused) {
  const lockstep_run r =
      run_lockstep("wall", 0, "--manoeuvre M1 --sync --duration 30", "--lockstep", bench);
  EXPECT_EQ(r.exit_code, 1) << slurp(r.dir / "run.log");
  EXPECT_EQ(json_string(r.summary, "stop_reason"), "lockstep_device");
  EXPECT_NE(json_string(r.summary, "message").find("without the lockstep flag"), std::string::npos)
      << r.summary;
}

TEST(Lockstep, ValveThatDoesNotAcknowledgeIsRefused) {
  const lockstep_run r = run_lockstep("noack", 1, "--lockstep --manoeuvre M1", "",
                                      bench + " --set drivers.valve.lockstep_timeout=0.1");
  EXPECT_EQ(r.exit_code, 1) << slurp(r.dir / "run.log");
  EXPECT_EQ(json_string(r.summary, "stop_reason"), "lockstep_device");
  EXPECT_NE(json_string(r.summary, "message").find("did not acknowledge the macro step at t = 0 s"),
            std::string::npos)
      << r.summary;
}

TEST(Lockstep, TimeoutOutOfRangeIsRejected) {
  const fs::path dir =
      fs::temp_directory_path() / ("cosim_lockstep_bad_" + std::to_string(::getpid()));
  const std::string log = (dir.string() + ".log");
  EXPECT_EQ(
      shell(cosim_exe + " run " + bench + run_auth(true) +
            " --set drivers.joystick.lockstep_timeout=0 --out " +
            dir.string() + " > " + log + " 2>&1"),
      2);
  EXPECT_NE(slurp(log).find("drivers.joystick.lockstep_timeout"), std::string::npos) << slurp(log);
  EXPECT_FALSE(fs::exists(dir / "results.csv"));
}

// A "drop" fault: the next `count` new values are discarded from t = 1.95 s on, across M1's
// kappa step at 2 s. The driver holds kappa(1.949) for those steps and counts them; 100 steps
// (0.1 s) is past stale_after (one stale event) but short of stop_after, so the run completes;
// 600 steps is past stop_after = 0.5 s: the stale-input stop at 1.949 + 0.501 = 2.45 s.
TEST(Lockstep, DropEventHoldsCountsAndStops) {
  const fs::path dir =
      fs::temp_directory_path() / ("cosim_lockstep_drop_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string base = slurp(std::string(COSIM_SOURCE_DIR) + "/tools/ci_example/bench_ci.toml");
  const auto scenario = [&](int count) {
    const fs::path f = dir / ("drop" + std::to_string(count) + ".toml");
    std::ofstream(f) << std::regex_replace(
        base, std::regex("time = 5.0\naction = \"silence\""),
        "time = 1.95\naction = \"drop\"\ncount = " + std::to_string(count));
    return f.string();
  };
  const lockstep_run a =
      run_lockstep("drop100", 0, "--lockstep --manoeuvre M1", "--lockstep", scenario(100));
  ASSERT_EQ(a.exit_code, 0) << slurp(a.dir / "run.log");
  EXPECT_NE(a.summary.find("\"dropped_by_event\": 100"), std::string::npos) << a.summary;
  EXPECT_NEAR(json_number(a.summary, "silenced_at_s"), 1.95, 1e-12) << a.summary;
  EXPECT_NE(a.summary.find("\"stale_events\": 1"), std::string::npos) << a.summary;
  const auto rows = read_csv(a.dir / "results.csv");
  const std::size_t k = column_index(rows[0], "kappa");
  ASSERT_EQ(rows.size(), 10002U);
  ASSERT_NEAR(std::stod(rows[1951][0]), 1.95, 1e-12);
  // The value of 1.949 s (row 1950) is used over the 100 steps from 1.95 s to 2.05 s, across
  // M1's step; a row shows the input as used in the step ending at its time, so rows 1951
  // (1.95 s) to 2051 (2.05 s) hold it and row 2052 (2.051 s) has M1's new value.
  for (std::size_t r = 1951; r <= 2051; ++r) EXPECT_EQ(rows[r][k], rows[1950][k]) << "row " << r;
  EXPECT_NE(rows[2052][k], rows[1950][k]);

  const lockstep_run b =
      run_lockstep("drop600", 1, "--lockstep --manoeuvre M1", "--lockstep", scenario(600));
  EXPECT_EQ(b.exit_code, 1) << slurp(b.dir / "run.log");
  EXPECT_EQ(json_string(b.summary, "stop_reason"), "stale_input");
  EXPECT_EQ(json_number(b.summary, "stop_time_s"), 2.45);
}

TEST(Lockstep, EventErrorsNameTheKey) {
  const fs::path dir =
      fs::temp_directory_path() / ("cosim_lockstep_events_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string base = slurp(std::string(COSIM_SOURCE_DIR) + "/tools/ci_example/bench_ci.toml");
  ASSERT_NE(base.find("driver = \"joystick\""), std::string::npos);
  const std::vector<std::pair<std::string, std::string>> cases{
      {std::regex_replace(base, std::regex("driver = \"joystick\""), "driver = \"valve\""),
       "events[0].driver"},
      {std::regex_replace(base, std::regex("time = 5.0"), "time = 11.0"), "events[0].time"},
      {std::regex_replace(base, std::regex("action = \"silence\""), "action = \"corrupt\""),
       "events[0].action"}};
  for (const auto& [text, key] : cases) {
    std::ofstream(dir / "s.toml") << text;
    EXPECT_EQ(shell(cosim_exe + " run " + (dir / "s.toml").string() + run_auth(true) + " --out " +
                    (dir / "out").string() + " > " + (dir / "log").string() + " 2>&1"),
              2);
    EXPECT_NE(slurp(dir / "log").find(key), std::string::npos) << slurp(dir / "log");
    EXPECT_FALSE(fs::exists(dir / "out" / "results.csv"));
  }
}

TEST(Lockstep, FlagRoundTripsAndOtherBitsAreIgnored) {
  using namespace cosim::drivers;
  bench_message m{};
  m.type = message_type::heartbeat;
  m.flags = 0xFFFF;  // only the defined bit goes on the wire
  m.timestamp_ns = 2'000'000'000;
  std::array<std::byte, max_datagram_size> buf{};
  const std::size_t n = encode(m, buf);
  ASSERT_EQ(n, 28U);
  EXPECT_EQ(buf[6], std::byte{0x00});  // flags, little-endian: 0x0100
  EXPECT_EQ(buf[7], std::byte{0x01});
  bench_message back{};
  ASSERT_EQ(decode(std::span<const std::byte>(buf.data(), n), back), decode_status::ok);
  EXPECT_EQ(back.flags, flag_lockstep);
  EXPECT_EQ(back.timestamp_ns, 2'000'000'000U);
}

// Version 2 carries the flag at the same offset, covered by the tag: a tick whose flag was
// cleared on the way fails authentication instead of turning into a wall-clock heartbeat.
TEST(Lockstep, AuthenticatedFlagRoundTripsAndIsCoveredByTheTag) {
  using namespace cosim::drivers;
  bench_key key;
  for (std::size_t i = 0; i < key.bytes.size(); ++i) key.bytes[i] = static_cast<unsigned char>(i);
  prepare_key(key);
  auth_message m{};
  m.type = static_cast<std::uint8_t>(message_type::heartbeat);
  m.flags = 0xFFFF;
  m.timestamp_ns = 3'000'000'000;
  m.session = 42;
  std::array<std::byte, max_auth_datagram_size> buf{};
  const std::size_t n = encode_auth(m, key, buf);
  ASSERT_EQ(n, 76U);
  EXPECT_EQ(buf[6], std::byte{0x00});
  EXPECT_EQ(buf[7], std::byte{0x01});
  auth_message back{};
  ASSERT_EQ(decode_auth(std::span<const std::byte>(buf.data(), n), key, back), auth_status::ok);
  EXPECT_EQ(back.flags, flag_lockstep);
  EXPECT_EQ(back.timestamp_ns, 3'000'000'000U);
  // Clear the flag and repair the CRC (an attacker can compute a CRC, not the tag).
  buf[7] = std::byte{0x00};
  const std::size_t crc_at = n - mac_size - crc_size;
  const std::uint32_t crc = crc32c(std::span<const std::byte>(buf.data(), crc_at));
  for (std::size_t i = 0; i < 4; ++i)
    buf[crc_at + i] = static_cast<std::byte>((crc >> (8 * i)) & 0xFFU);
  EXPECT_EQ(decode_auth(std::span<const std::byte>(buf.data(), n), key, back),
            auth_status::bad_mac);
}

}  // namespace
