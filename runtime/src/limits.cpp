#include "cosim/runtime/limits.hpp"

#include <cmath>

#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/rt_thread.hpp"

namespace cosim::limits {

std::string ring_capacity(std::int64_t n) {
  if (n < min_ring_capacity || n > max_ring_capacity || (n & (n - 1)) != 0)
    return "must be a power of two from 4 to 65536 (samples buffered per coupling)";
  return "";
}

std::string cpu(std::int64_t c) {
  if (c == -1 || (c >= 0 && c < online_cpu_count())) return "";
  return "no such CPU; this machine has CPUs 0-" + std::to_string(online_cpu_count() - 1) +
         " (-1: not pinned)";
}

std::string priority(std::int64_t p, bool allow_zero) {
  if ((p >= 1 && p <= 99) || (allow_zero && p == 0)) return "";
  return allow_zero ? "must be 0 (normal scheduling) or a SCHED_FIFO priority 1-99"
                    : "SCHED_FIFO priority must be 1-99";
}

std::string stack_size(std::int64_t bytes) {
  return bytes >= min_stack_size ? "" : "must be at least 65536 bytes";
}

std::string budget(double seconds) {
  return seconds >= 0.0 && std::isfinite(seconds) ? "" : "must be a finite time >= 0 s";
}

std::string watchdog_count(std::int64_t n) {
  return n >= 1 ? "" : "must be >= 1";
}

std::string grace(double seconds) {
  return seconds >= 1e-3 && seconds <= 60.0 ? "" : "must be between 0.001 and 60 s";
}

std::string internal_step(duration h, duration H, bool non_matching) {
  if (h.count() <= 0) return "is below the 1 ns time resolution";
  if (!non_matching && h > H)
    return "is larger than its communication step run.macro_step = " +
           format_double(to_seconds(H)) + " s";
  if (!non_matching && H.count() % h.count() != 0)
    return "does not divide the communication step run.macro_step = " +
           format_double(to_seconds(H)) + " s";
  // Ceiling of H / h: a bounded macro step keeps every stop request answered promptly.
  const std::int64_t n = (H.count() + h.count() - 1) / h.count();
  if (n > max_substeps_per_macro_step)
    return "gives " + format_double(static_cast<double>(n)) + " internal steps per macro step of " +
           format_double(to_seconds(H)) + " s; at most " +
           std::to_string(max_substeps_per_macro_step) +
           " are allowed (choose a smaller run.macro_step or a larger step)";
  return "";
}

}  // namespace cosim::limits
