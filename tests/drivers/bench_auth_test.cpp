// The authenticated bench protocol (PROTOCOL.md "Authenticated protocol (version 2)"): the
// codec against a datagram built by an independent implementation (Python's hmac/hashlib),
// and the attacks of issue 29 against a real input driver on loopback: a spoofed datagram
// with a valid CRC, replays of captured datagrams (the stale-input stop must still trip), a
// device restart, and a flood the kernel drops.
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cosim/drivers/bench_auth.hpp"
#include "cosim/drivers/udp_driver.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "temp_dir.hpp"
#include "udp_test_support.hpp"

namespace {

using namespace cosim::drivers;
using namespace cosim::drivers::test;
using namespace std::chrono_literals;

bench_key counting_key() {
  bench_key k;
  for (std::size_t i = 0; i < k.bytes.size(); ++i) k.bytes[i] = static_cast<unsigned char>(i);
  return k;
}

bench_key other_key() {
  bench_key k;
  k.bytes.fill(0x5a);
  return k;
}

using datagram = std::vector<std::byte>;

datagram encode(const auth_message& m, const bench_key& k) {
  std::array<std::byte, max_auth_datagram_size> buf{};
  const std::size_t n = encode_auth(m, k, buf);
  return {buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n)};
}

// Built by Python from PROTOCOL.md alone (struct.pack little-endian, a bitwise CRC-32C,
// hmac.new(key, data, hashlib.sha512).digest()[:32]), key = bytes(range(32)):
// command, sequence 0x01020304, timestamp 0x1122334455667788, session 0x0102030405060708,
// nonce 0, one channel 0.5.
const std::array<unsigned char, 84> python_datagram{
    0x43, 0x53, 0x42, 0x50, 0x02, 0x01, 0x00, 0x00, 0x04, 0x03, 0x02, 0x01, 0x88, 0x77,
    0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x01, 0x00, 0x00, 0x00, 0x08, 0x07, 0x06, 0x05,
    0x04, 0x03, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0xe0, 0x3f, 0xc8, 0xcf, 0xcd, 0xa4, 0x03, 0xf3, 0x1b, 0xc8,
    0xc8, 0xa9, 0xfe, 0x44, 0xd0, 0x17, 0x39, 0x8b, 0x0f, 0x42, 0x21, 0xf2, 0x10, 0xe3,
    0x43, 0xf9, 0x9a, 0x41, 0x24, 0x35, 0x62, 0x4c, 0x7c, 0xe7, 0x58, 0x2f, 0xa5, 0x9c};

TEST(BenchAuthCodec, MatchesAnIndependentImplementationByteForByte) {
  auth_message m{};
  m.type = 1;
  m.sequence = 0x01020304;
  m.timestamp_ns = 0x1122334455667788;
  m.session = 0x0102030405060708;
  m.channel_count = 1;
  m.channels[0] = 0.5;
  const datagram d = encode(m, counting_key());
  ASSERT_EQ(d.size(), python_datagram.size());
  ASSERT_EQ(d.size(), auth_encoded_size(1));
  for (std::size_t i = 0; i < d.size(); ++i)
    EXPECT_EQ(std::to_integer<unsigned>(d[i]), python_datagram[i]) << "byte " << i;
  // The prepared key (the drivers' fast path) gives the same bytes and verifies the same.
  bench_key prepared = counting_key();
  prepare_key(prepared);
  EXPECT_EQ(encode(m, prepared), d);
  auth_message back{};
  ASSERT_EQ(decode_auth(d, prepared, back), auth_status::ok);
  ASSERT_EQ(decode_auth(d, counting_key(), back), auth_status::ok);
  EXPECT_EQ(back.session, m.session);
  EXPECT_EQ(back.sequence, m.sequence);
  EXPECT_EQ(back.channels[0], 0.5);
  EXPECT_EQ(decode_auth(d, other_key(), back), auth_status::bad_mac);
}

