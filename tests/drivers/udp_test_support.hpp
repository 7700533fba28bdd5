#pragma once
// Loopback helpers shared by the driver and backend tests: a plain UDP peer socket that
// speaks the bench protocol, an input-driver configuration allowlisting it, and a poll
// for conditions set on the drivers' I/O threads.
#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cosim/drivers/udp_driver.hpp"

namespace cosim::drivers::test {

inline sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  return a;
}

/// A UDP socket bound to 127.0.0.1 on a free port.
struct test_socket {
  int fd = -1;
  sockaddr_in addr{};
  test_socket() {
    fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    addr = loopback(0);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  }
  test_socket(const test_socket&) = delete;
  test_socket& operator=(const test_socket&) = delete;
  ~test_socket() { ::close(fd); }
  [[nodiscard]] std::string name() const { return to_string(addr); }
  void send_raw(std::span<const std::byte> d, std::uint16_t port) const {
    const sockaddr_in to = loopback(port);
    ::sendto(fd, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  }
  void send(message_type type, std::uint32_t seq, std::vector<double> v, std::uint16_t port) const {
    bench_message m{};
    m.type = type;
    m.sequence = seq;
    m.channel_count = static_cast<std::uint16_t>(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) m.channels[i] = v[i];
    std::array<std::byte, max_datagram_size> buf{};
    const std::size_t n = encode(m, buf);
    send_raw(std::span<const std::byte>(buf.data(), n), port);
  }
  /// Raw receive with a timeout; returns the size or -1.
  long receive_raw(std::span<std::byte> buf, int timeout_ms = 500) const {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return -1;
    return ::recv(fd, buf.data(), buf.size(), 0);
  }
  /// One datagram that decodes, within the timeout.
  bool receive(bench_message& m, int timeout_ms = 500) const {
    std::array<std::byte, 2048> buf{};
    const long n = receive_raw(buf, timeout_ms);
    return n > 0 && decode(std::span<const std::byte>(buf.data(), static_cast<std::size_t>(n)),
                           m) == decode_status::ok;
  }
};

/// An input driver "joystick" with one channel kappa in [0, 1] that accepts only `peer`.
inline driver_config input_config(const test_socket& peer, const std::string& backend = "asio") {
  driver_config c;
  c.name = "joystick";
  c.direction = driver_direction::input;
  c.backend = backend;
  c.bind = "127.0.0.1:0";
  c.peers = {peer.name()};
  c.type = message_type::command;
  channel_config k;
  k.name = "kappa";
  k.min = 0.0;
  k.max = 1.0;
  k.initial = 0.25;
  c.channels = {k};
  c.stale_after = 0.05;
  c.stop_after = 0.2;
  c.auth = driver_auth::none;  // these peers speak version 1 (bench_auth_test.cpp: version 2)
  return c;
}

/// Waits until pred() or 2 s.
template <class F>
bool eventually(F pred) {
  for (int i = 0; i < 400; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

}  // namespace cosim::drivers::test
