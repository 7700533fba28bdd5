// io_uring backend on loopback: payload and source address, more datagrams than the
// provided-buffer ring holds, oversized datagrams, wake(), stop(), and an input driver
// whose hygiene counters match the Asio backend's for the same scripted sequence.
// Skipped when the build has no liburing or the kernel refuses io_uring.
#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cosim/drivers/udp_driver.hpp"
#include "cosim/drivers/uring_backend.hpp"
#include "cosim/runtime/errno_text.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/rt_thread.hpp"
#include "udp_test_support.hpp"

#if COSIM_HAVE_URING
#include <liburing.h>
#endif

namespace {

using namespace cosim::drivers;
using namespace std::chrono_literals;
using namespace cosim::drivers::test;

// Empty if io_uring can be used here, else why not.
std::string uring_skip_reason() {
  if (!uring_available()) return "cosim was built without liburing";
#if COSIM_HAVE_URING
  io_uring r{};
  const int rc = io_uring_queue_init(2, &r, 0);
  if (rc == -EPERM || rc == -ENOSYS)
    return std::string("the kernel refuses io_uring: ") + cosim::errno_text(-rc);
  if (rc == 0) io_uring_queue_exit(&r);
#endif
  return {};
}

#define SKIP_WITHOUT_URING()                        \
  do {                                              \
    const std::string reason = uring_skip_reason(); \
    if (!reason.empty()) GTEST_SKIP() << reason;    \
  } while (false)

// Kernel receive-queue drops of the UDP socket bound to port (from /proc/net/udp).
std::uint64_t kernel_drops(std::uint16_t port) {
  std::ifstream f("/proc/net/udp");
  std::string line;
  std::getline(f, line);  // header
  char want[8];
  std::snprintf(want, sizeof want, ":%04X", port);
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string sl, local;
    in >> sl >> local;
    if (!local.ends_with(want)) continue;
    std::string field, last;
    while (in >> field) last = field;
    return std::stoull(last);
  }
  return 0;
}

// Records what the backend hands over (test side: allocation is fine here).
struct recording_handler final : datagram_handler {
  struct datagram {
    std::vector<std::byte> data;
    sockaddr_in from{};
    std::int64_t arrival_ns = 0;
  };
  void on_datagram(std::span<const std::byte> data, const sockaddr_in& from,
                   std::int64_t arrival_ns) noexcept override {
    if (got.empty() && stall_first) std::this_thread::sleep_for(100ms);
    const std::lock_guard lock(mutex);
    got.push_back({std::vector<std::byte>(data.begin(), data.end()), from, arrival_ns});
    count.fetch_add(1, std::memory_order_release);
  }
  void on_wake() noexcept override { wakes.fetch_add(1, std::memory_order_release); }
  std::vector<datagram> snapshot() {
    const std::lock_guard lock(mutex);
    return got;
  }
  std::mutex mutex;
  std::vector<datagram> got;
  std::atomic<std::size_t> count{0};
  std::atomic<int> wakes{0};
  bool stall_first = false;  // set before run(): the first on_datagram sleeps 100 ms
};

// A backend running on its own thread, stopped and joined at the end of the test.
struct running_backend {
  std::unique_ptr<udp_backend> backend;
  recording_handler handler;
  std::thread thread;
  std::atomic<bool> returned{false};
  explicit running_backend(const std::string& kind = "io_uring", bool stall_first = false)
      : backend(make_backend(kind, loopback(0), "test.backend")) {
    handler.stall_first = stall_first;
    thread = std::thread([this] {
      backend->run(handler);
      returned.store(true);
    });
  }
  running_backend(const running_backend&) = delete;
  running_backend& operator=(const running_backend&) = delete;
  ~running_backend() {
    backend->stop();
    thread.join();
  }
  std::uint16_t port() const { return backend->local_port(); }
};

std::span<const std::byte> bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

