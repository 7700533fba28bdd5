#pragma once
// Socket I/O of a UDP driver, independent of the event mechanism (Asio or io_uring).
// The backend owns one bound, non-blocking UDP socket and runs an event loop on the
// driver's I/O thread. Datagrams are handed to a handler on that thread together with
// their source address and CLOCK_MONOTONIC arrival time; wake() (any thread, never
// blocks) makes the loop call handler.on_wake() soon, which output drivers use to send
// what the real-time side queued.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <netinet/in.h>

namespace cosim::drivers {

class datagram_handler {
 public:
  datagram_handler() = default;
  datagram_handler(const datagram_handler&) = delete;
  datagram_handler& operator=(const datagram_handler&) = delete;
  virtual ~datagram_handler() = default;
  virtual void on_datagram(std::span<const std::byte> data, const sockaddr_in& from,
                           std::int64_t arrival_ns) noexcept = 0;
  virtual void on_wake() noexcept = 0;
};

class udp_backend {
 public:
  udp_backend() = default;
  udp_backend(const udp_backend&) = delete;
  udp_backend& operator=(const udp_backend&) = delete;
  virtual ~udp_backend() = default;

  [[nodiscard]] virtual const char* kind() const noexcept = 0;
  [[nodiscard]] virtual std::uint16_t local_port() const noexcept = 0;
  /// The bound socket. A lockstep driver (run.mode = "lockstep") receives on it from the
  /// model thread with poll(2) while run() is not running.
  [[nodiscard]] virtual int socket_fd() const noexcept = 0;
  /// Event loop; returns after stop(). Runs on the I/O thread.
  virtual void run(datagram_handler& handler) = 0;
  /// Any thread, never blocks.
  virtual void wake() noexcept = 0;
  /// Any thread: run() returns soon.
  virtual void stop() noexcept = 0;
  /// Non-blocking send; false if the kernel refused it. Any thread, and a signal handler:
  /// both backends send with a plain sendto(2) on their socket.
  virtual bool send_to(std::span<const std::byte> data, const sockaddr_in& to) noexcept = 0;
  /// Datagrams the kernel dropped on this socket (receive buffer full, e.g. under a flood)
  /// since it was opened. Any thread.
  [[nodiscard]] virtual std::uint64_t kernel_drops() const noexcept = 0;
};

/// True if this build has the io_uring backend (liburing found at configure time).
bool uring_available() noexcept;

/// Opens and binds the socket. kind: "asio" or "io_uring". Throws cosim::error with a
/// message naming `what` (e.g. "drivers.joystick.bind") on any failure.
std::unique_ptr<udp_backend> make_backend(const std::string& kind, const sockaddr_in& bind_addr,
                                          const std::string& what);

/// Non-blocking UDP socket bound to addr (SO_REUSEADDR off); throws cosim::error naming
/// `what`. Shared by the backends.
int open_udp_socket(const sockaddr_in& addr, const std::string& what);

/// The socket's drop counter (sk_drops, the count SO_RXQ_OVFL reports per datagram), read
/// with getsockopt(SO_MEMINFO); 0 if the kernel does not tell.
std::uint64_t socket_drops(int fd) noexcept;

}  // namespace cosim::drivers
