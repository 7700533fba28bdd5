// io_uring backend: one multishot recvmsg drawing from a provided-buffer ring, and a read
// on an eventfd for wake(). Sends are plain non-blocking sendto(), as in the Asio backend.
#include "cosim/drivers/uring_backend.hpp"

#include "cosim/runtime/errno_text.hpp"
#include "cosim/runtime/error.hpp"

#if COSIM_HAVE_URING

#include <liburing.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "cosim/runtime/rt_thread.hpp"

#endif

namespace cosim::drivers {

#if COSIM_HAVE_URING

namespace {

// Provided buffers: each holds io_uring_recvmsg_out, the source address and the payload.
// The payload area matches the Asio backend's 2048 bytes: larger than any valid datagram
// (156), so oversized ones still arrive whole and the protocol decoder rejects them.
constexpr unsigned buffer_count = 64;  // power of two (ring mask)
constexpr std::size_t payload_capacity = 2048;
constexpr std::size_t buffer_size =
    sizeof(io_uring_recvmsg_out) + sizeof(sockaddr_in) + payload_capacity;
constexpr unsigned short buffer_group = 0;
constexpr unsigned queue_depth = 8;  // two long-lived requests plus their cancellations

// user_data of the two requests (0 is left for the cancellations, whose CQEs are ignored).
constexpr std::uint64_t tag_recv = 1;
constexpr std::uint64_t tag_wake = 2;

// The udp_driver names io_uring errors by ".backend"; bind errors belong to ".bind".
std::string bind_key(const std::string& what) {
  static const std::string suffix = ".backend";
  if (what.size() > suffix.size() && what.ends_with(suffix))
    return what.substr(0, what.size() - suffix.size()) + ".bind";
  return what;
}

class uring_backend final : public udp_backend {
 public:
  uring_backend(const sockaddr_in& bind_addr, const std::string& what) {
    io_uring_params params{};
    // COOP_TASKRUN: the I/O thread handles completions only while it waits in the kernel
    // anyway, so no interrupt is needed to run them; older kernels refuse the flag.
    params.flags = IORING_SETUP_COOP_TASKRUN;
    int rc = io_uring_queue_init_params(queue_depth, &ring_, &params);
    if (rc == -EINVAL) {
      params = io_uring_params{};
      rc = io_uring_queue_init_params(queue_depth, &ring_, &params);
    }
    if (rc < 0) {
      // Refused or unsupported by this kernel: a configuration matter (pick "asio").
      const bool refused = rc == -EPERM || rc == -ENOSYS || rc == -EINVAL;
      const char* hint = rc == -EPERM || rc == -ENOSYS
                             ? " (io_uring is disabled, see the sysctl kernel.io_uring_disabled)"
                         : rc == -EINVAL ? " (kernel too old)"
                         : rc == -ENOMEM ? " (RLIMIT_MEMLOCK too low?)"
                                         : "";
      throw error(refused ? errc::config_value : errc::io,
                  what + ": backend io_uring is not usable: io_uring_queue_init: " +
                      errno_text(-rc) + hint + (refused ? "; use backend \"asio\"" : ""));
    }
    ring_ok_ = true;
    try {
      setup_buffers(what);
      // Blocking on purpose: io_uring completes a read of an O_NONBLOCK eventfd at once
      // with -EAGAIN instead of waiting for a write.
      const int efd = ::eventfd(0, EFD_CLOEXEC);
      COSIM_INPUT_CHECK(efd >= 0, errc::io, what + ": eventfd: " + errno_text(errno));
      efd_ = efd;
      fd_ = open_udp_socket(bind_addr, bind_key(what));
    } catch (...) {
      release();
      throw;
    }
    sockaddr_in local{};
    socklen_t len = sizeof local;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &len);
    port_ = ntohs(local.sin_port);
    msg_.msg_namelen = sizeof(sockaddr_in);  // only the lengths matter for multishot
    msg_.msg_controllen = 0;
  }

  ~uring_backend() override { release(); }

  const char* kind() const noexcept override { return "io_uring"; }
  std::uint16_t local_port() const noexcept override { return port_; }
  int socket_fd() const noexcept override { return fd_; }
  std::uint64_t kernel_drops() const noexcept override { return socket_drops(fd_); }