TEST(UringBackend, DeliversPayloadAndSourceAddress) {
  SKIP_WITHOUT_URING();
  test_socket peer;
  running_backend rb;
  EXPECT_STREQ(rb.backend->kind(), "io_uring");
  ASSERT_NE(rb.port(), 0);
  const std::int64_t before = cosim::monotonic_now_ns();
  peer.send_raw(bytes("hello io_uring"), rb.port());
  peer.send_raw(bytes("second"), rb.port());
  ASSERT_TRUE(eventually([&] { return rb.handler.count.load() == 2; }));
  const auto got = rb.handler.snapshot();
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(got[0].data.data()), got[0].data.size()),
            "hello io_uring");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(got[1].data.data()), got[1].data.size()),
            "second");
  EXPECT_EQ(got[0].from.sin_family, AF_INET);
  EXPECT_EQ(got[0].from.sin_addr.s_addr, peer.addr.sin_addr.s_addr);
  EXPECT_EQ(got[0].from.sin_port, peer.addr.sin_port);
  EXPECT_GE(got[0].arrival_ns, before);
  EXPECT_LE(got[0].arrival_ns, cosim::monotonic_now_ns());
  EXPECT_LE(got[0].arrival_ns, got[1].arrival_ns);
}

TEST(UringBackend, SendToReachesThePeer) {
  SKIP_WITHOUT_URING();
  test_socket peer;
  running_backend rb;
  ASSERT_TRUE(rb.backend->send_to(bytes("reply"), peer.addr));
  std::array<std::byte, 64> buf{};
  ASSERT_EQ(peer.receive_raw(buf), 5);
  EXPECT_EQ(std::memcmp(buf.data(), "reply", 5), 0);
}

// More datagrams than the 64-buffer ring: with small pauses every one must arrive, in
// order (buffers are returned and the multishot re-armed after -ENOBUFS).
TEST(UringBackend, ManyDatagramsWithPausesAllArrive) {
  SKIP_WITHOUT_URING();
  test_socket peer;
  running_backend rb;
  constexpr std::uint32_t n = 1000;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::array<std::byte, 64> d{};
    std::memcpy(d.data(), &i, sizeof i);
    peer.send_raw(d, rb.port());
    if (i % 32 == 31) std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(eventually([&] { return rb.handler.count.load() == n; }))
      << rb.handler.count.load() << " of " << n << ", kernel drops " << kernel_drops(rb.port());
  const auto got = rb.handler.snapshot();
  for (std::uint32_t i = 0; i < n; ++i) {
    std::uint32_t k = 0;
    ASSERT_EQ(got[i].data.size(), 64U);
    std::memcpy(&k, got[i].data.data(), sizeof k);
    ASSERT_EQ(k, i);
  }
}

// A handler that stalls while datagrams keep coming: every buffer of the ring gets
// filled, the multishot ends with -ENOBUFS and is re-armed; the rest waited in the socket.
TEST(UringBackend, StalledHandlerExhaustsTheRingAndRecovers) {
  SKIP_WITHOUT_URING();
  test_socket peer;
  running_backend rb("io_uring", true);
  constexpr std::uint32_t n = 150;  // > 64 buffers, < the socket's receive buffer
  for (std::uint32_t i = 0; i < n; ++i) {
    std::array<std::byte, 32> d{};
    std::memcpy(d.data(), &i, sizeof i);
    peer.send_raw(d, rb.port());
    if (i == 0) std::this_thread::sleep_for(10ms);  // the handler is stalled from here
  }
  ASSERT_TRUE(eventually([&] { return rb.handler.count.load() == n; }))
      << rb.handler.count.load() << " of " << n << ", kernel drops " << kernel_drops(rb.port());
  const auto got = rb.handler.snapshot();
  for (std::uint32_t i = 0; i < n; ++i) {
    std::uint32_t k = 0;
    std::memcpy(&k, got[i].data.data(), sizeof k);
    ASSERT_EQ(k, i);
  }
}

// A burst with no pauses: whatever the kernel did not drop arrives, in order, and the
// loop keeps receiving afterwards.
TEST(UringBackend, BurstLossesAreOnlyKernelDrops) {
  SKIP_WITHOUT_URING();
  test_socket peer;
  running_backend rb;
  constexpr std::uint32_t n = 1000;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::array<std::byte, 64> d{};
    std::memcpy(d.data(), &i, sizeof i);
    peer.send_raw(d, rb.port());
  }
  ASSERT_TRUE(eventually([&] { return rb.handler.count.load() + kernel_drops(rb.port()) >= n; }));
  std::this_thread::sleep_for(20ms);
  const std::uint64_t drops = kernel_drops(rb.port());
  EXPECT_EQ(rb.handler.count.load() + drops, n) << "drops " << drops;
  RecordProperty("kernel_drops", static_cast<int>(drops));
  const auto got = rb.handler.snapshot();
  std::int64_t last = -1;
  for (const auto& g : got) {
    std::uint32_t k = 0;
    std::memcpy(&k, g.data.data(), sizeof k);
    EXPECT_GT(static_cast<std::int64_t>(k), last);
    last = k;
  }
  peer.send_raw(bytes("after"), rb.port());
  ASSERT_TRUE(eventually([&] { return rb.handler.count.load() == got.size() + 1; }));
}