TEST(BenchAuthCodec, EveryBitFlipIsRejected) {
  auth_message m{};
  m.type = 1;
  m.sequence = 7;
  m.session = 42;
  m.channel_count = 2;
  m.channels[0] = 0.25;
  m.channels[1] = -1.0;
  const datagram good = encode(m, counting_key());
  for (std::size_t bit = 0; bit < good.size() * 8; ++bit) {
    datagram bad = good;
    bad[bit / 8] ^= static_cast<std::byte>(1U << (bit % 8));
    auth_message out{};
    // In the tag the CRC still holds: only the MAC can catch it.
    const auth_status want =
        bit / 8 >= good.size() - mac_size ? auth_status::bad_mac : auth_status::malformed;
    EXPECT_EQ(decode_auth(bad, counting_key(), out), want) << "bit " << bit;
  }
}

/// A device holding the key: says hello, takes the challenge, sends commands.
struct auth_device {
  test_socket sock;
  bench_key key = counting_key();
  auth_sender sender;
  std::uint32_t seq = 0;
  std::vector<datagram> sent;  // everything it sent, as an eavesdropper records it

  void send(const datagram& d, std::uint16_t port) {
    sock.send_raw(d, port);
    sent.push_back(d);
  }
  /// Hello until the driver's challenge answers; false after 2 s.
  bool handshake(std::uint16_t port) {
    for (int i = 0; i < 100 && !sender.has_session(); ++i) {
      const std::int64_t now = cosim::monotonic_now_ns();
      if (sender.hello_due(now, 20'000'000)) send(encode(sender.hello(now, seq++), key), port);
      std::array<std::byte, 2048> buf{};
      const long n = sock.receive_raw(buf, 20);
      auth_message c{};
      if (n > 0 && decode_auth(std::span<const std::byte>(buf.data(), static_cast<std::size_t>(n)),
                               key, c) == auth_status::ok)
        (void)sender.on_challenge(c);
    }
    return sender.has_session();
  }
  void command(double kappa, std::uint16_t port) {
    auth_message m{};
    m.type = static_cast<std::uint8_t>(message_type::command);
    m.sequence = seq++;
    m.session = sender.session();
    m.channel_count = 1;
    m.channels[0] = kappa;
    send(encode(m, key), port);
  }
};

driver_config auth_input_config(const test_socket& peer) {
  driver_config c = input_config(peer);
  c.auth = driver_auth::hmac_sha512_256;
  c.key = counting_key();
  return c;
}

TEST(BenchAuthDriver, SpoofedDatagramsWithAValidCrcAreRejectedAndCounted) {
  auth_device dev;
  auto d = make_driver(auth_input_config(dev.sock));
  cosim::stop_source stop;
  d->start(stop);
  const std::uint16_t port = d->local_port();
  ASSERT_TRUE(dev.handshake(port));
  dev.command(0.5, port);
  ASSERT_TRUE(eventually([&] { return d->stats().received == 1; }));
  // From the allowlisted address itself (a spoofed source looks exactly so): the forged
  // kappa 0.9 far ahead in sequence, under the right session, CRC right, key wrong.
  auth_message forged{};
  forged.type = 1;
  forged.sequence = dev.seq + 1'000'000;
  forged.session = dev.sender.session();
  forged.channel_count = 1;
  forged.channels[0] = 0.9;
  for (int i = 0; i < 5; ++i) dev.sock.send_raw(encode(forged, other_key()), port);
  // A version-1 datagram with a valid CRC, as the old protocol would have taken it.
  dev.sock.send(message_type::command, dev.seq + 2'000'000, {0.9}, port);
  ASSERT_TRUE(eventually([&] {
    const auto s = d->stats();
    return s.bad_mac == 5 && s.malformed == 1;
  }));
  // The genuine device goes on and is not pushed out as "older" than the forgery.
  dev.command(0.125, port);
  ASSERT_TRUE(eventually([&] { return d->stats().received == 2; }));
  d->update_outputs({});
  EXPECT_EQ(d->output(0), 0.125);
  const driver_stats s = d->stats();
  EXPECT_EQ(s.out_of_order, 0U);
  EXPECT_EQ(s.auth, "hmac-sha512-256");
  d->stop(false);
}

