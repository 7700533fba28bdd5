// UDP round trip on loopback against a plain blocking echo thread, measured in the same
// run:
//   udp_rtt/baseline  blocking sendto/recvfrom ping-pong from a second thread
//   udp_rtt/asio      the driver's Asio backend: its I/O thread sends the next ping from
//                     on_datagram, so the loop's receive path is what is compared
//   udp_rtt/io_uring  the same with the io_uring backend
//   udp_rtt/asio_auth the Asio case in the authenticated protocol (PROTOCOL.md version 2):
//                     each ping is a 1-channel command with its HMAC-SHA-512-256 tag, the
//                     echo verifies it and answers with a freshly tagged datagram, and the
//                     I/O thread verifies the answer: two tags made and two checked per trip
// Each repetition reports p50/p99/max round trip in µs; the summary prints the medians
// over repetitions (worst max) and the ratios backend_p50 / baseline_p50.
//
// Options (before Google Benchmark's own flags; environment variables as fallback):
//   --round-trips=N   COSIM_BENCH_ROUND_TRIPS   default 20000 per repetition
//   --repetitions=N   COSIM_BENCH_REPETITIONS   default 3
//   --payload=N       bytes per datagram, default 64 (a 4-channel message is 76)
// Each repetition is one manual-timed iteration, so --benchmark_min_time has no effect;
// the whole program takes a few seconds with the defaults.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cosim/drivers/bench_auth.hpp"
#include "cosim/drivers/udp_backend.hpp"
#include "cosim/runtime/errno_text.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/rt_thread.hpp"

#include "bench_support.hpp"

using cosim::bench::option_value;
using cosim::bench::ratio;

namespace {

struct bench_options {
  std::uint64_t round_trips = 20'000;
  int repetitions = 3;
  std::size_t payload = 64;
};
bench_options options;  // set once in main() before any benchmark runs

constexpr std::size_t max_payload = 1400;

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  return a;
}

