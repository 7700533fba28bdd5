// UDP drivers on loopback, mostly without an executor: hygiene counters, staleness, stop source,
// output per update and fail-safe values. Ports: the drivers bind port 0 and report it.
#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "cosim/drivers/udp_driver.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/executor.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/system.hpp"
#include "udp_test_support.hpp"

namespace {

using namespace cosim::drivers;
using namespace std::chrono_literals;
using namespace cosim::drivers::test;

TEST(UdpInputDriver, DeliversNewestValueAndCountsHygiene) {
  test_socket peer, stranger;
  auto d = make_driver(input_config(peer));
  cosim::stop_source stop;
  d->start(stop);
  const std::uint16_t port = d->local_port();
  ASSERT_NE(port, 0);
  const cosim::time_point t0{};
  d->update_outputs(t0);
  EXPECT_EQ(d->output(0), 0.25);  // initial until the first packet

  peer.send(message_type::command, 10, {0.5}, port);
  ASSERT_TRUE(eventually([&] { return d->stats().received == 1; }));
  d->update_outputs(t0);
  EXPECT_EQ(d->output(0), 0.5);

  peer.send(message_type::command, 10, {0.9}, port);      // duplicate
  peer.send(message_type::command, 9, {0.9}, port);       // out of order
  peer.send(message_type::command, 13, {1.5}, port);      // 2 lost, clamped to 1
  stranger.send(message_type::command, 14, {0.1}, port);  // not allowlisted
  std::array<std::byte, 8> junk{};
  peer.send_raw(junk, port);  // too short
  ASSERT_TRUE(eventually([&] {
    const auto s = d->stats();
    return s.received == 2 && s.malformed == 1 && s.rejected_source == 1;
  }));
  const driver_stats s = d->stats();
  EXPECT_EQ(s.duplicates, 1U);
  EXPECT_EQ(s.out_of_order, 1U);
  EXPECT_EQ(s.lost, 2U);
  EXPECT_EQ(s.clamped, 1U);
  d->update_outputs(t0);
  EXPECT_EQ(d->output(0), 1.0);
  EXPECT_FALSE(stop.stop_requested());
  d->stop(false);
}

// PROTOCOL.md, "Receiving side", check 4: from an allowlisted peer (so only the count can
// reject it), a command with more channels than configured is not used, not even channel 0,
// and neither is one with fewer; both count as wrong_channel_count in summary.json.
TEST(UdpInputDriver, RejectsAnyOtherChannelCountFromAnAllowedPeer) {
  test_socket peer;
  auto d = make_driver(input_config(peer));  // one channel, kappa in [0, 1]
  cosim::stop_source stop;
  d->start(stop);  // the I/O thread
  const std::uint16_t port = d->local_port();
  peer.send(message_type::command, 1, {0.9, 0.1}, port);  // one channel too many
  peer.send(message_type::command, 2, {}, port);          // none
  peer.send(message_type::command, 3, {0.5}, port);       // as configured
  ASSERT_TRUE(eventually([&] {
    const auto s = d->stats();
    return s.received + s.wrong_channel_count + s.malformed == 3;
  }));
  const driver_stats s = d->stats();
  EXPECT_EQ(s.wrong_channel_count, 2U);
  EXPECT_EQ(s.received, 1U);
  EXPECT_EQ(s.malformed, 0U);
  EXPECT_EQ(s.rejected_source, 0U);
  EXPECT_EQ(s.lost, 0U);  // rejected datagrams used their sequence numbers: no gap
  d->update_outputs(cosim::time_point{});
  EXPECT_EQ(d->output(0), 0.5);
  cosim::json_writer j;
  j.begin_array();
  ASSERT_TRUE(d->has_statistics());
  d->write_statistics(j);
  j.end_array();
  EXPECT_TRUE(std::regex_search(j.str(), std::regex("\"wrong_channel_count\":\\s*2\\b")))
      << j.str();
}

// PROTOCOL.md: a sender's sequence goes +1 per datagram, heartbeats included. A peer's own
// heartbeats and its well-formed but rejected datagrams (non-finite values) were counted as
// lost; a sender restart reset every counter, so the earlier gaps, duplicates and the
// datagrams dropped before the restart was recognised disappeared from summary.json.
TEST(UdpInputDriver, HeartbeatsAreNoGapAndARestartKeepsTheCounters) {
  test_socket peer;
  auto d = make_driver(input_config(peer));
  cosim::stop_source stop;
  d->start(stop);
  const std::uint16_t port = d->local_port();
  std::uint32_t seq = 100;
  for (int i = 0; i < 10; ++i) {
    peer.send(message_type::command, seq++, {0.5}, port);
    peer.send(message_type::heartbeat, seq++, {}, port);
  }
  peer.send(message_type::command, seq++, {std::nan("")}, port);  // non-finite: rejected
  peer.send(message_type::command, seq++, {0.5}, port);
  peer.send(message_type::command, seq - 1, {0.5}, port);  // duplicate
  seq += 3;                                                // 3 never sent
  peer.send(message_type::command, seq++, {0.5}, port);
  ASSERT_TRUE(eventually([&] { return d->stats().received == 12; }));
  driver_stats s = d->stats();
  EXPECT_EQ(s.lost, 3U);
  EXPECT_EQ(s.duplicates, 1U);
  EXPECT_EQ(s.malformed, 1U);
  // The sender restarts at 0: the first 15 look old and are dropped, the 16th is taken as
  // the restart; from there its numbers are fresh. Nothing counted before is forgotten.
  for (std::uint32_t k = 0; k < 30; ++k) peer.send(message_type::command, k, {0.5}, port);
  ASSERT_TRUE(eventually([&] { return d->stats().received == 12 + 15; }));
  s = d->stats();
  EXPECT_EQ(s.out_of_order, 15U);
  EXPECT_EQ(s.sender_restarts, 1U);
  EXPECT_EQ(s.lost, 3U);
  EXPECT_EQ(s.duplicates, 1U);
  // Every datagram is in exactly one counter: 20 + 4 + 30 sent, 54 accounted for.
  EXPECT_EQ(s.received + s.lost + s.duplicates + s.out_of_order + s.malformed + 10, 54U + 3U);
  d->stop(false);
}

TEST(UdpInputDriver, StaleHoldsThenStops) {
  test_socket peer;
  auto d = make_driver(input_config(peer));
  cosim::stop_source stop;
  d->start(stop);
  peer.send(message_type::command, 1, {0.75}, d->local_port());
  ASSERT_TRUE(eventually([&] { return d->stats().received == 1; }));
  d->update_outputs({});
  EXPECT_EQ(d->stats().stale_events, 0U);
  std::this_thread::sleep_for(80ms);  // > stale_after
  d->update_outputs({});
  EXPECT_EQ(d->output(0), 0.75);  // held
  EXPECT_EQ(d->stats().stale_events, 1U);
  EXPECT_FALSE(stop.stop_requested());
  std::this_thread::sleep_for(150ms);  // > stop_after
  d->update_outputs({});
  EXPECT_TRUE(stop.stop_requested());
  EXPECT_EQ(stop.cause(), cosim::stop_cause::stale_input);
  // The stop message names the driver and the limit that tripped.
  EXPECT_STREQ(stop.who(),
               "no fresh input from driver 'joystick' within drivers.joystick.stop_after = 0.2 s");
  EXPECT_TRUE(d->stats().stale_stop);
  EXPECT_EQ(d->stats().stale_events, 1U);  // one event per fresh -> stale transition
  d->stop(false);
}

// The start of the run is announced to the peer with a heartbeat, repeated at most every
// 20 ms (PROTOCOL.md) while nothing has arrived, and no longer once a datagram has.
TEST(UdpInputDriver, RepeatsTheStartHeartbeatUntilTheFirstDatagram) {
  test_socket peer;
  driver_config c = input_config(peer);
  c.stale_after = 5.0;
  c.stop_after = 10.0;
  c.startup_timeout = 10.0;
  auto d = make_driver(c);
  cosim::stop_source stop;
  d->start(stop);
  const std::uint16_t port = d->local_port();
  // 20 updates 5 ms apart: an announcement every 20 ms of the loop's wall time, not 20.
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) {
    d->update_outputs(cosim::time_point{});
    std::this_thread::sleep_for(5ms);
  }
  const auto loop_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  int heartbeats = 0;
  bench_message m{};
  while (peer.receive(m, 50)) {
    EXPECT_EQ(m.type, message_type::heartbeat);
    ++heartbeats;
  }
  EXPECT_GE(heartbeats, 2);
  EXPECT_LE(heartbeats, static_cast<int>(loop_ms / 20.0) + 1) << "loop took " << loop_ms << " ms";
  peer.send(message_type::command, 1, {0.5}, port);
  ASSERT_TRUE(eventually([&] { return d->stats().received == 1; }));
  for (int i = 0; i < 10; ++i) {
    d->update_outputs(cosim::time_point{});
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_FALSE(peer.receive(m, 100)) << "heartbeat after the first datagram";
  EXPECT_EQ(d->output(0), 0.5);
  d->stop(false);
}

// The same output sequence through both backends.
class UdpOutputDriver : public ::testing::TestWithParam<const char*> {};

TEST_P(UdpOutputDriver, SendsEveryUpdateThenSafeValues) {
  test_socket valve;
  driver_config c;
  c.name = "valve";
  c.auth = driver_auth::none;  // version 1 peers
  c.direction = driver_direction::output;
  c.backend = GetParam();
  c.bind = "127.0.0.1:0";
  c.to = valve.name();
  c.type = message_type::valve_command;
  channel_config k;
  k.name = "kappa";
  k.safe_value = 0.125;
  k.from = "x.y";
  c.channels = {k};
  c.safe_repeats = 3;
  if (c.backend == "io_uring" && !uring_available()) GTEST_SKIP() << "built without liburing";
  std::unique_ptr<udp_driver> d;
  try {
    d = make_driver(c);
  } catch (const cosim::error& e) {
    // io_uring refused by this kernel (e.g. kernel.io_uring_disabled): nothing to test.
    if (c.backend == "io_uring") GTEST_SKIP() << e.what();
    throw;
  }
  cosim::stop_source stop;
  d->start(stop);
  d->input(0).set_initial({}, 0.5);
  for (int i = 0; i < 5; ++i)
    d->update_outputs(cosim::time_point{} + cosim::duration{i * 1'000'000});
  for (std::uint32_t i = 0; i < 5; ++i) {
    bench_message m{};
    ASSERT_TRUE(valve.receive(m));
    EXPECT_EQ(m.type, message_type::valve_command);
    EXPECT_EQ(m.sequence, i);
    EXPECT_EQ(m.channels[0], 0.5);
  }
  d->stop(true);  // fail-safe: the safe values follow the queued updates
  for (std::uint32_t i = 0; i < 3; ++i) {
    bench_message m{};
    ASSERT_TRUE(valve.receive(m));
    EXPECT_EQ(m.sequence, 5 + i);
    EXPECT_EQ(m.channels[0], 0.125);
  }
  bench_message extra{};
  EXPECT_FALSE(valve.receive(extra, 100));
  EXPECT_EQ(d->stats().sent, 8U);
}

INSTANTIATE_TEST_SUITE_P(Backends, UdpOutputDriver, ::testing::Values("asio", "io_uring"),
                         [](const auto& p) { return std::string(p.param); });

// A signal y(t) = 0.5 for the output driver to send.
class half final : public cosim::subsystem {
 public:
  half() : subsystem("src") {
    add_output({"y", "1", cosim::port_role::signal});
    set_step_size(cosim::to_duration(1e-3));
  }