TEST(BenchAuthDriver, ReplayedDatagramsAreRejectedAndTheStaleStopStillTrips) {
  auth_device dev;
  driver_config c = auth_input_config(dev.sock);
  c.stale_after = 0.05;
  c.stop_after = 0.2;
  auto d = make_driver(c);
  cosim::stop_source stop;
  d->start(stop);
  const std::uint16_t port = d->local_port();
  ASSERT_TRUE(dev.handshake(port));
  // Before the last genuine datagram is sent, so before it arrives: the stop is due
  // stop_after after that arrival, hence at least stop_after after this instant.
  const auto last_sent = std::chrono::steady_clock::now();
  for (int i = 0; i < 32; ++i) dev.command(0.25 + 0.01 * i, port);
  ASSERT_TRUE(eventually([&] { return d->stats().received == 32; }));
  d->update_outputs({});
  const double last = d->output(0);
  EXPECT_DOUBLE_EQ(last, 0.25 + 0.01 * 31);
  const std::vector<datagram> captured = dev.sent;
  // The joystick falls silent; an attacker replays the 32+ captured datagrams over and over
  // (the old rule took 16 consecutive old ones as a restart and used their values).
  const auto silent_at = std::chrono::steady_clock::now();
  bool stopped = false;
  double stop_after_s = 0.0;
  while (std::chrono::steady_clock::now() - silent_at < 1s) {
    for (const auto& dg : captured) dev.sock.send_raw(dg, port);
    d->update_outputs({});
    EXPECT_EQ(d->output(0), last);  // never a replayed value
    if (stop.stop_requested()) {
      stopped = true;
      stop_after_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - last_sent).count();
      break;
    }
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_TRUE(stopped) << "the replay kept the input alive";
  EXPECT_EQ(stop.cause(), cosim::stop_cause::stale_input);
  // Tripped once stop_after had passed, not later by a replay (the loop polls every 5 ms
  // plus a replay burst; the bound leaves room for a loaded machine).
  EXPECT_GE(stop_after_s, 0.2);
  EXPECT_LT(stop_after_s, 0.2 + 0.5);
  const driver_stats s = d->stats();
  EXPECT_EQ(s.received, 32U);
  EXPECT_GT(s.duplicates + s.out_of_order, 32U);
  EXPECT_EQ(s.sender_restarts, 0U);
  d->stop(false);
}

TEST(BenchAuthDriver, AnAuthenticatedRestartIsTakenAndOldSessionsAreNot) {
  auth_device dev;
  auto d = make_driver(auth_input_config(dev.sock));
  cosim::stop_source stop;
  d->start(stop);
  const std::uint16_t port = d->local_port();
  ASSERT_TRUE(dev.handshake(port));
  for (int i = 0; i < 20; ++i) dev.command(0.5, port);
  ASSERT_TRUE(eventually([&] { return d->stats().received == 20; }));
  const std::vector<datagram> first_life = dev.sent;
  // The device restarts: new handshake state, numbering from 0, same address and key.
  dev.sender = auth_sender{};
  dev.seq = 0;
  ASSERT_TRUE(dev.handshake(port));
  dev.command(0.75, port);
  ASSERT_TRUE(eventually([&] { return d->stats().received == 21; }));
  d->update_outputs({});
  EXPECT_EQ(d->output(0), 0.75);
  EXPECT_EQ(d->stats().sender_restarts, 1U);
  // The first life's datagrams (newer sequence numbers than the second life's) are refused.
  for (const auto& dg : first_life) dev.sock.send_raw(dg, port);
  ASSERT_TRUE(eventually([&] { return d->stats().stale_session >= 20; }));
  d->update_outputs({});
  EXPECT_EQ(d->output(0), 0.75);
  EXPECT_EQ(d->stats().received, 21U);
  // A replayed hello does not move the session: the device goes on under its own.
  dev.sock.send_raw(first_life.front(), port);
  dev.command(0.875, port);
  ASSERT_TRUE(eventually([&] { return d->stats().received == 22; }));
  EXPECT_EQ(d->stats().sender_restarts, 1U);
  d->stop(false);
}

TEST(BenchAuthDriver, AForeignFloodTheKernelDropsShowsInACounter) {
  test_socket peer, stranger;
  auto d = make_driver(auth_input_config(peer));
  // Not started: nobody reads the socket, so its receive buffer fills as under a flood
  // faster than the I/O thread.
  const std::uint16_t port = d->local_port();
  std::array<std::byte, 64> junk{};
  for (int i = 0; i < 5000; ++i) stranger.send_raw(junk, port);
  const driver_stats s = d->stats();
  EXPECT_GT(s.kernel_drops, 1000U);
  EXPECT_LT(s.kernel_drops, 5000U);  // the buffer did hold some
  cosim::json_writer j;
  d->write_statistics(j);
  EXPECT_NE(j.str().find("\"kernel_drops\": " + std::to_string(s.kernel_drops)), std::string::npos)
      << j.str();
}