// 4000 bytes does not fit the 2048-byte payload area: like Asio, the backend hands over
// its first 2048 bytes (MSG_TRUNC), which the decoder rejects as malformed. 1000 bytes (too
// large for the protocol) arrives whole.
TEST(UringBackend, OversizedDatagramArrivesCutToTheBufferLikeAsio) {
  SKIP_WITHOUT_URING();
  test_socket peer;
  running_backend rb;
  std::vector<std::byte> big(4000, std::byte{0x5a});
  peer.send_raw(big, rb.port());
  std::vector<std::byte> large(1000, std::byte{0x11});
  peer.send_raw(large, rb.port());
  peer.send_raw(bytes("ok"), rb.port());
  ASSERT_TRUE(eventually([&] { return rb.handler.count.load() == 3; }));
  const auto got = rb.handler.snapshot();
  ASSERT_EQ(got.size(), 3U);
  EXPECT_EQ(got[0].data.size(), 2048U);
  EXPECT_EQ(got[0].data[2047], std::byte{0x5a});
  EXPECT_EQ(got[1].data.size(), 1000U);
  EXPECT_EQ(got[2].data.size(), 2U);
}

TEST(UringBackend, WakeCallsOnWake) {
  SKIP_WITHOUT_URING();
  running_backend rb;
  rb.backend->wake();
  ASSERT_TRUE(eventually([&] { return rb.handler.wakes.load() >= 1; }));
  const int first = rb.handler.wakes.load();
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(rb.handler.wakes.load(), first);  // no spurious wake-ups
  // From another thread, repeatedly: every wake is followed by an on_wake (coalescing
  // allowed), and the loop keeps receiving in between.
  std::thread other([&] {
    for (int i = 0; i < 100; ++i) {
      rb.backend->wake();
      std::this_thread::sleep_for(100us);
    }
  });
  other.join();
  ASSERT_TRUE(eventually([&] { return rb.handler.wakes.load() > first; }));
  test_socket peer;
  peer.send_raw(bytes("x"), rb.port());
  ASSERT_TRUE(eventually([&] { return rb.handler.count.load() == 1; }));
}

TEST(UringBackend, StopReturnsRun) {
  SKIP_WITHOUT_URING();
  auto rb = std::make_unique<running_backend>();
  rb->backend->wake();
  ASSERT_TRUE(eventually([&] { return rb->handler.wakes.load() >= 1; }));
  const auto t0 = std::chrono::steady_clock::now();
  rb->backend->stop();
  ASSERT_TRUE(eventually([&] { return rb->returned.load(); }));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 500ms);
  // After run() returned, send_to still works (fail-safe values are sent then).
  test_socket peer;
  EXPECT_TRUE(rb->backend->send_to(bytes("safe"), peer.addr));
  std::array<std::byte, 16> buf{};
  EXPECT_EQ(peer.receive_raw(buf), 4);
  rb.reset();
}

TEST(UringBackend, StopBeforeRunReturnsAtOnce) {
  SKIP_WITHOUT_URING();
  auto b = make_backend("io_uring", loopback(0), "test.backend");
  b->stop();
  recording_handler h;
  std::atomic<bool> done{false};
  std::thread t([&] {
    b->run(h);
    done.store(true);
  });
  const bool returned = eventually([&] { return done.load(); });
  if (!returned) b->stop();
  t.join();
  EXPECT_TRUE(returned);
}

