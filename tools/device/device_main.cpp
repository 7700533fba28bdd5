// cosim-device: simulated bench devices for CI and for trying the UDP drivers.
//
//   cosim-device joystick --to HOST:PORT --manoeuvre M1|M2|FILE.csv [--rate HZ] [--loss P]
//                [--jitter-us N] [--garbage P] [--silent-after S] [--from-port PORT]
//                [--duration S] [--seed N] [--sync [--sync-timeout S]]
//     Replays kappa(t) on wall-clock time as `command` datagrams (channel 0 = kappa).
//     --loss drops datagrams (their sequence numbers are still used, so the receiver
//     sees gaps); --jitter-us delays each send by a uniform 0..N us; --garbage sends, in
//     addition, a corrupted copy with probability P; --silent-after stops sending.
//     --rate is limited to [0.1, 10000] Hz: the loop sleeps to each period's start, and a
//     normal thread wakes up late by its 50 us timer slack plus the scheduling latency, which
//     a period under 100 us cannot absorb (on the 2-core VM under a load of 2.3, 2 %, 9 % and
//     10 % of the periods were missed at 1, 5 and 10 kHz). A missed period (the process was
//     not scheduled during it) is skipped, not made up: the next datagram goes out at once
//     with the kappa of the current period, then on the grid again, so a stall never turns
//     into a burst.
//
//   cosim-device joystick --to HOST:PORT --lockstep --manoeuvre M1|M2|FILE.csv
//   cosim-device joystick --to HOST:PORT --replay FILE.csv      (= --lockstep --manoeuvre FILE)
//                [--silent-after S] [--from-port PORT] [--sync-timeout S]
//     Lockstep (run.mode = "lockstep", drivers/PROTOCOL.md "Lockstep"): answers each tick of
//     the simulation (a lockstep heartbeat stamped with a macro step's simulation time T)
//     with kappa(T) in a command datagram stamped T. Simulation time only: as fast as the
//     simulation asks. --silent-after S stops answering from T >= S (the run then stops on
//     its lockstep_timeout). Exits when no tick came for --sync-timeout seconds.
//
//   cosim-device valve --listen HOST:PORT [--log FILE.csv] [--feedback-to HOST:PORT]
//                [--lag-s TAU] [--duration S] [--lockstep]
//     Receives datagrams until SIGINT/SIGTERM (or --duration) and logs every one with
//     its arrival time. With --feedback-to it answers each valid command with a
//     valve_feedback spool position following a first-order lag (002 Eq. 28) of time
//     constant TAU. --lockstep: acknowledges every lockstep datagram (a lockstep heartbeat
//     stamped with the same simulation time, back to its sender) and logs the simulation time
//     it carries (first column sim_time_s) instead of the arrival time.
//
//   cosim-device keygen FILE
//     Writes a new random 256-bit key (64 hex digits) to FILE with mode 0600; never
//     overwrites. The same FILE goes to the driver (drivers.<name>.key_file) and the device.
//
// joystick and valve speak the authenticated protocol (version 2, PROTOCOL.md) with
// --key FILE, and the unauthenticated version 1 only with --auth none; one of the two is
// required.
//
// Exit codes as for cosim: 0 done (--duration reached, or SIGINT/SIGTERM), 2 bad input or
// I/O error (command-line errors included).
#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cosim/drivers/bench_auth.hpp"
#include "cosim/drivers/bench_protocol.hpp"
#include "cosim/drivers/driver_config.hpp"
#include "cosim/runtime/errno_text.hpp"
#include "cosim/runtime/rt_thread.hpp"
#include "cosim/runtime/version.hpp"
#include "cosim/subsystems/crane_model.hpp"
#include "cosim/subsystems/manoeuvre.hpp"

namespace {

using namespace cosim::drivers;

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) {
  g_stop.store(true);
}

void install_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

/// Limits of the time options [s]: long enough for any bench session, short enough that
/// times in nanoseconds stay far inside 64 bits.
constexpr double max_seconds = 1e6;
constexpr double max_rate_hz = 1e4;  // see the file comment
constexpr double min_rate_hz = 0.1;  // a slower joystick would look dead to any driver

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

