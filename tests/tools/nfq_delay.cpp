// nfq_delay: a link delay for kernels without sch_netem (tests/tools/netns_delay_test.cpp,
// docs/distributed.md "Testing across two namespaces"). An iptables rule sends packets to an
// NFQUEUE; this program takes each from the queue, holds it for a fixed delay (plus an
// optional uniform jitter) and then accepts it, or drops it with a given probability, as
// `tc netem delay D J loss P%` would on the same link. Packets leave in the order they came
// (netem reorders under jitter; order kept bounds every packet's delay by D + J instead).
//
//   nfq_delay --queue N --delay-ms D [--jitter-ms J] [--loss PERCENT] [--seed S]
//
// It prints "nfq_delay: queue N ready ..." once it is bound (install the rule after that:
// with no reader bound, the kernel drops what the rule queues), and on SIGTERM/SIGINT
// accepts what it still holds, prints its counts and exits 0. Exit 2: bad arguments or the
// queue cannot be bound (not root, queue taken). It sleeps in ppoll until the next packet
// is due or a new one arrives: no busy-waiting.
// glibc's netinet/in.h before the kernel's headers: linux/libc-compat.h then leaves out the
// definitions both have.
#include <netinet/in.h>

#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <random>
#include <string>
#include <system_error>

namespace {

volatile sig_atomic_t stop_requested = 0;

void on_signal(int /*sig*/) {
  stop_requested = 1;
}

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct options {
  int queue = -1;
  double delay_ms = -1.0;
  double jitter_ms = 0.0;
  double loss_percent = 0.0;
  std::uint64_t seed = 1;
};

struct held_packet {
  std::uint32_t id;
  std::int64_t due_ns;
};

struct delayer {
  options o;
  nfq_q_handle* queue = nullptr;
  std::deque<held_packet> held;
  std::mt19937_64 rng;
  std::uniform_real_distribution<double> unit{0.0, 1.0};
  std::int64_t last_due_ns = 0;
  std::uint64_t packets = 0, dropped = 0, verdict_errors = 0;
  std::size_t most_held = 0;

  void verdict(std::uint32_t id, std::uint32_t v) {
    if (nfq_set_verdict(queue, id, v, 0, nullptr) < 0) ++verdict_errors;
  }

  void take(std::uint32_t id) {
    ++packets;
    if (o.loss_percent > 0.0 && unit(rng) * 100.0 < o.loss_percent) {
      ++dropped;
      verdict(id, NF_DROP);
      return;
    }
    double ms = o.delay_ms;
    if (o.jitter_ms > 0.0) ms += o.jitter_ms * (2.0 * unit(rng) - 1.0);
    const std::int64_t due = now_ns() + static_cast<std::int64_t>(std::max(ms, 0.0) * 1e6);
    last_due_ns = std::max(due, last_due_ns);  // in order: never before the one ahead of it
    held.push_back({id, last_due_ns});
    most_held = std::max(most_held, held.size());
  }

  void release(std::int64_t until_ns) {
    while (!held.empty() && held.front().due_ns <= until_ns) {
      verdict(held.front().id, NF_ACCEPT);
      held.pop_front();
    }
  }
};

int on_packet(nfq_q_handle* /*qh*/, nfgenmsg* /*msg*/, nfq_data* nfa, void* data) {
  const nfqnl_msg_packet_hdr* ph = nfq_get_msg_packet_hdr(nfa);
  if (ph != nullptr) static_cast<delayer*>(data)->take(ntohl(ph->packet_id));
  return 0;
}

std::string error_text(int e) {
  return std::generic_category().message(e);
}

bool parse_number(const char* s, double& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s, &end);
  return errno == 0 && end != s && *end == '\0';
}

