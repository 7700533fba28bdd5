// Boost.Asio backend: the socket is opened by open_udp_socket and handed to Asio; an
// eventfd wrapped in a stream_descriptor carries wake-ups from the real-time side.
#include "cosim/drivers/asio_backend.hpp"

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cerrno>
#include <cstring>

#include "cosim/drivers/bench_protocol.hpp"
#include "cosim/runtime/errno_text.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/rt_thread.hpp"

namespace cosim::drivers {

namespace {

namespace asio = boost::asio;
using asio::ip::udp;

class asio_backend final : public udp_backend {
 public:
  asio_backend(const sockaddr_in& bind_addr, const std::string& what) : socket_(io_), wake_(io_) {
    const int fd = open_udp_socket(bind_addr, what);
    boost::system::error_code ec;
    socket_.assign(udp::v4(), fd, ec);
    if (ec) {
      ::close(fd);
      throw error(errc::io, what + ": " + ec.message());
    }
    fd_ = fd;
    sockaddr_in local{};
    socklen_t len = sizeof local;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
    port_ = ntohs(local.sin_port);
    const int efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    COSIM_INPUT_CHECK(efd >= 0, errc::io, what + ": eventfd: " + errno_text(errno));
    efd_ = efd;
    wake_.assign(efd);
  }

  const char* kind() const noexcept override { return "asio"; }
  std::uint16_t local_port() const noexcept override { return port_; }
  int socket_fd() const noexcept override { return fd_; }
  std::uint64_t kernel_drops() const noexcept override { return socket_drops(fd_); }

  void run(datagram_handler& handler) override {
    handler_ = &handler;
    // restart() clears an earlier io_.stop(): a stop() that came before it is seen through
    // stopping_, one that comes after makes io_.run() return at once.
    io_.restart();
    if (stopping_.load(std::memory_order_acquire)) return;
    arm_receive();
    arm_wake();
    io_.run();
  }

  void wake() noexcept override {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(efd_, &one, sizeof one);
  }

  void stop() noexcept override {
    stopping_.store(true, std::memory_order_release);
    io_.stop();
  }

  bool send_to(std::span<const std::byte> data, const sockaddr_in& to) noexcept override {
    const auto n = ::sendto(fd_, data.data(), data.size(), MSG_DONTWAIT,
                            reinterpret_cast<const sockaddr*>(&to), sizeof to);
    return n == static_cast<ssize_t>(data.size());
  }

 private:
  void arm_receive() {
    socket_.async_receive_from(
        asio::buffer(buf_), from_, [this](const boost::system::error_code& ec, std::size_t n) {
          if (ec == asio::error::operation_aborted || stopping_.load(std::memory_order_acquire))
            return;
          if (!ec) {
            const std::int64_t now = monotonic_now_ns();
            sockaddr_in from{};
            std::memcpy(&from, from_.data(), sizeof from);
            handler_->on_datagram(std::span<const std::byte>(buf_.data(), n), from, now);
          }
          arm_receive();
        });
  }

  void arm_wake() {
    wake_.async_read_some(
        asio::buffer(&counter_, sizeof counter_),
        [this](const boost::system::error_code& ec, std::size_t) {
          if (ec == asio::error::operation_aborted || stopping_.load(std::memory_order_acquire))
            return;
          handler_->on_wake();
          arm_wake();
        });
  }

  asio::io_context io_{1};
  udp::socket socket_;
  asio::posix::stream_descriptor wake_;
  udp::endpoint from_;
  // Larger than any valid datagram so oversized ones arrive whole and are rejected.
  std::array<std::byte, 2048> buf_{};
  std::uint64_t counter_ = 0;
  datagram_handler* handler_ = nullptr;
  std::atomic<bool> stopping_{false};
  int fd_ = -1, efd_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace

std::unique_ptr<udp_backend> make_asio_backend(const sockaddr_in& bind_addr,
                                               const std::string& what) {
  return std::make_unique<asio_backend>(bind_addr, what);
}

}  // namespace cosim::drivers
