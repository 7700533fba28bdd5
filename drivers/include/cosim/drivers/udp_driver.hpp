#pragma once
// UDP driver subsystems (user guide: docs/drivers.md; wire format: drivers/PROTOCOL.md).
//
//  - udp_input_driver: a remote device's channels appear as this subsystem's outputs.
//    The I/O thread receives, applies hygiene (allowlist, decode status, sequence
//    numbers, clamping) and writes the newest values into a latest_value slot; the
//    subsystem's update_outputs (real-time thread) only reads that slot, never a socket.
//    No fresh packet for stale_after: the last value is held and a stale event counted;
//    for stop_after: the run's stop_source is raised (stop reason stale_input).
//  - udp_output_driver: its inputs are sent once per macro step. update_outputs pushes the
//    channel values into an SPSC ring and wakes the I/O thread, which encodes and sends them.
//    A fail-safe stop sends every channel's safe_value safe_repeats times, at once from the
//    thread that trips it (trip_fail_safe: the watchdog, the recorder, a signal handler),
//    and nothing but safe values after that: the stopping run never waits for a model.
//
// Lockstep (driver_config::lockstep, run.mode = "lockstep"; PROTOCOL.md "Lockstep"): no I/O
// thread. The model thread exchanges one datagram pair per macro step on the socket: the
// input driver sends a lockstep tick stamped with the step's simulation time and waits for
// the device's values for that time; the output driver sends its values so stamped and waits
// for the device's acknowledgement. No answer within lockstep_timeout, or a device that
// answers without the lockstep flag, stops the run (stop_cause::lockstep_device).
//
// Drivers are ordinary subsystems: every executor starts their I/O thread through
// subsystem::start() and ends it through subsystem::stop(fail_safe); their counters reach
// summary.json through subsystem::write_statistics().
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cosim/drivers/bench_auth.hpp"
#include "cosim/drivers/bench_protocol.hpp"
#include "cosim/drivers/driver_config.hpp"
#include "cosim/drivers/sequence_tracker.hpp"
#include "cosim/drivers/udp_backend.hpp"
#include "cosim/runtime/latest_value.hpp"
#include "cosim/runtime/rt_thread.hpp"
#include "cosim/runtime/spsc_ring.hpp"
#include "cosim/runtime/stop_source.hpp"
#include "cosim/runtime/subsystem.hpp"

namespace cosim::drivers {

struct driver_stats {
  std::string name;
  std::string direction;
  std::string backend;
  std::uint64_t received = 0;  // accepted (fresh) datagrams
  std::uint64_t sent = 0;
  std::uint64_t lost = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t malformed = 0;
  /// Valid datagrams of the configured type whose channel count is not the configured one
  /// (PROTOCOL.md, "Receiving side"): rejected, neither sequenced nor used.
  std::uint64_t wrong_channel_count = 0;
  std::uint64_t rejected_source = 0;
  std::uint64_t clamped = 0;  // channel values clamped into [min, max]
  std::uint64_t stale_events = 0;
  std::uint64_t sender_restarts = 0;  // input: sender restarts detected (counters kept)
  /// Authenticated protocol (PROTOCOL.md): well-framed datagrams whose tag is wrong, and
  /// authenticated ones under no live session (replays of another session).
  std::uint64_t bad_mac = 0;
  std::uint64_t stale_session = 0;
  std::uint64_t kernel_drops = 0;  // dropped by the kernel before the driver saw them
  std::uint64_t unsent = 0;        // output: values not sent, the device gave no session yet
  std::string auth;                // "hmac-sha512-256" or "none"
  bool stale_stop = false;
  double silenced_at_s = -1.0;  // input: when an [[events]] silence/drop fault fired (< 0: never)
  std::uint64_t dropped_by_event = 0;  // input: new values a "drop" / "silence" event discarded
};

/// Newest channel values of an input driver, with their CLOCK_MONOTONIC arrival time.
struct input_values {
  std::array<double, max_channels> v{};
  std::int64_t arrival_ns = 0;
};
/// One macro step's channel values queued for sending by an output driver.
struct output_values {
  std::array<double, max_channels> v{};
  std::int64_t t_ns = 0;
};

class udp_driver : public subsystem, protected datagram_handler {
 public:
  udp_driver(driver_config cfg);
  ~udp_driver() override;

  [[nodiscard]] const driver_config& config() const noexcept { return cfg_; }
  [[nodiscard]] std::uint16_t local_port() const noexcept { return backend_->local_port(); }

