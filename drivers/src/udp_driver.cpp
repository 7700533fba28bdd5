#include "cosim/drivers/udp_driver.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "cosim/runtime/error.hpp"
#include "cosim/runtime/fail_safe.hpp"
#include "cosim/runtime/json_writer.hpp"

namespace cosim::drivers {

namespace {

sockaddr_in parse_or_fail(const std::string& text, const std::string& key) {
  sockaddr_in a{};
  COSIM_INPUT_CHECK(parse_udp_address(text, a), errc::config_value,
                    key + " = \"" + text + "\": not an IPv4 \"host:port\" address");
  return a;
}

bool same_endpoint(const sockaddr_in& a, const sockaddr_in& b) noexcept {
  return a.sin_addr.s_addr == b.sin_addr.s_addr && a.sin_port == b.sin_port;
}

std::int64_t seconds_to_ns(double s) noexcept {
  return static_cast<std::int64_t>(std::llround(s * 1e9));
}

}  // namespace

// ---------------------------------------------------------------------------- udp_driver

udp_driver::udp_driver(driver_config cfg) : subsystem(cfg.name), cfg_(std::move(cfg)) {
  const std::string base = "drivers." + cfg_.name;
  if (cfg_.auth != driver_auth::none) prepare_key(cfg_.key);
  COSIM_INPUT_CHECK(!cfg_.channels.empty() && cfg_.channels.size() <= max_channels,
                    errc::config_value, base + ".channels: between 1 and 16 channels are required");
  const sockaddr_in bind_addr = parse_or_fail(cfg_.bind, base + ".bind");
  backend_ =
      make_backend(cfg_.backend, bind_addr, base + (cfg_.backend == "asio" ? ".bind" : ".backend"));
}

udp_driver::~udp_driver() {
  stop_io();
}

void udp_driver::do_start(stop_source& stop) {
  stop_ = &stop;
  if (io_) return;
  // A crash (or the operator's signal) reaches the bench through the process-wide list.
  if (cfg_.direction == driver_direction::output)
    (void)fail_safe::add(
        [](void* self) noexcept { static_cast<udp_driver*>(self)->trip_fail_safe(); }, this);
  if (cfg_.lockstep) {
    // The model thread does the I/O (lockstep_receive); an exchange that failed before the
    // start (the one at t0) stops the run now.
    if (lockstep_failed_) stop.raise(stop_cause::lockstep_device, 0, lockstep_text_.data());
    return;
  }
  rt_thread_config tc;
  tc.name = "io-" + cfg_.name;
  tc.cpu = cfg_.cpu;
  tc.priority = cfg_.priority;
  io_ = std::make_unique<rt_thread>(tc, [this] { backend_->run(*this); });
}

void udp_driver::stop_io() noexcept {
  if (!io_) return;
  backend_->stop();
  io_.reset();  // joins
}

void udp_driver::do_stop(bool fail_safe) noexcept {
  cosim::fail_safe::remove(this);
  stop_io();
  stop_ = nullptr;  // the run's source ends with the run
  // A completed run's last values go out too (lockstep: are acknowledged; a stopping
  // lockstep run sends its safe values at once instead).
  if (!(fail_safe && cfg_.lockstep)) send_queued();
  if (fail_safe) trip_fail_safe();
}

udp_driver::lockstep_wait udp_driver::lockstep_receive(std::int64_t deadline_ns) noexcept {
  std::array<std::byte, 2048> buf{};
  const int fd = backend_->socket_fd();
  for (;;) {
    if (stop_ != nullptr && stop_->stop_requested()) return lockstep_wait::stopped;
    const std::int64_t left = deadline_ns - monotonic_now_ns();
    if (left <= 0) return lockstep_wait::timeout;
    // Slices of at most 50 ms: a stop raised on another thread (the operator's) ends the wait.
    const std::int64_t slice = std::min<std::int64_t>(left, 50'000'000);
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(slice / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(slice % 1'000'000'000);
    pollfd p{fd, POLLIN, 0};
    if (::ppoll(&p, 1, &ts, nullptr) <= 0) continue;
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const ssize_t n = ::recvfrom(fd, buf.data(), buf.size(), MSG_DONTWAIT,
                                 reinterpret_cast<sockaddr*>(&from), &len);
    if (n < 0) continue;
    on_datagram(std::span<const std::byte>(buf.data(), static_cast<std::size_t>(n)), from,
                monotonic_now_ns());
    return lockstep_wait::received;
  }
}

void udp_driver::lockstep_fail() noexcept {
  if (lockstep_failed_) return;
  lockstep_failed_ = true;
  if (stop_ != nullptr) stop_->raise(stop_cause::lockstep_device, 0, lockstep_text_.data());
}

std::int64_t udp_driver::lockstep_timeout_ns() const noexcept {
  return seconds_to_ns(cfg_.lockstep_timeout);
}

driver_stats udp_driver::stats() const {
  driver_stats s;
  s.name = name();
  s.direction = cfg_.direction == driver_direction::input ? "input" : "output";
  s.backend = cfg_.backend;
  s.sent = sent_.load();
  s.auth = cfg_.auth == driver_auth::none ? "none" : "hmac-sha512-256";
  s.kernel_drops = backend_->kernel_drops();
  return s;
}

void udp_driver::write_statistics(json_writer& j) const {
  const driver_stats s = stats();
  j.begin_object();
  j.key("name").value(s.name);
  j.key("direction").value(s.direction);
  j.key("backend").value(s.backend);
  j.key("received").value(static_cast<std::int64_t>(s.received));
  j.key("sent").value(static_cast<std::int64_t>(s.sent));
  j.key("lost").value(static_cast<std::int64_t>(s.lost));
  j.key("duplicates").value(static_cast<std::int64_t>(s.duplicates));
  j.key("out_of_order").value(static_cast<std::int64_t>(s.out_of_order));
  j.key("malformed").value(static_cast<std::int64_t>(s.malformed));
  j.key("wrong_channel_count").value(static_cast<std::int64_t>(s.wrong_channel_count));
  j.key("rejected_source").value(static_cast<std::int64_t>(s.rejected_source));
  j.key("clamped").value(static_cast<std::int64_t>(s.clamped));
  j.key("stale_events").value(static_cast<std::int64_t>(s.stale_events));
  if (s.direction == "input")
    j.key("sender_restarts").value(static_cast<std::int64_t>(s.sender_restarts));
  j.key("auth").value(s.auth);
  j.key("bad_mac").value(static_cast<std::int64_t>(s.bad_mac));
  if (s.direction == "input")
    j.key("stale_session").value(static_cast<std::int64_t>(s.stale_session));
  else
    j.key("unsent").value(static_cast<std::int64_t>(s.unsent));
  j.key("kernel_drops").value(static_cast<std::int64_t>(s.kernel_drops));
  if (s.silenced_at_s >= 0.0) {
    j.key("silenced_at_s").value(s.silenced_at_s);
    j.key("dropped_by_event").value(static_cast<std::int64_t>(s.dropped_by_event));
  }
  j.end_object();
}

// ---------------------------------------------------------------------- udp_input_driver

udp_input_driver::udp_input_driver(driver_config cfg) : udp_driver(std::move(cfg)) {
  const std::string base = "drivers." + cfg_.name;
  COSIM_INPUT_CHECK(!cfg_.peers.empty(), errc::config_value,
                    base +
                        ".peers: an input driver needs an allowlist of sender addresses, e.g. "
                        "peers = [\"127.0.0.1:5601\"]");
  for (const auto& p : cfg_.peers) peers_.push_back(parse_or_fail(p, base + ".peers"));
  stale_text_ = "no fresh input from driver '" + cfg_.name + "' within " + base +
                ".stop_after = " + format_double(cfg_.stop_after) + " s";
  silent_text_ = "no datagram at all from driver '" + cfg_.name + "' within " +
                 format_double(std::max(cfg_.startup_timeout, cfg_.stop_after)) + " s (" + base +
                 ".startup_timeout, at least its stop_after)";
  trackers_.resize(peers_.size());
  run_of_old_.assign(peers_.size(), 0);
  receivers_.resize(peers_.size());
  last_ask_ns_.assign(peers_.size(), 0);
  if (cfg_.silence_at >= 0.0) silence_ns_ = seconds_to_ns(cfg_.silence_at);
  for (std::size_t i = 0; i < cfg_.channels.size(); ++i) {
    add_output({cfg_.channels[i].name, cfg_.channels[i].unit, port_role::signal});
    current_.v[i] = cfg_.channels[i].initial;
  }
  for (std::size_t i = 0; i < cfg_.channels.size(); ++i) set_output(i, current_.v[i]);
}

void udp_input_driver::on_datagram(std::span<const std::byte> data, const sockaddr_in& from,
                                   std::int64_t arrival_ns) noexcept {
  // 1. Allowlist first: a foreign sender costs no decoding (it is no authentication: any
  // host on the segment can forge a source address).
  std::size_t peer = peers_.size();
  for (std::size_t i = 0; i < peers_.size(); ++i)
    if (same_endpoint(peers_[i], from)) peer = i;
  if (peer == peers_.size()) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (cfg_.auth == driver_auth::none)
    on_datagram_v1(data, peer, arrival_ns);
  else
    on_datagram_auth(data, peer, arrival_ns);
}

void udp_input_driver::publish_sequence_counters() noexcept {
  std::uint64_t l = 0, d = 0, o = 0, r = 0;
  for (const auto& t : trackers_) {
    l += t.lost();
    d += t.duplicates();
    o += t.out_of_order();
    r += t.restarts();
  }
  for (const auto& a : receivers_) {
    l += a.lost();
    d += a.duplicates();
    o += a.out_of_order();
    r += a.restarts();
  }
  lost_.store(l, std::memory_order_relaxed);
  dup_.store(d, std::memory_order_relaxed);
  ooo_.store(o, std::memory_order_relaxed);
  restarts_.store(r, std::memory_order_relaxed);
}

void udp_input_driver::on_datagram_v1(std::span<const std::byte> data, std::size_t peer,
                                      std::int64_t arrival_ns) noexcept {
  // 2. Framing: size, magic, version, type, length, CRC.
  bench_message m{};
  if (decode(data, m) != decode_status::ok) {
    malformed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // 3. Sequence numbers, of every datagram that decodes (a heartbeat or a rejected command
  // used a number too: PROTOCOL.md "+1 per datagram", so it is no gap); only the newest is
  // used.
  sequence_tracker& tr = trackers_[peer];
  sequence_class c = tr.observe(m.sequence);
  if (c == sequence_class::out_of_order && ++run_of_old_[peer] >= 16) {
    // A run of "old" datagrams: the sender restarted its numbering. The counters stay.
    // Unauthenticated version 1 only: anyone can send such a run.
    c = tr.restart_at(m.sequence);
  }
  publish_sequence_counters();
  if (c == sequence_class::fresh) run_of_old_[peer] = 0;
  const auto type = static_cast<std::uint8_t>(m.type);
  if (cfg_.lockstep && !lockstep_accept(type, m.flags, m.timestamp_ns)) return;
  // Lockstep: the age of a value is measured in simulation time (the step it belongs to).
  take_values(type, m.channel_count, m.channels, c == sequence_class::fresh,
              cfg_.lockstep ? static_cast<std::int64_t>(m.timestamp_ns) : arrival_ns);
}

void udp_input_driver::send_auth(const auth_message& m, const sockaddr_in& to) noexcept {
  std::array<std::byte, max_auth_datagram_size> buf{};
  const std::size_t n = encode_auth(m, cfg_.key, buf);
  if (n != 0 && backend_->send_to(std::span<const std::byte>(buf.data(), n), to))
    sent_.fetch_add(1, std::memory_order_relaxed);
}

void udp_input_driver::on_datagram_auth(std::span<const std::byte> data, std::size_t peer,
                                        std::int64_t arrival_ns) noexcept {
  // 2. Framing and CRC, then the tag: nothing of a datagram is believed before it.
  auth_message m{};
  const auth_status st = decode_auth(data, cfg_.key, m);
  if (st == auth_status::malformed) {
    malformed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (st == auth_status::bad_mac) {
    bad_mac_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // 3. Session and strict replay window (PROTOCOL.md "Sessions").
  auth_receiver& rx = receivers_[peer];
  const auth_receiver::verdict v = rx.observe(m);
  publish_sequence_counters();
  switch (v) {
    case auth_receiver::verdict::hello:
      send_auth(rx.challenge(m.nonce, heartbeat_seq_++), peers_[peer]);
      return;
    case auth_receiver::verdict::refused:
      malformed_.fetch_add(1, std::memory_order_relaxed);
      return;
    case auth_receiver::verdict::wrong_session: {
      stale_session_.fetch_add(1, std::memory_order_relaxed);
      // A sender still using a session this driver never gave (or no longer takes) is asked
      // for a hello, at most every announce period: a replay only costs it a round trip.
      if (arrival_ns - last_ask_ns_[peer] >= announce_period_ns) {
        last_ask_ns_[peer] = arrival_ns;
        auth_message ask{};
        ask.type = challenge_type;
        ask.sequence = heartbeat_seq_++;
        send_auth(ask, peers_[peer]);
      }
      return;
    }
    case auth_receiver::verdict::old:
    case auth_receiver::verdict::fresh:
    case auth_receiver::verdict::restart:
      break;
  }
  const bool fresh = v != auth_receiver::verdict::old;
  if (cfg_.lockstep && !lockstep_accept(m.type, m.flags, m.timestamp_ns)) return;
  take_values(m.type, m.channel_count, m.channels, fresh,
              cfg_.lockstep ? static_cast<std::int64_t>(m.timestamp_ns) : arrival_ns);
}

void udp_input_driver::take_values(std::uint8_t type, std::uint16_t n,
                                   const std::array<double, max_channels>& ch, bool fresh,
                                   std::int64_t arrival_ns) noexcept {
  // The expected type and exactly the configured channel count: a sender with more or fewer
  // channels is configured for another mapping, so none of its channels can be trusted.
  if (type == static_cast<std::uint8_t>(message_type::heartbeat)) return;  // liveness only
  if (type != static_cast<std::uint8_t>(cfg_.type)) {
    malformed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (n != cfg_.channels.size()) {
    wrong_count_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  for (std::size_t i = 0; i < cfg_.channels.size(); ++i) {
    if (!std::isfinite(ch[i])) {
      malformed_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  if (!fresh) return;
  // 4. Range: clamp into [min, max].
  values v;
  v.arrival_ns = arrival_ns;
  std::uint64_t clamped = 0;
  for (std::size_t i = 0; i < cfg_.channels.size(); ++i) {
    const auto& c = cfg_.channels[i];
    const double x = std::clamp(ch[i], c.min, c.max);
    if (x != ch[i]) ++clamped;
    v.v[i] = x;
  }
  if (clamped != 0) clamped_.fetch_add(clamped, std::memory_order_relaxed);
  slot_.write(v);
  received_.fetch_add(1, std::memory_order_relaxed);
}

void udp_input_driver::do_update_outputs(time_point t) noexcept {
  // Lockstep: ages in simulation time, and the values of step t are fetched here.
  const std::int64_t now = cfg_.lockstep ? t.time_since_epoch().count() : monotonic_now_ns();
  if (first_update_ns_ == 0) first_update_ns_ = cfg_.lockstep ? now - 1 : now;
  if (cfg_.lockstep) lockstep_exchange(now);
  const std::int64_t t_ns = t.time_since_epoch().count();
  const bool faulted =
      silence_ns_ >= 0 && t_ns >= silence_ns_ &&
      (cfg_.silence_count < 0 || dropped_by_event_.load(std::memory_order_relaxed) <
                                     static_cast<std::uint64_t>(cfg_.silence_count));
  if (faulted) {
    // [[events]] silence / drop: the device is heard (and, in lockstep, kept in step) but
    // the new values are discarded (held: the stale-input logic below sees a silent device).
    if (silenced_at_ns_.load(std::memory_order_relaxed) < 0)
      silenced_at_ns_.store(t_ns, std::memory_order_relaxed);
    values dropped{};
    if (slot_.read_if_newer(dropped, version_))
      dropped_by_event_.fetch_add(1, std::memory_order_relaxed);
  } else {
    slot_.read_if_newer(current_, version_);
  }
  if (!cfg_.lockstep && version_ == 0 &&
      (last_announce_ns_ == 0 || now - last_announce_ns_ >= announce_period_ns)) {
    last_announce_ns_ = now;
    announce_.store(true, std::memory_order_release);
    backend_->wake();
  }
  std::int64_t age = 0;
  std::int64_t stop_limit = seconds_to_ns(cfg_.stop_after);
  if (version_ == 0) {
    age = now - first_update_ns_;
    stop_limit = seconds_to_ns(std::max(cfg_.startup_timeout, cfg_.stop_after));
  } else {
    age = now - current_.arrival_ns;
    const bool stale = age > seconds_to_ns(cfg_.stale_after);
    if (stale && !stale_) stale_events_.fetch_add(1, std::memory_order_relaxed);
    stale_ = stale;
  }
  if (age > stop_limit && !stale_stop_.load(std::memory_order_relaxed)) {
    stale_stop_.store(true, std::memory_order_relaxed);
    if (stop_ != nullptr)
      stop_->raise(stop_cause::stale_input, stale_input_message,
                   version_ == 0 ? silent_text_.c_str() : stale_text_.c_str());
  }
  // Stale: the last value is held (current_ is unchanged).
  for (std::size_t i = 0; i < cfg_.channels.size(); ++i) set_output(i, current_.v[i]);
}

bool udp_input_driver::set_default_start(std::size_t channel, double value) noexcept {
  if (channel >= cfg_.channels.size()) return false;
  if (cfg_.channels[channel].initial_set) return true;  // the scenario's value stands
  cfg_.channels[channel].initial = value;
  current_.v[channel] = value;
  set_output(channel, value);
  return true;
}

bool udp_input_driver::lockstep_accept(std::uint8_t type, std::uint16_t flags,
                                       std::uint64_t timestamp_ns) noexcept {
  if ((flags & flag_lockstep) == 0) {
    // A device on wall-clock time: its values belong to no macro step.
    lockstep_refused_ = true;
    return false;
  }
  if (type == static_cast<std::uint8_t>(message_type::heartbeat)) return true;
  // An answer to an earlier tick (sent again while the device was starting): not this step's.
  return static_cast<std::int64_t>(timestamp_ns) == lockstep_expect_ns_;
}

void udp_input_driver::send_ticks(std::int64_t t_ns) noexcept {
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    if (cfg_.auth != driver_auth::none) {
      // A tick carries the session the device was given (a tick of another run or of an
      // earlier life of the device is not answered); a device without one says hello first.
      auth_message m{};
      m.sequence = heartbeat_seq_++;
      m.session = receivers_[i].offered_session();
      if (m.session == 0) {
        m.type = challenge_type;  // nonce 0: "say hello"
      } else {
        m.type = static_cast<std::uint8_t>(message_type::heartbeat);
        m.flags = flag_lockstep;
        m.timestamp_ns = static_cast<std::uint64_t>(t_ns);
      }
      send_auth(m, peers_[i]);
      continue;
    }
    bench_message m{};
    m.type = message_type::heartbeat;
    m.flags = flag_lockstep;
    m.timestamp_ns = static_cast<std::uint64_t>(t_ns);
    m.sequence = heartbeat_seq_++;
    std::array<std::byte, max_datagram_size> buf{};
    const std::size_t n = encode(m, buf);
    if (n != 0 && backend_->send_to(std::span<const std::byte>(buf.data(), n), peers_[i]))
      sent_.fetch_add(1, std::memory_order_relaxed);
  }
}

void udp_input_driver::lockstep_exchange(std::int64_t t_ns) noexcept {
  if (lockstep_failed()) return;
  lockstep_expect_ns_ = t_ns;
  const double t_s = static_cast<double>(t_ns) * 1e-9;
  // Until the device's first answer the tick is repeated (a device that starts late, a tick
  // lost, the authenticated handshake), for up to startup_timeout; after it one tick per
  // step and lockstep_timeout.
  const bool first = version_ == 0;
  const std::int64_t start = monotonic_now_ns();
  const std::int64_t deadline =
      start + (first ? std::max(seconds_to_ns(cfg_.startup_timeout), lockstep_timeout_ns())
                     : lockstep_timeout_ns());
  std::int64_t next_tick = start;
  std::uint64_t seen = version_;
  for (;;) {
    const std::int64_t now = monotonic_now_ns();
    if (now >= next_tick) {
      send_ticks(t_ns);
      next_tick = first ? now + announce_period_ns : deadline;
    }
    const lockstep_wait w = lockstep_receive(std::min(deadline, next_tick));
    if (lockstep_refused_) {
      std::snprintf(lockstep_text().data(), lockstep_text().size(),
                    "driver '%s': a peer answered without the lockstep flag: it runs on wall-clock "
                    "time and cannot do run.mode = \"lockstep\" (drivers/PROTOCOL.md, Lockstep; "
                    "start it in lockstep mode, e.g. cosim-device joystick --lockstep)",
                    cfg_.name.c_str());
      lockstep_fail();
      return;
    }
    if (w == lockstep_wait::stopped) return;
    if (w == lockstep_wait::timeout && monotonic_now_ns() >= deadline) {
      std::snprintf(
          lockstep_text().data(), lockstep_text().size(),
          "driver '%s': no answer from its device for the macro step at t = %.9g s "
          "within drivers.%s.%s = %.9g s (device stopped, not in lockstep mode, or on "
          "another key)",
          cfg_.name.c_str(), t_s, cfg_.name.c_str(), first ? "startup_timeout" : "lockstep_timeout",
          first ? std::max(cfg_.startup_timeout, cfg_.lockstep_timeout) : cfg_.lockstep_timeout);
      lockstep_fail();
      return;
    }
    values v{};
    std::uint64_t ver = seen;
    slot_.read_if_newer(v, ver);
    if (ver != seen) {
      seen = ver;
      if (v.arrival_ns == t_ns) return;  // this step's values are in the slot
    }
  }
}

void udp_input_driver::on_wake() noexcept {
  if (!announce_.exchange(false, std::memory_order_acq_rel)) return;
  if (cfg_.auth != driver_auth::none) {
    // Version 2 announces the start with a challenge without nonce: "say hello". The
    // session comes with the answer to the hello, so a device never starts under a session
    // that a recording could hold.
    for (const auto& p : peers_) {
      auth_message ask{};
      ask.type = challenge_type;
      ask.sequence = heartbeat_seq_++;
      ask.timestamp_ns = static_cast<std::uint64_t>(monotonic_now_ns());
      send_auth(ask, p);
    }
    return;
  }
  bench_message m{};
  m.type = message_type::heartbeat;
  m.timestamp_ns = static_cast<std::uint64_t>(monotonic_now_ns());
  std::array<std::byte, max_datagram_size> buf{};
  for (const auto& p : peers_) {
    m.sequence = heartbeat_seq_++;
    const std::size_t n = encode(m, buf);
    if (n != 0 && backend_->send_to(std::span<const std::byte>(buf.data(), n), p))
      sent_.fetch_add(1, std::memory_order_relaxed);
  }
}

driver_stats udp_input_driver::stats() const {
  driver_stats s = udp_driver::stats();
  s.received = received_.load();
  s.lost = lost_.load();
  s.sender_restarts = restarts_.load();
  s.duplicates = dup_.load();
  s.out_of_order = ooo_.load();
  s.malformed = malformed_.load();
  s.wrong_channel_count = wrong_count_.load();
  s.rejected_source = rejected_.load();
  s.clamped = clamped_.load();
  s.stale_events = stale_events_.load();
  s.stale_stop = stale_stop_.load();
  s.bad_mac = bad_mac_.load();
  s.stale_session = stale_session_.load();
  const std::int64_t silenced = silenced_at_ns_.load();
  if (silenced >= 0) s.silenced_at_s = static_cast<double>(silenced) * 1e-9;
  s.dropped_by_event = dropped_by_event_.load();
  return s;
}

// --------------------------------------------------------------------- udp_output_driver

udp_output_driver::udp_output_driver(driver_config cfg) : udp_driver(std::move(cfg)) {
  const std::string base = "drivers." + cfg_.name;
  COSIM_INPUT_CHECK(!cfg_.to.empty(), errc::config_value,
                    base + ".to: an output driver needs a destination");
  to_ = parse_or_fail(cfg_.to, base + ".to");
  for (const auto& ch : cfg_.channels) add_input({ch.name, ch.unit, port_role::signal});
}

void udp_output_driver::do_update_outputs(time_point t) noexcept {
  packet p;
  p.t_ns = t.time_since_epoch().count();
  for (std::size_t i = 0; i < cfg_.channels.size(); ++i) {
    const double x = in(i, t);
    p.v[i] = std::isfinite(x) ? std::clamp(x, cfg_.channels[i].min, cfg_.channels[i].max)
                              : cfg_.channels[i].safe_value;
  }
  if (cfg_.lockstep) {
    lockstep_exchange(p);
    return;
  }
  if (!ring_.try_push(p)) ring_drops_.fetch_add(1, std::memory_order_relaxed);
  backend_->wake();
}

void udp_output_driver::stamp(std::uint16_t& flags, std::uint64_t& timestamp_ns) const noexcept {
  if (cfg_.lockstep) {
    // The step's simulation time; the safe values of a stop carry the last step's.
    flags = flag_lockstep;
    timestamp_ns = static_cast<std::uint64_t>(lockstep_t_ns_.load(std::memory_order_relaxed));
  } else {
    timestamp_ns = static_cast<std::uint64_t>(monotonic_now_ns());
  }
}

void udp_output_driver::send_values(const std::array<double, max_channels>& v) noexcept {
  if (cfg_.auth != driver_auth::none) {
    // Any thread, a signal handler too: encode_auth only computes (no lock, no allocation).
    const std::uint64_t session = session_.load(std::memory_order_acquire);
    if (session == 0) {
      unsent_.fetch_add(1, std::memory_order_relaxed);  // the device would drop it
      return;
    }
    auth_message a{};
    a.type = static_cast<std::uint8_t>(cfg_.type);
    a.sequence = sequence_.fetch_add(1, std::memory_order_relaxed);
    stamp(a.flags, a.timestamp_ns);
    a.session = session;
    a.channel_count = static_cast<std::uint16_t>(cfg_.channels.size());
    a.channels = v;
    std::array<std::byte, max_auth_datagram_size> buf{};
    const std::size_t n = encode_auth(a, cfg_.key, buf);
    if (n != 0 && backend_->send_to(std::span<const std::byte>(buf.data(), n), to_))
      sent_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  bench_message m{};
  m.type = cfg_.type;
  m.sequence = sequence_.fetch_add(1, std::memory_order_relaxed);
  stamp(m.flags, m.timestamp_ns);
  m.channel_count = static_cast<std::uint16_t>(cfg_.channels.size());
  m.channels = v;
  std::array<std::byte, max_datagram_size> buf{};
  const std::size_t n = encode(m, buf);
  if (n != 0 && backend_->send_to(std::span<const std::byte>(buf.data(), n), to_))
    sent_.fetch_add(1, std::memory_order_relaxed);
}

void udp_output_driver::say_hello_if_due() noexcept {
  if (cfg_.auth == driver_auth::none) return;
  const std::int64_t now = monotonic_now_ns();
  if (!sender_.hello_due(now, 20'000'000)) return;
  const auth_message h = sender_.hello(now, sequence_.fetch_add(1, std::memory_order_relaxed));
  std::array<std::byte, max_auth_datagram_size> buf{};
  const std::size_t n = encode_auth(h, cfg_.key, buf);
  if (n != 0 && backend_->send_to(std::span<const std::byte>(buf.data(), n), to_))
    sent_.fetch_add(1, std::memory_order_relaxed);
}

void udp_output_driver::on_datagram(std::span<const std::byte> data, const sockaddr_in& from,
                                    std::int64_t /*arrival_ns*/) noexcept {
  // Only the device's challenges (authenticated) and lockstep acknowledgements come back,
  // from the address commands go to.
  if (!same_endpoint(from, to_)) return;
  const auto lockstep_ack = [&](std::uint8_t type, std::uint16_t flags, std::uint64_t t) {
    return cfg_.lockstep && type == static_cast<std::uint8_t>(message_type::heartbeat) &&
           (flags & flag_lockstep) != 0 &&
           static_cast<std::int64_t>(t) == lockstep_t_ns_.load(std::memory_order_relaxed);
  };
  if (cfg_.auth == driver_auth::none) {
    bench_message m{};
    if (decode(data, m) == decode_status::ok &&
        lockstep_ack(static_cast<std::uint8_t>(m.type), m.flags, m.timestamp_ns))
      acked_ = true;
    return;
  }
  auth_message c{};
  const auth_status st = decode_auth(data, cfg_.key, c);
  if (st == auth_status::bad_mac) bad_mac_.fetch_add(1, std::memory_order_relaxed);
  if (st != auth_status::ok) return;
  if (c.type == challenge_type) {
    if (sender_.on_challenge(c)) session_.store(sender_.session(), std::memory_order_release);
    say_hello_if_due();  // a request for a hello is answered at once
    return;
  }
  // An acknowledgement counts only under this run's session (not a replay of another run's).
  if (c.session == session_.load(std::memory_order_relaxed) &&
      lockstep_ack(c.type, c.flags, c.timestamp_ns))
    acked_ = true;
}

void udp_output_driver::lockstep_exchange(const packet& p) noexcept {
  if (lockstep_failed() || tripped_.load(std::memory_order_acquire)) return;
  if (cfg_.auth != driver_auth::none && session_.load(std::memory_order_relaxed) == 0 &&
      !lockstep_await_session())
    return;
  // The previous step's acknowledgement is awaited only now: the device logs step n while
  // the model thread computes step n + 1 (one datagram in flight, never more).
  if (!lockstep_await_ack()) return;
  lockstep_t_ns_.store(p.t_ns, std::memory_order_relaxed);
  acked_ = false;
  ack_pending_ = true;
  send_values(p.v);
}

bool udp_output_driver::lockstep_await_session() noexcept {
  const std::int64_t deadline =
      monotonic_now_ns() + std::max(seconds_to_ns(cfg_.startup_timeout), lockstep_timeout_ns());
  while (session_.load(std::memory_order_relaxed) == 0) {
    say_hello_if_due();
    const lockstep_wait w = lockstep_receive(std::min(deadline, monotonic_now_ns() + 20'000'000));
    if (w == lockstep_wait::stopped) return false;
    if (w == lockstep_wait::timeout && monotonic_now_ns() >= deadline) {
      std::snprintf(lockstep_text().data(), lockstep_text().size(),
                    "driver '%s': its device (%s) gave no session within drivers.%s."
                    "startup_timeout = %.9g s (device not started, or on another key)",
                    cfg_.name.c_str(), cfg_.to.c_str(), cfg_.name.c_str(),
                    std::max(cfg_.startup_timeout, cfg_.lockstep_timeout));
      lockstep_fail();
      return false;
    }
  }
  return true;
}

bool udp_output_driver::lockstep_await_ack() noexcept {
  if (!ack_pending_) return true;
  const std::int64_t deadline = monotonic_now_ns() + lockstep_timeout_ns();
  while (!acked_) {
    const lockstep_wait w = lockstep_receive(deadline);
    if (w == lockstep_wait::stopped) break;  // the run is stopping: no more waiting
    if (w == lockstep_wait::timeout) {
      std::snprintf(lockstep_text().data(), lockstep_text().size(),
                    "driver '%s': its device (%s) did not acknowledge the macro step at t = "
                    "%.9g s within drivers.%s.lockstep_timeout = %.9g s (device stopped, or one "
                    "that cannot do lockstep: drivers/PROTOCOL.md, Lockstep)",
                    cfg_.name.c_str(), cfg_.to.c_str(),
                    static_cast<double>(lockstep_t_ns_.load(std::memory_order_relaxed)) * 1e-9,
                    cfg_.name.c_str(), cfg_.lockstep_timeout);
      lockstep_fail();
      return false;
    }
  }
  ack_pending_ = false;
  return true;
}

void udp_output_driver::on_wake() noexcept {
  say_hello_if_due();
  packet p;
  // acquire: pairs with the trip; after it only the safe values may reach the device.
  while (ring_.try_pop(p))
    if (!tripped_.load(std::memory_order_acquire)) send_values(p.v);
}

void udp_output_driver::send_queued() noexcept {
  // Lockstep: a completed run ends once the device acknowledged its last step.
  if (cfg_.lockstep) {
    if (!tripped_.load(std::memory_order_acquire)) (void)lockstep_await_ack();
    return;
  }
  on_wake();
}

void udp_output_driver::do_trip_fail_safe() noexcept {
  if (tripped_.exchange(true, std::memory_order_acq_rel)) return;
  std::array<double, max_channels> v{};
  for (std::size_t i = 0; i < cfg_.channels.size(); ++i) v[i] = cfg_.channels[i].safe_value;
  for (int k = 0; k < cfg_.safe_repeats; ++k) send_values(v);
}

driver_stats udp_output_driver::stats() const {
  driver_stats s = udp_driver::stats();
  s.bad_mac = bad_mac_.load();
  s.unsent = unsent_.load();
  return s;
}

// ------------------------------------------------------------------------------ factory

std::unique_ptr<udp_driver> make_driver(const driver_config& cfg) {
  if (cfg.direction == driver_direction::input) return std::make_unique<udp_input_driver>(cfg);
  return std::make_unique<udp_output_driver>(cfg);
}

}  // namespace cosim::drivers
