#pragma once
// Simulation time as integer nanoseconds. The clock deliberately has no now():
// simulation time and wall-clock time must never be mixed.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>

namespace cosim {

struct sim_clock {
  using rep = std::int64_t;
  using period = std::nano;
  using duration = std::chrono::duration<rep, period>;
  using time_point = std::chrono::time_point<sim_clock>;
  static constexpr bool is_steady = true;
};

using duration = sim_clock::duration;
using time_point = sim_clock::time_point;

/// Longest simulated span a run accepts [s] (about 31.7 years). Integer nanoseconds hold up
/// to 9.2e9 s; keeping durations well below that leaves room for t + H without overflow.
inline constexpr double max_run_seconds = 1e9;

/// Most internal steps one subsystem may take inside one macro step. Bounds the work
/// between two stop checks: the executors poll the operator's stop request once per macro
/// step, so a macro step must end within about 100 ms of computation even with several
/// subsystems (a crane subsystem step costs about 50 ns: 5 ms per subsystem here).
inline constexpr std::int64_t max_substeps_per_macro_step = 100'000;

/// Seconds (as written in config files) to ticks, rounded to the nearest nanosecond.
constexpr duration to_duration(double seconds) noexcept {
  const double ns = seconds * 1e9;
  return duration{static_cast<std::int64_t>(ns < 0 ? ns - 0.5 : ns + 0.5)};
}
constexpr double to_seconds(duration d) noexcept {
  return static_cast<double>(d.count()) * 1e-9;
}
constexpr double to_seconds(time_point t) noexcept {
  return to_seconds(t.time_since_epoch());
}
constexpr time_point at_seconds(double seconds) noexcept {
  return time_point{to_duration(seconds)};
}

/// The tick `t` came from, if the double `t` is exactly to_seconds of one (the results' time
/// column and the summary's times are); nothing for any other value. Exact for |t| below
/// 1e6 s, where t * 1e9 is within 0.5 ns of the tick.
constexpr std::optional<duration> tick_of_seconds(double t) noexcept {
  if (!(t > -1e6 && t < 1e6)) return std::nullopt;
  const double ns = t * 1e9;
  const duration d{static_cast<std::int64_t>(ns < 0 ? ns - 0.5 : ns + 0.5)};
  if (to_seconds(d) != t) return std::nullopt;
  return d;
}

/// Writes the tick `d` in seconds as its exact decimal ("0.009", "10", "-0.5": at most 9
/// fractional digits, no trailing zeros) into [first, last); returns one past the last
/// character, or nullptr when it does not fit (30 characters always do). Times are printed so
/// in every output: to_seconds(9 ms) printed shortest is "0.009000000000000001", because
/// 9e6 * 1e-9 is not the double nearest 0.009 (to_seconds keeps its multiplication: the
/// models' arithmetic, and with it every validated result, stays bit for bit as it was).
constexpr char* seconds_to_chars(char* first, char* last, duration d) noexcept {
  const std::int64_t n = d.count();
  const bool negative = n < 0;
  // |INT64_MIN| does not fit in int64: the digits come from the unsigned value.
  const std::uint64_t u =
      negative ? std::uint64_t{0} - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
  std::uint64_t whole = u / 1'000'000'000U;
  std::uint64_t frac = u % 1'000'000'000U;
  char digits[24] = {};
  int k = 0;
  do {
    digits[k++] = static_cast<char>('0' + whole % 10U);
    whole /= 10U;
  } while (whole != 0U);
  int frac_digits = 9;
  while (frac != 0U && frac % 10U == 0U) {
    frac /= 10U;
    --frac_digits;
  }
  const std::ptrdiff_t need = (negative ? 1 : 0) + k + (frac != 0U ? 1 + frac_digits : 0);
  if (last - first < need) return nullptr;
  char* p = first;
  if (negative) *p++ = '-';
  while (k > 0) *p++ = digits[--k];
  if (frac != 0U) {
    *p++ = '.';
    for (int i = frac_digits - 1; i >= 0; --i) {
      p[i] = static_cast<char>('0' + frac % 10U);
      frac /= 10U;
    }
    p += frac_digits;
  }
  return p;
}

}  // namespace cosim