  [[nodiscard]] virtual driver_stats stats() const;
  /// One object of summary.json's "drivers" array.
  [[nodiscard]] bool has_statistics() const noexcept override { return true; }
  void write_statistics(json_writer& j) const override;

 protected:
  void on_datagram(std::span<const std::byte>, const sockaddr_in&, std::int64_t) noexcept override {
  }
  void on_wake() noexcept override {}
  /// Output drivers, on the stopping thread once the I/O thread is gone: what is still
  /// queued (the last macro steps' values) unless the driver was tripped.
  virtual void send_queued() noexcept {}

  // ---- lockstep (model thread only)
  enum class lockstep_wait { received, timeout, stopped };
  /// Receives one datagram on the socket (handed to on_datagram) unless the deadline
  /// (CLOCK_MONOTONIC) passes first or the run is stopped.
  lockstep_wait lockstep_receive(std::int64_t deadline_ns) noexcept;
  /// Buffer for the lockstep stop's message; lockstep_fail() then stops the run with it
  /// (lockstep_device; before start() the stop is raised by start()). Once.
  [[nodiscard]] std::span<char> lockstep_text() noexcept { return lockstep_text_; }
  void lockstep_fail() noexcept;
  [[nodiscard]] bool lockstep_failed() const noexcept { return lockstep_failed_; }
  [[nodiscard]] std::int64_t lockstep_timeout_ns() const noexcept;

  driver_config cfg_;
  std::unique_ptr<udp_backend> backend_;
  stop_source* stop_ = nullptr;
  std::atomic<std::uint64_t> sent_{0};

 private:
  /// Starts the I/O thread. An input driver raises `stop` (stale_input) on stale input.
  void do_start(stop_source& stop) override;
  /// Stops and joins the I/O thread, sends what is queued, then the safe values when
  /// fail_safe.
  void do_stop(bool fail_safe) noexcept override;
  void stop_io() noexcept;

  std::unique_ptr<rt_thread> io_;
  bool lockstep_failed_ = false;
  std::array<char, 512> lockstep_text_{};  // the stop's message (lives as long as the driver)
};

class udp_input_driver final : public udp_driver {
 public:
  explicit udp_input_driver(driver_config cfg);
  driver_stats stats() const override;
  /// Value of a channel before the first packet unless the scenario set `initial`.
  bool set_default_start(std::size_t channel, double value) noexcept override;

 private:
  using values = input_values;
  bool do_step(time_point, duration) noexcept override { return true; }
  void do_update_outputs(time_point t) noexcept override;
  void on_datagram(std::span<const std::byte> data, const sockaddr_in& from,
                   std::int64_t arrival_ns) noexcept override;
  void on_wake() noexcept override;
  /// Lockstep: tick for t, wait for the device's values for t (into slot_).
  void lockstep_exchange(std::int64_t t_ns) noexcept;
  /// Lockstep part of on_datagram (either version): false drops the datagram.
  bool lockstep_accept(std::uint8_t type, std::uint16_t flags, std::uint64_t timestamp_ns) noexcept;
  // Version 1 (auth = "none") and version 2 (authenticated) receive paths.
  void on_datagram_v1(std::span<const std::byte> data, std::size_t peer,
                      std::int64_t arrival_ns) noexcept;
  void on_datagram_auth(std::span<const std::byte> data, std::size_t peer,
                        std::int64_t arrival_ns) noexcept;
  /// Checks 4-7 of PROTOCOL.md "Receiving side" and the delivery of the values.
  void take_values(std::uint8_t type, std::uint16_t n, const std::array<double, max_channels>& ch,
                   bool fresh, std::int64_t arrival_ns) noexcept;
  /// Lockstep ticks (either version) to every peer; authenticated: a peer without a session
  /// is asked for a hello instead.
  void send_ticks(std::int64_t t_ns) noexcept;
  void publish_sequence_counters() noexcept;
  void send_auth(const auth_message& m, const sockaddr_in& to) noexcept;

