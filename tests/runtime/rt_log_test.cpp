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

TEST(RtLog, FormatContainsAllFields) {
  rt_event e;
  e.wall_ns = 12'000'001'234;
  e.sim_tick = 42;
  e.code = rt_event_code::overrun;
  e.detail = 7;
  e.a = 1.5;
  e.b = -2.0;
  EXPECT_EQ(format_rt_event(e, "pump"),
            "[pump] overrun tick=42 t=12.000001234s a=1.5 b=-2 detail=7");
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
  EXPECT_NE(text.find("info [valve] info tick=1"), std::string::npos) << text;
  EXPECT_NE(text.find("warning [valve] deadline_miss tick=2"), std::string::npos) << text;
  EXPECT_NE(text.find("a=1100 b=1000"), std::string::npos) << text;
  EXPECT_NE(text.find("error [valve] safety_stop tick=3"), std::string::npos) << text;
  EXPECT_EQ(drain.events_logged(), 3u);
}

TEST(RtLog, FullChannelDropsCountsAndDrainReportsDropsOnce) {
  captured_logger log;
  rt_log_drain drain(log.logger);
  rt_log_channel& channel = drain.add_channel("burst", 4);
  int accepted = 0;
  for (int i = 0; i < 10; ++i) accepted += channel.post(rt_event_code::overrun, i) ? 1 : 0;
  EXPECT_EQ(accepted, 4);
  EXPECT_EQ(channel.drops(), 6u);
  EXPECT_EQ(drain.drain_once(), 4u);
  drain.drain_once();  // no new drops: no second report
  const std::string text = log.str();
  EXPECT_EQ(count_of(text, "6 rt_log events dropped"), 1u) << text;
  EXPECT_NE(text.find("tick=3"), std::string::npos) << "the oldest events are kept";
  EXPECT_EQ(text.find("tick=4 "), std::string::npos) << "newer events were rejected";
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
  EXPECT_NE(log.str().find("warning [late] drop tick=77"), std::string::npos) << log.str();
}

}  // namespace
}  // namespace cosim