// Blocking loopback socket; a receive timeout keeps a lost datagram from hanging the run.
int blocking_socket(sockaddr_in& bound) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + cosim::errno_text(errno));
  bound = loopback(0);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&bound), sizeof bound) != 0) {
    ::close(fd);
    throw std::runtime_error(std::string("bind: ") + cosim::errno_text(errno));
  }
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  const timeval tv{.tv_sec = 0, .tv_usec = 100'000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// The benchmark's fixed key (only loopback traffic of this program uses it).
cosim::drivers::bench_key bench_key() {
  cosim::drivers::bench_key k;
  for (std::size_t i = 0; i < k.bytes.size(); ++i) k.bytes[i] = static_cast<unsigned char>(i);
  cosim::drivers::prepare_key(k);  // as the drivers do
  return k;
}

// Sends every datagram straight back to its source until stopped; with `auth`, only an
// authenticated one, re-tagged as a device would answer.
class echo_thread {
 public:
  explicit echo_thread(bool auth = false) : fd_(blocking_socket(addr_)) {
    thread_ = std::thread([this, auth] {
      std::vector<std::byte> buf(2048);
      const cosim::drivers::bench_key key = bench_key();
      while (!stop_.load(std::memory_order_relaxed)) {  // relaxed: just a stop flag
        sockaddr_in from{};
        socklen_t len = sizeof from;
        const auto n =
            ::recvfrom(fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
        if (n <= 0) continue;
        std::size_t out = static_cast<std::size_t>(n);
        if (auth) {
          cosim::drivers::auth_message m{};
          if (cosim::drivers::decode_auth(std::span<const std::byte>(buf.data(), out), key, m) !=
              cosim::drivers::auth_status::ok)
            continue;
          m.timestamp_ns = static_cast<std::uint64_t>(cosim::monotonic_now_ns());
          out = cosim::drivers::encode_auth(m, key, buf);
        }
        ::sendto(fd_, buf.data(), out, 0, reinterpret_cast<const sockaddr*>(&from), len);
      }
    });
  }
  echo_thread(const echo_thread&) = delete;
  echo_thread& operator=(const echo_thread&) = delete;
  ~echo_thread() {
    stop_.store(true, std::memory_order_relaxed);
    thread_.join();
    ::close(fd_);
  }
  [[nodiscard]] const sockaddr_in& address() const noexcept { return addr_; }

 private:
  sockaddr_in addr_{};
  int fd_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct percentiles {
  double p50_us = 0, p99_us = 0, max_us = 0, total_s = 0;
};

percentiles summarise(std::vector<std::int64_t>& rtt) {
  percentiles p;
  for (const std::int64_t r : rtt) p.total_s += static_cast<double>(r) * 1e-9;
  std::sort(rtt.begin(), rtt.end());
  p.p50_us = static_cast<double>(rtt[rtt.size() / 2]) * 1e-3;
  p.p99_us = static_cast<double>(rtt[rtt.size() * 99 / 100]) * 1e-3;
  p.max_us = static_cast<double>(rtt.back()) * 1e-3;
  return p;
}

void report(benchmark::State& state, const percentiles& p) {
  state.SetIterationTime(p.total_s);
  state.counters["p50_us"] = p.p50_us;
  state.counters["p99_us"] = p.p99_us;
  state.counters["max_us"] = p.max_us;
}

std::uint64_t warmup_trips() {
  return std::min<std::uint64_t>(1'000, options.round_trips / 10);
}

// ---- (a) baseline: blocking sendto/recvfrom ----

void bm_baseline(benchmark::State& state) {
  const std::uint64_t trips = options.round_trips;
  const std::uint64_t warmup = warmup_trips();
  std::vector<std::int64_t> rtt(trips);
  percentiles p;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    echo_thread echo;
    sockaddr_in self{};
    const int fd = blocking_socket(self);
    bool lost = false;
    // A thread of its own, like the backends' I/O thread, so all three are alike.
    std::thread initiator([&] {
      std::vector<std::byte> out(options.payload), in(2048);
      for (std::uint64_t i = 0; i < warmup + trips && !lost; ++i) {
        std::memcpy(out.data(), &i, sizeof i);
        const std::int64_t t0 = cosim::monotonic_now_ns();
        ::sendto(fd, out.data(), out.size(), 0, reinterpret_cast<const sockaddr*>(&echo.address()),
                 sizeof(sockaddr_in));
        if (::recv(fd, in.data(), in.size(), 0) <= 0) lost = true;
        const std::int64_t dt = cosim::monotonic_now_ns() - t0;
        if (i >= warmup) rtt[i - warmup] = dt;
      }
    });
    initiator.join();
    ::close(fd);
    if (lost) {
      state.SkipWithError("a datagram was lost");
      return;
    }
    p = summarise(rtt);
    report(state, p);
  }
}

// ---- (b), (c): through a udp_backend ----

// Ping-pong on the backend's I/O thread: on_wake sends the first ping, every on_datagram
// records the round trip and sends the next one. No allocation while measuring.
class pinger final : public cosim::drivers::datagram_handler {
 public:
  pinger(cosim::drivers::udp_backend& backend, const sockaddr_in& echo, std::uint64_t warmup,
         std::vector<std::int64_t>& rtt, bool auth)
      : backend_(backend),
        echo_(echo),
        warmup_(warmup),
        rtt_(rtt),
        out_(auth ? cosim::drivers::max_auth_datagram_size : options.payload),
        auth_(auth),
        key_(bench_key()) {}

  void on_wake() noexcept override {
    if (next_ == 0) send_next();
  }

  void on_datagram(std::span<const std::byte> data, const sockaddr_in& /*from*/,
                   std::int64_t /*arrival_ns*/) noexcept override {
    const std::int64_t now = cosim::monotonic_now_ns();
    std::uint64_t seq = 0;
    if (auth_) {
      cosim::drivers::auth_message m{};
      if (cosim::drivers::decode_auth(data, key_, m) != cosim::drivers::auth_status::ok) return;
      seq = m.sequence;
    } else {
      if (data.size() < sizeof seq) return;
      std::memcpy(&seq, data.data(), sizeof seq);
    }
    if (seq + 1 != next_) return;  // stale echo
    if (seq >= warmup_) rtt_[seq - warmup_] = now - sent_ns_;
    if (next_ < warmup_ + rtt_.size()) {
      send_next();
    } else {
      done_.store(true, std::memory_order_release);
    }
  }

  [[nodiscard]] bool done() const noexcept { return done_.load(std::memory_order_acquire); }

 private:
  void send_next() noexcept {
    sent_ns_ = cosim::monotonic_now_ns();
    if (auth_) {
      // The driver's send path: one command, tagged (PROTOCOL.md version 2).
      cosim::drivers::auth_message m{};
      m.type = static_cast<std::uint8_t>(cosim::drivers::message_type::command);
      m.sequence = static_cast<std::uint32_t>(next_);
      m.timestamp_ns = static_cast<std::uint64_t>(sent_ns_);
      m.session = 1;
      m.channel_count = 1;
      m.channels[0] = static_cast<double>(next_);
      const std::size_t n = cosim::drivers::encode_auth(m, key_, out_);
      ++next_;
      backend_.send_to(std::span<const std::byte>(out_.data(), n), echo_);
      return;
    }
    std::memcpy(out_.data(), &next_, sizeof next_);
    ++next_;
    backend_.send_to(out_, echo_);
  }

  cosim::drivers::udp_backend& backend_;
  sockaddr_in echo_;
  std::uint64_t warmup_;
  std::vector<std::int64_t>& rtt_;
  std::vector<std::byte> out_;
  bool auth_;
  cosim::drivers::bench_key key_;
  std::uint64_t next_ = 0;
  std::int64_t sent_ns_ = 0;
  std::atomic<bool> done_{false};
};

void bm_backend(benchmark::State& state, const char* kind, bool auth) {
  const std::uint64_t trips = options.round_trips;
  const std::uint64_t warmup = warmup_trips();
  std::vector<std::int64_t> rtt(trips);
  percentiles p;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    std::unique_ptr<cosim::drivers::udp_backend> backend;
    try {
      backend = cosim::drivers::make_backend(kind, loopback(0), std::string("udp_bench.") + kind);
    } catch (const cosim::error& e) {
      state.SkipWithError(e.what());
      return;
    }
    echo_thread echo(auth);
    pinger ping(*backend, echo.address(), warmup, rtt, auth);
    std::thread io([&] { backend->run(ping); });
    backend->wake();
    // The measuring happens on the I/O thread; this one sleeps, so it takes no CPU.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100) +
                          std::chrono::microseconds(500) * static_cast<std::int64_t>(trips);
    while (!ping.done() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    backend->stop();
    io.join();
    if (!ping.done()) {
      state.SkipWithError("no reply within the deadline (a datagram was lost?)");
      return;
    }
    p = summarise(rtt);
    report(state, p);
  }
}

BENCHMARK(bm_baseline)
    ->Name("udp_rtt/baseline")
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_backend, asio, "asio", false)
    ->Name("udp_rtt/asio")
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_backend, io_uring, "io_uring", false)
    ->Name("udp_rtt/io_uring")
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_backend, asio_auth, "asio", true)
    ->Name("udp_rtt/asio_auth")
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

