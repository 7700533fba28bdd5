#pragma once
// Step primitives shared by every executor (offline, threaded, realtime), so that all
// modes have one step semantics: what a subsystem does over one communication interval,
// and how its outputs reach its consumers.
//
// Multirate interface (004 Sect. 2), per subsystem (multirate.hpp):
//  - Synchronisation slowest-first / fastest-first is a Gauss-Seidel order (sync_order):
//    the slow subsystem runs ahead and the fast one interpolates its inputs between the
//    slow samples, or the other way round.
//  - Interpolation/extrapolation order 0-4 per consumer input (input_port::set_order): an
//    input whose producer already delivered t_{n+1} is interpolated, otherwise extrapolated.
//  - Smoothing: a producer delivers its outputs averaged over the internal steps of the
//    communication interval (004 Sect. 2.2).
//  - Non-matching grids: a producer steps on its own grid and delivers samples stamped
//    with its own grid times (004 Sect. 2.1).
// Executors publish what delivered_output() returns, stamped with sample_time(), with the
// derivatives delivered_derivatives() gives.
#include <cstddef>
#include <span>
#include <vector>

#include "cosim/runtime/system.hpp"

namespace cosim::scheme {

/// One communication interval [t, t + H] of subsystem s: its internal steps, then its
/// outputs at t + H (or, non-matching, at its last own grid point <= t + H).
/// Returns false if the state or an output became non-finite.
bool advance(subsystem& s, time_point t, duration H) noexcept;
/// Push every output of subsystem `from` as a sample into its consumers: the value of
/// delivered_output(), stamped sample_time(producer, t), with delivered_derivatives().
void deliver(system& sys, std::size_t from, time_point t) noexcept;
bool outputs_finite(const subsystem& s) noexcept;

/// The value consumers receive from output o: the interval average when smoothing and an
/// average exists, else the output itself.
[[nodiscard]] double delivered_output(const subsystem& s, std::size_t o) noexcept;
/// The time derivatives that go with output o's sample to input `to`: the producer's own
/// (port_desc::derivative_order, e.g. an FMU's) when `to` extrapolates and the output is not
/// smoothed, else none (the input then extrapolates from past samples). Called on the
/// producer's thread right after its update_outputs; the span lives until its next step.
[[nodiscard]] std::span<const double> delivered_derivatives(subsystem& s, std::size_t o,
                                                            const input_port& to) noexcept;
/// Time stamp of the samples delivered at communication point t: t, or for a
/// non-matching subsystem its own grid time.
[[nodiscard]] time_point sample_time(const subsystem& s, time_point t) noexcept;
/// The internal step h of s (own_step() for non-matching subsystems).
[[nodiscard]] duration internal_step(const subsystem& s) noexcept;

/// Sets the multirate options of s with internal step h; allocates (setup only). A
/// non-matching subsystem gets step_size() = H, see multirate.hpp.
void configure_multirate(subsystem& s, const multirate_options& o, duration h, duration H);

enum class sync { slowest_first, fastest_first };
/// Gauss-Seidel order from the internal steps: largest step first (slowest-first) or
/// smallest first (fastest-first); ties keep the order of `base`.
std::vector<std::size_t> sync_order(const system& sys, sync mode, std::vector<std::size_t> base);

}  // namespace cosim::scheme