TEST(BenchAuthDriver, OutputDriverSendsAuthenticatedCommandsAndSafeValuesOnceTheDeviceAnswers) {
  test_socket valve;
  driver_config c;
  c.name = "valve";
  c.direction = driver_direction::output;
  c.bind = "127.0.0.1:0";
  c.to = valve.name();
  c.type = message_type::valve_command;
  c.key = counting_key();
  channel_config k;
  k.name = "kappa";
  k.safe_value = 0.0;
  c.channels = {k};
  c.safe_repeats = 3;
  auto d = make_driver(c);
  cosim::stop_source stop;
  d->start(stop);
  auth_receiver rx;
  std::vector<double> got;
  sockaddr_in driver_addr = loopback(d->local_port());
  d->input(0).set_initial({}, 0.5);
  for (int step = 0; step < 200 && got.size() < 5; ++step) {
    d->update_outputs(cosim::time_point{} + cosim::duration{step * 1'000'000});
    std::array<std::byte, 2048> buf{};
    const long n = valve.receive_raw(buf, 10);
    if (n <= 0) continue;
    auth_message m{};
    ASSERT_EQ(decode_auth(std::span<const std::byte>(buf.data(), static_cast<std::size_t>(n)),
                          counting_key(), m),
              auth_status::ok);
    const auto v = rx.observe(m);
    if (v == auth_receiver::verdict::hello) {
      const datagram ch = encode(rx.challenge(m.nonce, 0), counting_key());
      ::sendto(valve.fd, ch.data(), ch.size(), 0, reinterpret_cast<const sockaddr*>(&driver_addr),
               sizeof driver_addr);
    } else if (v == auth_receiver::verdict::fresh) {
      got.push_back(m.channels[0]);
    }
  }
  ASSERT_EQ(got.size(), 5U);
  for (const double x : got) EXPECT_EQ(x, 0.5);
  d->stop(true);  // fail-safe: the safe values, authenticated under the same session
  int safe = 0;
  std::array<std::byte, 2048> buf{};
  for (long n = 0; (n = valve.receive_raw(buf, 200)) > 0;) {
    auth_message m{};
    if (decode_auth(std::span<const std::byte>(buf.data(), static_cast<std::size_t>(n)),
                    counting_key(), m) == auth_status::ok &&
        rx.observe(m) == auth_receiver::verdict::fresh && m.channels[0] == 0.0)
      ++safe;
  }
  EXPECT_EQ(safe, 3);
}

TEST(BenchAuthKeyFile, KeygenMakesAPrivateKeyAndOpenFilesAreRefusedNamingFileAndKey) {
  cosim::test::temp_dir dir;
  const std::string path = dir / "bench.key";
  write_key_file(path);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);
  const bench_key a = read_key_file(path, "drivers.joystick.key_file");
  EXPECT_THROW(write_key_file(path), cosim::error);  // never overwritten
  EXPECT_EQ(read_key_file(path, "k").bytes, a.bytes);
  for (const unsigned mode : {0640U, 0604U, 0620U}) {
    ::chmod(path.c_str(), mode);
    try {
      (void)read_key_file(path, "drivers.joystick.key_file");
      ADD_FAILURE() << "mode " << mode << " accepted";
    } catch (const cosim::error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("drivers.joystick.key_file = \"" + path + "\""), std::string::npos) << m;
      EXPECT_NE(m.find("chmod 600"), std::string::npos) << m;
    }
  }
  const std::string bad = dir.file("short.key", "abcd\n");
  ::chmod(bad.c_str(), 0600);
  EXPECT_THROW((void)read_key_file(bad, "k"), cosim::error);
  EXPECT_THROW((void)read_key_file(dir / "missing.key", "k"), cosim::error);
}

TEST(BenchAuthDriver, AnUnauthenticatedDriverSaysSoInItsStatistics) {
  test_socket peer;
  auto d = make_driver(input_config(peer));  // auth none (version 1)
  cosim::json_writer j;
  d->write_statistics(j);
  EXPECT_NE(j.str().find("\"auth\": \"none\""), std::string::npos) << j.str();
}

}  // namespace