/// A finite number in [lo, hi] ((lo, hi] when lo_open). CLI11 puts the option's name
/// before the message; NaN passes CLI11's own Range, so it is not used for doubles.
CLI::Validator finite_in(double lo, double hi, bool lo_open, const std::string& unit,
                         const std::string& why = {}) {
  const std::string range = (lo_open ? "(" : "[") + number(lo) + ", " + number(hi) + "]" +
                            (unit.empty() ? "" : " " + unit);
  return CLI::Validator(
      [=](std::string& input) -> std::string {
        double v = 0.0;
        const bool ok = CLI::detail::lexical_cast(input, v) && std::isfinite(v) &&
                        (lo_open ? v > lo : v >= lo) && v <= hi;
        if (ok) return {};
        return input + ": must be a finite number in " + range +
               (why.empty() ? "" : " (" + why + ")");
      },
      "NUMBER in " + range);
}

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "cosim-device: %s\n", msg.c_str());
  std::exit(2);  // NOLINT(concurrency-mt-unsafe): cosim-device never starts a second thread
}

sockaddr_in address_or_die(const std::string& text, const char* option) {
  sockaddr_in a{};
  if (!parse_udp_address(text, a))
    die(std::string(option) + " " + text + ": not an IPv4 HOST:PORT address");
  return a;
}

int udp_socket(const sockaddr_in& bind_addr, const char* what) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die(std::string("socket: ") + cosim::errno_text(errno));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&bind_addr), sizeof bind_addr) != 0)
    die(std::string(what) + " " + to_string(bind_addr) +
        ": cannot bind: " + cosim::errno_text(errno));
  return fd;
}

std::size_t encode_one(message_type type, std::uint32_t seq, std::span<const double> values,
                       std::span<std::byte> buf) {
  bench_message m{};
  m.type = type;
  m.sequence = seq;
  m.timestamp_ns = static_cast<std::uint64_t>(cosim::monotonic_now_ns());
  m.channel_count = static_cast<std::uint16_t>(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) m.channels[i] = values[i];
  return encode(m, buf);
}

/// --key FILE / --auth none: which protocol a device speaks.
struct auth_options {
  std::string key_file, auth;
  bool on = false;
  bench_key key;
};

void resolve_auth(auth_options& a) {
  if (!a.auth.empty() && a.auth != "none" && a.auth != "hmac-sha512-256")
    die("--auth " + a.auth + ": must be hmac-sha512-256 (with --key FILE) or none");
  if (a.auth == "none") {
    if (!a.key_file.empty()) die("--key is not used with --auth none (give one of the two)");
    return;
  }
  if (a.key_file.empty())
    die("--key FILE is required: the bench protocol is authenticated (create a key with "
        "cosim-device keygen FILE); --auth none speaks the unauthenticated version 1");
  a.key = read_key_file(a.key_file, "--key");
  a.on = true;
}

/// Sends an authenticated message; true if the kernel took it.
bool send_auth(int fd, const auth_message& m, const bench_key& key, const sockaddr_in& to) {
  std::array<std::byte, max_auth_datagram_size> buf{};
  const std::size_t n = encode_auth(m, key, buf);
  return n != 0 && ::sendto(fd, buf.data(), n, 0, reinterpret_cast<const sockaddr*>(&to),
                            sizeof to) == static_cast<ssize_t>(n);
}

/// Reads every datagram waiting on `fd` (non-blocking) and hands authenticated challenges
/// to `sender`; true when one of them gave a session.
bool take_challenges(int fd, const bench_key& key, auth_sender& sender, int timeout_ms) {
  bool adopted = false;
  std::array<std::byte, 2048> in{};
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return false;
  for (;;) {
    const ssize_t n = ::recv(fd, in.data(), in.size(), MSG_DONTWAIT);
    if (n <= 0) break;
    auth_message m{};
    if (decode_auth(std::span<const std::byte>(in.data(), static_cast<std::size_t>(n)), key, m) ==
            auth_status::ok &&
        sender.on_challenge(m))
      adopted = true;
  }
  return adopted;
}

// kappa(t) from a CSV file "t,kappa" (header optional), linearly interpolated.
struct table_signal {
  std::vector<double> t, v;
  double at(double x) const {
    if (t.empty()) return 0.0;
    if (x <= t.front()) return v.front();
    if (x >= t.back()) return v.back();
    const auto it = std::upper_bound(t.begin(), t.end(), x);
    const std::size_t i = static_cast<std::size_t>(it - t.begin());
    const double w = (x - t[i - 1]) / (t[i] - t[i - 1]);
    return v[i - 1] + w * (v[i] - v[i - 1]);
  }
};