 private:
  bool do_step(cosim::time_point, cosim::duration) noexcept override { return true; }
  void do_update_outputs(cosim::time_point) noexcept override { set_output(0, 0.5); }
};

class null_sink final : public cosim::row_sink {
 public:
  void begin(std::span<const std::string>) override {}
  void write(std::span<const double>) noexcept override {}
  void end() override {}
};

// Drivers are ordinary subsystems: the executor alone starts the I/O thread (no session
// object) and ends it, sending the safe values only when the run did not complete.
TEST(UdpDriverRun, TheExecutorRunsAnOutputDriverAndSendsSafeValuesOnlyOnAnEarlyStop) {
  for (const bool early : {false, true}) {
    test_socket valve;
    driver_config c;
    c.name = "valve";
    c.auth = driver_auth::none;  // version 1 peers
    c.direction = driver_direction::output;
    c.bind = "127.0.0.1:0";
    c.to = valve.name();
    c.type = message_type::valve_command;
    channel_config k;
    k.name = "kappa";
    k.safe_value = 0.125;
    k.from = "src.y";
    c.channels = {k};
    c.safe_repeats = 3;
    cosim::system sys;
    sys.add(std::make_unique<half>());
    auto drv = make_driver(c);
    drv->set_step_size(cosim::to_duration(1e-3));  // one update per macro step
    sys.add(std::move(drv));
    sys.connect("src.y", "valve.kappa");
    cosim::run_plan plan;
    plan.macro_step = cosim::to_duration(1e-3);
    plan.macro_steps = 4;
    plan.order = {0, 1};
    cosim::stop_source op;
    if (early) op.raise(cosim::stop_cause::operator_signal);  // stops before the first step
    null_sink sink;
    const cosim::run_outcome o = cosim::run_offline(sys, plan, {}, sink, &op);
    EXPECT_EQ(o.status, early ? cosim::run_status::safety_stop : cosim::run_status::completed);
    // The start-up exchange at t0, one command per macro step taken, then the safe values.
    std::vector<double> got;
    bench_message m{};
    while (valve.receive(m, 300)) got.push_back(m.channels[0]);
    const std::vector<double> want =
        early ? std::vector<double>{0.5, 0.125, 0.125, 0.125} : std::vector<double>(5, 0.5);
    EXPECT_EQ(got, want) << (early ? "stopped early" : "completed");
  }
}

TEST(UdpDriverConfig, RefusesBadInputNamingTheKey) {
  test_socket peer;
  driver_config c = input_config(peer);
  c.peers.clear();
  try {
    (void)make_driver(c);
    FAIL() << "no allowlist accepted";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find("drivers.joystick.peers"), std::string::npos) << e.what();
  }
  c = input_config(peer);
  c.bind = "127.0.0.300:1";
  try {
    (void)make_driver(c);
    FAIL() << "bad address accepted";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find("drivers.joystick.bind"), std::string::npos) << e.what();
  }
  c = input_config(peer);
  c.bind = peer.name();  // in use by the test socket
  try {
    (void)make_driver(c);
    FAIL() << "port in use accepted";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find("drivers.joystick.bind"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
}

}  // namespace
