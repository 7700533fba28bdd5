#pragma once
// Chrome / Perfetto trace-event JSON of a threaded run (run.trace = true): one complete
// event ("ph":"X") per thread step, an instant event per overrun, thread names as metadata.
// Written by the recording thread from the step records it already receives (the same
// ones timing.csv is made of), never by a subsystem thread.
#include <cstdint>
#include <string>
#include <vector>

#include "observer_file.hpp"

namespace cosim::detail {

class trace_writer {
 public:
  /// Opens `path` and writes the metadata; false (nothing kept open, failure() says why) if
  /// it cannot. Event times are microseconds after `origin_ns` (CLOCK_MONOTONIC).
  bool open(const std::string& path, const std::vector<std::string>& thread_names,
            std::int64_t origin_ns);
  /// One step of thread `thread`: began at `begin_ns` (CLOCK_MONOTONIC), took `exec_ns`.
  void step(std::size_t thread, std::int64_t n, double t_end_s, std::int64_t begin_ns,
            std::int64_t exec_ns, std::int64_t wake_latency_ns, bool realtime, bool overrun,
            std::uint32_t skipped);
  /// Ends the JSON document, syncs and closes the file; false if a write failed.
  bool close();
  trace_writer() = default;
  trace_writer(const trace_writer&) = delete;
  trace_writer& operator=(const trace_writer&) = delete;
  ~trace_writer() { (void)close(); }
  /// False once a write failed; failure() names the file and the OS error.
  [[nodiscard]] bool ok() noexcept { return file_.ok(); }
  [[nodiscard]] const std::string& failure() const noexcept { return file_.failure(); }

 private:
  observer_file file_;
  std::int64_t origin_ns_ = 0;
};

}  // namespace cosim::detail
