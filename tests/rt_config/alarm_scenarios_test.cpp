// [[alarms]] on the crane benchmark. Every expected stop time, count and first time is
// computed here from an unalarmed run's rows (the first row beyond the limit, the runs of
// rows beyond it), so the alarm is checked against the signal it watches, not against
// itself; threaded runs stop at the same step as offline; bad tables are refused with file,
// key and value before anything runs.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cosim/rt_config/run.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/threaded_executor.hpp"
#include "row_table.hpp"

namespace {

using namespace cosim;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string m1 = slurp(COSIM_SOURCE_DIR "/rt_config/scenarios/crane_m1_fs.toml");
const std::string m2 = slurp(COSIM_SOURCE_DIR "/rt_config/scenarios/crane_m2_fs.toml");

run_outcome run(const std::string& text, test::row_table& rows, const std::string& mode = "offline",
                const std::string& name = "alarm.toml") {
  const config::scenario sc = config::parse_scenario(text, name);
  auto b = config::build(sc);
  if (mode == "offline") return run_offline(b->sys, b->plan, b->limits, rows);
  threaded_options opt = config::make_threaded_options(sc, *b);
  opt.lock_memory = false;
  return run_threaded(b->sys, b->plan, b->limits, rows, opt);
}

// An unalarmed run of `text`: every macro step is a row (output_interval 0).
struct reference {
  test::row_table rows;
  explicit reference(const std::string& text) {
    const run_outcome o = run(text, rows);
    EXPECT_EQ(o.status, run_status::completed);
    EXPECT_EQ(static_cast<std::int64_t>(rows.rows()), o.macro_steps + 1);
  }
  // Index of the first row where pred(value of col) holds, -1 if none.
  template <class P>
  [[nodiscard]] std::ptrdiff_t first(const std::string& col, P pred) const {
    for (std::size_t r = 0; r < rows.rows(); ++r)
      if (pred(rows.at(r, col))) return static_cast<std::ptrdiff_t>(r);
    return -1;
  }
};

const reference& m1_reference() {
  static const reference r(m1);
  return r;
}

void expect_stopped_at(const run_outcome& o, const test::row_table& rows, const reference& ref,
                       std::ptrdiff_t row) {
  ASSERT_GT(row, 0);
  const auto r = static_cast<std::size_t>(row);
  EXPECT_EQ(o.status, run_status::safety_stop);
  EXPECT_EQ(o.stop_reason, "alarm");
  EXPECT_EQ(config::exit_code(o), 1);
  EXPECT_EQ(o.stop_time_s, ref.rows.at(r, "t"));
  EXPECT_EQ(o.macro_steps, row);
  // Every row up to and including the one that fired, none after.
  ASSERT_EQ(rows.rows(), r + 1);
  EXPECT_EQ(rows.at(r, "p1"), ref.rows.at(r, "p1"));
  EXPECT_EQ(rows.at(r, "t"), ref.rows.at(r, "t"));
}

TEST(AlarmScenarios, CraneM1StopsAtTheFirstStepWhereP1ExceedsMax) {
  const reference& ref = m1_reference();
  constexpr double X = 3.45e6;  // p1 starts at 3.17 MPa and crosses this about 6 s in
  const std::ptrdiff_t row = ref.first("p1", [](double p) { return p > X; });
  ASSERT_GT(row, 1000);
  ASSERT_LT(row, 9000);
  test::row_table rows;
  const run_outcome o = run(m1 + "\n[[alarms]]\nvariable = \"p1\"\nmax = 3.45e6\n", rows);
  expect_stopped_at(o, rows, ref, row);
  // The message names the alarm, the variable, its value, the limit and the time.
  EXPECT_NE(o.message.find("alarm 'p1': p1 = " +
                           format_double(ref.rows.at(static_cast<std::size_t>(row), "p1")) +
                           " above max 3450000 at t = " + format_double(o.stop_time_s) + " s"),
            std::string::npos)
      << o.message;
  ASSERT_EQ(o.alarms.size(), 1U);
  EXPECT_EQ(o.alarms[0].count, 1);
  EXPECT_EQ(o.alarms[0].first_time_s, o.stop_time_s);
}

TEST(AlarmScenarios, ThreadedStopsAtTheSameStepAsOffline) {
  const std::string text =
      m1 + "\n[[alarms]]\nname = \"p1 high\"\nvariable = \"hydraulics.p1\"\nmax = 3.45e6\n";
  test::row_table off_rows, thr_rows;
  const run_outcome off = run(text, off_rows);
  const run_outcome thr = run(text, thr_rows, "threaded");
  EXPECT_EQ(thr.mode, "threaded");
  EXPECT_EQ(thr.stop_reason, "alarm");
  EXPECT_EQ(thr.stop_time_s, off.stop_time_s);
  EXPECT_EQ(thr.macro_steps, off.macro_steps);
  EXPECT_EQ(thr.rows, off.rows);
  EXPECT_EQ(thr.message, off.message);
  // hydraulics.p1 is recorded as p1: the alarm watches that column.
  EXPECT_NE(thr.message.find("alarm 'p1 high': p1 = "), std::string::npos) << thr.message;
  expect_stopped_at(thr, thr_rows, m1_reference(),
                    m1_reference().first("p1", [](double p) { return p > 3.45e6; }));
}

TEST(AlarmScenarios, MinStopsAtTheFirstStepBelow) {
  const reference& ref = m1_reference();
  constexpr double X = 3.04e6;
  const std::ptrdiff_t row = ref.first("p1", [](double p) { return p < X; });
  test::row_table rows;
  const run_outcome o = run(m1 + "\n[[alarms]]\nvariable = \"p1\"\nmin = 3.04e6\n", rows);
  expect_stopped_at(o, rows, ref, row);
  EXPECT_NE(o.message.find("below min 3040000"), std::string::npos) << o.message;
}

TEST(AlarmScenarios, RateLimitsTheChangeBetweenConsecutiveSteps) {
  const reference& ref = m1_reference();
  const double H = 1e-3;      // run.macro_step of crane_m1_fs.toml
  constexpr double R = 0.03;  // [m/s] on s
  std::ptrdiff_t row = -1;
  for (std::size_t r = 1; r < ref.rows.rows() && row < 0; ++r)
    if (std::abs(ref.rows.at(r, "s") - ref.rows.at(r - 1, "s")) / H > R)
      row = static_cast<std::ptrdiff_t>(r);
  ASSERT_GT(row, 1000);
  test::row_table rows;
  const run_outcome o = run(m1 + "\n[[alarms]]\nvariable = \"s\"\nrate_max = 0.03\n", rows);
  expect_stopped_at(o, rows, ref, row);
  EXPECT_NE(o.message.find("|ds/dt| = "), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("above rate_max 0.03"), std::string::npos) << o.message;
}

TEST(AlarmScenarios, DebounceWaitsUntilTheConditionHeldThatLong) {
  const reference& ref = m1_reference();
  // The first row of the first run of 21 rows above X: held 20 steps = 0.02 s.
  const auto fires_after = [&](double X, std::size_t steps) -> std::ptrdiff_t {
    std::size_t held = 0;
    for (std::size_t r = 0; r < ref.rows.rows(); ++r) {
      held = ref.rows.at(r, "p1") > X ? held + 1 : 0;
      if (held == steps + 1) return static_cast<std::ptrdiff_t>(r);
    }
    return -1;
  };
  const std::ptrdiff_t row = fires_after(3.45e6, 20);
  ASSERT_GT(row, ref.first("p1", [](double p) { return p > 3.45e6; }));
  test::row_table rows;
  const run_outcome o =
      run(m1 + "\n[[alarms]]\nvariable = \"p1\"\nmax = 3.45e6\ndebounce = 0.02\n", rows);
  expect_stopped_at(o, rows, ref, row);
  EXPECT_NE(o.message.find("(debounce 0.02 s)"), std::string::npos) << o.message;
  // A higher limit is exceeded for fewer than 20 steps: the run completes.
  ASSERT_GT(ref.first("p1", [](double p) { return p > 3.48e6; }), 0);
  ASSERT_EQ(fires_after(3.48e6, 20), -1);
  test::row_table all;
  const run_outcome c =
      run(m1 + "\n[[alarms]]\nvariable = \"p1\"\nmax = 3.48e6\ndebounce = 0.02\n", all);
  EXPECT_EQ(c.status, run_status::completed);
  EXPECT_EQ(c.alarms.at(0).count, 0);
}

TEST(AlarmScenarios, WarnAlarmsCountEveryExcursionAndTheRunCompletes) {
  // M2 opens and closes the valve repeatedly: p1 crosses X many times.
  const reference ref(m2);
  constexpr double X = 2.7e6;
  std::int64_t excursions = 0, above = 0;
  double first = -1.0;
  bool was = false;
  for (std::size_t r = 0; r < ref.rows.rows(); ++r) {
    const bool is = ref.rows.at(r, "p1") > X;
    if (is && !was && ++excursions == 1) first = ref.rows.at(r, "t");
    above += is ? 1 : 0;
    was = is;
  }
  ASSERT_GT(excursions, 5);
  test::row_table rows;
  const run_outcome o =
      run(m2 + "\n[[alarms]]\nname = \"p1 high\"\nvariable = \"p1\"\nmax = 2.7e6\naction = "
               "\"warn\"\n[[alarms]]\nvariable = \"s\"\nmin = -10\naction = \"warn\"\n",
          rows);
  EXPECT_EQ(o.status, run_status::completed);
  EXPECT_EQ(config::exit_code(o), 0);
  ASSERT_EQ(o.alarms.size(), 2U);
  EXPECT_EQ(o.alarms[0].name, "p1 high");
  EXPECT_EQ(o.alarms[0].action, alarm_action::warn);
  EXPECT_EQ(o.alarms[0].count, excursions);
  EXPECT_EQ(o.alarms[0].first_time_s, first);
  EXPECT_EQ(o.alarms[0].active_steps, above);
  EXPECT_EQ(o.alarms[1].count, 0);
  EXPECT_EQ(rows.rows(), ref.rows.rows());
}

TEST(AlarmScenarios, AnUnrecordedVariableIsRecordedToo) {
  test::row_table rows;
  // kappa's producer is a source; the multibody's theta1 is no preset column.
  const config::scenario sc = config::parse_scenario(
      m1 + "\n[[alarms]]\nvariable = \"multibody.theta1\"\nmax = 10\n", "alarm.toml");
  ASSERT_EQ(sc.alarms.size(), 1U);
  EXPECT_EQ(sc.alarms[0].spec.variable, "multibody.theta1");
  auto b = config::build(sc);
  const run_outcome o = run_offline(b->sys, b->plan, b->limits, rows);
  EXPECT_EQ(o.status, run_status::completed);
  // The column holds link 1's angle: 30 degrees at the start (003 Sect. 1.3).
  EXPECT_NEAR(rows.at(0, "multibody.theta1"), std::acos(-1.0) / 6.0, 1e-12);
}

TEST(AlarmScenarios, PrintSystemKeepsTheAlarms) {
  const config::scenario sc = config::parse_scenario(
      m1 + "\n[[alarms]]\nname = \"a\"\nvariable = \"p1\"\nmin = 1\nmax = 3.45e6\nrate_max = "
           "1e9\ndebounce = 0.02\naction = \"warn\"\n",
      "alarm.toml");
  const config::scenario back = config::parse_scenario(config::system_toml(sc), "printed.toml");
  ASSERT_EQ(back.alarms.size(), 1U);
  const alarm_spec& a = back.alarms[0].spec;
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.variable, "p1");
  EXPECT_EQ(a.min, 1.0);
  EXPECT_EQ(a.max, 3.45e6);
  EXPECT_EQ(a.rate_max, 1e9);
  EXPECT_EQ(a.debounce, duration{20'000'000});
  EXPECT_EQ(a.action, alarm_action::warn);
}