int usage(const std::string& why) {
  std::fprintf(stderr,
               "nfq_delay: %s\nusage: nfq_delay --queue N --delay-ms D [--jitter-ms J] "
               "[--loss PERCENT] [--seed S]\n",
               why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  delayer d;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) return usage(key + " needs a value");
    double v = 0.0;
    if (!parse_number(argv[++i], v)) return usage(key + " = '" + argv[i] + "' is not a number");
    if (key == "--queue" && v >= 0 && v <= 65535 && v == static_cast<int>(v))
      d.o.queue = static_cast<int>(v);
    else if (key == "--delay-ms" && v >= 0 && v <= 60000)
      d.o.delay_ms = v;
    else if (key == "--jitter-ms" && v >= 0 && v <= 60000)
      d.o.jitter_ms = v;
    else if (key == "--loss" && v >= 0 && v <= 100)
      d.o.loss_percent = v;
    else if (key == "--seed" && v >= 0)
      d.o.seed = static_cast<std::uint64_t>(v);
    else
      return usage("unknown option or value out of range: " + key + " " + argv[i]);
  }
  if (d.o.queue < 0 || d.o.delay_ms < 0) return usage("--queue and --delay-ms are required");
  d.rng.seed(d.o.seed);

  nfq_handle* h = nfq_open();
  if (h == nullptr) return usage("nfq_open: " + error_text(errno));
  d.queue = nfq_create_queue(h, static_cast<std::uint16_t>(d.o.queue), &on_packet, &d);
  if (d.queue == nullptr) {
    nfq_close(h);
    return usage("cannot bind queue " + std::to_string(d.o.queue) +
                 " (root needed; is another program bound to it?)");
  }
  // The packet id is all it needs: no payload copied to user space.
  if (nfq_set_mode(d.queue, NFQNL_COPY_META, 0) < 0 || nfq_set_queue_maxlen(d.queue, 65536) < 0) {
    nfq_destroy_queue(d.queue);
    nfq_close(h);
    return usage("cannot configure queue " + std::to_string(d.o.queue));
  }
  // A burst larger than the socket buffer would be lost (ENOBUFS): room for many held packets.
  nfnl_rcvbufsiz(nfq_nfnlh(h), 8U << 20U);
  // Wake-ups within microseconds of the due time, not the default 50 us timer slack.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);

  // SIGTERM/SIGINT are delivered only inside ppoll, so a stop request is never missed
  // between the check of the flag and the sleep.
  sigset_t block{}, during_poll{};
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, &during_poll);
  sigdelset(&during_poll, SIGTERM);
  sigdelset(&during_poll, SIGINT);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  std::printf("nfq_delay: queue %d ready (delay %g ms, jitter %g ms, loss %g %%)\n", d.o.queue,
              d.o.delay_ms, d.o.jitter_ms, d.o.loss_percent);
  std::fflush(stdout);

  const int fd = nfq_fd(h);
  std::uint64_t lost_messages = 0;
  int code = 0;
  alignas(8) static char buf[1 << 16];
  while (stop_requested == 0) {
    timespec wait{};
    timespec* timeout = nullptr;
    if (!d.held.empty()) {
      const std::int64_t left = std::max<std::int64_t>(d.held.front().due_ns - now_ns(), 0);
      wait.tv_sec = static_cast<time_t>(left / 1'000'000'000);
      wait.tv_nsec = static_cast<long>(left % 1'000'000'000);
      timeout = &wait;
    }
    pollfd p{fd, POLLIN, 0};
    const int r = ppoll(&p, 1, timeout, &during_poll);
    if (r < 0 && errno != EINTR) {
      std::fprintf(stderr, "nfq_delay: ppoll: %s\n", error_text(errno).c_str());
      code = 1;
      break;
    }
    if (r > 0 && (p.revents & POLLIN) != 0) {
      for (;;) {
        const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n >= 0) {
          nfq_handle_packet(h, buf, static_cast<int>(n));
          continue;
        }
        if (errno == ENOBUFS) {  // messages lost: those packets are dropped by the kernel
          ++lost_messages;
          continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          std::fprintf(stderr, "nfq_delay: recv: %s\n", error_text(errno).c_str());
          code = 1;
        }
        break;
      }
      if (code != 0) break;
    }
    d.release(now_ns());
  }
  d.release(INT64_MAX);
  std::printf(
      "nfq_delay: %llu packets, %llu delayed, %llu dropped, at most %zu held at once, "
      "%llu lost to a full socket buffer, %llu verdicts failed\n",
      static_cast<unsigned long long>(d.packets),
      static_cast<unsigned long long>(d.packets - d.dropped),
      static_cast<unsigned long long>(d.dropped), d.most_held,
      static_cast<unsigned long long>(lost_messages),
      static_cast<unsigned long long>(d.verdict_errors));
  std::fflush(stdout);
  nfq_destroy_queue(d.queue);
  nfq_close(h);
  return code;
}
