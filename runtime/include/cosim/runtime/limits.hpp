#pragma once
// The one place where the allowed values of run settings live: internal steps against
// the macro step, ring capacities, thread placement, watchdog. Each check returns "" when
// the value is allowed, else why, with the allowed range. The scenario reader calls them
// to name file, line and key; the executors call them again, so a program that builds a
// plan by hand gets the same rules.
#include <cstdint>
#include <string>

#include "cosim/runtime/time.hpp"

namespace cosim::limits {

inline constexpr std::int64_t min_ring_capacity = 4;
inline constexpr std::int64_t max_ring_capacity = 65536;
inline constexpr std::int64_t min_stack_size = 65536;

/// Samples buffered per coupling: a power of two from 4 (a consumer may be one sample
/// behind a producer that runs up to two points ahead) to 65536 (rings stay a few MiB,
/// preallocated and locked).
std::string ring_capacity(std::int64_t n);
/// -1 (not pinned) or an online CPU.
std::string cpu(std::int64_t c);
/// SCHED_FIFO priority 1-99; 0 (normal scheduling) only when `allow_zero`.
std::string priority(std::int64_t p, bool allow_zero);
std::string stack_size(std::int64_t bytes);
/// Expected worst-case step time [s], >= 0 and finite.
std::string budget(double seconds);
/// watchdog.max_overruns / watchdog.leak_steps: >= 1.
std::string watchdog_count(std::int64_t n);
/// watchdog.grace [s]: at least 1 ms (a stop must leave a thread time to return), at most
/// 60 s (a bench left waiting longer is no safer).
std::string grace(double seconds);
/// An internal step h against the macro step H: positive, and unless `non_matching` not
/// larger than H and dividing it; at most max_substeps_per_macro_step steps per H.
std::string internal_step(duration h, duration H, bool non_matching);

}  // namespace cosim::limits
