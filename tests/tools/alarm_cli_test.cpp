// [[alarms]] from the command line: crane M1 with a limit on p1 stops (exit 1) at the first
// row of an unalarmed run whose p1 is above it, in offline and threaded mode alike, with
// summary.json's alarms and the report's alarm table and limit line; a bad alarm exits 2
// naming file, key and value before the results folder exists; a stop alarm ends with the
// output driver's safe values.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../drivers/udp_test_support.hpp"
#include "csv_table.hpp"
#include "json_value.hpp"
#include "process_support.hpp"
#include "report.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using cosim::cli::json_value;
using cosim::test::temp_dir;
using cosim::test_process::slurp;
using namespace std::chrono_literals;

const std::string m1 = COSIM_SOURCE_DIR "/rt_config/scenarios/crane_m1_fs.toml";

struct finished {
  int code = -1;
  std::string out, err;
};

finished run_cosim(const temp_dir& tmp, std::vector<std::string> args) {
  args.insert(args.begin(), COSIM_EXE);
  const pid_t pid = cosim::test_process::spawn(args, tmp / "stdout.txt", tmp / "stderr.txt");
  finished f;
  f.code = cosim::test_process::wait_exit(pid, 120s);
  f.out = slurp(tmp / "stdout.txt");
  f.err = slurp(tmp / "stderr.txt");
  return f;
}

std::string with_alarms(const temp_dir& tmp, const std::string& name, const std::string& alarms) {
  const std::string path = tmp / name;
  std::ofstream(path) << slurp(m1) << "\n" << alarms;
  return path;
}

const json_value& at(const json_value& v, const std::string& key) {
  const json_value* f = v.find(key);
  if (f == nullptr) throw std::runtime_error("summary.json has no " + key);
  return *f;
}

TEST(AlarmCli, CraneM1StopsAtTheFirstRowAboveTheLimitInEveryMode) {
  temp_dir tmp;
  ASSERT_EQ(run_cosim(tmp, {"run", m1, "--out", tmp / "plain", "-q"}).code, 0);
  const cosim::cli::csv_table plain = cosim::cli::read_csv(tmp / "plain/results.csv");
  const int p1 = plain.column("p1");
  ASSERT_GT(p1, 0);
  constexpr double X = 3.45e6;
  std::size_t first = 0;
  while (first < plain.rows.size() && plain.rows[first][static_cast<std::size_t>(p1)] <= X) ++first;
  ASSERT_GT(first, plain.rows.size() / 10);
  ASSERT_LT(first, plain.rows.size() * 9 / 10);
  const double expected_t = plain.rows[first][0];

  const std::string file = with_alarms(tmp, "m1_alarm.toml",
                                       "[[alarms]]\nname = \"p1 high\"\nvariable = \"p1\"\nmax = "
                                       "3.45e6\n[[alarms]]\nvariable = \"sd\"\nmax = 1e-3\n"
                                       "action = \"warn\"\n");
  for (const std::string mode : {"offline", "threaded"}) {
    const std::string out = tmp / mode;
    const finished f =
        run_cosim(tmp, {"run", file, "--out", out, "--set", "run.mode=" + mode, "-q"});
    EXPECT_EQ(f.code, 1) << f.err;
    const json_value s = cosim::cli::parse_json(slurp(out + "/summary.json"));
    EXPECT_EQ(at(s, "status").str, "safety_stop");
    EXPECT_EQ(at(s, "stop_reason").str, "alarm");
    EXPECT_EQ(at(s, "stop_time_s").num, expected_t) << mode;
    EXPECT_NE(at(s, "message").str.find("alarm 'p1 high': p1 = "), std::string::npos);
    EXPECT_NE(at(s, "message").str.find("above max 3450000"), std::string::npos);
    const json_value& alarms = at(s, "alarms");
    ASSERT_EQ(alarms.arr.size(), 2U);
    EXPECT_EQ(at(alarms.arr[0], "name").str, "p1 high");
    EXPECT_EQ(at(alarms.arr[0], "count").num, 1.0);
    EXPECT_EQ(at(alarms.arr[0], "first_time_s").num, expected_t);
    // The warn alarm: sd first above 1 mm/s in the unalarmed rows, counted, not stopping.
    const int sd = plain.column("sd");
    std::size_t warn = 0;
    while (warn < first && plain.rows[warn][static_cast<std::size_t>(sd)] <= 1e-3) ++warn;
    ASSERT_LT(warn, first);
    EXPECT_EQ(at(alarms.arr[1], "action").str, "warn");
    EXPECT_GE(at(alarms.arr[1], "count").num, 1.0);
    EXPECT_EQ(at(alarms.arr[1], "first_time_s").num, plain.rows[warn][0]);
    const cosim::cli::csv_table rows = cosim::cli::read_csv(out + "/results.csv");
    ASSERT_EQ(rows.rows.size(), first + 1);
    EXPECT_EQ(rows.rows.back()[0], expected_t);
  }

  const std::string html = cosim::cli::make_report({tmp / "offline", "", ""});
  EXPECT_NE(html.find("<table id=\"alarms\">"), std::string::npos);
  EXPECT_NE(html.find("<td>p1 high</td><td>p1</td>"), std::string::npos);
  EXPECT_NE(html.find("alarm 'p1 high' max 3.45e+06"), std::string::npos)
      << "the limit line on p1's plot";
}