table_signal read_table(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    die("--manoeuvre " + path +
        ": no such manoeuvre and cannot open it as a file (expected M1, M2, hold or a t,kappa CSV "
        "file)");
  table_signal s;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream ls(line);
    double a = 0, b = 0;
    if (!(ls >> a >> b)) {
      if (s.t.empty()) continue;  // header
      die(path + ":" + std::to_string(line_no) + ": expected \"t,kappa\"");
    }
    if (!s.t.empty() && a <= s.t.back())
      die(path + ":" + std::to_string(line_no) + ": t must increase");
    s.t.push_back(a);
    s.v.push_back(b);
  }
  if (s.t.empty()) die(path + ": no samples");
  return s;
}

struct joystick_options {
  std::string to, manoeuvre = "M1";
  double rate = 1000.0, loss = 0.0, garbage = 0.0, silent_after = -1.0, duration = 12.0;
  int jitter_us = 0, from_port = 0;
  unsigned seed = 1;
  bool sync = false;
  double sync_timeout = 30.0;
  bool lockstep = false;
  std::string replay;
  auth_options auth;
};

/// Lockstep joystick: one command per tick of the simulation, stamped with the tick's time.
/// Authenticated: the ticks' "say hello" is answered with a hello, a tick counts only under
/// the session the simulation gave, and the answer goes under it.
int run_joystick_lockstep(const joystick_options& o, int fd, const sockaddr_in& to,
                          const std::function<double(double)>& kappa) {
  std::fprintf(stderr, "cosim-device joystick: lockstep, waiting for the simulation's ticks\n");
  std::array<std::byte, 2048> in{};
  std::array<std::byte, max_auth_datagram_size> buf{};
  std::uint32_t seq = 0;
  std::uint64_t answered = 0;
  auth_sender sender;
  std::int64_t last_tick = cosim::monotonic_now_ns();
  const auto idle_limit = static_cast<std::int64_t>(o.sync_timeout * 1e9);
  while (!g_stop.load() && cosim::monotonic_now_ns() - last_tick < idle_limit) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    const ssize_t n = ::recv(fd, in.data(), in.size(), 0);
    if (n <= 0) continue;
    const auto data = std::span<const std::byte>(in.data(), static_cast<std::size_t>(n));
    std::uint64_t tick_ns = 0;
    if (o.auth.on) {
      auth_message m{};
      if (decode_auth(data, o.auth.key, m) != auth_status::ok) continue;
      if (m.type == challenge_type) {
        (void)sender.on_challenge(m);
        const std::int64_t now = cosim::monotonic_now_ns();
        if (sender.hello_due(now, 0)) send_auth(fd, sender.hello(now, seq++), o.auth.key, to);
        continue;
      }
      if (m.type != static_cast<std::uint8_t>(message_type::heartbeat) ||
          (m.flags & flag_lockstep) == 0 || !sender.has_session() ||
          m.session != sender.session())
        continue;
      tick_ns = m.timestamp_ns;
    } else {
      bench_message m{};
      if (decode(data, m) != decode_status::ok || m.type != message_type::heartbeat ||
          (m.flags & flag_lockstep) == 0)
        continue;
      tick_ns = m.timestamp_ns;
    }
    last_tick = cosim::monotonic_now_ns();
    // The tick's simulation time, exactly as the runtime's to_seconds() gives it.
    const double t = static_cast<double>(static_cast<std::int64_t>(tick_ns)) * 1e-9;
    if (o.silent_after >= 0.0 && t >= o.silent_after) continue;  // a hung device
    std::size_t k = 0;
    if (o.auth.on) {
      auth_message out{};
      out.type = static_cast<std::uint8_t>(message_type::command);
      out.flags = flag_lockstep;
      out.sequence = seq++;
      out.timestamp_ns = tick_ns;
      out.session = sender.session();
      out.channel_count = 1;
      out.channels[0] = kappa(t);
      k = encode_auth(out, o.auth.key, buf);
    } else {
      bench_message out{};
      out.type = message_type::command;
      out.flags = flag_lockstep;
      out.sequence = seq++;
      out.timestamp_ns = tick_ns;
      out.channel_count = 1;
      out.channels[0] = kappa(t);
      k = encode(out, buf);
    }
    if (k != 0 && ::sendto(fd, buf.data(), k, 0, reinterpret_cast<const sockaddr*>(&to),
                           sizeof to) == static_cast<ssize_t>(k))
      ++answered;
  }
  ::close(fd);
  std::fprintf(stderr, "cosim-device joystick: answered %llu ticks\n",
               static_cast<unsigned long long>(answered));
  return 0;
}

