#pragma once
// Communication points in seconds for models that count time in doubles (FMUs): each point
// from its own integer ticks, each step the difference of two points, so that a step's start
// plus its step is the next step's start bit for bit, and the last step ends on the stop time
// the model was told. to_seconds (time.hpp) stays as it is for the results' time column.
#include "cosim/runtime/time.hpp"

namespace cosim {

/// start_s plus the ticks since the start, converted by one correctly rounded division
/// (to_seconds multiplies by 1e-9, which is not exact: 2e9 ticks give 2.0000000000000004).
/// Every point, the stop time included, comes from its own ticks, never from adding steps.
constexpr double comm_time(double start_s, duration since_start) noexcept {
  return start_s + static_cast<double>(since_start.count()) / 1e9;
}

/// The step from the communication point `a` to `b` (ticks since the start): the difference
/// of the two points, not to_seconds(b - a), so that comm_time(a) + comm_step(a, b) ==
/// comm_time(b) bit for bit. The difference of two doubles within a factor 2 of each other
/// is exact (Sterbenz), which holds for consecutive points from the first step on (and the
/// first step from 0 is exact anyway).
constexpr double comm_step(double start_s, duration a, duration b) noexcept {
  return comm_time(start_s, b) - comm_time(start_s, a);
}

}  // namespace cosim