  void run(datagram_handler& handler) override {
    handler_ = &handler;
    while (!stopping_.load(std::memory_order_acquire)) {
      if (!recv_armed_) arm_receive();
      if (!wake_armed_) arm_wake();
      const int rc = io_uring_submit_and_wait(&ring_, 1);
      if (rc < 0 && rc != -EINTR && rc != -EBUSY && rc != -EAGAIN) break;
      reap();
    }
    cancel_and_drain();
  }

  void wake() noexcept override {
    const std::uint64_t one = 1;
    // The eventfd is blocking, but a write blocks only at a counter of 2^64-2: never.
    [[maybe_unused]] const auto n = ::write(efd_, &one, sizeof one);
  }

  void stop() noexcept override {
    stopping_.store(true, std::memory_order_release);
    wake();
  }

  bool send_to(std::span<const std::byte> data, const sockaddr_in& to) noexcept override {
    const auto n = ::sendto(fd_, data.data(), data.size(), MSG_DONTWAIT,
                            reinterpret_cast<const sockaddr*>(&to), sizeof to);
    return n == static_cast<ssize_t>(data.size());
  }

 private:
  void setup_buffers(const std::string& what) {
    // One anonymous mapping: the ring (page-aligned, as the kernel requires) and then the
    // buffers. liburing 2.3 has no io_uring_setup_buf_ring.
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t ring_bytes = (buffer_count * sizeof(io_uring_buf) + page - 1) / page * page;
    map_size_ = ring_bytes + buffer_count * buffer_size;
    void* m =
        ::mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    COSIM_INPUT_CHECK(m != MAP_FAILED, errc::io,
                      what + ": io_uring buffer memory: mmap: " + errno_text(errno));
    map_ = m;
    buf_ring_ = static_cast<io_uring_buf_ring*>(m);
    buffers_ = static_cast<std::byte*>(m) + ring_bytes;

    io_uring_buf_reg reg{};
    reg.ring_addr = reinterpret_cast<std::uintptr_t>(buf_ring_);
    reg.ring_entries = buffer_count;
    reg.bgid = buffer_group;
    const int rc = io_uring_register_buf_ring(&ring_, &reg, 0);
    if (rc < 0) {
      throw error(
          rc == -EINVAL ? errc::config_value : errc::io,
          what +
              ": backend io_uring is not usable: io_uring_register_buf_ring: " + errno_text(-rc) +
              (rc == -EINVAL ? " (kernel too old for provided-buffer rings, need 5.19)" : ""));
    }
    io_uring_buf_ring_init(buf_ring_);
    for (unsigned i = 0; i < buffer_count; ++i)
      io_uring_buf_ring_add(buf_ring_, buffer(i), buffer_size, static_cast<unsigned short>(i),
                            io_uring_buf_ring_mask(buffer_count), static_cast<int>(i));
    io_uring_buf_ring_advance(buf_ring_, buffer_count);
  }

  void release() noexcept {
    // Closing the ring first: the kernel then no longer writes into the buffer memory.
    if (ring_ok_) io_uring_queue_exit(&ring_);  // also drops the buffer-ring registration
    ring_ok_ = false;
    if (map_ != nullptr) ::munmap(map_, map_size_);
    map_ = nullptr;
    if (fd_ >= 0) ::close(fd_);
    if (efd_ >= 0) ::close(efd_);
    fd_ = efd_ = -1;
  }

  std::byte* buffer(unsigned bid) const noexcept { return buffers_ + bid * buffer_size; }

  // The SQ has room for both requests and the cancellations: each is issued at most once
  // between two submits, so get_sqe never fails here.
  io_uring_sqe* sqe() noexcept { return io_uring_get_sqe(&ring_); }

  void arm_receive() noexcept {
    io_uring_sqe* s = sqe();
    if (s == nullptr) return;
    io_uring_prep_recvmsg_multishot(s, fd_, &msg_, 0);
    s->flags |= IOSQE_BUFFER_SELECT;
    s->buf_group = buffer_group;
    io_uring_sqe_set_data64(s, tag_recv);
    recv_armed_ = true;
  }

  void arm_wake() noexcept {
    io_uring_sqe* s = sqe();
    if (s == nullptr) return;
    io_uring_prep_read(s, efd_, &counter_, sizeof counter_, 0);
    io_uring_sqe_set_data64(s, tag_wake);
    wake_armed_ = true;
  }