int run_joystick(const joystick_options& o) {
  const sockaddr_in to = address_or_die(o.to, "--to");
  // A delay of a period or more would land in the next period and be skipped as missed.
  if (static_cast<double>(o.jitter_us) * 1e-6 * o.rate >= 1.0)
    die("--jitter-us " + std::to_string(o.jitter_us) + ": must be less than one period, " +
        number(1e6 / o.rate) + " us at --rate " + number(o.rate) + " Hz");
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (to.sin_addr.s_addr != htonl(INADDR_LOOPBACK)) from.sin_addr.s_addr = htonl(INADDR_ANY);
  from.sin_port = htons(static_cast<std::uint16_t>(o.from_port));
  const int fd = udp_socket(from, "--from-port");

  cosim::crane::manoeuvre_kind mk{};
  table_signal table;
  const bool builtin = cosim::crane::parse_manoeuvre(o.manoeuvre, mk);
  if (!builtin) table = read_table(o.manoeuvre);
  // Same initial valve opening as the crane scenario (003 Sect. 1.3).
  const double kappa0 = cosim::crane::solve_equilibrium({}, {}, 3).kappa0;
  auto kappa = [&](double t) {
    if (!builtin) return table.at(t);
    return cosim::crane::manoeuvre::at(mk, t, kappa0);
  };
  if (o.lockstep) return run_joystick_lockstep(o, fd, to, kappa);

  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  std::uint32_t seq = 0;
  auth_sender sender;
  constexpr std::int64_t hello_period_ns = 20'000'000;
  if (o.auth.on && o.sync) {
    // Start the replay clock when the simulation gives this device its session: the answer
    // to our hello, which the input driver sends only once the run has started.
    std::fprintf(stderr, "cosim-device joystick: waiting for the simulation's session\n");
    const std::int64_t give_up =
        cosim::monotonic_now_ns() + static_cast<std::int64_t>(o.sync_timeout * 1e9);
    while (!sender.has_session() && !g_stop.load() && cosim::monotonic_now_ns() < give_up) {
      const std::int64_t now = cosim::monotonic_now_ns();
      if (sender.hello_due(now, hello_period_ns))
        send_auth(fd, sender.hello(now, seq++), o.auth.key, to);
      take_challenges(fd, o.auth.key, sender, 5);
    }
    if (!sender.has_session()) die("--sync: no session from the simulation within --sync-timeout");
  } else if (o.sync) {
    // Start the replay clock when the simulation announces its start (a heartbeat from
    // the input driver to its allowlisted peers, i.e. to this socket).
    std::fprintf(stderr, "cosim-device joystick: waiting for the simulation's heartbeat\n");
    const std::int64_t give_up =
        cosim::monotonic_now_ns() + static_cast<std::int64_t>(o.sync_timeout * 1e9);
    bool synced = false;
    std::array<std::byte, 2048> in{};
    while (!synced && !g_stop.load() && cosim::monotonic_now_ns() < give_up) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const ssize_t n = ::recv(fd, in.data(), in.size(), 0);
      bench_message m{};
      if (n > 0 &&
          decode(std::span<const std::byte>(in.data(), static_cast<std::size_t>(n)), m) ==
              decode_status::ok &&
          m.type == message_type::heartbeat)
        synced = true;
    }
    if (!synced) die("--sync: no heartbeat from the simulation within --sync-timeout");
  }
  const std::int64_t period_ns = static_cast<std::int64_t>(std::llround(1e9 / o.rate));
  const std::int64_t start = cosim::monotonic_now_ns();
  std::array<std::byte, max_auth_datagram_size> buf{};
  std::uint64_t sent = 0, dropped = 0, garbage = 0, skipped = 0, unsent = 0;
  for (std::int64_t k = 0; !g_stop.load(); ++k) {
    // Periods that ended while the process was not running are skipped, keeping the phase:
    // sending them now would be a burst of stale values. Sequence numbers count datagrams,
    // so a skipped period is no gap for the receiver (unlike --loss).
    const std::int64_t late = cosim::monotonic_now_ns() - (start + k * period_ns);
    if (late >= period_ns) {
      const std::int64_t missed = late / period_ns;
      k += missed;
      skipped += static_cast<std::uint64_t>(missed);
    }
    const std::int64_t due = start + k * period_ns;
    const double t = static_cast<double>(k * period_ns) * 1e-9;
    if (t > o.duration) break;
    if (o.silent_after >= 0.0 && t >= o.silent_after) {
      // Silent: keep the process alive (a hung device), quietly.
      cosim::sleep_until_ns(due);
      continue;
    }
    std::int64_t send_at = due;
    if (o.jitter_us > 0) send_at += static_cast<std::int64_t>(u01(rng) * o.jitter_us * 1000.0);
    cosim::sleep_until_ns(send_at);
    const double v = kappa(t);
    std::size_t n = 0;
    if (o.auth.on) {
      // Challenges (the first session, or the receiver asking for a hello) arrive on the
      // sending socket; without a session a hello goes out instead of the value.
      take_challenges(fd, o.auth.key, sender, 0);
      const std::int64_t now = cosim::monotonic_now_ns();
      if (sender.hello_due(now, hello_period_ns))
        send_auth(fd, sender.hello(now, seq++), o.auth.key, to);
      if (!sender.has_session()) {
        ++unsent;
        continue;
      }
      auth_message a{};
      a.type = static_cast<std::uint8_t>(message_type::command);
      a.sequence = seq++;
      a.timestamp_ns = static_cast<std::uint64_t>(now);
      a.session = sender.session();
      a.channel_count = 1;
      a.channels[0] = v;
      n = encode_auth(a, o.auth.key, buf);
    } else {
      n = encode_one(message_type::command, seq++, std::span<const double>(&v, 1), buf);
    }
    if (o.loss > 0.0 && u01(rng) < o.loss) {
      ++dropped;
    } else if (::sendto(fd, buf.data(), n, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to) ==
               static_cast<ssize_t>(n)) {
      ++sent;
    }
    if (o.garbage > 0.0 && u01(rng) < o.garbage) {
      // A corrupted copy: one byte changed (caught by magic, version, length or CRC), or
      // a truncated datagram.
      auto bad = buf;
      std::size_t len = n;
      const std::size_t pos = static_cast<std::size_t>(u01(rng) * static_cast<double>(n)) % n;
      if (u01(rng) < 0.2)
        len = pos;
      else
        bad[pos] = static_cast<std::byte>(static_cast<unsigned>(bad[pos]) ^ (1U + (k & 0x7F)));
      ::sendto(fd, bad.data(), len, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
      ++garbage;
    }
  }
  ::close(fd);
  std::fprintf(stderr,
               "cosim-device joystick: sent %llu, dropped %llu, garbage %llu, skipped %llu "
               "periods (missed while not scheduled), %llu before a session\n",
               static_cast<unsigned long long>(sent), static_cast<unsigned long long>(dropped),
               static_cast<unsigned long long>(garbage), static_cast<unsigned long long>(skipped),
               static_cast<unsigned long long>(unsent));
  return 0;
}

