#pragma once
// Logging from real-time threads. An RT thread never formats, allocates or takes a
// lock: it posts a fixed-size rt_event into its own SPSC channel (dropping and counting
// when full). An rt_log_drain on a normal thread pops the events of all channels and
// formats them with spdlog.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "cosim/runtime/rt_thread.hpp"
#include "cosim/runtime/spsc_ring.hpp"

namespace spdlog {
class logger;
}

namespace cosim {

enum class rt_event_code : std::uint16_t {
  info,           // informational marker (a, b, detail are free for the caller)
  overrun,        // a step took longer than its period
  deadline_miss,  // a result was not available at its deadline
  safety_stop,    // the safety chain stopped the bench
  drop,           // a coupling sample or message was lost
};

/// Stable lower-case name of a code ("deadline_miss"), "unknown" otherwise.
std::string_view to_string(rt_event_code code) noexcept;

struct rt_event {
  std::int64_t wall_ns = 0;   // CLOCK_MONOTONIC time of the event (monotonic_now_ns())
  std::int64_t sim_tick = 0;  // simulation tick the event belongs to
  std::uint16_t source = 0;   // producer id (rt_log_channel::source())
  rt_event_code code = rt_event_code::info;
  std::uint32_t detail = 0;  // code-specific integer; fills what would be padding
  double a = 0.0;            // code-specific values, e.g. measured and allowed time
  double b = 0.0;
};
static_assert(std::is_trivially_copyable_v<rt_event>);
static_assert(sizeof(rt_event) == 40, "rt_event is meant to have no hidden padding");

/// One producer's queue of events. post() is the only function for the RT thread.
class rt_log_channel {
 public:
  rt_log_channel(std::string name, std::uint16_t source, std::size_t capacity)
      : name_(std::move(name)), source_(source), ring_(capacity) {}

  /// Queues event unchanged; false (and counted in drops()) if the channel is full.
  bool post(const rt_event& event) noexcept { return ring_.push(event); }

  /// Queues an event stamped with the current monotonic time and this channel's source.
  bool post(rt_event_code code, std::int64_t sim_tick, double a = 0.0, double b = 0.0,
            std::uint32_t detail = 0) noexcept {
    rt_event event;
    event.wall_ns = monotonic_now_ns();
    event.sim_tick = sim_tick;
    event.source = source_;
    event.code = code;
    event.detail = detail;
    event.a = a;
    event.b = b;
    return ring_.push(event);
  }

  [[nodiscard]] std::uint64_t drops() const noexcept { return ring_.drops(); }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::uint16_t source() const noexcept { return source_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return ring_.capacity(); }

  /// Consumer side, used by rt_log_drain (one consumer at a time).
  bool try_pop(rt_event& out) noexcept { return ring_.try_pop(out); }

 private:
  std::string name_;
  std::uint16_t source_;
  spsc_ring<rt_event> ring_;
};

/// "[name] deadline_miss tick=42 t=12.000001234s a=1.5 b=1 detail=3"
std::string format_rt_event(const rt_event& event, std::string_view channel_name);

/// Owns the channels and empties them into spdlog from a normal (non-RT) thread.
class rt_log_drain {
 public:
  /// logger == nullptr: spdlog's default logger at the time of each drain.
  explicit rt_log_drain(std::shared_ptr<spdlog::logger> logger = nullptr);
  rt_log_drain(const rt_log_drain&) = delete;
  rt_log_drain& operator=(const rt_log_drain&) = delete;
  rt_log_drain(rt_log_drain&&) = delete;
  rt_log_drain& operator=(rt_log_drain&&) = delete;
  /// stop(): the thread ends and the remaining events are logged.
  ~rt_log_drain();

  /// New channel whose source id is its index. Only before start() (the drain thread
  /// iterates the channel list without a lock). The reference stays valid for the
  /// drain's lifetime; hand it to exactly one producer thread.
  rt_log_channel& add_channel(std::string name, std::size_t capacity = 1024);

  /// Logs every queued event and any new drops; returns the number of events logged.
  /// Safe to call while the drain thread runs (draining is serialised by a mutex).
  std::size_t drain_once();

  /// Starts a thread calling drain_once() every period.
  void start(std::chrono::milliseconds period = std::chrono::milliseconds{10});
  /// Stops the thread (if running) and drains what is left.
  void stop();

  [[nodiscard]] std::size_t channel_count() const noexcept { return channels_.size(); }
  [[nodiscard]] std::uint64_t events_logged() const noexcept;

 private:
  std::shared_ptr<spdlog::logger> logger_;
  std::vector<std::unique_ptr<rt_log_channel>> channels_;
  std::vector<std::uint64_t> reported_drops_;  // per channel, guarded by drain_mutex_
  std::uint64_t events_logged_ = 0;            // guarded by drain_mutex_
  mutable std::mutex drain_mutex_;

  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stop_requested_ = false;  // guarded by stop_mutex_
  std::thread thread_;
};

}  // namespace cosim