  void reap() noexcept {
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_cqe* cqe = nullptr;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      const std::uint64_t tag = io_uring_cqe_get_data64(cqe);
      if (tag == tag_recv) {
        on_receive(*cqe);
      } else if (tag == tag_wake) {
        wake_armed_ = false;  // single-shot read
        if (cqe->res > 0 && !stopping_.load(std::memory_order_acquire)) handler_->on_wake();
      }
    }
    io_uring_cq_advance(&ring_, seen);
  }

  void on_receive(const io_uring_cqe& cqe) noexcept {
    // Without F_MORE the multishot ended (e.g. -ENOBUFS while all buffers were queued
    // as completions); it is re-armed before the next wait, the datagrams wait in the
    // socket meanwhile.
    if ((cqe.flags & IORING_CQE_F_MORE) == 0) recv_armed_ = false;
    if ((cqe.flags & IORING_CQE_F_BUFFER) == 0) return;  // error: no buffer taken
    const auto bid = static_cast<unsigned>(cqe.flags >> IORING_CQE_BUFFER_SHIFT);
    std::byte* buf = buffer(bid);
    if (cqe.res >= 0 && !stopping_.load(std::memory_order_acquire)) deliver(buf, cqe.res);
    // The handler has run: the buffer goes back to the kernel.
    io_uring_buf_ring_add(buf_ring_, buf, buffer_size, static_cast<unsigned short>(bid),
                          io_uring_buf_ring_mask(buffer_count), 0);
    io_uring_buf_ring_advance(buf_ring_, 1);
  }

  void deliver(std::byte* buf, int len) noexcept {
    io_uring_recvmsg_out* out = io_uring_recvmsg_validate(buf, len, &msg_);
    if (out == nullptr) return;
    // A datagram larger than the payload area (MSG_TRUNC) arrives cut to its first bytes,
    // as with Asio: longer than any valid datagram, so the decoder counts it malformed.
    sockaddr_in from{};
    std::memcpy(&from, io_uring_recvmsg_name(out),
                out->namelen < sizeof from ? out->namelen : sizeof from);
    const auto* payload = static_cast<const std::byte*>(io_uring_recvmsg_payload(out, &msg_));
    const unsigned n = io_uring_recvmsg_payload_length(out, len, &msg_);
    handler_->on_datagram(std::span<const std::byte>(payload, n), from, monotonic_now_ns());
  }

  // Leaves nothing in flight when run() returns, so no completion writes into the
  // buffers or counter_ afterwards and a later run() starts clean.
  void cancel_and_drain() noexcept {
    for (const std::uint64_t tag : {tag_recv, tag_wake}) {
      const bool armed = tag == tag_recv ? recv_armed_ : wake_armed_;
      if (!armed) continue;
      io_uring_sqe* s = sqe();
      if (s == nullptr) break;
      io_uring_prep_cancel64(s, tag, 0);
      io_uring_sqe_set_data64(s, 0);
    }
    for (int i = 0; (recv_armed_ || wake_armed_) && i < 1000; ++i) {
      __kernel_timespec ts{.tv_sec = 0, .tv_nsec = 10'000'000};
      io_uring_cqe* cqe = nullptr;
      const int rc = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &ts, nullptr);
      if (rc < 0 && rc != -ETIME && rc != -EINTR) break;
      reap();
    }
  }

  io_uring ring_{};
  bool ring_ok_ = false;
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  io_uring_buf_ring* buf_ring_ = nullptr;
  std::byte* buffers_ = nullptr;
  msghdr msg_{};
  std::uint64_t counter_ = 0;
  bool recv_armed_ = false;
  bool wake_armed_ = false;
  datagram_handler* handler_ = nullptr;
  std::atomic<bool> stopping_{false};
  int fd_ = -1, efd_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace

std::unique_ptr<udp_backend> make_uring_backend(const sockaddr_in& bind_addr,
                                                const std::string& what) {
  return std::make_unique<uring_backend>(bind_addr, what);
}

#else

std::unique_ptr<udp_backend> make_uring_backend(const sockaddr_in& /*bind_addr*/,
                                                const std::string& what) {
  throw error(errc::config_value,
              what + ": backend io_uring is not available: cosim was built without liburing");
}

#endif

}  // namespace cosim::drivers