int run(int argc, char** argv) {
  options.round_trips = static_cast<std::uint64_t>(std::max(
      100LL, option_value(argc, argv, "--round-trips", "COSIM_BENCH_ROUND_TRIPS", 20'000)));
  options.repetitions = static_cast<int>(
      std::max(1LL, option_value(argc, argv, "--repetitions", "COSIM_BENCH_REPETITIONS", 3)));
  options.payload =
      static_cast<std::size_t>(std::clamp(option_value(argc, argv, "--payload", nullptr, 64), 8LL,
                                          static_cast<long long>(max_payload)));
  std::printf(
      "udp_bench: loopback round trips against a blocking echo thread, %zu-byte payload, "
      "%llu round trips x %d repetitions, io_uring built: %s\n",
      options.payload, static_cast<unsigned long long>(options.round_trips), options.repetitions,
      cosim::drivers::uring_available() ? "yes" : "no");

  cosim::bench::counter_reporter reporter;
  if (cosim::bench::run_benchmarks(argc, argv, options.repetitions, reporter) != 0) return 1;

  cosim::bench::print_latency_summary(reporter, "udp_bench", "udp_rtt",
                                      {"baseline", "asio", "io_uring", "asio_auth"}, 1.3);
  return 0;
}

int main(int argc, char** argv) {
  return cosim::bench::guarded_main(argc, argv, run);
}
