// alarm_monitor on synthetic rows whose crossings are known in closed form: max, min, rate
// (a parabola's differences), debounce (a short pulse ignored, a long one caught), warn
// counting, the log's rate limit on a fake clock, set-up refusals, and no allocation per
// step.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "cosim/runtime/alarm.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"

namespace {

using namespace cosim;

const std::vector<std::string> columns{"t", "x", "y"};
constexpr duration H{1'000'000};  // 1 ms

time_point at_step(std::int64_t n) {
  return time_point{n * H};
}
// How messages print the time of step n.
std::string secs(std::int64_t n) {
  return format_double(to_seconds(at_step(n)));
}

// Feeds x_n = f(n) (y = 0) from n = 0 (start) to n_max; returns the first step at which a
// stop alarm fired, -1 if none.
template <class F>
std::int64_t first_stop(alarm_monitor& m, F f, std::int64_t n_max) {
  std::array<double, 3> row{0.0, f(0), 0.0};
  if (m.start(at_step(0), row) != alarm_monitor::none) return 0;
  for (std::int64_t n = 1; n <= n_max; ++n) {
    row = {to_seconds(at_step(n)), f(n), 0.0};
    if (m.check(at_step(n), H, row) != alarm_monitor::none) return n;
  }
  return -1;
}

alarm_spec spec(const std::string& name) {
  alarm_spec a;
  a.name = name;
  a.variable = "x";
  return a;
}

TEST(Alarm, MaxFiresAtTheFirstStepAbove) {
  alarm_spec a = spec("high");
  a.max = 4.5;
  alarm_monitor m(std::vector{a}, columns);
  // x_n = n: first n with n > 4.5 is 5.
  EXPECT_EQ(first_stop(
                m, [](std::int64_t n) { return static_cast<double>(n); }, 100),
            5);
  const std::string msg = m.stop_message(0);
  EXPECT_NE(msg.find("alarm 'high'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("x = 5 above max 4.5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("t = " + secs(5) + " s"), std::string::npos) << msg;
  const auto r = m.reports();
  ASSERT_EQ(r.size(), 1U);
  EXPECT_EQ(r[0].count, 1);
  EXPECT_DOUBLE_EQ(r[0].first_time_s, 0.005);
}

TEST(Alarm, MinIsJudgedAtTheStartToo) {
  alarm_spec a = spec("low");
  a.min = 2.0;
  alarm_monitor below_at_start(std::vector{a}, columns);
  EXPECT_EQ(first_stop(
                below_at_start, [](std::int64_t n) { return 1.0 + n; }, 10),
            0);
  // x_n = 10 - n: first n with 10 - n < 2 is 9.
  alarm_monitor falling(std::vector{a}, columns);
  EXPECT_EQ(first_stop(
                falling, [](std::int64_t n) { return 10.0 - n; }, 100),
            9);
  EXPECT_NE(falling.stop_message(0).find("x = 1 below min 2"), std::string::npos);
}

TEST(Alarm, RateIsTheDifferenceOfConsecutiveRowsOverH) {
  alarm_spec a = spec("fast");
  a.rate_max = 10.0;
  alarm_monitor m(std::vector{a}, columns);
  // x_n = 1e-3 n^2: (x_n - x_{n-1}) / 1e-3 s = 2n - 1, first above 10 at n = 6.
  EXPECT_EQ(first_stop(
                m, [](std::int64_t n) { return 1e-3 * static_cast<double>(n * n); }, 100),
            6);
  EXPECT_NE(m.stop_message(0).find("|dx/dt| = 11"), std::string::npos) << m.stop_message(0);
  EXPECT_NE(m.stop_message(0).find("above rate_max 10"), std::string::npos);
}

TEST(Alarm, DebounceIgnoresAShortExcursion) {
  alarm_spec a = spec("held");
  a.max = 1.0;
  a.debounce = 3 * H;
  alarm_monitor m(std::vector{a}, columns);
  // Above on steps 3-5 (held 2 H: ignored) and from step 10 on: fires once held 3 H, at 13.
  const auto x = [](std::int64_t n) { return (n >= 3 && n <= 5) || n >= 10 ? 2.0 : 0.0; };
  EXPECT_EQ(first_stop(m, x, 100), 13);
  const std::string msg = m.stop_message(0);
  EXPECT_NE(msg.find("since t = " + secs(10) + " s (debounce " + secs(3) + " s)"),
            std::string::npos)
      << msg;
}

TEST(Alarm, WarnAlarmsAreCountedPerExcursionAndNeverStop) {
  alarm_spec w = spec("pulse");
  w.max = 0.5;
  w.debounce = 2 * H;
  w.action = alarm_action::warn;
  alarm_spec quiet = spec("quiet");
  quiet.variable = "y";
  quiet.min = -1.0;
  quiet.action = alarm_action::warn;
  alarm_monitor m(std::vector{w, quiet}, columns);
  // Pulses of 4 steps every 10 (steps 10k+1 .. 10k+4): each fires on its 3rd step and
  // stays firing for its 4th; 100 steps hold 10 pulses.
  const auto x = [](std::int64_t n) { return n % 10 >= 1 && n % 10 <= 4 ? 1.0 : 0.0; };
  EXPECT_EQ(first_stop(m, x, 100), -1);
  const auto r = m.reports();
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r[0].count, 10);
  EXPECT_EQ(r[0].active_steps, 20);
  EXPECT_DOUBLE_EQ(r[0].first_time_s, 0.003);
  EXPECT_EQ(r[0].action, alarm_action::warn);
  EXPECT_EQ(r[1].count, 0);
  EXPECT_EQ(r[1].active_steps, 0);
}

TEST(Alarm, WarnLinesAreLimitedToOnePerIntervalPerAlarm) {
  alarm_spec w = spec("pulse");
  w.max = 0.5;
  w.action = alarm_action::warn;
  alarm_monitor m(std::vector{w}, columns);
  std::array<double, 3> row{0.0, 0.0, 0.0};
  ASSERT_EQ(m.start(at_step(0), row), alarm_monitor::none);
  std::vector<std::string> lines;
  constexpr std::int64_t s = alarm_monitor::log_interval_ns;
  // Five excursions (odd steps above) at wall times 0, 0.3, 0.6, 1.1, 1.2 s.
  const std::array<std::int64_t, 5> wall{0, 3 * s / 10, 6 * s / 10, 11 * s / 10, 12 * s / 10};
  for (std::int64_t k = 0; k < 5; ++k) {
    for (std::int64_t j = 0; j < 2; ++j) {
      const std::int64_t n = 2 * k + 1 + j;
      row = {to_seconds(at_step(n)), j == 0 ? 1.0 : 0.0, 0.0};
      ASSERT_EQ(m.check(at_step(n), H, row), alarm_monitor::none);
    }
    m.take_log_lines(wall[static_cast<std::size_t>(k)], false, lines);
  }
  // The first at once; the 2nd-4th in one line at 1.1 s; the 5th waits for the end.
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_NE(lines[0].find("alarm 'pulse' (warn): x = 1 above max 0.5 at t = " + secs(1) + " s"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("fired 3 times since t = " + secs(3) + " s"), std::string::npos)
      << lines[1];
  EXPECT_TRUE(m.log_pending());
  m.take_log_lines(12 * s / 10, true, lines);
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_NE(lines[2].find("at t = " + secs(9) + " s"), std::string::npos) << lines[2];
  EXPECT_FALSE(m.log_pending());
}

TEST(Alarm, SetUpRefusesWhatCannotWork) {
  alarm_spec a = spec("bad");
  a.variable = "nope";
  a.max = 1.0;
  try {
    alarm_monitor m(std::vector{a}, columns);
    FAIL() << "an unknown column was accepted";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("'nope' is no results column (t, x, y)"),
              std::string::npos)
        << e.what();
  }
  a.variable = "x";
  a.min = 1.0;
  EXPECT_THROW(alarm_monitor(std::vector{a}, columns), error);  // min == max
  alarm_spec none = spec("none");
  EXPECT_THROW(alarm_monitor(std::vector{none}, columns), error);  // no limit at all
}

TEST(Alarm, CheckAllocatesNothing) {
  alarm_spec stop = spec("stop");
  stop.max = 10.0;
  alarm_spec warn = spec("warn");
  warn.max = 0.5;
  warn.rate_max = 100.0;
  warn.debounce = H;
  warn.action = alarm_action::warn;
  alarm_monitor m(std::vector{stop, warn}, columns);
  std::array<double, 3> row{0.0, 0.0, 0.0};
  (void)m.start(at_step(0), row);
  std::size_t fired = 0;
  const test::alloc_window window;
  for (std::int64_t n = 1; n <= 10'000; ++n) {
    row = {to_seconds(at_step(n)), n % 7 < 3 ? 1.0 : 0.0, 0.0};
    fired += m.check(at_step(n), H, row) != alarm_monitor::none ? 1U : 0U;
  }
  EXPECT_EQ(window.allocations(), 0U);
  EXPECT_EQ(fired, 0U);
  EXPECT_GT(m.reports()[1].count, 1000);
}

}  // namespace
