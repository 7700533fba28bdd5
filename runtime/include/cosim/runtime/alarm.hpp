#pragma once
// Alarms on recorded signals. Each alarm watches one results column (any value a row holds)
// and is judged after every macro step by the shared run accounting, so every executor
// decides at the same step. Its condition is value > max, value < min, or
// |value_n - value_{n-1}| / H > rate_max; it fires once the condition has held
// continuously for `debounce` (0: at the first step it holds). A stop alarm ends the run
// (stop_cause::alarm, a safety stop); a warn alarm is counted each time it fires and is
// cleared when the condition no longer holds.
//
// Call order: construct (set-up, allocates) -> start(t0 row) -> check() per macro step
// (noexcept, allocation-free) -> stop_message() / reports() after the run. Log lines of
// warn alarms (take_log_lines) allocate, at most one line per alarm per interval.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "cosim/runtime/time.hpp"

namespace cosim {

enum class alarm_action { stop, warn };
/// "stop" or "warn" (the alarms' `action` values).
[[nodiscard]] const char* to_string(alarm_action a) noexcept;

struct alarm_spec {
  std::string name;
  std::string variable;  // a results column
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  double rate_max = std::numeric_limits<double>::infinity();  // on |d variable / dt| [unit/s]
  duration debounce{0};
  alarm_action action = alarm_action::stop;
};

/// One alarm's record of a run (summary.json "alarms").
struct alarm_report {
  std::string name;
  std::string variable;
  alarm_action action = alarm_action::stop;
  std::int64_t count = 0;         // times it fired
  double first_time_s = 0.0;      // when it first fired (meaningful when count > 0)
  std::int64_t active_steps = 0;  // rows (t0 and macro steps) at which it was firing
};

class alarm_monitor {
 public:
  static constexpr std::size_t none = static_cast<std::size_t>(-1);

  /// Resolves every alarm's variable among `columns`; throws cosim::error (config_value)
  /// naming an alarm whose variable is no column, or whose limits cannot fire.
  alarm_monitor(std::span<const alarm_spec> alarms, std::span<const std::string> columns);

  [[nodiscard]] bool empty() const noexcept { return state_.empty(); }

  /// The row at the run's start t0: min and max are judged there too (no rate yet). Returns
  /// the index of a stop alarm that fired, else none.
  std::size_t start(time_point t0, std::span<const double> row) noexcept;
  /// The row after the macro step of length H ending at t. Returns the index of the first
  /// stop alarm that fired at this step, else none; warn alarms are only counted.
  std::size_t check(time_point t, duration H, std::span<const double> row) noexcept;

  /// "alarm 'NAME': VARIABLE = VALUE above max LIMIT at t = T s" (and the debounce), for
  /// stop alarm i that fired.
  [[nodiscard]] std::string stop_message(std::size_t i) const;
  /// True when a warn alarm fired since its last log line.
  [[nodiscard]] bool log_pending() const noexcept { return unlogged_ > 0; }
  /// Appends one line per warn alarm that fired since its last line and whose last line is
  /// at least interval_ns old (the first one at once); final: every pending one. now_ns is
  /// any monotonic clock (a test's fake one).
  void take_log_lines(std::int64_t now_ns, bool final, std::vector<std::string>& out);
  /// take_log_lines into the runtime log (spdlog's default logger) as warnings. Allocates
  /// only when a line is due.
  void log_warnings(std::int64_t now_ns, bool final);
  [[nodiscard]] std::vector<alarm_report> reports() const;

  static constexpr std::int64_t log_interval_ns = 1'000'000'000;

 private:
  enum class limit_kind { max, min, rate };
  struct state {
    std::size_t column = 0;
    double prev = 0.0;  // value at the previous row (the rate)
    bool holding = false;
    time_point since{};  // first row of the current run of rows where the condition holds
    bool firing = false;
    std::int64_t count = 0;
    time_point first{};
    std::int64_t active_steps = 0;
    // The row at which it last fired.
    time_point at{};
    double value = 0.0;  // the variable, or its rate
    double limit = 0.0;
    limit_kind kind = limit_kind::max;
    // Warn log: firings not yet in a line, and when the last line was taken.
    std::int64_t unlogged = 0;
    time_point unlogged_from{};
    std::int64_t last_line_ns = 0;
    bool lined = false;
  };
  std::size_t judge(time_point t, double H_s, std::span<const double> row, bool rate) noexcept;

  std::vector<alarm_spec> specs_;
  std::vector<state> state_;
  std::int64_t unlogged_ = 0;
};

}  // namespace cosim
