#pragma once
// Logging from real-time threads. An RT thread never formats, allocates or takes a
// lock: it posts a fixed-size rt_event into its own SPSC channel (dropping and counting
// when full). An rt_log_drain on a normal thread pops the events of all channels and
// formats them with spdlog: events below the logger's level are not formatted at all, and
// events that can come once per period (overruns, deadline misses, drops) are
// rate-limited by an rt_log_limiter so that a struggling machine does not flood the log.
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
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

/// What happened; the meaning of an event's a, b and detail depends on it (the formatter
/// names them):
enum class rt_event_code : std::uint16_t {
  info,           // informational marker: a, b and detail are free for the caller
  overrun,        // a step ended after its deadline: a = end of step after its release [us],
                  // b = period [us], detail = periods the next release skipped
  deadline_miss,  // a result was not available at its deadline: a = when it was [us],
                  // b = the deadline [us]
  safety_stop,    // the safety chain stopped the bench: a = measured value, b = limit;
                  // detail = 1: a counts late steps in the watchdog's leaky bucket
  drop,           // coupling samples or messages were lost: a = how many (0: not known)
  stall,          // a thread stayed in one step too long: a = time in that step [us],
                  // b = limit [us], detail = 1 + source id of that thread's channel
};
inline constexpr std::size_t rt_event_code_count = 6;

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

/// One line with named fields and the simulated time, e.g.
/// "[multibody] overrun at t_sim=3.275 s: step ended 2675 us after its release (period
/// 1000 us); next release skipped 2 periods". subject names the thread a stall event is
/// about (resolved from its detail by the drain).
std::string format_rt_event(const rt_event& event, std::string_view channel_name,
                            std::string_view subject = {});

/// Simulated time in seconds from ticks (ns), without trailing zeros: "3.275", "12".
std::string format_sim_seconds(std::int64_t ticks);

/// Log levels of the runtime's log lines (spdlog's, by name).
enum class log_level { trace, debug, info, warn, error, off };

/// "trace", "debug", "info", "warn", "error" or "off"; nullopt for anything else.
std::optional<log_level> parse_log_level(std::string_view name) noexcept;
std::string_view to_string(log_level level) noexcept;

/// Sends spdlog's default logger (where the executors' rt_log drains write) to stderr,
/// so stdout keeps a command's own output, and sets its level: lines below it are
/// neither written nor formatted.
void configure_runtime_log(log_level level);

struct rt_log_line {
  rt_event_code code = rt_event_code::info;  // decides the line's level
  std::string text;
};

/// Turns events into log lines at a readable rate. Overruns, deadline misses and drops
/// (which can come once per period on a machine that is not real-time) are limited per
/// code: the first of the run is logged in full; later ones are counted per channel and
/// reported in at most one line per interval with the counts since the previous line, the
/// simulated time span and the worst event. The full detail is in summary.json and
/// timing.csv. Other codes pass through. The caller supplies the time (the drain's
/// monotonic clock), so a test can use a fake one.
class rt_log_limiter {
 public:
  explicit rt_log_limiter(std::int64_t interval_ns = 1'000'000'000);

  /// Feeds one event popped from `channel` at now_ns; appends its line to `out` unless
  /// it is rate-limited (then it waits for flush()).
  void add(const rt_event& event, std::string_view channel, std::int64_t now_ns,
           std::vector<rt_log_line>& out);
  /// Appends the summary lines whose interval has passed; final: every pending one.
  void flush(std::int64_t now_ns, bool final, std::vector<rt_log_line>& out);

  [[nodiscard]] static bool limited(rt_event_code code) noexcept;

 private:
  struct code_state {
    bool first_logged = false;
    std::int64_t last_line_ns = 0;
    std::vector<std::pair<std::string, std::uint64_t>> counts;  // per channel, since last line
    std::uint64_t pending = 0;
    std::int64_t first_tick = 0, last_tick = 0;
    rt_event worst;
    std::string worst_channel;
  };
  void summarise(rt_event_code code, code_state& st, std::int64_t now_ns,
                 std::vector<rt_log_line>& out);

  std::int64_t interval_ns_;
  std::array<code_state, rt_event_code_count> codes_;
};

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

  /// Pops every queued event and logs it through the rate limiter, plus any new drops;
  /// returns the number of events popped. now_ns is the limiter's clock. Safe to call
  /// while the drain thread runs (draining is serialised by a mutex).
  std::size_t drain_once(std::int64_t now_ns);
  std::size_t drain_once() { return drain_once(monotonic_now_ns()); }

  /// Starts a thread calling drain_once() every period.
  void start(std::chrono::milliseconds period = std::chrono::milliseconds{10});
  /// Stops the thread (if running), drains what is left and logs every pending summary.
  void stop();

  [[nodiscard]] std::uint64_t events_logged() const noexcept;

 private:
  std::shared_ptr<spdlog::logger> logger_;
  std::vector<std::unique_ptr<rt_log_channel>> channels_;
  std::vector<std::uint64_t> reported_drops_;  // per channel, guarded by drain_mutex_
  std::uint64_t events_logged_ = 0;            // guarded by drain_mutex_
  rt_log_limiter limiter_;                     // guarded by drain_mutex_
  std::vector<rt_log_line> lines_;             // scratch, guarded by drain_mutex_
  void write_lines(spdlog::logger* logger);    // with drain_mutex_ held
  mutable std::mutex drain_mutex_;

  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stop_requested_ = false;  // guarded by stop_mutex_
  std::thread thread_;
};

}  // namespace cosim