TEST(UringBackend, ErrorsNameTheKey) {
  SKIP_WITHOUT_URING();
  test_socket peer;
  driver_config c;
  c.name = "joystick";
  c.auth = driver_auth::none;  // version 1 peers
  c.direction = driver_direction::input;
  c.backend = "io_uring";
  c.bind = peer.name();  // in use by the test socket
  c.peers = {peer.name()};
  channel_config k;
  k.name = "kappa";
  c.channels = {k};
  try {
    (void)make_driver(c);
    FAIL() << "port in use accepted";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find("drivers.joystick.bind"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
}

// ------------------------------------------------------- input driver, both backends

// The scripted sequence: fresh, duplicate, out of order, a gap with clamping, a stranger,
// short junk, a too-large datagram that fits the buffer, a heartbeat and a wrong type.
driver_stats run_script(const std::string& backend, double& last_output) {
  test_socket peer, stranger;
  // Long stale limits: the script is about packet hygiene, not staleness.
  driver_config c = input_config(peer, backend);
  c.stale_after = 5.0;
  c.stop_after = 10.0;
  auto d = make_driver(c);
  cosim::stop_source stop;
  d->start(stop);
  const std::uint16_t port = d->local_port();
  // First update before any input: the start-of-run heartbeat (wake -> on_wake -> send_to).
  // Waited for, as a stop racing a wake may skip it with either backend.
  d->update_outputs(cosim::time_point{});
  EXPECT_TRUE(eventually([&] { return d->stats().sent == 1; }));
  peer.send(message_type::command, 10, {0.5}, port);
  EXPECT_TRUE(eventually([&] { return d->stats().received == 1; }));
  peer.send(message_type::command, 10, {0.9}, port);      // duplicate
  peer.send(message_type::command, 9, {0.9}, port);       // out of order
  peer.send(message_type::command, 13, {1.5}, port);      // 2 lost, clamped to 1
  stranger.send(message_type::command, 14, {0.1}, port);  // not allowlisted
  std::array<std::byte, 8> junk{};
  peer.send_raw(junk, port);  // too short
  std::vector<std::byte> large(1000, std::byte{0x11});
  peer.send_raw(large, port);  // longer than any message
  // Every datagram that decodes uses a sequence number (PROTOCOL.md): no gap after these.
  peer.send(message_type::heartbeat, 14, {}, port);         // liveness only
  peer.send(message_type::valve_command, 15, {0.3}, port);  // wrong type
  peer.send(message_type::command, 16, {-2.0}, port);       // fresh, clamped to 0
  EXPECT_TRUE(eventually([&] {
    const auto s = d->stats();
    return s.received == 3 && s.malformed == 3 && s.rejected_source == 1;
  }));
  d->update_outputs(cosim::time_point{});
  last_output = d->output(0);
  EXPECT_FALSE(stop.stop_requested());
  d->stop(false);
  return d->stats();
}

TEST(UringInputDriver, HygieneCountersMatchAsio) {
  SKIP_WITHOUT_URING();
  double out_asio = -1, out_uring = -1;
  const driver_stats a = run_script("asio", out_asio);
  const driver_stats u = run_script("io_uring", out_uring);
  EXPECT_EQ(a.backend, "asio");
  EXPECT_EQ(u.backend, "io_uring");
  EXPECT_EQ(a.received, 3U);
  EXPECT_EQ(a.duplicates, 1U);
  EXPECT_EQ(a.out_of_order, 1U);
  EXPECT_EQ(a.lost, 2U);
  EXPECT_EQ(a.clamped, 2U);
  EXPECT_EQ(a.malformed, 3U);
  EXPECT_EQ(a.rejected_source, 1U);
  EXPECT_EQ(out_asio, 0.0);
  EXPECT_EQ(u.received, a.received);
  EXPECT_EQ(u.sent, a.sent);
  EXPECT_EQ(u.lost, a.lost);
  EXPECT_EQ(u.duplicates, a.duplicates);
  EXPECT_EQ(u.out_of_order, a.out_of_order);
  EXPECT_EQ(u.malformed, a.malformed);
  EXPECT_EQ(u.rejected_source, a.rejected_source);
  EXPECT_EQ(u.clamped, a.clamped);
  EXPECT_EQ(u.stale_events, a.stale_events);
  EXPECT_EQ(u.stale_stop, a.stale_stop);
  EXPECT_EQ(out_uring, out_asio);
}

// The start-of-run heartbeat goes out through wake() -> on_wake() -> send_to.
TEST(UringInputDriver, AnnouncesTheRunToItsPeers) {
  SKIP_WITHOUT_URING();
  test_socket peer;
  auto d = make_driver(input_config(peer, "io_uring"));
  cosim::stop_source stop;
  d->start(stop);
  d->update_outputs(cosim::time_point{});
  std::array<std::byte, 2048> buf{};
  const long n = peer.receive_raw(buf);
  ASSERT_GT(n, 0);
  bench_message m{};
  ASSERT_EQ(decode(std::span<const std::byte>(buf.data(), static_cast<std::size_t>(n)), m),
            decode_status::ok);
  EXPECT_EQ(m.type, message_type::heartbeat);
  EXPECT_TRUE(eventually([&] { return d->stats().sent == 1; }));
  d->stop(false);
}

}  // namespace
