#pragma once
// Energy-based coupling correction (000 Sect. 3; in the spirit of the energy-conserving
// corrections of Sadjina et al. and Benedikt et al.'s NEPCE): a consumer input of a power
// bond removes, over its next macro step, the energy that its extrapolation injected over
// the last one.
//
// The bond residual splits exactly into one part per consumer input (000 Eqs. (29)-(32)):
//   delta_P = e~ f_B - e_A f~ = (e~ - e_A) f_B + e_A (f_B - f~)
// where (e~ - e_A) f_B involves only what the effort consumer B used, received and
// produced, and e_A (f_B - f~) only the flow consumer A's. Each consumer input therefore
// measures its own share at its own communication points, on the thread that steps it,
// from the same numbers in every executor: offline, threaded and realtime runs agree.
//
// Per corrected input, with Y = sum over the bond terms the input belongs to of s y (s =
// +gain for an effort input, -gain for a flow input, y the consumer's own conjugate output;
// a pressure-flow bond has two terms sharing the flow), u~ the extrapolated input (without
// correction) and u the producer's sample at t_{n+1}:
//   p_{n+1} = (u~ - u) Y                         local residual power at t_{n+1}
//   E_{n+1} = H p_{n+1} (ZOH) or H (p_n + p_{n+1}) / 2    (002 Eqs. (10), (11))
//   pending = max(0, pending + E_{n+1} - removed_n)
//   c       = -pending / (Y H), clamped to |c| <= min(|u~ - u|, fraction |u|)
// and the input over [t_{n+1}, t_{n+2}] is u~ + c. The correction only ever removes energy
// (c Y <= 0 at t_{n+1}; pending never goes negative, so energy the extrapolation removed
// is never given back), is at most the size of the extrapolation error it answers and a
// fraction of the signal, and is zero when the conjugate variable is zero.
//
// Method "balance" (two-sided, in the spirit of Sadjina et al.'s and Benedikt et al.'s
// residual feedback): the input answers only the residual of the interval that just ended,
// with either sign, at half weight:
//   c = -E_{n+1} / (2 Y H),   |c| <= min(|u~ - u|, fraction |u|)
// It removes half of what the extrapolation injected and gives back half of what it
// removed, so over the two intervals the interface is never a net source (passive: the
// energy given back is at most the energy the extrapolation removed just before). Half,
// because for ZOH and a steady Y, c = (u_{n+1} - u_n) / 2: the held value moves to the
// signal's mean over the next interval instead of its start, where a full step (c = u_{n+1}
// - u_n) would over-extrapolate; nothing accumulates, so no slow drift follows.
#include <array>
#include <cstddef>

#include "cosim/runtime/time.hpp"

namespace cosim {

class subsystem;
class system;

/// "remove" (one-sided, accumulated) or "balance" (two-sided, last interval, half weight).
enum class correction_method { remove, balance };

struct energy_correction {
  static constexpr std::size_t max_terms = 4;
  std::size_t input = 0;  // corrected input of the consumer
  correction_method method = correction_method::remove;
  // Y = sum of gain[k] * output(conjugate[k]): the consumer's conjugate outputs, with +gain
  // for an effort input and -gain for a flow input.
  std::size_t terms = 0;
  std::array<std::size_t, max_terms> conjugate{};
  std::array<double, max_terms> gain{};
  // State, touched only by the thread that advances the consumer.
  bool captured = false;
  duration last_H{0};
  double u_used = 0.0;   // u~ at the end of the last interval, without correction
  double y_used = 0.0;   // Y at the end of the last interval
  double y_start = 0.0;  // Y at the start of the last interval
  double p_prev = 0.0;   // local residual power at the previous communication point
  double pending = 0.0;  // spurious energy still to remove [J]
  double offset = 0.0;   // c applied over the current interval
};

namespace correction {

/// Largest correction as a fraction of the received signal.
inline constexpr double max_fraction = 0.5;
/// Share of the last interval's residual that "balance" answers (see above).
inline constexpr double balance_gain = 0.5;

/// Turns on the correction of connection `c`'s consumer input; `c` must be the effort or
/// the flow connection of at least one bond term. Setup only (allocates); throws
/// cosim::error. Asking twice for one input is harmless (the first method stays).
void enable(system& sys, std::size_t c, correction_method method = correction_method::remove);
/// Start of the interval [t, t + H] of s: measures the share of the interval that ended at
/// t and sets the inputs' corrections for this one. No-op without corrected inputs.
void begin_interval(subsystem& s, time_point t, duration H) noexcept;
/// End of the interval at t: records u~ and y for begin_interval.
void end_interval(subsystem& s, time_point t, duration H) noexcept;

}  // namespace correction
}  // namespace cosim
