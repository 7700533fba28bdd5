#include "cosim/runtime/rt_log.hpp"

#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace cosim {
namespace {

// A logger writing "<level> <message>" lines into a string stream.
struct captured_logger {
  std::ostringstream text;
  std::shared_ptr<spdlog::logger> logger;

  captured_logger() {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text);
    sink->set_pattern("%l %v");
    logger = std::make_shared<spdlog::logger>("rt_log_test", sink);
    logger->set_level(spdlog::level::trace);
  }
  std::string str() {
    logger->flush();
    return text.str();
  }
};

std::size_t count_of(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

TEST(RtLog, EventLayoutIsFixed) {
  EXPECT_EQ(sizeof(rt_event), 40u);
  EXPECT_EQ(to_string(rt_event_code::deadline_miss), "deadline_miss");
  EXPECT_EQ(to_string(static_cast<rt_event_code>(999)), "unknown");
}

TEST(RtLog, FormatNamesEveryFieldInSimulatedTime) {
  rt_event e;
  e.wall_ns = 12'000'001'234;  // monotonic clock: never shown
  e.sim_tick = 3'275'000'000;
  e.code = rt_event_code::overrun;
  e.detail = 2;
  e.a = 2675.4;
  e.b = 1000.0;
  EXPECT_EQ(format_rt_event(e, "multibody"),
            "[multibody] overrun at t_sim=3.275 s: step ended 2675 us after its release "
            "(period 1000 us); next release skipped 2 periods");
  e.detail = 0;
  EXPECT_EQ(format_rt_event(e, "multibody"),
            "[multibody] overrun at t_sim=3.275 s: step ended 2675 us after its release "
            "(period 1000 us)");
  rt_event stop;
  stop.code = rt_event_code::safety_stop;
  stop.sim_tick = 12'000'000'000;
  stop.a = 10;
  stop.b = 10;
  stop.detail = 1;
  EXPECT_EQ(format_rt_event(stop, "watchdog"),
            "[watchdog] deadline stop at t_sim=12 s: 10 late steps in the leaky bucket reached "
            "watchdog.max_overruns = 10");
  rt_event stall;
  stall.code = rt_event_code::stall;
  stall.sim_tick = 1'000'000;
  stall.a = 23400;
  stall.b = 10000;
  stall.detail = 1;
  EXPECT_EQ(format_rt_event(stall, "watchdog", "hydraulics"),
            "[watchdog] stall at t_sim=0.001 s: hydraulics stayed 23400 us in one step (limit "
            "10000 us)");
  // No unexplained field names anywhere.
  for (const rt_event& ev : {e, stop, stall}) {
    const std::string line = format_rt_event(ev, "x");
    for (const char* bad : {"a=", "b=", "detail=", "tick="})
      EXPECT_EQ(line.find(bad), std::string::npos) << line;
  }
}

TEST(RtLog, SimulatedSecondsAreExactWithoutTrailingZeros) {
  EXPECT_EQ(format_sim_seconds(0), "0");
  EXPECT_EQ(format_sim_seconds(3'275'000'000), "3.275");
  EXPECT_EQ(format_sim_seconds(5'441'000'000), "5.441");  // 5.441000000000001 as a double sum
  EXPECT_EQ(format_sim_seconds(42), "0.000000042");
  EXPECT_EQ(format_sim_seconds(-1'500'000'000), "-1.5");
}

TEST(RtLog, LogLevelNames) {
  for (const char* name : {"trace", "debug", "info", "warn", "error", "off"}) {
    const auto level = parse_log_level(name);
    ASSERT_TRUE(level.has_value()) << name;
    EXPECT_EQ(to_string(*level), name);
  }
  EXPECT_FALSE(parse_log_level("warning").has_value());
  EXPECT_FALSE(parse_log_level("").has_value());
  EXPECT_FALSE(parse_log_level("INFO").has_value());
}

TEST(RtLog, RuntimeLogLevelFiltersTheDefaultLoggerOnStderr) {
  for (const auto& [level, shown] :
       {std::pair{log_level::warn, true}, std::pair{log_level::error, false}}) {
    configure_runtime_log(level);
    testing::internal::CaptureStderr();
    {
      rt_log_drain drain;  // spdlog's default logger
      drain.add_channel("pump", 8).post(rt_event_code::overrun, 2'000'000, 1500, 1000, 1);
      drain.stop();
    }
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(err.find("[pump] overrun at t_sim=0.002 s") != std::string::npos, shown)
        << to_string(level) << ": " << err;
  }
  configure_runtime_log(log_level::info);
}

rt_event overrun_at(std::int64_t sim_ms, double late_us) {
  rt_event e;
  e.code = rt_event_code::overrun;
  e.sim_tick = sim_ms * 1'000'000;
  e.a = late_us;
  e.b = 1000.0;
  e.detail = 1;
  return e;
}

TEST(RtLog, LimiterLogsTheFirstOverrunThenAtMostOneSummaryPerSecond) {
  // Two threads overrunning every period (1 ms) for 2.5 s on a fake clock that advances
  // with the simulation: per-overrun logging would give 5000 lines.
  rt_log_limiter limiter(1'000'000'000);
  std::vector<rt_log_line> lines;
  std::vector<std::int64_t> line_times;
  for (std::int64_t ms = 0; ms < 2500; ++ms) {
    const std::int64_t now = 7'000'000'000 + ms * 1'000'000;  // drain clock, any origin
    const std::size_t before = lines.size();
    limiter.add(overrun_at(ms, ms == 1700 ? 4321.0 : 1100.0), "multibody", now, lines);
    limiter.add(overrun_at(ms, 1200.0), "hydraulics", now, lines);
    limiter.flush(now, false, lines);
    for (std::size_t i = before; i < lines.size(); ++i) line_times.push_back(now);
  }
  limiter.flush(7'000'000'000 + 2'500'000'000, true, lines);
  // First event in full, summaries at 1 s and 2 s, the rest at the end: 4 lines.
  ASSERT_EQ(lines.size(), 4U);
  for (std::size_t i = 1; i < line_times.size(); ++i)
    EXPECT_GE(line_times[i] - line_times[i - 1], 1'000'000'000) << "line " << i;
  EXPECT_EQ(lines[0].code, rt_event_code::overrun);
  EXPECT_EQ(lines[0].text.find("[multibody] overrun at t_sim=0 s: step ended 1100 us"), 0U)
      << lines[0].text;
  // At 1 s: the hydraulics events of 0..1000 ms and the multibody ones of 1..1000 ms.
  EXPECT_EQ(lines[1].text,
            "overruns since the last report: hydraulics 1001, multibody 1000 (t_sim 0 s to 1 s; "
            "longest: hydraulics ended 1200 us after its release at t_sim=0 s)");
  EXPECT_NE(lines[2].text.find("hydraulics 1000, multibody 1000 (t_sim 1.001 s to 2 s; "
                               "longest: multibody ended 4321 us after its release at "
                               "t_sim=1.7 s)"),
            std::string::npos)
      << lines[2].text;
  EXPECT_NE(lines[3].text.find("hydraulics 499, multibody 499 (t_sim 2.001 s to 2.499 s"),
            std::string::npos)
      << lines[3].text;
  // Every overrun is accounted for in exactly one line.
  EXPECT_EQ(1 + 2001 + 2000 + 998, 2 * 2500);
}

// The drain reads one thread's channel after the other, so a summary may receive a later
// overrun before an earlier one; its span still runs from the earliest to the latest.
TEST(RtLog, LimiterSpanRunsFromTheEarliestToTheLatestOverrun) {
  rt_log_limiter limiter(1'000'000'000);
  std::vector<rt_log_line> lines;
  limiter.add(overrun_at(1, 1500), "valve", 0, lines);  // the first line of the run
  limiter.add(overrun_at(1817, 1100), "multibody", 10, lines);
  limiter.add(overrun_at(1815, 1200), "hydraulics", 10, lines);
  limiter.add(overrun_at(1816, 1000), "multibody", 10, lines);
  limiter.flush(20, true, lines);
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_NE(lines[1].text.find("(t_sim 1.815 s to 1.817 s;"), std::string::npos) << lines[1].text;
}

TEST(RtLog, LimiterPassesStopsAndKeepsCodesApart) {
  rt_log_limiter limiter(1'000'000'000);
  std::vector<rt_log_line> lines;
  rt_event drop;
  drop.code = rt_event_code::drop;
  drop.a = 3;
  limiter.add(overrun_at(1, 1500), "valve", 0, lines);
  limiter.add(drop, "valve", 0, lines);  // its own first line, not folded into overruns
  limiter.add(overrun_at(2, 1500), "valve", 10, lines);
  rt_event stop;
  stop.code = rt_event_code::safety_stop;
  stop.detail = 1;
  limiter.add(stop, "watchdog", 20, lines);  // never rate-limited
  limiter.add(stop, "watchdog", 30, lines);
  ASSERT_EQ(lines.size(), 4U);
  EXPECT_EQ(lines[1].code, rt_event_code::drop);
  EXPECT_EQ(lines[2].code, rt_event_code::safety_stop);
  EXPECT_EQ(lines[3].code, rt_event_code::safety_stop);
  limiter.flush(40, true, lines);
  ASSERT_EQ(lines.size(), 5U);
  EXPECT_EQ(lines[4].text,
            "overruns since the last report: valve 1 (at t_sim 0.002 s; longest: valve ended "
            "1500 us after its release at t_sim=0.002 s)");
}

TEST(RtLog, DrainRateLimitsOverrunsAndSkipsLevelsBelowTheLogger) {
  captured_logger log;
  rt_log_drain drain(log.logger);
  rt_log_channel& channel = drain.add_channel("hydraulics", 64);
  for (int i = 0; i < 50; ++i)
    channel.post(rt_event_code::overrun, std::int64_t{i} * 1'000'000, 1500, 1000, 1);
  EXPECT_EQ(drain.drain_once(0), 50U);
  EXPECT_EQ(count_of(log.str(), "\n"), 1U) << log.str();  // only the first, within the second
  for (int i = 50; i < 60; ++i)
    channel.post(rt_event_code::overrun, std::int64_t{i} * 1'000'000, 1500, 1000, 1);
  EXPECT_EQ(drain.drain_once(1'000'000'000), 10U);
  EXPECT_EQ(count_of(log.str(), "\n"), 2U) << log.str();
  EXPECT_NE(log.str().find("warning overruns since the last report: hydraulics 59 (t_sim 0.001 s "
                           "to 0.059 s"),
            std::string::npos)
      << log.str();
  // Level error: overruns (warnings) are neither logged nor summarised later.
  log.logger->set_level(spdlog::level::err);
  channel.post(rt_event_code::overrun, 70'000'000, 1500, 1000, 1);
  channel.post(rt_event_code::safety_stop, 71'000'000, 10, 10, 1);
  EXPECT_EQ(drain.drain_once(5'000'000'000), 2U);
  drain.stop();
  const std::string text = log.str();
  EXPECT_EQ(count_of(text, "\n"), 3U) << text;
  EXPECT_NE(text.find("error [hydraulics] deadline stop at t_sim=0.071 s"), std::string::npos)
      << text;
}

TEST(RtLog, ChannelStampsSourceAndTime) {
  rt_log_drain drain;
  rt_log_channel& first = drain.add_channel("first", 8);
  rt_log_channel& second = drain.add_channel("second", 8);
  EXPECT_EQ(first.source(), 0);
  EXPECT_EQ(second.source(), 1);
  EXPECT_EQ(second.name(), "second");
  const std::int64_t before = monotonic_now_ns();
  ASSERT_TRUE(second.post(rt_event_code::info, 5, 1.0, 2.0, 3));
  rt_event out;
  ASSERT_TRUE(second.try_pop(out));
  EXPECT_EQ(out.source, 1);
  EXPECT_EQ(out.sim_tick, 5);
  EXPECT_EQ(out.detail, 3u);
  EXPECT_GE(out.wall_ns, before);
  EXPECT_LE(out.wall_ns, monotonic_now_ns());
}

TEST(RtLog, DrainFormatsEventsWithLevelsPerCode) {
  captured_logger log;
  rt_log_drain drain(log.logger);
  rt_log_channel& channel = drain.add_channel("valve", 16);
  channel.post(rt_event_code::info, 1);
  channel.post(rt_event_code::deadline_miss, 2, 1100.0, 1000.0);
  channel.post(rt_event_code::safety_stop, 3);
  EXPECT_EQ(drain.drain_once(), 3u);
  EXPECT_EQ(drain.drain_once(), 0u);
  const std::string text = log.str();
  EXPECT_NE(text.find("info [valve] info at t_sim=0.000000001 s"), std::string::npos) << text;
  EXPECT_NE(text.find("warning [valve] deadline miss at t_sim=0.000000002 s: result ready 1100 "
                      "us after release, deadline 1000 us"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("error [valve] safety stop at t_sim=0.000000003 s"), std::string::npos)
      << text;
  EXPECT_EQ(drain.events_logged(), 3u);
}

TEST(RtLog, FullChannelDropsCountsAndDrainReportsDropsOnce) {
  captured_logger log;
  rt_log_drain drain(log.logger);
  rt_log_channel& channel = drain.add_channel("burst", 4);
  int accepted = 0;
  for (int i = 0; i < 10; ++i) accepted += channel.post(rt_event_code::info, i) ? 1 : 0;
  EXPECT_EQ(accepted, 4);
  EXPECT_EQ(channel.drops(), 6u);
  EXPECT_EQ(drain.drain_once(), 4u);
  drain.drain_once();  // no new drops: no second report
  const std::string text = log.str();
  EXPECT_EQ(count_of(text, "6 rt_log events dropped"), 1u) << text;
  EXPECT_NE(text.find("t_sim=0.000000003 s"), std::string::npos) << "the oldest events are kept";
  EXPECT_EQ(text.find("t_sim=0.000000004 s"), std::string::npos) << "newer events were rejected";
}

TEST(RtLog, AddChannelAfterStartIsRejected) {
  captured_logger log;
  rt_log_drain drain(log.logger);
  drain.add_channel("a");
  drain.start(std::chrono::milliseconds{1});
  EXPECT_THROW(drain.add_channel("b"), std::logic_error);
  drain.stop();
}

TEST(RtLog, BackgroundDrainDeliversEverythingFromConcurrentProducers) {
  captured_logger log;
  constexpr int per_producer = 20'000;
  std::uint64_t accepted_total = 0;
  std::uint64_t drops_total = 0;
  {
    rt_log_drain drain(log.logger);
    rt_log_channel& a = drain.add_channel("prod_a", 256);
    rt_log_channel& b = drain.add_channel("prod_b", 256);
    drain.start(std::chrono::milliseconds{1});
    std::atomic<std::uint64_t> accepted{0};
    auto produce = [&accepted](rt_log_channel& channel) {
      std::uint64_t ok = 0;
      for (int i = 0; i < per_producer; ++i) {
        if (channel.post(rt_event_code::info, i, static_cast<double>(i))) ++ok;
        if (i % 64 == 0) std::this_thread::sleep_for(std::chrono::microseconds{50});
      }
      accepted.fetch_add(ok);
    };
    std::thread ta(produce, std::ref(a));
    std::thread tb(produce, std::ref(b));
    ta.join();
    tb.join();
    drain.stop();  // drains the rest
    accepted_total = accepted.load();
    drops_total = a.drops() + b.drops();
    EXPECT_EQ(drain.events_logged(), accepted_total);
  }
  EXPECT_EQ(accepted_total + drops_total, 2u * per_producer);
  const std::string text = log.str();
  EXPECT_EQ(count_of(text, "info [prod_"), accepted_total);
}

TEST(RtLog, DestructorStopsTheThreadAndDrainsTheRest) {
  captured_logger log;
  {
    rt_log_drain drain(log.logger);
    rt_log_channel& channel = drain.add_channel("late", 8);
    drain.start(std::chrono::hours{1});  // would never wake by itself
    channel.post(rt_event_code::drop, 77);
  }
  EXPECT_NE(log.str().find("warning [late] drop at t_sim=0.000000077 s"), std::string::npos)
      << log.str();
}

}  // namespace
}  // namespace cosim