struct valve_options {
  std::string listen, log, feedback_to;
  double lag_s = 0.0, duration = -1.0;
  bool lockstep = false;
  auth_options auth;
};

/// One received datagram of the valve, in either protocol version.
struct valve_datagram {
  const char* status = "";  // decode status, or bad_mac / old / wrong_session / hello
  bool take = false;        // a fresh value to act on
  int type = 0;
  std::uint16_t flags = 0;
  std::uint64_t session = 0;  // version 2
  std::uint32_t sequence = 0;
  std::uint64_t timestamp_ns = 0;
  std::uint16_t channel_count = 0;
  std::array<double, max_channels> channels{};
};

int run_valve(const valve_options& o) {
  const sockaddr_in addr = address_or_die(o.listen, "--listen");
  const int fd = udp_socket(addr, "--listen");
  sockaddr_in fb{};
  const bool feedback = !o.feedback_to.empty();
  if (feedback) fb = address_or_die(o.feedback_to, "--feedback-to");
  std::FILE* log = nullptr;
  if (!o.log.empty()) {
    log = std::fopen(o.log.c_str(), "w");
    if (log == nullptr) die("--log " + o.log + ": " + cosim::errno_text(errno));
    std::fputs(o.lockstep
                   ? "sim_time_s,source,status,type,sequence,timestamp_ns,channels,c0,c1,c2,c3\n"
                   : "arrival_s,source,status,type,sequence,timestamp_ns,channels,c0,c1,c2,c3\n",
               log);
    std::fflush(log);
  }
  const std::int64_t start = cosim::monotonic_now_ns();
  double spool = 0.0;
  bool spool_init = false;
  std::int64_t last_ns = start;
  std::uint32_t fb_seq = 0, challenge_seq = 0;
  auth_receiver rx;       // commands from the output driver (one sender)
  auth_sender fb_sender;  // feedback to the input driver
  std::int64_t last_ask_ns = 0;
  std::uint64_t count = 0;
  std::array<std::byte, 2048> buf{};
  while (!g_stop.load()) {
    if (o.duration >= 0.0 &&
        static_cast<double>(cosim::monotonic_now_ns() - start) * 1e-9 > o.duration)
      break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    sockaddr_in src{};
    socklen_t len = sizeof src;
    const ssize_t n =
        ::recvfrom(fd, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&src), &len);
    if (n < 0) continue;
    const std::int64_t now = cosim::monotonic_now_ns();
    ++count;
    const auto data = std::span<const std::byte>(buf.data(), static_cast<std::size_t>(n));
    valve_datagram d;
    if (o.auth.on) {
      auth_message m{};
      decode_status framing = decode_status::ok;
      const auth_status ast = decode_auth(data, o.auth.key, m, &framing);
      d.status = ast == auth_status::malformed ? to_string(framing) : to_string(ast);
      if (ast == auth_status::ok) {
        d.type = m.type;
        d.flags = m.flags;
        d.session = m.session;
        d.sequence = m.sequence;
        d.timestamp_ns = m.timestamp_ns;
        d.channel_count = m.channel_count;
        d.channels = m.channels;
        if (m.type == challenge_type) {
          // For the feedback sender: the driver receiving valve_feedback gave a session.
          fb_sender.on_challenge(m);
        } else {
          const auth_receiver::verdict v = rx.observe(m);
          if (v == auth_receiver::verdict::hello) {
            send_auth(fd, rx.challenge(m.nonce, challenge_seq++), o.auth.key, src);
            d.status = "hello";
          } else if (v == auth_receiver::verdict::old) {
            d.status = "old";
          } else if (v == auth_receiver::verdict::wrong_session) {
            d.status = "wrong_session";
            if (now - last_ask_ns >= 20'000'000) {  // "say hello", at most every 20 ms
              last_ask_ns = now;
              auth_message ask{};
              ask.type = challenge_type;
              ask.sequence = challenge_seq++;
              send_auth(fd, ask, o.auth.key, src);
            }
          } else {
            d.take = true;
          }
        }
      }
    } else {
      bench_message m{};
      const decode_status st = decode(data, m);
      d.status = to_string(st);
      if (st == decode_status::ok) {
        d.take = true;
        d.type = static_cast<int>(m.type);
        d.flags = m.flags;
        d.sequence = m.sequence;
        d.timestamp_ns = m.timestamp_ns;
        d.channel_count = m.channel_count;
        d.channels = m.channels;
      }
    }
    const bool known = d.type != 0;
    const bool stepped = o.lockstep && d.take && (d.flags & flag_lockstep) != 0;
    if (log != nullptr) {
      const double when = o.lockstep ? (stepped ? static_cast<double>(d.timestamp_ns) * 1e-9 : -1.0)
                                     : static_cast<double>(now - start) * 1e-9;
      std::fprintf(log, "%.9f,%s,%s,%d,%u,%llu,%u", when, to_string(src).c_str(), d.status, d.type,
                   d.sequence,
                   static_cast<unsigned long long>(d.timestamp_ns), d.channel_count);
      for (std::size_t i = 0; i < 4; ++i) {
        if (known && i < d.channel_count)
          std::fprintf(log, ",%.17g", d.channels[i]);
        else
          std::fputs(",", log);
      }
      std::fputs("\n", log);
      std::fflush(log);
    }
    if (stepped && d.type != static_cast<int>(message_type::heartbeat)) {
      // Lockstep: acknowledge the step, so the simulation goes on only once this is logged;
      // authenticated, under the session of the datagram (the one this valve gave).
      if (o.auth.on) {
        auth_message a{};
        a.type = static_cast<std::uint8_t>(message_type::heartbeat);
        a.flags = flag_lockstep;
        a.sequence = fb_seq++;
        a.timestamp_ns = d.timestamp_ns;
        a.session = d.session;
        send_auth(fd, a, o.auth.key, src);
      } else {
        std::array<std::byte, max_datagram_size> ack{};
        bench_message a{};
        a.type = message_type::heartbeat;
        a.flags = flag_lockstep;
        a.sequence = fb_seq++;
        a.timestamp_ns = d.timestamp_ns;
        const std::size_t k = encode(a, ack);
        ::sendto(fd, ack.data(), k, 0, reinterpret_cast<const sockaddr*>(&src), sizeof src);
      }
    }
    if (feedback && d.take && d.type == static_cast<int>(message_type::valve_command) &&
        d.channel_count > 0) {
      // 002 Eq. (28): tau x' = u - x, integrated exactly over the time since the last packet.
      const double u = d.channels[0];
      const double dt = static_cast<double>(now - last_ns) * 1e-9;
      if (!spool_init || o.lag_s <= 0.0)
        spool = spool_init ? (o.lag_s <= 0.0 ? u : spool) : u;
      else
        spool += (u - spool) * (1.0 - std::exp(-dt / o.lag_s));
      spool_init = true;
      last_ns = now;
      if (o.auth.on) {
        if (fb_sender.hello_due(now, 20'000'000))
          send_auth(fd, fb_sender.hello(now, fb_seq++), o.auth.key, fb);
        if (fb_sender.has_session()) {
          auth_message a{};
          a.type = static_cast<std::uint8_t>(message_type::valve_feedback);
          a.sequence = fb_seq++;
          a.timestamp_ns = static_cast<std::uint64_t>(now);
          a.session = fb_sender.session();
          a.channel_count = 1;
          a.channels[0] = spool;
          send_auth(fd, a, o.auth.key, fb);
        }
      } else {
        std::array<std::byte, max_datagram_size> out{};
        const std::size_t k = encode_one(message_type::valve_feedback, fb_seq++,
                                         std::span<const double>(&spool, 1), out);
        ::sendto(fd, out.data(), k, 0, reinterpret_cast<const sockaddr*>(&fb), sizeof fb);
      }
    }
  }
  if (log != nullptr) std::fclose(log);
  ::close(fd);
  std::fprintf(stderr, "cosim-device valve: received %llu datagrams\n",
               static_cast<unsigned long long>(count));
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  CLI::App app{
      "Simulated bench devices speaking the bench wire protocol (drivers/PROTOCOL.md).\n"
      "Exit codes (as cosim): 0 done, 2 bad input or I/O error."};
  app.require_subcommand(1);
  app.set_version_flag("--version", cosim::version_line("cosim-device"),
                       "Print the version, commit, build type and compiler, and exit");
  joystick_options jo;
  auto* js =
      app.add_subcommand("joystick", "Replay kappa(t) as command datagrams on wall-clock time");
  js->add_option("--to", jo.to, "Destination HOST:PORT")->required();
  auto* manoeuvre_opt =
      js->add_option("--manoeuvre", jo.manoeuvre, "M1, M2, hold or a t,kappa CSV file");
  auto* replay_opt = js->add_option(
      "--replay", jo.replay, "Play a t,kappa CSV trace in simulation time (implies --lockstep)");
  manoeuvre_opt->excludes(replay_opt);
  js->add_flag("--lockstep", jo.lockstep,
               "Answer the simulation's lockstep ticks with kappa at each tick's simulation time "
               "(run.mode = \"lockstep\")");
  js->add_option("--rate", jo.rate,
                 "Datagrams per second (default 1000). At most 10 kHz: a shorter period is as\n"
                 "short as a non-realtime machine's wake-up latency. Periods missed while the\n"
                 "process was not scheduled are skipped, never sent late in a burst.")
      ->check(finite_in(min_rate_hz, max_rate_hz, false, "Hz",
                        "the sender sleeps to each period; a normal thread wakes up late by its "
                        "50 us timer slack plus scheduling latency, which a shorter period cannot "
                        "absorb"));
  js->add_option("--loss", jo.loss, "Drop probability 0..1")->check(finite_in(0.0, 1.0, false, ""));
  js->add_option("--jitter-us", jo.jitter_us, "Uniform send delay 0..N us, N below one period")
      ->check(CLI::NonNegativeNumber);
  js->add_option("--garbage", jo.garbage, "Probability of an extra corrupted datagram")
      ->check(finite_in(0.0, 1.0, false, ""));
  js->add_option("--silent-after", jo.silent_after,
                 "Stop sending after S seconds (the process stays)")
      ->check(finite_in(0.0, max_seconds, false, "s"));
  js->add_option("--from-port", jo.from_port, "Source port (default: any)")
      ->check(CLI::Range(0, 65535));
  js->add_option("--duration", jo.duration, "Replay length [s] (default 12)")
      ->check(finite_in(0.0, max_seconds, true, "s"));
  js->add_option("--seed", jo.seed, "Random seed for loss/jitter/garbage");
  js->add_flag("--sync", jo.sync,
               "Start the replay clock at the simulation's start heartbeat (sent by the input "
               "driver to its peers)");
  js->add_option("--sync-timeout", jo.sync_timeout,
                 "Longest wait for that heartbeat [s] (default 30)")
      ->check(finite_in(0.0, max_seconds, true, "s"));
  valve_options vo;
  auto* vs = app.add_subcommand(
      "valve", "Receive valve commands, log them, optionally answer with spool feedback");
  vs->add_option("--listen", vo.listen, "Local HOST:PORT")->required();
  vs->add_option("--log", vo.log, "CSV log of every datagram with its arrival time");
  vs->add_option("--feedback-to", vo.feedback_to, "Send valve_feedback to HOST:PORT");
  vs->add_option("--lag-s", vo.lag_s, "First-order lag time constant of the spool [s]")
      ->check(finite_in(0.0, max_seconds, false, "s"));
  vs->add_flag("--lockstep", vo.lockstep,
               "Acknowledge lockstep datagrams and log their simulation time (run.mode = "
               "\"lockstep\")");
  vs->add_option("--duration", vo.duration, "Exit after S seconds (default: until SIGINT/SIGTERM)")
      ->check(finite_in(0.0, max_seconds, true, "s"));
  for (auto* sub : {js, vs}) {
    auth_options& a = sub == js ? jo.auth : vo.auth;
    sub->add_option("--key", a.key_file,
                    "Key file of the authenticated protocol (the driver's key_file; mode 0600)");
    sub->add_option("--auth", a.auth,
                    "none: speak the unauthenticated version 1 instead (no --key)");
  }
  std::string key_path;
  auto* kg = app.add_subcommand("keygen", "Write a new random 256-bit key file (mode 0600)");
  kg->add_option("FILE", key_path, "Key file to create (never overwritten)")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is 0; every command-line error is bad input (CLI11's own codes are 100+).
    return app.exit(e) == 0 ? 0 : 2;
  }
  install_signals();
  if (kg->parsed()) {
    write_key_file(key_path);
    std::fprintf(stderr, "cosim-device: wrote a new 256-bit key to %s (mode 0600)\n",
                 key_path.c_str());
    return 0;
  }
  if (js->parsed()) {
    if (!jo.replay.empty()) {
      jo.manoeuvre = jo.replay;
      jo.lockstep = true;
    } else if (manoeuvre_opt->count() == 0) {
      die("joystick: --manoeuvre or --replay is required");
    }
    if (jo.lockstep && jo.sync) die("--sync: a lockstep joystick follows the ticks, not a clock");
    if (jo.lockstep && (jo.loss > 0.0 || jo.garbage > 0.0 || jo.jitter_us > 0))
      die("--loss, --garbage and --jitter-us act on wall-clock replay only (in lockstep every "
          "datagram belongs to one macro step; --silent-after makes a device that stops)");
    resolve_auth(jo.auth);
    return run_joystick(jo);
  }
  if (vo.lockstep && !vo.feedback_to.empty())
    die("valve --lockstep: --feedback-to is not available in lockstep (feedback would be a "
        "second input per step)");
  resolve_auth(vo.auth);
  return run_valve(vo);
} catch (const std::exception& e) {
  // Bad input or I/O errors of a run, and failures setting up the command line itself.
  std::fprintf(stderr, "cosim-device: error: %s\n", e.what());
  return 2;
}