// Refused before anything runs, naming file, key and value.
void expect_refused(const std::string& alarm, const std::vector<std::string>& parts) {
  try {
    const config::scenario sc = config::parse_scenario(m1 + "\n[[alarms]]\n" + alarm, "bad.toml");
    (void)config::build(sc);
    ADD_FAILURE() << "accepted: " << alarm;
  } catch (const error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("bad.toml:"), std::string::npos) << msg;
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << p << " in: " << msg;
  }
}

TEST(AlarmScenarios, BadTablesAreRefusedWithFileKeyAndValue) {
  expect_refused("variable = \"px\"\nmax = 1\n",
                 {"alarms[0].variable = \"px\"", "names no results column", "p1"});
  expect_refused("variable = \"hydraulics.px\"\nmax = 1\n",
                 {"alarms[0].variable = \"hydraulics.px\"", "no variable, output or input 'px'"});
  expect_refused("variable = \"p1\"\nmin = 5\nmax = 5\n", {"alarms[0].min = 5", "below"});
  expect_refused("variable = \"p1\"\nmax = 1\ndebounce = -0.1\n", {"alarms[0].debounce = -0.1"});
  expect_refused("variable = \"p1\"\nmax = 1\naction = \"halt\"\n",
                 {"alarms[0].action = \"halt\"", "stop, warn"});
  expect_refused("variable = \"p1\"\n", {"alarms[0]", "needs min, max or rate_max"});
  expect_refused("variable = \"p1\"\nrate_max = 0\n", {"alarms[0].rate_max = 0", "> 0"});
  expect_refused("variable = \"p1\"\nmax = 1\nlimit = 2\n", {"alarms[0].limit", "allowed"});
  expect_refused("variable = \"p1\"\nmax = 1\n[[alarms]]\nvariable = \"p1\"\nmin = 0\n",
                 {"alarms[1].variable", "\"p1\" is taken by alarms[0]"});
}

}  // namespace
