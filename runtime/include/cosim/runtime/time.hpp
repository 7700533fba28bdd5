#pragma once
// Simulation time as integer nanoseconds. The clock deliberately has no now():
// simulation time and wall-clock time must never be mixed.
#include <chrono>
#include <cmath>
#include <cstdint>

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

}  // namespace cosim
