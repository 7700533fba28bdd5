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

}  // namespace cosim