// A UDP socket on 127.0.0.1 collecting channel 0 of every valve command until stop().
class valve_listener {
 public:
  valve_listener() : thread_([this] { receive(); }) {}
  valve_listener(const valve_listener&) = delete;
  valve_listener& operator=(const valve_listener&) = delete;
  ~valve_listener() { (void)stop(); }
  [[nodiscard]] std::string address() const { return socket_.name(); }
  std::vector<double> stop() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
    return values_;
  }

 private:
  void receive() {
    for (;;) {
      const bool last = done_;  // after done_: drain what is queued, then end
      cosim::drivers::bench_message m{};
      while (socket_.receive(m, last ? 0 : 50))
        if (m.type == cosim::drivers::message_type::valve_command && m.channel_count == 1)
          values_.push_back(m.channels[0]);
      if (last) return;
    }
  }
  cosim::drivers::test::test_socket socket_;  // before thread_: bound when it starts
  std::atomic<bool> done_{false};
  std::vector<double> values_;
  std::thread thread_;
};

TEST(AlarmCli, AStopAlarmEndsWithTheOutputDriversSafeValues) {
  // docs/drivers.md, "Fail-safe": on every stop but completed each output driver sends its
  // safe_value safe_repeats times, last.
  temp_dir tmp;
  valve_listener valve;
  const std::string file = with_alarms(tmp, "valve_alarm.toml",
                                       "[[alarms]]\nvariable = \"p1\"\nmax = 3.45e6\n"
                                       "[drivers.valve]\ndirection = \"output\"\nto = \"" +
                                           valve.address() +
                                           "\"\nchannels = [\"s\"]\nunits = [\"m\"]\n"
                                           "from = [\"multibody.s\"]\nsafe_value = [0.125]\n"
                                           "safe_repeats = 5\nauth = \"none\"\n");
  const finished f =
      run_cosim(tmp, {"run", file, "--out", tmp / "out", "--set", "run.mode=realtime", "--set",
                      "run.lock_memory=false", "--set", "watchdog.max_overruns=1000000", "-q"});
  EXPECT_EQ(f.code, 1) << f.err;
  const std::vector<double> sent = valve.stop();
  const json_value s = cosim::cli::parse_json(slurp(tmp / "out/summary.json"));
  EXPECT_EQ(at(s, "stop_reason").str, "alarm");
  ASSERT_GE(sent.size(), 1000U + 5U);
  for (std::size_t i = sent.size() - 5; i < sent.size(); ++i)
    EXPECT_EQ(sent[i], 0.125) << "datagram " << i << " of " << sent.size();
  // Before them, the actuator length (0.5 m at rest, 003 Sect. 1.3; longer when stopped).
  EXPECT_GT(sent[sent.size() - 6], 0.5);
}

TEST(AlarmCli, ABadAlarmExitsTwoBeforeTheResultsFolderIsTouched) {
  temp_dir tmp;
  const std::string file =
      with_alarms(tmp, "bad_alarm.toml", "[[alarms]]\nvariable = \"px\"\nmax = 1\n");
  const finished f = run_cosim(tmp, {"run", file, "--out", tmp / "out", "-q"});
  EXPECT_EQ(f.code, 2);
  EXPECT_NE(f.err.find(file), std::string::npos) << f.err;
  EXPECT_NE(f.err.find("alarms[0].variable = \"px\""), std::string::npos) << f.err;
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

}  // namespace
