// Address parsing and the socket set-up shared by the UDP backends.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sock_diag.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "cosim/drivers/asio_backend.hpp"
#include "cosim/drivers/driver_config.hpp"
#include "cosim/drivers/udp_backend.hpp"
#include "cosim/drivers/uring_backend.hpp"
#include "cosim/runtime/errno_text.hpp"
#include "cosim/runtime/error.hpp"

namespace cosim::drivers {

bool parse_udp_address(const std::string& text, sockaddr_in& out) noexcept {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= text.size()) return false;
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535) return false;
  if (host == "localhost") host = "127.0.0.1";
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) return false;
  out = a;
  return true;
}

std::string to_string(const sockaddr_in& a) {
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
  return std::string(buf) + ":" + std::to_string(ntohs(a.sin_port));
}

int open_udp_socket(const sockaddr_in& addr, const std::string& what) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  COSIM_INPUT_CHECK(fd >= 0, errc::io, what + ": cannot create a UDP socket: " + errno_text(errno));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int e = errno;
    ::close(fd);
    throw error(errc::config_value, what + " = \"" + to_string(addr) +
                                        "\": cannot bind: " + errno_text(e) +
                                        (e == EADDRINUSE ? " (port already in use)" : ""));
  }
  return fd;
}

std::uint64_t socket_drops(int fd) noexcept {
  // SK_MEMINFO_DROPS is the same sk_drops counter SO_RXQ_OVFL attaches to each datagram;
  // reading it here keeps both backends' receive paths unchanged.
  std::array<std::uint32_t, SK_MEMINFO_VARS> info{};
  socklen_t len = sizeof info;
  if (fd < 0 || ::getsockopt(fd, SOL_SOCKET, SO_MEMINFO, info.data(), &len) != 0 ||
      len < sizeof(std::uint32_t) * (SK_MEMINFO_DROPS + 1))
    return 0;
  return info[SK_MEMINFO_DROPS];
}

bool uring_available() noexcept {
  return COSIM_HAVE_URING != 0;
}

std::unique_ptr<udp_backend> make_backend(const std::string& kind, const sockaddr_in& bind_addr,
                                          const std::string& what) {
  if (kind == "asio") return make_asio_backend(bind_addr, what);
  if (kind == "io_uring") return make_uring_backend(bind_addr, what);
  throw error(errc::config_value, what + ": unknown backend '" + kind + "' (asio, io_uring)");
}

}  // namespace cosim::drivers