  std::vector<sockaddr_in> peers_;
  // Start of the run announced to the peers with a heartbeat each (devices started with
  // --sync align their clock to the first one they see). Repeated every
  // announce_period_ns until the first datagram arrives, so a device that was not yet
  // listening, or a lost heartbeat, does not leave the run without input.
  static constexpr std::int64_t announce_period_ns = 20'000'000;
  std::atomic<bool> announce_{false};
  std::int64_t last_announce_ns_ = 0;
  std::uint32_t heartbeat_seq_ = 0;
  std::vector<sequence_tracker> trackers_;  // one per peer (I/O thread)
  std::vector<int> run_of_old_;             // consecutive out-of-order per peer
  std::vector<auth_receiver> receivers_;    // authenticated: one per peer (I/O thread)
  std::vector<std::int64_t> last_ask_ns_;   // last "say hello" per peer (I/O thread)
  latest_value<values> slot_;
  // Real-time side.
  values current_{};
  std::uint64_t version_ = 0;
  std::int64_t first_update_ns_ = 0;
  bool stale_ = false;
  // Statistics (single writer each, read after the run).
  std::atomic<std::uint64_t> received_{0}, lost_{0}, dup_{0}, ooo_{0}, restarts_{0}, malformed_{0},
      wrong_count_{0}, rejected_{0}, clamped_{0}, stale_events_{0}, bad_mac_{0}, stale_session_{0};
  std::atomic<bool> stale_stop_{false};
  // The stale_input stop's messages (built here: raising one allocates nothing).
  std::string stale_text_, silent_text_;
  // Lockstep: simulation time [ns] whose values are awaited; a peer that sent a datagram
  // without the lockstep flag.
  std::int64_t lockstep_expect_ns_ = -1;
  bool lockstep_refused_ = false;
  // [[events]] silence fault: from silence_ns_ on, nothing received is used.
  std::int64_t silence_ns_ = -1;
  std::atomic<std::int64_t> silenced_at_ns_{-1};
  std::atomic<std::uint64_t> dropped_by_event_{0};
};

class udp_output_driver final : public udp_driver {
 public:
  explicit udp_output_driver(driver_config cfg);
  driver_stats stats() const override;

 private:
  void send_queued() noexcept override;
  /// Sends the safe values safe_repeats times from the calling thread (sendto(2) on the
  /// driver's socket; async-signal-safe) and drops every value queued after: once.
  void do_trip_fail_safe() noexcept override;
  using packet = output_values;
  bool do_step(time_point, duration) noexcept override { return true; }
  void do_update_outputs(time_point t) noexcept override;
  void on_wake() noexcept override;
  void send_values(const std::array<double, max_channels>& v) noexcept;
  /// Flags and timestamp of a value datagram: the monotonic clock, or in lockstep the step's
  /// simulation time with the lockstep flag.
  void stamp(std::uint16_t& flags, std::uint64_t& timestamp_ns) const noexcept;
  /// The device's challenges (authenticated) and lockstep acknowledgements (I/O thread, or
  /// the model thread in lockstep).
  void on_datagram(std::span<const std::byte> data, const sockaddr_in& from,
                   std::int64_t arrival_ns) noexcept override;
  void say_hello_if_due() noexcept;
  /// Lockstep: waits for the acknowledgement of the previous step, then sends p stamped
  /// with its simulation time.
  void lockstep_exchange(const packet& p) noexcept;
  /// False (and the run stopped) when the pending acknowledgement did not come in time.
  bool lockstep_await_ack() noexcept;
  /// Lockstep, authenticated: says hello until the device gives a session; false (and the
  /// run stopped) when none came within startup_timeout.
  bool lockstep_await_session() noexcept;

  sockaddr_in to_{};
  // Authenticated: handshake state (I/O thread) and the session it gave, read by every
  // sender (0: none yet, nothing is sent).
  auth_sender sender_;
  std::atomic<std::uint64_t> session_{0};
  std::atomic<std::uint64_t> bad_mac_{0}, unsent_{0};
  // Lockstep: the simulation time stamped on what is sent (the safe values of a stop carry
  // the last step's), the acknowledgement awaited.
  std::atomic<std::int64_t> lockstep_t_ns_{0};
  bool acked_ = false;
  bool ack_pending_ = false;
  spsc_ring<packet> ring_{1024};
  // Taken by the I/O thread and by a trip on any thread: the safe values carry the newest
  // sequence numbers, so a command the I/O thread sent concurrently reaches the device as
  // older and is dropped there (PROTOCOL.md, "Receiving side").
  std::atomic<std::uint32_t> sequence_{0};
  std::atomic<bool> tripped_{false};
  std::atomic<std::uint64_t> ring_drops_{0};
};

/// Creates the driver subsystem for cfg (binds its socket). Throws cosim::error naming
/// drivers.<name>.<key> on a bad address, a port in use or an unavailable backend.
std::unique_ptr<udp_driver> make_driver(const driver_config& cfg);

}  // namespace cosim::drivers
